"""``turncheck bench --compare``: every hot path next to its ceiling and its peers, in one run.

A *comparison* runs turncheck's code path, the ceiling for the same work (the least a program
must do: a bisection, a buffered write, a CRC over the bytes, bare SimPy events, a minimal
BFS over the same model functions) and, when installed, the peer libraries users would
otherwise run — all in this process, on the same input, in interleaved rounds (each round runs
every contender once, the order rotating), measured in CPU seconds of this process
(``time.process_time``), so other jobs on a shared machine shift every contender alike and the
*ratios* stay put. Each contender reports its median and best round per unit of work; a ratio
is paired: the median, over the rounds, of the two contenders' times in the same round
(:func:`paired_ratio`).

One module per topic (``projector``, ``store``, ``importer``, ``race``, ``exec``, ``startup``, ``trigger``,
``check``, ``testbench``), each with
``compare(scale) -> list[Comparison]``. Nothing here is a timed test: figures are printed,
never asserted (a slow machine gives slower figures, not a failure).
"""

from __future__ import annotations

import gc
import importlib
import os
import pickle
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["turncheck", "ceiling", "peer"]
TOPICS = ("projector", "store", "importer", "race", "exec", "startup", "trigger", "testbench", "check")
"""The topics with a comparison, in the order ``bench --compare`` runs them: the explorer's
hundreds of MiB of small objects last, because a topic run after them in the same process finds
a fragmented heap (the projector's per-request figures, bisection included, were a third higher
there than in a fresh process). ``exec`` (added for issue 58's last rows) runs after ``race``, not
second: the store's and importer's figures then run where their baseline was measured."""


@dataclass(frozen=True)
class Contender:
    """One way of doing the work: ``run()`` does ``units`` units of it (requests, events, MB …)
    and returns anything (kept alive until the round's clock stops)."""

    name: str
    role: Role
    run: Callable[[], object]
    units: float
    isolated: bool = False  # run each round in a forked child (its peak memory is then measured)
    wall: bool = False  # wall-clock seconds instead of this process's CPU (work spread over processes)
    children: bool = False  # CPU of the child processes it waits for (a command started fresh)
    measures_itself: bool = False  # run() returns (CPU seconds, max RSS bytes or None) of its own


@dataclass(frozen=True)
class Measured:
    """CPU seconds of every round of one contender, and (isolated ones) peak memory growth."""

    name: str
    role: Role
    units: float
    cpu: tuple[float, ...]
    peak_bytes: int | None = None
    peak_total: bool = False  # peak_bytes is a fresh process's max RSS, not growth over a fork

    @property
    def median(self) -> float:
        """Median CPU seconds per unit."""
        return statistics.median(self.cpu) / self.units

    @property
    def best(self) -> float:
        return min(self.cpu) / self.units


def paired_ratio(a: Measured, b: Measured) -> float:
    """``a``'s time per unit over ``b``'s: the median of the ratios of the rounds both ran in.

    One round runs every contender once, back to back, so what slows a stretch of the run — a
    neighbour's job, a lower clock — slows both sides of a round's ratio alike; the median then
    drops the rounds where it fell on one side only. A ratio of the two medians lets a noisy
    round of either contender move it, which on a shared two-core host swung a ceiling's median
    by a third while its best round stayed put. Measurements of different lengths (not from one
    :func:`interleave`) fall back to the ratio of the medians.
    """
    if len(a.cpu) != len(b.cpu) or not a.cpu:
        return a.median / b.median if b.median > 0 else float("inf")
    rounds = [
        (x / a.units) / (y / b.units) if y > 0 else float("inf") for x, y in zip(a.cpu, b.cpu, strict=True)
    ]
    return statistics.median(rounds)


@dataclass(frozen=True)
class Comparison:
    """One hot path: what was measured, in which unit, and the target the issue sets."""

    path: str
    unit: str
    scale: float  # seconds per unit × scale = the figure printed in ``unit``
    measured: tuple[Measured, ...]
    target: str = ""
    note: str = ""
    clock: str = "CPU"  # "wall time" when the contenders run on several processes

    @property
    def subject(self) -> Measured:
        return next(m for m in self.measured if m.role == "turncheck")

    def ratio(self, other: Measured, subject: Measured | None = None) -> float:
        """turncheck's time per unit over ``other``'s, paired by round (> 1: turncheck is slower)."""
        return paired_ratio(subject or self.subject, other)

    def lines(self) -> list[str]:
        rounds = len(self.measured[0].cpu)
        out = [
            f"{self.path} — {self.clock} per {self.unit.split(' ')[-1]}, median (best) of {rounds} interleaved rounds:"
        ]
        subject = self.subject
        width = max(len(m.name) for m in self.measured) + 2
        for m in self.measured:
            figure = f"{m.median * self.scale:12,.3f} ({m.best * self.scale:,.3f}) {self.unit}"
            if m.peak_bytes is not None:
                sign, what = ("", " max RSS") if m.peak_total else ("+", "")
                figure += f", peak {sign}{m.peak_bytes / 2**20:,.0f} MiB{what}"
            tail = ""
            if m.role == "ceiling":
                tail = f"   turncheck/ceiling {self.ratio(m):.2f}× ({100 / self.ratio(m):.0f} % of its rate)"
                if m.peak_bytes is not None and subject.peak_bytes is not None and m.peak_bytes > 0:
                    tail += f", memory {subject.peak_bytes / m.peak_bytes:.2f}×"
            elif m.role == "peer":
                tail = f"   peer/turncheck {1 / self.ratio(m):,.1f}×"
            out.append(f"  {m.role + ': ' + m.name:<{width + 11}}{figure}{tail}")
        if self.target:
            out.append(f"  target: {self.target}")
        if self.note:
            out.append(f"  ({self.note})")
        return out

    def as_dict(self) -> dict[str, Any]:
        subject = self.subject
        return {
            "path": self.path,
            "unit": self.unit,
            "clock": self.clock,
            "target": self.target,
            "note": self.note,
            "contenders": [
                {
                    "name": m.name,
                    "role": m.role,
                    "median": m.median * self.scale,
                    "best": m.best * self.scale,
                    "rounds": len(m.cpu),
                    "peak_mib": None if m.peak_bytes is None else round(m.peak_bytes / 2**20, 1),
                    "peak_total": m.peak_total,
                    "turncheck_over_this": None if m is subject else float(f"{self.ratio(m):.4g}"),
                }
                for m in self.measured
            ],
        }


def _rss_bytes() -> int:
    """Resident set size now (Linux ``/proc/self/statm``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(fn: Callable[[], object], wall: bool = False, children: bool = False) -> float:
    """CPU seconds of ``fn()`` (wall-clock seconds with ``wall``; with ``children``, those of the
    child processes it waited for), the collector paused (as every hot path here pauses it)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    clock = _children_cpu if children else time.perf_counter if wall else time.process_time
    try:
        c0 = clock()
        kept = fn()
        cpu = clock() - c0
        del kept
        return cpu
    finally:
        if enabled:
            gc.enable()


def _self_measured(fn: Callable[[], object]) -> tuple[float, int | None]:
    """What ``fn()`` measured of itself (:attr:`Contender.measures_itself`), the collector paused."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        figures = fn()
        assert isinstance(figures, tuple) and len(figures) == 2, "a self-measured run returns (cpu, peak)"
        cpu, peak = figures
        return float(cpu), None if peak is None else int(peak)
    finally:
        if enabled:
            gc.enable()


LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 2):
            os.dup2(null, fd)
        os.execv(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss, file=sys.stderr)
"""
"""Started as ``python -S -I -c LAUNCHER ARGV…``: runs ARGV as its one child (its standard output
the launcher's) and prints on standard error the child's exit status, CPU seconds and max RSS
(KiB), read by ``wait4`` for that child alone."""


def fresh_process(
    argv: list[str], cwd: str, env: dict[str, str] | None = None
) -> tuple[int, float, int, str]:
    """``argv`` run as a user runs it: exit status, CPU seconds (user + system), max RSS in bytes
    and what it printed on standard output (its standard error goes to ``/dev/null``).

    The child is started by a small launcher (:data:`LAUNCHER`, an interpreter without ``site``)
    rather than by this process: Linux keeps the RSS high-water mark of the memory a child had
    before ``exec`` — this process's own, copied by ``fork`` or shared by ``vfork`` — in the
    child's ``ru_maxrss``, so a child of a bench process holding 300 MiB read 317 MiB doing nothing
    (``python -c pass``). Under the launcher that floor is the launcher's few MiB, below any
    interpreter's own. ``argv[0]`` is a path (no ``PATH`` search).
    """
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-S", "-I", "-c", LAUNCHER, *argv], capture_output=True, text=True, cwd=cwd, env=env
    )
    fields = done.stderr.split()
    if done.returncode != 0 or len(fields) != 3:
        raise RuntimeError(f"could not measure {argv[0]}: {done.stderr.strip()[:200]}")
    return int(fields[0]), float(fields[1]), int(fields[2]) * 1024, done.stdout


def _in_child(fn: Callable[[], object]) -> tuple[float, int]:
    """CPU seconds of ``fn()`` in a forked child and its peak RSS growth over the child's start.

    A fork gives every round the same starting memory, so the growth is the contender's own.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.close(read)
            base = _rss_bytes()
            cpu = _timed(fn)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
            os.write(write, pickle.dumps((cpu, max(peak, 0))))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise RuntimeError("a benchmark round failed in its child process")
    cpu, peak = pickle.loads(data)
    return float(cpu), int(peak)


def interleave(contenders: list[Contender], rounds: int) -> tuple[Measured, ...]:
    """``rounds`` rounds; each runs every contender once, starting one later each round.

    Everything alive before the first round (the libraries, the peers', the inputs) is frozen
    out of the collector meanwhile: the collection before each round then looks only at what
    the rounds made, instead of rescanning the whole heap — seconds a round once litellm is
    imported, untimed but most of the smoke run's time.
    """
    cpu: list[list[float]] = [[] for _ in contenders]
    peaks: list[int | None] = [None] * len(contenders)
    k = len(contenders)
    gc.collect()
    gc.freeze()
    try:
        for r in range(rounds):
            for j in range(k):
                i = (j + r) % k
                c = contenders[i]
                if c.isolated or c.measures_itself:
                    seconds, peak = (_in_child if c.isolated else _self_measured)(c.run)
                    if peak is not None:
                        peaks[i] = peak if peaks[i] is None else max(peaks[i] or 0, peak)
                else:
                    seconds = _timed(c.run, c.wall, c.children)
                cpu[i].append(seconds)
    finally:
        gc.unfreeze()
    return tuple(
        Measured(c.name, c.role, c.units, tuple(cpu[i]), peaks[i], peak_total=c.measures_itself)
        for i, c in enumerate(contenders)
    )


def load_average() -> tuple[float, float, float] | None:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # pragma: no cover - platforms without getloadavg
        return None
    return (round(one, 2), round(five, 2), round(fifteen, 2))


def load_line(before: tuple[float, float, float] | None, after: tuple[float, float, float] | None) -> str:
    def text(v: tuple[float, float, float] | None) -> str:
        return "?" if v is None else f"{v[0]:.2f}"

    return (
        f"load average {text(before)} → {text(after)} (1 min, start → end) on {os.cpu_count()} cores; "
        "CPU-time ratios of interleaved rounds hold under load, absolute figures drift"
    )


def compare(topic: str, scale: str) -> list[Comparison]:
    """The comparisons of ``topic`` at ``scale`` ('quick' or 'full')."""
    module = importlib.import_module(f"benchmarks.compare.{topic}")
    result: list[Comparison] = module.compare(scale)
    return result
