"""Schedules: the chooser's answers as a short token, and the strategies that make them.

A run under :class:`~turncheck.sim.race.loop.ControlledLoop` is fixed by the index it chose at
each **choice point** (a point with more than one runnable actor). Index 0 is asyncio's own FIFO
pick, so a schedule is written as the points where it chose otherwise — its **reorderings** —
and nothing else: ``SEED.N:P=I,P=I`` (the exploration seed, the schedule's number in it, then
"at choice point P, run the I-th runnable"), and under ``--faults`` a tail ``/F=KIND,…`` ("at
fault point F, inject KIND": :mod:`.faults`); a token without the tail is one of before faults
existed, and replays as it always did. ``0.0:`` is asyncio's own order. The seed and the
number only say where the schedule came from; replaying follows the reorderings alone, so a
shrunk schedule replays as exactly as a found one.

The strategies are plain functions returning a chooser for one run:

* :func:`random_walk` — a uniformly random runnable actor at every point;
* :func:`pct` — Probabilistic Concurrency Testing (Burckhardt et al., ASPLOS 2010): random
  priorities per actor, the highest runnable runs, and at ``depth − 1`` random points the one
  that ran drops below all others; a bug needing ``d`` ordering constraints is found by one run
  with probability at least ``1 / (n · k^(d−1))`` for ``n`` actors and ``k`` points;
* :func:`follow` — replay a token's reorderings, FIFO everywhere else.

The bounded exhaustive search (every schedule with at most ``depth`` reorderings, depth first)
is :func:`next_prefix`, stepping from one run's answers to the next unexplored one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turncheck.models.errors import BadParameter
from turncheck.sim.race.loop import Choice, Chooser

FAIR_AFTER = 2_000  # choice points after which every strategy falls back to FIFO (no starvation)
_TOKEN = re.compile(
    r"^(\d{1,12})\.(\d{1,12}):((?:\d{1,9}=\d{1,6})(?:,\d{1,9}=\d{1,6})*)?"
    r"(?:/((?:\d{1,9}=(?:error|cancel|crash))(?:,\d{1,9}=(?:error|cancel|crash))*))?$"
)
FAULT_KINDS = ("error", "cancel", "crash")  # what :mod:`.faults` injects at a fault point, in search order


@dataclass(frozen=True)
class Schedule:
    """Where a schedule came from (``seed``, ``index``), its reorderings ``(point, index)`` and
    the faults it injects ``(fault point, kind)`` (:mod:`.faults`; none without ``--faults``)."""

    seed: int
    index: int
    reorders: tuple[tuple[int, int], ...] = ()
    faults: tuple[tuple[int, str], ...] = ()

    @property
    def token(self) -> str:
        token = f"{self.seed}.{self.index}:" + ",".join(f"{p}={i}" for p, i in self.reorders)
        return token + ("/" + ",".join(f"{p}={k}" for p, k in self.faults) if self.faults else "")


def parse_token(token: str) -> Schedule:
    """The schedule a token names; a malformed one is one :class:`BadParameter` line."""
    m = _TOKEN.match(token.strip())
    if m is None:
        raise BadParameter(
            f"--schedule {token!r} is not a schedule token "
            "(SEED.N:POINT=INDEX,…[/FAULT=error|cancel|crash,…], e.g. 0.3:2=1 or 0.0:/4=crash)"
        )
    pairs = [tuple(map(int, part.split("="))) for part in m.group(3).split(",")] if m.group(3) else []
    points = [p for p, _ in pairs]
    if points != sorted(set(points)) or any(i == 0 for _, i in pairs):
        raise BadParameter(f"--schedule {token!r}: points must increase and indices be >= 1")
    faults = (
        [(int(p), k) for p, k in (part.split("=") for part in m.group(4).split(","))] if m.group(4) else []
    )
    if [p for p, _ in faults] != sorted({p for p, _ in faults}):
        raise BadParameter(f"--schedule {token!r}: fault points must increase")
    return Schedule(int(m.group(1)), int(m.group(2)), tuple((p, i) for p, i in pairs), tuple(faults))


class Recording:
    """Wraps a chooser: keeps every answer (FIFO past :data:`FAIR_AFTER`) and how many could run."""

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser
        self.answers: list[tuple[int, int]] = []  # (runnable, chosen) per choice point

    def __call__(self, c: Choice) -> int:
        i = self.chooser(c) if c.point < FAIR_AFTER else 0
        i = min(max(0, i), len(c.names) - 1)
        self.answers.append((len(c.names), i))
        return i

    def reorders(self) -> tuple[tuple[int, int], ...]:
        return tuple((p, i) for p, (_, i) in enumerate(self.answers) if i)


def follow(reorders: Sequence[tuple[int, int]]) -> Chooser:
    at = dict(reorders)
    return lambda c: at.get(c.point, 0)


def random_walk(rng: random.Random) -> Chooser:
    return lambda c: rng.randrange(len(c.names))


def pct(rng: random.Random, depth: int, horizon: int) -> Chooser:
    """PCT over ``horizon`` choice points (the most a run of this test has shown so far)."""
    points = rng.sample(range(max(horizon, depth)), max(0, depth - 1))
    drop = {p: float(k) for k, p in enumerate(sorted(points), 1)}  # below every initial priority
    priority: dict[str, float] = {}

    def choose(c: Choice) -> int:
        for name in c.names:
            if name not in priority:
                priority[name] = depth + rng.random()
        best = max(range(len(c.names)), key=lambda i: priority[c.names[i]])
        if c.point in drop:
            priority[c.names[best]] = drop[c.point]
        return best

    return choose


def next_prefix(answers: Sequence[tuple[int, int]], depth: int) -> list[int] | None:
    """The next schedule of the depth-first search after a run that answered ``answers``: the
    deepest point that can take its next index without exceeding ``depth`` reorderings; None
    when every schedule within the bound has been run."""
    used = [0]
    for _, i in answers:
        used.append(used[-1] + (i != 0))
    for j in range(len(answers) - 1, -1, -1):
        n, i = answers[j]
        if i + 1 < n and used[j] + 1 <= depth:
            return [c for _, c in answers[:j]] + [i + 1]
    return None


def prefix_chooser(prefix: Sequence[int]) -> Chooser:
    return lambda c: prefix[c.point] if c.point < len(prefix) else 0


Strategy = Callable[[random.Random, int, int], Chooser]
STRATEGIES: dict[str, Strategy] = {
    "random": lambda rng, depth, horizon: random_walk(rng),
    "pct": pct,
}
