"""Run one async test under many schedules; on a failure, shrink it and tell the interleaving.

:func:`explore` runs the test first in asyncio's own FIFO order, then under schedules from the
strategy (``random``, ``pct``) or every schedule with at most ``depth`` reorderings
(``exhaustive``), stopping at the first that fails. A failure is an exception out of the test
(its assertion), a deadlock, a livelock, or the test exiting (``sys.exit``, ``os._exit``, its
own ``KeyboardInterrupt``: :mod:`.guard`), which is never a pass. The failing schedule is then **shrunk**: reorderings
are dropped, and lowered, while the test still fails with the same exception type, so what is
reported needs as few departures from asyncio's order as the search could find. The report is
the steps in words (:func:`interleaving`), the token, and how to replay it.

Invariant: a :class:`RaceRun`'s ``schedule.reorders`` are exactly the reorderings its run made,
so :func:`run_schedule` on its token repeats its steps one for one.
"""

from __future__ import annotations

import gc
import random
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

from turncheck.models.errors import BadParameter
from turncheck.sim.race.faults import CHECKS, InjectedFault, Injection, fault_logs_dropped
from turncheck.sim.race.foreign import FOREIGN
from turncheck.sim.race.guard import EXITS, ExitCalled, Overrun, exit_text
from turncheck.sim.race.loop import CLOCK, RAN, Deadlock, Step, run_controlled
from turncheck.sim.race.schedule import (
    STRATEGIES,
    Recording,
    Schedule,
    follow,
    next_prefix,
    prefix_chooser,
)
from turncheck.sim.race.where import ASYNCIO_DIR, RACE_DIR, STDLIB_DIR, place

RaceStrategy = Literal["random", "pct", "exhaustive"]
AsyncTest = Callable[[], Coroutine[Any, Any, Any]]
SHRINK_RUNS = 200
Bounds = tuple[int, float | None]  # a schedule's most steps and wall-clock seconds (None: unbounded)
SHOWN_STEPS = 60


@dataclass(frozen=True)
class Failure:
    """Why a schedule failed: the exception's type and message, and the line that raised it."""

    kind: str
    message: str
    where: str
    exited: bool = False  # the test ended its process (:mod:`.guard`): never a pass

    @property
    def text(self) -> str:
        head = (
            f"{self.kind}: {self.message}" if self.message and not self.exited else self.message or self.kind
        )
        return f"{head} (at {self.where})" if self.where else head


@dataclass(frozen=True)
class RaceRun:
    """One schedule run: its schedule, its steps, and its failure (None: the test passed)."""

    schedule: Schedule
    steps: tuple[Step, ...]
    failure: Failure | None
    points: int
    faults: tuple[str, ...] = ()  # the faults injected (:mod:`.faults`), each with where it hit
    unchecked: bool = False  # an injected fault ended the test and no after-run check ran

    @property
    def interleaving_key(self) -> tuple[str, ...]:
        return tuple(s.actor for s in self.steps)

    @property
    def jobs(self) -> int:
        """Thread jobs (``to_thread``, ``run_in_executor``) that ran."""
        return sum(s.end == RAN for s in self.steps)

    @property
    def timed(self) -> bool:
        """Whether letting time pass (a timer firing) was a choice while a job was in flight."""
        return any(CLOCK in s.runnable for s in self.steps)

    @property
    def chose_time(self) -> bool:
        """Whether the run let time pass where something else could have gone first (a choice)."""
        return any(s.actor == CLOCK and s.chosen for s in self.steps)

    @property
    def started(self) -> bool:
        """Whether a thread the test started itself could answer while a timer was pending."""
        return any(FOREIGN in s.runnable for s in self.steps)

    @property
    def threads(self) -> int:
        """Controlled threads of a synchronous test (:mod:`.threads`) that took a step."""
        return len({s.actor for s in self.steps if s.thread})


@dataclass(frozen=True)
class RaceResult:
    """What an exploration found: how many schedules ran and how many distinct interleavings
    they made, whether the bounded search ran out of schedules, and the shrunk failing run."""

    strategy: str
    seed: int
    depth: int
    schedules: int
    distinct: int
    exhausted: bool
    failing: RaceRun | None = None
    found: RaceRun | None = None
    points: int = 0  # the most choice points one schedule had
    jobs: int = 0  # the most thread jobs one schedule ran
    timed: bool = False  # a timer could fire while a job was in flight, in some schedule
    threads: int = 0  # the most controlled threads one schedule ran (a synchronous test)
    started: bool = False  # a thread the test started could answer before or after a timer
    chose_time: bool = False  # some schedule let a timer fire first where that was a choice


def _failure(exc: BaseException, faulted: bool = False) -> Failure:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(ASYNCIO_DIR)]
    user = [f for f in frames if not f.filename.startswith(RACE_DIR)]
    # a faulted run's after_run checks run from turncheck's own code: no line of it is the test's
    shown = user or ([] if faulted else frames)
    frame = shown[-1] if shown else None
    where = f"{place(frame.filename)}:{frame.lineno} `{(frame.line or '').strip()}`" if frame else ""
    if isinstance(exc, Overrun):  # where the loop was blocked is in the message
        return Failure("Overrun", str(exc), "")
    if isinstance(exc, EXITS):  # where the user's code exited, not the thread pool that ran it
        own = [f for f in user if not f.filename.startswith(STDLIB_DIR)]
        where = f"{place(own[-1].filename)}:{own[-1].lineno} `{(own[-1].line or '').strip()}`" if own else ""
        kind = "os._exit" if isinstance(exc, ExitCalled) else type(exc).__name__
        return Failure(kind, f"{exit_text(exc)}: a test that exits never passes", where, exited=True)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if "bound to a different event loop" in message:  # an asyncio object made outside the test
        message += (
            " (every schedule runs on a loop of its own: make locks, queues and clients inside the test)"
        )
    return Failure(type(exc).__name__, message[:400], "" if isinstance(exc, Deadlock) else where)


def run_schedule(test: AsyncTest, schedule: Schedule, chooser: Callable[..., int] | None = None,
                 max_steps: int = 100_000, max_seconds: float | None = None,
                 error: type[BaseException] = InjectedFault) -> RaceRun:  # fmt: skip
    """Run ``test`` once, under ``chooser`` (default: ``schedule``'s reorderings), injecting
    ``schedule``'s faults (``error``: the type an ``error`` fault raises)."""
    rec = Recording(chooser if chooser is not None else follow(schedule.reorders))
    return _run(test, schedule, rec, (max_steps, max_seconds), error)


def _same(run: RaceRun, kind: str) -> bool:
    return run.failure is not None and run.failure.kind == kind


def shrink(test: AsyncTest, run: RaceRun, bounds: Bounds = (100_000, None),
           error: type[BaseException] = InjectedFault) -> RaceRun:  # fmt: skip
    """Fewer and smaller reorderings that still fail with the same exception type: first every
    schedule with fewer reorderings, fewest first (a bounded exhaustive search), then dropping
    and lowering the found schedule's reorderings, runs of them first. A schedule that ran past
    its wall-clock bound is not shrunk. Its faults are kept as they are."""
    assert run.failure is not None
    if run.failure.kind == "Overrun":  # each try could take the whole bound again
        return run
    kind, best, tries = run.failure.kind, run, 0
    for depth in range(len(run.schedule.reorders)):
        prefix: list[int] | None = []
        while prefix is not None and tries < SHRINK_RUNS // 2:
            rec = Recording(prefix_chooser(prefix))
            tries += 1
            again = _run(test, Schedule(run.schedule.seed, run.schedule.index, (), run.schedule.faults),
                         rec, bounds, error)  # fmt: skip
            if _same(again, kind):
                return _greedy(test, again, kind, tries, bounds, error)
            prefix = next_prefix(rec.answers, depth)
    return _greedy(test, best, kind, tries, bounds, error)


def _greedy(test: AsyncTest, best: RaceRun, kind: str, tries: int, bounds: Bounds,
            error: type[BaseException]) -> RaceRun:  # fmt: skip
    changed = True
    while changed and tries < SHRINK_RUNS:
        changed = False
        current, n = best.schedule.reorders, len(best.schedule.reorders)
        candidates = []  # runs of reorderings dropped, halves first (delta debugging), then single ones
        for size in (n // 2**e for e in range(1, n.bit_length()) if n // 2**e > 1):
            candidates += [current[:k] + current[k + size :] for k in range(0, n, size)]
        candidates += [current[:k] + current[k + 1 :] for k in range(n)]
        candidates += [
            current[:k] + ((p, 1),) + current[k + 1 :] for k, (p, i) in enumerate(current) if i > 1
        ]
        for reorders in candidates[: SHRINK_RUNS - tries]:
            tries += 1
            origin = Schedule(best.schedule.seed, best.schedule.index, reorders, best.schedule.faults)
            again = run_schedule(test, origin, None, *bounds, error)
            size = (len(again.schedule.reorders), sum(i for _, i in again.schedule.reorders))
            if _same(again, kind) and size < (len(current), sum(i for _, i in current)):
                best, changed = again, True
                break
    return best


def _run(test: AsyncTest, origin: Schedule, rec: Recording, bounds: Bounds,
         error: type[BaseException] = InjectedFault) -> RaceRun:  # fmt: skip
    """One run; a schedule with faults runs on the faulting loop, its test wrapped with the
    after-run checks (:mod:`.faults`), one without runs exactly as before faults existed."""
    if not origin.faults:
        exc, steps = run_controlled(test, rec, *bounds)
        return RaceRun(Schedule(origin.seed, origin.index, rec.reorders()), tuple(steps),
                       None if exc is None else _failure(exc), len(rec.answers))  # fmt: skip
    injection = Injection(dict(origin.faults), error)
    with fault_logs_dropped():
        exc, steps = run_controlled(injection.wrap(test), rec, *bounds, loop_type=injection.make_loop)
        injection.close()
        if injection.loop is not None and injection.loop.crashed:
            gc.collect()  # the crashed coroutines' chains, collected while their noise is dropped
    steps = [s for s in steps if s.actor != CHECKS]  # the wrapper's own steps are not the test's
    return RaceRun(Schedule(origin.seed, origin.index, rec.reorders(), origin.faults), tuple(steps),
                   None if exc is None else _failure(exc, True), len(rec.answers), injection.hits,
                   injection.unchecked)  # fmt: skip


def explore(test: AsyncTest, *, schedules: int = 100, strategy: RaceStrategy = "random", depth: int = 2,
            seed: int = 0, max_steps: int = 100_000, max_seconds: float | None = None,
            progress: Callable[[int], None] | None = None) -> RaceResult:  # fmt: skip
    """Run up to ``schedules`` schedules of ``test`` (the first in asyncio's order); stop at the
    first failure and shrink it."""
    if schedules < 1:
        raise BadParameter(f"--schedules must be >= 1, got {schedules}")
    if depth < 1:
        raise BadParameter(f"--depth must be >= 1, got {depth}")
    if strategy not in (*STRATEGIES, "exhaustive"):
        raise BadParameter(f"--strategy must be random, pct or exhaustive, got {strategy!r}")
    seen: set[tuple[str, ...]] = set()
    horizon, exhausted, jobs, timed, threads, started, chose = 1, False, 0, False, 0, False, False
    prefix: list[int] = []
    index = 0
    for index in range(schedules):
        schedule = Schedule(seed, index)
        if strategy == "exhaustive":
            chooser = prefix_chooser(prefix)
        elif index == 0:
            chooser = follow(())
        else:
            chooser = STRATEGIES[strategy](random.Random(f"turncheck-race:{seed}:{index}"), depth, horizon)
        rec = Recording(chooser)
        run = _run(test, schedule, rec, (max_steps, max_seconds))
        seen.add(run.interleaving_key)
        horizon, jobs, timed = max(horizon, run.points), max(jobs, run.jobs), timed or run.timed
        threads, started, chose = max(threads, run.threads), started or run.started, chose or run.chose_time
        if progress is not None:
            progress(index + 1)
        if run.failure is not None:
            return RaceResult(strategy, seed, depth, index + 1, len(seen), False,
                              shrink(test, run, (max_steps, max_seconds)), run, horizon, jobs, timed,
                              threads, started, chose)  # fmt: skip
        if strategy == "exhaustive":
            following = next_prefix(rec.answers, depth)
            if following is None:
                exhausted = True
                break
            prefix = following
    return RaceResult(strategy, seed, depth, index + 1, len(seen), exhausted, None, None, horizon, jobs, timed,
                      threads, started, chose)  # fmt: skip


UNCONTROLLED = (
    "not controlled: real sockets, subprocesses and threads the test starts itself (they run at "
    "this machine's pace and are never reordered); inside a job's thread only time.sleep is a "
    "scheduling point (other blocking calls run whole), and a job on an executor the test passes "
    "runs whole"
)

STARTED_EXPLORED = (
    "the answer (call_soon_threadsafe, wrap_future) of a thread the test started itself, taken "
    "before or after each timer pending while it ran"
)
NOT_CHOSEN = (
    "a timer pending while one ran never fired first in these schedules — production's order when "
    "the job takes real time was NOT run (more schedules, or --strategy exhaustive, run it)"
)
STARTED_NOT_CHOSEN = (
    "the answer of a thread the test started itself, always taken before the pending timer — the "
    "timer first (production's order when the thread takes real time) was NOT run (more "
    "schedules, or --strategy exhaustive, run it)"
)
STARTED_UNCONTROLLED = (
    "not controlled: what a thread the test started itself does before it answers (it runs at this "
    "machine's pace, and two of its answers are never reordered), real sockets and subprocesses; "
    "inside a job's thread only time.sleep is a scheduling point (other blocking calls run whole), "
    "and a job on an executor the test passes runs whole"
)

STARTED_REPLAY = (
    "note: a thread the test started itself ran here: the token replays the choices, not the "
    "thread's timing (it runs at this machine's pace), so a replay on a busy machine may differ"
)


THREADS_UNCONTROLLED = (
    "not controlled: I/O outside those calls (a C extension's own file or network I/O, os.write, "
    "mmap), processes and sockets; a lock made before the run (at import) is a real lock, and a "
    "thread waiting on it stalls the run until --max-seconds"
)
THREADS_EXPLORED = (
    "at every I/O call (open and its file's read/write/flush/close, os.replace/rename/fsync, "
    "sqlite3 execute/commit) and every lock, join and pool queue waited on"
)


def _order(result: RaceResult) -> str:
    return "the threads' own order" if result.threads else "asyncio's order"


def ok_report(result: RaceResult) -> list[str]:
    """What a pass covered, as ``turncheck race`` prints it: how many schedules, whether that is
    every schedule within the bound or a sample, the choice points, whether thread work and
    timers were interleaved, and what the scheduler does not control."""
    if result.exhausted:
        space = f"every schedule within {result.depth} reorderings of {_order(result)}"
    elif result.strategy == "exhaustive":
        space = f"not every schedule: the search within {result.depth} reorderings stopped at --schedules"
    else:
        space = f"a {'PCT' if result.strategy == 'pct' else 'random'} sample, not every schedule"
    if not result.jobs:
        threads = "no thread work (to_thread, run_in_executor) ran to interleave"
    else:
        threads = (f"up to {result.jobs} thread job{'s' if result.jobs != 1 else ''} a schedule, each one's "
                   "effects (to each time.sleep in it) and its delivery separate steps, "
                   + (("timers firing while they ran" if result.chose_time else NOT_CHOSEN)
                      if result.timed else "no timer pending while one ran"))  # fmt: skip
    explored = f"explored: the order of tasks at every await; {threads}"
    if result.started:
        explored += f"; {STARTED_EXPLORED if result.chose_time else STARTED_NOT_CHOSEN}"
    if result.threads:
        many = f"up to {result.threads} threads" if result.threads > 1 else "its one thread"
        explored = f"explored: the order of {many} {THREADS_EXPLORED}"
    return [
        f"OK: {result.schedules} schedule{'s' if result.schedules != 1 else ''} passed, {space}; "
        f"{result.distinct} distinct interleaving{'s' if result.distinct != 1 else ''}, "
        f"up to {result.points} choice point{'s' if result.points != 1 else ''} a schedule",
        explored,
        THREADS_UNCONTROLLED if result.threads else STARTED_UNCONTROLLED if result.started else UNCONTROLLED,
    ]


def interleaving(run: RaceRun, shown: int = SHOWN_STEPS) -> list[str]:
    """The steps in words: who ran, from which await to which; a reordering says whom asyncio
    would have run instead. Long runs keep their first and last steps."""
    lines = []
    for k, s in enumerate(run.steps, 1):
        line = f"{k:>3}. {s.actor}: from {s.start.split(' `', 1)[0]} to {s.end}"
        if s.reordered:
            line += f"   [reordered: {'the threads' if s.thread else 'asyncio'} would run {s.runnable[0]}]"
        lines.append(line)
    if len(lines) > shown:
        half = shown // 2
        lines = lines[:half] + [f"     … {len(lines) - 2 * half} steps …"] + lines[-half:]
    return lines


def failure_report(run: RaceRun, replay: str, test: str = "the test") -> list[str]:
    """A failing schedule as ``turncheck race`` and the pytest plugin print it: the failure, the
    interleaving, the token and ``replay`` (how to run it again) with the token. A test that
    exited is one line: how it exited, where, the token and the replay."""
    assert run.failure is not None
    n = len(run.schedule.reorders)
    order = "the threads' own order" if run.threads else "asyncio's order"
    if run.failure.exited:
        return [
            f"FAILED: {test} exited under schedule {run.schedule.token} — {run.failure.text}; replay: {replay}"
        ]
    return [
        f"FAILED: {run.failure.text}",
        f"interleaving ({len(run.steps)} steps, {n} reordering{'s' if n != 1 else ''} of {order}):",
        *interleaving(run),
        *(f"fault: {hit}" for hit in run.faults),
        f"schedule {run.schedule.token}",
        f"replay: {replay}",
        *([STARTED_REPLAY] if run.started else []),
    ]
