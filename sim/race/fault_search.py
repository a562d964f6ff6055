"""The search of ``turncheck race --faults``: fault points × schedules, the shortest failure first.

Run after the fault-free exploration passed (:func:`~.explore.explore`), within ``budget``
runs, in this order, so that what is reported is as small as the search could find:

1. every single fault (each fault point of asyncio's own order × each kind of
   :data:`~.schedule.FAULT_KINDS`) in asyncio's order; of those that fail, the one with the
   fewest steps is reported (ties: the earliest point, then error before cancel before crash);
2. one fault a schedule under the strategy's schedules (random, pct, or exhaustive's bounded
   search), the point and kind drawn from the seed; a failure is shrunk as any race failure is,
   its fault kept;
3. every pair of faults in asyncio's order, earliest first.

What was covered is counted (:class:`FaultResult`) and said: a pass says how many of the
single faults and pairs ran, and how many runs ended with the fault escaping the test and no
check after it (those checked nothing, and are never called checked).
"""

from __future__ import annotations

import gc
import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from turncheck.models.errors import BadParameter
from turncheck.sim.race.explore import AsyncTest, Bounds, RaceRun, RaceStrategy, _run, shrink
from turncheck.sim.race.faults import InjectedFault, Injection, fault_logs_dropped
from turncheck.sim.race.loop import run_controlled
from turncheck.sim.race.schedule import (
    FAULT_KINDS,
    STRATEGIES,
    Recording,
    Schedule,
    follow,
    next_prefix,
    prefix_chooser,
)
from turncheck.sim.race.threads import THREAD_FAULT_KINDS, is_threaded


@dataclass(frozen=True)
class FaultResult:
    """What the fault search ran (``runs``: single faults in asyncio's order of ``singles``,
    schedules with one fault, pairs of ``pairs``), how many runs checked nothing after an
    escaped fault, and the failing run (None: every run passed)."""

    points: int
    runs: int
    singles: tuple[int, int]  # (ran, of)
    scheduled: int
    pairs: tuple[int, int]
    unchecked: int
    failing: RaceRun | None = None
    failed: int = 0  # how many runs failed (the first phase runs all its single faults)
    kinds: tuple[str, ...] = FAULT_KINDS
    threaded: bool = False  # a synchronous test: the fault points are its threads' I/O calls

    def lines(self) -> list[str]:
        """What a pass covered, in the words ``turncheck race --faults`` prints: no fault point
        reached is said so (nothing was injected), and so is a search none of whose runs was
        judged after its fault escaped."""
        if not self.points:
            where = "I/O call of its threads" if self.threaded else "await resumed in its tasks, no thread job"
            return [f"faults: none injected: the test reached no fault point (no {where})"]
        kinds = "/".join(self.kinds)
        unchecked = [
            f"faults unchecked: {self.unchecked} run{'s' if self.unchecked != 1 else ''} ended with the "
            "injected fault escaping the test and no after_run check (those runs checked nothing)"
        ]
        if self.unchecked and self.unchecked == self.runs:
            unchecked = [
                f"faults unchecked: all {self.runs} runs ended with the injected fault escaping the test "
                "and no after_run check: the fault search judged nothing (check with after_run or "
                "Acknowledged, or catch the fault in the test, so that a faulted run is judged)"
            ]
        return [
            f"faults: {self.runs} run{'s' if self.runs != 1 else ''} over {self.points} fault "
            f"point{'s' if self.points != 1 else ''} of {ORDER[self.threaded]} ({kinds}): {self.singles[0]} "
            f"of {self.singles[1]} single faults, {self.scheduled} schedule{'s' if self.scheduled != 1 else ''} "
            f"with one fault, {self.pairs[0]} of {self.pairs[1]} fault pairs",
            *unchecked,
        ]


ORDER = {False: "asyncio's order", True: "the threads' own order"}


def fault_kinds(text: str) -> tuple[str, ...]:
    """The kinds ``--fault-kinds`` names (comma-separated), in search order; an unknown or
    missing one is one :class:`BadParameter` line."""
    kinds = tuple(k.strip() for k in text.split(","))
    if not all(k in FAULT_KINDS for k in kinds) or len(set(kinds)) != len(kinds):
        raise BadParameter(f"--fault-kinds {text!r}: a comma-separated choice of {', '.join(FAULT_KINDS)}")
    return tuple(k for k in FAULT_KINDS if k in kinds)


def _singles(points: int, kinds: tuple[str, ...]) -> list[tuple[tuple[int, str], ...]]:
    return [((p, kind),) for p in range(points) for kind in kinds]


def _pairs(points: int, kinds: tuple[str, ...]) -> Iterator[tuple[tuple[int, str], ...]]:
    for p, q in itertools.combinations(range(points), 2):
        for a, b in itertools.product(kinds, repeat=2):
            yield ((p, a), (q, b))


def search_faults(test: AsyncTest, **options: Any) -> FaultResult:
    """:func:`_search` (its options), with a library's log records of the injected faults not
    printed (:func:`~.faults.fault_logs_dropped`) — also those its abandoned connections log when
    collected, which happens here, before the window closes.

    The caller's objects are frozen for the search (``gc.freeze``, unless the caller froze its
    own): each crashed run's collection (:func:`~.explore._run`) then scans what the runs made,
    not the whole process — in a pytest worker of a million objects, 40 fault runs cost 20 s of
    collections, in a fresh process 0.2 s. What the runs leave is garbage of their own objects,
    so freezing the rest finds all of it; the caller's objects are unfrozen after."""
    freeze = not gc.get_freeze_count()
    if freeze:
        gc.freeze()
    with fault_logs_dropped():
        try:
            return _search(test, **options)
        finally:
            gc.collect()
            if freeze:
                gc.unfreeze()


def _search(test: AsyncTest, *, budget: int = 100, strategy: RaceStrategy = "random", depth: int = 2,
                  seed: int = 0, bounds: Bounds = (100_000, None), error: type[BaseException] = InjectedFault,
                  progress: Callable[[int], None] | None = None,
                  kinds: tuple[str, ...] = FAULT_KINDS) -> FaultResult:  # fmt: skip
    """Inject faults into ``test`` in the order of the module, at most ``budget`` runs; stop at
    the first phase with a failure."""
    threaded = is_threaded(test)
    if threaded:  # a thread cannot be cancelled: its faults are errors and crashes
        kinds = tuple(k for k in kinds if k in THREAD_FAULT_KINDS)
        if not kinds:
            raise BadParameter("--fault-kinds: a synchronous test's threads take error and crash faults, "
                               "not cancel")  # fmt: skip
    counting = Injection({}, error)
    run_controlled(counting.wrap(test), follow(()), *bounds, loop_type=counting.make_loop)
    points = counting.points
    runs = unchecked = 0

    def one(schedule: Schedule, rec: Recording) -> RaceRun:
        nonlocal runs, unchecked
        run = _run(test, schedule, rec, bounds, error)
        runs, unchecked = runs + 1, unchecked + run.unchecked
        if progress is not None:
            progress(runs)
        return run

    singles = _singles(points, kinds)[:budget]
    found = [r for plan in singles if (r := one(Schedule(seed, 0, (), plan), Recording(follow(())))).failure]
    total_pairs = len(kinds) ** 2 * points * (points - 1) // 2
    result = FaultResult(points, runs, (len(singles), len(kinds) * points), 0, (0, total_pairs), unchecked,
                         kinds=kinds, threaded=threaded)  # fmt: skip
    if found:
        best = min(found, key=lambda r: (len(r.steps), r.schedule.faults[0][0]))
        return FaultResult(**{**result.__dict__, "runs": runs, "failing": best, "failed": len(found)})
    scheduled, prefix = 0, [0]
    rng = random.Random(f"turncheck-race-faults:{seed}")
    limit: int = runs + max(0, budget - runs) // 2  # half of what is left; the pairs get the rest
    while points and runs < limit and prefix is not None:
        scheduled += 1
        fault = ((rng.randrange(points), rng.choice(kinds)),)
        if strategy == "exhaustive":
            chooser = prefix_chooser(prefix)
        else:
            chooser = STRATEGIES[strategy](random.Random(f"turncheck-race:{seed}:{scheduled}"), depth, points)
        rec = Recording(chooser)
        run = one(Schedule(seed, scheduled, (), fault), rec)
        if run.failure is not None:
            best = shrink(test, run, bounds, error)
            return FaultResult(
                points, runs, result.singles, scheduled, result.pairs, unchecked, best, 1, kinds, threaded
            )
        prefix = next_prefix(rec.answers, depth) if strategy == "exhaustive" else prefix
    ran = 0
    for plan in _pairs(points, kinds):
        if runs >= budget:
            break
        ran += 1
        run = one(Schedule(seed, 0, (), plan), Recording(follow(())))
        if run.failure is not None:
            return FaultResult(
                points,
                runs,
                result.singles,
                scheduled,
                (ran, total_pairs),
                unchecked,
                run,
                1,
                kinds,
                threaded,
            )
    return FaultResult(points, runs, result.singles, scheduled, (ran, total_pairs), unchecked, kinds=kinds,
                       threaded=threaded)  # fmt: skip
