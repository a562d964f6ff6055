"""``turncheck race FILE.py:test_name``: the user's own test under controlled schedules.

An ``async def`` test's tasks, or a plain ``def`` test's threads and their I/O calls
(:mod:`turncheck.sim.race.threads`). Runs the test first in asyncio's own order (or the
threads' own), then under ``--schedules`` schedules of ``--strategy`` (:mod:`turncheck.sim.race`). Exit 0 when every schedule passes (saying what
was explored — a sample or every schedule within the bound, the choice points, whether thread
work and timers were interleaved — and what the scheduler does not control), 1 at the first
failing one — its failure, the shrunk interleaving in words, its token and the command that
replays it; a test that exits (any ``sys.exit`` code, ``os._exit``, its own
``KeyboardInterrupt``) is such a failure, in one line, so the test's code never reads as
turncheck's — and 2 for a reference that names no test function or a malformed token; a real
Ctrl-C is 130 as for every command. ``--schedule TOKEN`` runs that one schedule.
"""

from __future__ import annotations

import inspect
import shlex
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from turncheck.cli.options import FormatOpt, QuietOpt, SeedOpt
from turncheck.cli.outputs import check_output_file
from turncheck.cli.progress import end_line, progress_for
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter

if TYPE_CHECKING:
    from turncheck.sim.race.explore import RaceResult, RaceRun
    from turncheck.sim.race.fault_search import FaultResult

StrategyName = Literal["random", "pct", "exhaustive"]
DEFAULT_FAULT_ERROR = "turncheck.sim.race.faults:InjectedFault"
LEFT_RUNNING: list[str] = []  # threads the test started that still ran when the command ended
NOT_CONTROLLED = {  # by whether the test is a def test whose threads were scheduled
    False: ["real sockets", "subprocesses", "threads the test starts itself"],
    True: [
        "I/O outside the paused calls (C extensions' own I/O, os.write, mmap)",
        "subprocesses",
        "sockets",
        "locks made before the run (at import)",
    ],
}


def load_test(ref: str) -> Any:
    """The test named by ``file.py:name`` or ``package.module:name``, taking no arguments: an
    ``async def``, or a plain ``def`` whose threads are scheduled (:mod:`turncheck.sim.race.threads`)."""
    from turncheck.models.user_code import load_object

    test = load_object(ref, "race test")
    if not inspect.iscoroutinefunction(test) and not inspect.isfunction(test):
        raise BadParameter(f"{ref!r} is not a function (turncheck race runs an async def or a def test)")
    required = [
        p for p in inspect.signature(test).parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]  # fmt: skip
    if required:
        raise BadParameter(f"{ref!r} takes arguments ({required[0].name}); a race test takes none")
    if inspect.iscoroutinefunction(test):
        return test
    from turncheck.sim.race.threads import threaded_test

    return threaded_test(test)  # a synchronous test: its threads and I/O calls are scheduled


def _json(ref: str, result: RaceResult | None, run: RaceRun | None, replay: str) -> dict[str, Any]:
    out: dict[str, Any] = {"test": ref}
    if result is not None:
        out |= {"strategy": result.strategy, "seed": result.seed, "depth": result.depth,
                "schedules": result.schedules, "distinct": result.distinct, "exhausted": result.exhausted,
                "choice_points": result.points, "thread_jobs": result.jobs, "timers_while_jobs": result.timed,
                "threads": result.threads, "not_controlled": NOT_CONTROLLED[bool(result.threads)]}  # fmt: skip
    out["verdict"] = "failed" if run is not None and run.failure is not None else "ok"
    if run is not None:
        out["schedule"] = run.schedule.token
        if run.faults:
            out["faults_injected"] = list(run.faults)
        out["steps"] = [
            {"task": s.actor, "from": s.start, "to": s.end, "reordered": s.reordered} for s in run.steps
        ]
        if run.failure is not None:
            out["failure"] = {
                "type": run.failure.kind,
                "message": run.failure.message,
                "at": run.failure.where,
                "exited": run.failure.exited,
            }
            out["replay"] = f"{replay} --schedule {run.schedule.token}"
    return out


SchedulesOpt = Annotated[
    int,
    typer.Option("--schedules", "-n", min=1, max=1_000_000,
                 help="Schedules to run (the first is asyncio's own order, thread work and "
                      "code taking no time: where a thread's work takes real time, production's "
                      "order is one reordering away)."),
]  # fmt: skip
StrategyOpt = Annotated[
    StrategyName,
    typer.Option(
        "--strategy",
        help="random (a random runnable task at every await), pct (priorities with --depth − 1 change "
        "points) or exhaustive (every schedule with at most --depth reorderings, depth first).",
    ),
]
DepthOpt = Annotated[
    int,
    typer.Option("--depth", "-d", min=1, max=50, help="pct's bug depth; exhaustive's bound on reorderings."),
]
ScheduleOpt = Annotated[
    str | None, typer.Option("--schedule", help="Run only this schedule token (as a failure printed it).")
]
MaxStepsOpt = Annotated[
    int, typer.Option("--max-steps", min=10, help="A schedule longer than this fails as a livelock.")
]
MaxSecondsOpt = Annotated[
    float,
    typer.Option(
        "--max-seconds", min=0.01, max=86_400,
        help="A schedule running longer than this (wall clock) fails, naming where the loop was "
        "blocked (a synchronous call such as time.sleep, or thread work that never returned).",
    ),
]  # fmt: skip
HtmlOpt = Annotated[
    Path | None,
    typer.Option("--html", help="Also write the failing (or replayed) schedule as a trace viewer page."),
]
FaultsOpt = Annotated[
    bool,
    typer.Option(
        "--faults",
        help="Once every schedule passes, inject faults at the awaits (an error, a cancellation, a "
        "crash): every single fault in asyncio's order, then one fault a schedule, then pairs, "
        "within --schedules runs; the shortest failing run is reported.",
    ),
]
FaultErrorOpt = Annotated[
    str,
    typer.Option("--fault-error", help="The exception an injected error raises: a builtin or pkg.mod:Name."),
]
FaultKindsOpt = Annotated[
    str, typer.Option("--fault-kinds", help="The faults --faults injects: any of error,cancel,crash.")
]


@dataclass(frozen=True)
class RaceOptions:
    """How ``race`` explores: what ``explore`` and ``search_faults`` take, gathered once."""

    schedules: int
    strategy: StrategyName
    depth: int
    seed: int
    bounds: tuple[int, float]
    faults: bool
    error: type[BaseException]
    kinds: tuple[str, ...]


@dataclass
class RaceOutcome:
    """What ``race`` found: the exploration (None when one token was replayed), the fault search
    (None without ``--faults`` or when a fault-free schedule already failed), and the run shown."""

    result: RaceResult | None = None
    searched: FaultResult | None = None
    run: RaceRun | None = None

    @property
    def failed(self) -> bool:
        return self.run is not None and self.run.failure is not None


def _explore(test: Any, test_ref: str, options: RaceOptions, quiet: bool) -> RaceOutcome:
    """Every schedule within the options, then (``--faults``, all passed) the fault search."""
    from turncheck.sim.race.explore import explore
    from turncheck.sim.race.fault_search import search_faults

    bar = progress_for(f"race {test_ref}", quiet, "schedules")
    found = RaceOutcome()
    try:
        found.result = explore(test, schedules=options.schedules, strategy=options.strategy, depth=options.depth,
                               seed=options.seed, max_steps=options.bounds[0], max_seconds=options.bounds[1],
                               progress=lambda done: bar(done, options.schedules))  # fmt: skip
        found.run = found.result.failing
        if options.faults and found.run is None:
            found.searched = search_faults(test, budget=options.schedules, strategy=options.strategy,
                                           depth=options.depth, seed=options.seed, bounds=options.bounds,
                                           error=options.error, kinds=options.kinds,
                                           progress=lambda done: bar(done, options.schedules))  # fmt: skip
            found.run = found.searched.failing
    finally:
        end_line(bar)
    return found


def _text(test_ref: str, found: RaceOutcome, schedules: int, replay: str) -> list[str]:
    """The table output: the header, then the failure, the replayed run or what a pass covered."""
    from turncheck.sim.race.explore import failure_report, ok_report

    result, searched, run = found.result, found.searched, found.run
    lines: list[str] = []
    if result is not None:
        lines.append(f"race {test_ref} · {result.strategy} · depth {result.depth} · seed {result.seed}")
    if run is not None and run.failure is not None and run.failure.exited:
        return failure_report(run, f"{replay} --schedule {run.schedule.token}", test_ref)
    if run is not None and run.failure is not None:
        if searched is not None and result is not None:
            lines.append(f"faults: {searched.failed} of {searched.runs} fault runs failed, shown the one with the "
                         f"fewest steps; all {result.schedules} schedules without faults passed")  # fmt: skip
        elif result is not None and result.found is not None:
            shrunk_from = len(result.found.schedule.reorders)
            shrunk = (
                f" (shrunk from {shrunk_from} reorderings)"
                if shrunk_from > len(run.schedule.reorders)
                else ""
            )
            lines.append(f"schedule {result.schedules} of {schedules} failed{shrunk}")
        return lines + failure_report(run, f"{replay} --schedule {run.schedule.token}")
    if run is not None:
        lines.append(f"schedule {run.schedule.token} passes ({len(run.steps)} steps)" + (
            "; the injected fault escaped the test and no after_run check ran: nothing was checked after it"
            if run.unchecked else ""))  # fmt: skip
    elif result is not None:
        lines += ok_report(result) + (searched.lines() if searched is not None else [])
    return lines


def race_command(
    test_ref: Annotated[
        str,
        typer.Argument(metavar="TEST", help="The test: path/file.py:test_name or package.module:test_name "
                       "(an async def, or a def whose threads are scheduled)."),
    ],
    schedules: SchedulesOpt = 100,
    strategy: StrategyOpt = "random",
    depth: DepthOpt = 2,
    seed: SeedOpt = 0,
    schedule: ScheduleOpt = None,
    max_steps: MaxStepsOpt = 100_000,
    max_seconds: MaxSecondsOpt = 60.0,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    html: HtmlOpt = None,
    faults: FaultsOpt = False,
    fault_error: FaultErrorOpt = DEFAULT_FAULT_ERROR,
    fault_kinds: FaultKindsOpt = "error,cancel,crash",
) -> int:  # fmt: skip
    """Run your async test (or a def test's threads) under controlled schedules; exit 1 with a replayable
    interleaving if one fails."""
    before = set(threading.enumerate())
    try:
        return _race(test_ref, schedules, strategy, depth, seed, schedule, max_steps, max_seconds, fmt,
                     quiet, html, faults, fault_error, fault_kinds)  # fmt: skip
    finally:
        started = [t for t in threading.enumerate() if not t.daemon and t not in before]
        for thread in started[:8]:  # one ending just now is not left running
            thread.join(timeout=0.25)
        LEFT_RUNNING[:] = [t.name for t in started if t.is_alive()]


def _race(test_ref: str, schedules: int, strategy: StrategyName, depth: int, seed: int, schedule: str | None,
          max_steps: int, max_seconds: float, fmt: str, quiet: bool, html: Path | None, faults: bool,
          fault_error: str, fault_kinds: str) -> int:  # fmt: skip
    from turncheck.sim.race.explore import run_schedule
    from turncheck.sim.race.fault_search import fault_kinds as kinds_of
    from turncheck.sim.race.faults import fault_error as error_type
    from turncheck.sim.race.schedule import parse_token

    token = parse_token(schedule) if schedule is not None else None
    options = RaceOptions(schedules, strategy, depth, seed, (max_steps, max_seconds), faults,
                          error_type(fault_error), kinds_of(fault_kinds))  # fmt: skip
    if html is not None:
        check_output_file(html, "--html")
    test = load_test(test_ref)
    replay = f"turncheck race {shlex.quote(test_ref)}"
    if fault_error != DEFAULT_FAULT_ERROR:  # a fault token replays with the same exception type
        replay += f" --fault-error {shlex.quote(fault_error)}"
    if token is not None:
        found = RaceOutcome(run=run_schedule(test, token, max_steps=max_steps, max_seconds=max_seconds,
                                             error=options.error))  # fmt: skip
    else:
        found = _explore(test, test_ref, options, quiet)
    if html is not None and found.run is not None:
        from turncheck.reports.race_view import race_view
        from turncheck.reports.viewer import write_view_page

        write_view_page(race_view(test_ref, found.run), html, f"turncheck race: {test_ref}")
    if fmt == "json":
        out = _json(test_ref, found.result, found.run, replay)
        if found.searched is not None:
            searched = found.searched
            out["faults"] = {"fault_points": searched.points, "runs": searched.runs, "unchecked": searched.unchecked,
                             "single_faults": list(searched.singles), "pairs": list(searched.pairs)}  # fmt: skip
        print_json(out, ensure_ascii=True)
        return 1 if found.failed else 0
    lines = _text(test_ref, found, schedules, replay)
    if html is not None and found.run is not None:
        lines.append(f"trace viewer: {html}")
    print("\n".join(lines))
    sys.stdout.flush()
    return 1 if found.failed else 0


def register(app: typer.Typer) -> None:
    app.command(
        "race",
        help="Run your async test, or a def test's threads, under controlled schedules (random, PCT, exhaustive).",
    )(race_command)
