"""``turncheck race`` with real durations, and a race test that exits (issue 50 items 3 and 4).

The false pass it kills: a JSON-file store whose read runs in a thread and takes real time, and
whose write is read-modify-write; one task appends at once, another 10 ms later. Plain
``asyncio.run`` loses an append every time — the late task writes while the first one's read
is still in its thread — and the old ``race`` said every schedule passed, because a thread's
work took no virtual time and a timer fired only when nothing else could run. Now a job's
effects and its delivery are two steps, and letting the clock jump is a choice while a job is in
flight; every strategy and the marker find it, in each variant below (``to_thread``,
``run_in_executor`` on the default and on an explicit executor, the sleep in either task, a
``call_later`` callback, both appends threaded), a token replays it, and the store with a lock
passes. Then the exits: ``sys.exit`` (0 and 3), ``os._exit``, a ``KeyboardInterrupt`` the test
raises, each a failure of one line naming the test and the schedule — never a pass, never a
traceback, never turncheck's own exit code (a real Ctrl-C: tests/test_cli_interrupt.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest

from turncheck.sim.race.explore import explore, failure_report, ok_report, run_schedule
from turncheck.sim.race.loop import CLOCK, run_controlled
from turncheck.sim.race.schedule import parse_token

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/races/json_store.py"
EXITS = Path(__file__).resolve().parent / "race_exits.py"

Offload = Callable[[Callable[[], Any]], Awaitable[Any]]


class FileStore:
    """One session in a JSON file: the read in a thread (``offload``), the write where the
    caller is; ``read_s`` is the read's real duration (the controlled loop does not need one)."""

    def __init__(self, folder: str, offload: Offload, read_s: float, locked: bool) -> None:
        self.path, self.offload, self.read_s = Path(folder) / "s.json", offload, read_s
        self.lock = asyncio.Lock() if locked else None

    def _read(self) -> list[str]:
        data: list[str] = json.loads(self.path.read_text()) if self.path.exists() else []
        time.sleep(self.read_s)
        return data

    async def append(self, message: str) -> None:
        if self.lock is None:
            data = await self.offload(self._read)
            self.path.write_text(json.dumps([*data, message]))
            return
        async with self.lock:
            data = await self.offload(self._read)
            self.path.write_text(json.dumps([*data, message]))

    async def append_now(self, message: str) -> None:
        """Read and write in the loop's thread (under the lock when there is one)."""
        if self.lock is not None:
            async with self.lock:
                self._append_sync(message)
        else:
            self._append_sync(message)

    def _append_sync(self, message: str) -> None:
        data = json.loads(self.path.read_text()) if self.path.exists() else []
        self.path.write_text(json.dumps([*data, message]))


async def later(append: Awaitable[None]) -> None:
    await asyncio.sleep(0.01)
    await append


SHAPES: dict[str, Callable[[FileStore], Awaitable[Any]]] = {
    "the sleep in the second task": lambda s: asyncio.gather(s.append("a"), later(s.append_now("b"))),
    "the sleep in the first task": lambda s: asyncio.gather(later(s.append_now("a")), s.append("b")),
    "both appends threaded": lambda s: asyncio.gather(s.append("a"), later(s.append("b"))),
}


async def _call_later_shape(s: FileStore) -> None:
    asyncio.get_running_loop().call_later(0.01, lambda: asyncio.ensure_future(s.append_now("b")))
    await s.append("a")
    await asyncio.sleep(0.05)  # the callback's append has run by then, in production and here


SHAPES["loop.call_later"] = _call_later_shape

def own_thread_future(f: Callable[[], Any]) -> Awaitable[Any]:
    """A thread the test starts itself, its answer through a ``concurrent.futures.Future``."""
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
    threading.Thread(target=lambda: fut.set_result(f())).start()
    return asyncio.wrap_future(fut)


def own_thread_callback(f: Callable[[], Any]) -> Awaitable[Any]:
    """A thread the test starts itself, answering by ``call_soon_threadsafe(fut.set_result, a
    list)`` (a first argument that cannot be a weak key: the old loop raised TypeError)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    threading.Thread(target=lambda: loop.call_soon_threadsafe(fut.set_result, f())).start()
    return fut


OFFLOADS: dict[str, Callable[[concurrent.futures.Executor], Offload]] = {
    "to_thread": lambda pool: asyncio.to_thread,
    "run_in_executor(None)": lambda pool: lambda f: asyncio.get_running_loop().run_in_executor(None, f),
    "run_in_executor(pool)": lambda pool: lambda f: asyncio.get_running_loop().run_in_executor(pool, f),
    # threads the loop does not start: their answer and a pending timer are a choice (sim/race/foreign.py)
    "a thread the test starts (wrap_future)": lambda pool: own_thread_future,
    "a thread the test starts (call_soon_threadsafe)": lambda pool: own_thread_callback,
    "anyio.to_thread.run_sync": lambda pool: anyio.to_thread.run_sync,
}
STARTED = [name for name in OFFLOADS if "the test starts" in name or "anyio" in name]


def make_test(shape: str, offload: str, read_s: float = 0.0, locked: bool = False) -> Callable[[], Any]:
    if offload in STARTED:  # a thread the loop does not control answers at its own pace: one that
        read_s = max(read_s, 0.02)  # answered before wrap_future was called would leave no choice

    async def test() -> None:
        with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(4) as pool:
            store = FileStore(folder, OFFLOADS[offload](pool), read_s, locked)
            await SHAPES[shape](store)
            kept = json.loads(store.path.read_text())
        assert sorted(kept) == ["a", "b"], f"an append was lost: {kept}"

    return test


VARIANTS = [(shape, offload) for shape in SHAPES for offload in OFFLOADS]


@pytest.mark.parametrize(("shape", "offload"), VARIANTS)
def test_plain_asyncio_loses_an_append_in_every_variant(shape: str, offload: str) -> None:
    """The premise: plain asyncio loses the append (idle, every run; on a loaded machine a run
    may miss the timing, so up to ten runs are tried and one loss is the proof)."""
    assert_plain_asyncio_loses(make_test(shape, offload, read_s=0.03))


def assert_plain_asyncio_loses(test: Callable[[], Any]) -> None:
    """One lost append in up to ten plain ``asyncio.run`` runs (idle, every run loses it)."""
    for _ in range(10):
        try:
            asyncio.run(test())
        except AssertionError:
            return
    pytest.fail("plain asyncio kept both appends in ten runs")


@pytest.mark.parametrize("strategy", ["random", "pct", "exhaustive"])
@pytest.mark.parametrize(("shape", "offload"), VARIANTS)
def test_every_strategy_finds_it_and_its_token_replays_it(shape: str, offload: str, strategy: str) -> None:
    result = explore(make_test(shape, offload), strategy=strategy, schedules=100)  # type: ignore[arg-type]
    run = result.failing
    assert run is not None and run.failure is not None, result
    assert run.failure.kind == "AssertionError" and "an append was lost" in run.failure.message
    assert any(s.actor == CLOCK for s in run.steps)  # time passed while a job was in flight
    again = run_schedule(make_test(shape, offload), parse_token(run.schedule.token))
    if offload in STARTED:  # the choices replay; the thread's own pace is this machine's (the report says so)
        assert again.failure == run.failure and run.started and "the thread's timing" in failure_report(run, "")[-1]
        return
    assert again.failure == run.failure and again.steps == run.steps


def whole_append_in_threads(offload: str, read_s: float = 0.0) -> Callable[[], Any]:
    """Each append read-sleep-writes inside one thread call: the race is between two threads."""

    def append(path: Path, message: str) -> None:
        data = json.loads(path.read_text()) if path.exists() else []
        time.sleep(read_s)
        path.write_text(json.dumps([*data, message]))

    async def test() -> None:
        with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(4) as pool:
            path, off = Path(folder) / "s.json", OFFLOADS[offload](pool)
            await asyncio.gather(off(lambda: append(path, "a")), later(off(lambda: append(path, "b"))))
            kept = json.loads(path.read_text())
        assert sorted(kept) == ["a", "b"], f"an append was lost: {kept}"

    return test


@pytest.mark.parametrize("strategy", ["random", "pct", "exhaustive"])
@pytest.mark.parametrize("offload", ["to_thread", "run_in_executor(None)"])
def test_a_sleep_inside_a_job_is_a_scheduling_point(offload: str, strategy: str) -> None:
    assert_plain_asyncio_loses(whole_append_in_threads(offload, read_s=0.03))  # the two threads overlap
    run = explore(whole_append_in_threads(offload), strategy=strategy, schedules=100).failing  # type: ignore[arg-type]
    assert run is not None and run.failure is not None and "an append was lost" in run.failure.message
    assert any(s.end == "(in time.sleep, in its thread)" for s in run.steps)
    again = run_schedule(whole_append_in_threads(offload), parse_token(run.schedule.token))
    assert again.steps == run.steps and again.failure == run.failure


@pytest.mark.parametrize("strategy", ["random", "pct", "exhaustive"])
@pytest.mark.parametrize("offload", ["to_thread", STARTED[0]])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_locked_store_passes_every_schedule(shape: str, offload: str, strategy: str) -> None:
    result = explore(make_test(shape, offload, locked=True), strategy=strategy, schedules=150, depth=3)  # type: ignore[arg-type]
    assert result.failing is None
    if offload in STARTED:  # the thread's answer before or after the timer was a choice
        assert result.started and not result.jobs
    else:
        assert result.jobs >= 1 and result.timed  # the choices were there to make
    if strategy == "exhaustive":
        assert result.exhausted


@pytest.mark.parametrize("strategy", ["random", "pct", "exhaustive"])
def test_a_schedule_of_many_ready_tasks_keeps_few_names_a_step(strategy: str) -> None:
    """#57: one schedule of gather(10 000 sleeps) took 16.7 s (57 s here) and 1.2 GB: every
    step sorted the ready tasks and kept all their names. A step keeps 16 names (the first, a
    "(… N more)", the chosen and the last) and index 0 is still asyncio's FIFO order."""
    order: list[int] = []

    async def test() -> None:
        async def one(i: int) -> None:
            await asyncio.sleep(0)
            order.append(i)

        await asyncio.gather(*(one(i) for i in range(2000)))

    result = explore(test, strategy=strategy, schedules=2)  # type: ignore[arg-type]
    assert result.failing is None and result.points > 2000
    order.clear()
    fifo = run_schedule(test, parse_token("0.0:"))
    assert fifo.failure is None and order == list(range(2000))
    assert max(len(s.runnable) for s in fifo.steps) == 16
    run = run_schedule(test, parse_token("0.3:1=1999"))
    (step,) = [s for s in run.steps if s.chosen == 1999]
    assert step.reordered and len(step.runnable) == 16 and step.runnable[13] == "(… 1985 more)"
    assert step.runnable[14] == step.runnable[15] == step.actor  # the chosen one was the last


def test_a_thread_that_answered_and_ended_is_taken_not_a_deadlock() -> None:
    """The thread called back and ended before the loop waited: its answer is in the inbox (the
    old loop looked for a live thread first and reported a deadlock: seen with aiosqlite's
    connection thread, which ends on close)."""

    async def test() -> int:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        thread = threading.Thread(target=lambda: loop.call_soon_threadsafe(fut.set_result, [1]))
        thread.start()
        thread.join()  # blocks the loop until the thread has answered and ended
        return len(await fut)

    result = explore(test, strategy="exhaustive", schedules=10)
    assert result.failing is None and result.exhausted, result.failing


def test_the_first_schedule_is_asyncios_order_and_time_passes_only_when_chosen() -> None:
    """Index 0 everywhere keeps asyncio's order (the job's effects and delivery first, the timer
    when nothing else can run): the store passes; the clock jump is offered last."""
    run = run_schedule(make_test("the sleep in the second task", "to_thread"), parse_token("0.0:"))
    assert run.failure is None and all(s.actor != CLOCK for s in run.steps)
    offered = [s.runnable for s in run.steps if CLOCK in s.runnable]
    assert offered and all(r[-1] == CLOCK for r in offered)


def test_a_one_worker_executor_runs_its_jobs_in_submission_order() -> None:
    """Production's order: jobs queued on ``max_workers=1`` never overtake each other; on the
    default executor (many workers) they may."""
    for workers, overtaken in ((1, False), (4, True)):
        orders: set[tuple[str, ...]] = set()

        async def test(workers: int = workers, orders: set[tuple[str, ...]] = orders) -> None:
            done: list[str] = []
            with concurrent.futures.ThreadPoolExecutor(workers) as pool:
                loop = asyncio.get_running_loop()
                await asyncio.gather(*(loop.run_in_executor(pool, done.append, n) for n in "xyz"))
            orders.add(tuple(done))

        result = explore(test, strategy="exhaustive", depth=3, schedules=2000)
        assert result.exhausted and result.failing is None
        assert (orders != {("x", "y", "z")}) is overtaken, orders


def test_the_cli_finds_the_example_with_a_token_that_replays_in_another_process() -> None:
    proc = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, cwd=ROOT)
    lost = re.search(r"lost in (\d+) of 50 runs", proc.stdout)  # idle: 50; a loaded machine may miss a few
    assert proc.returncode == 1 and lost and int(lost.group(1)) > 0, proc.stdout
    for strategy in ("random", "pct", "exhaustive"):
        found = turncheck("race", f"{EXAMPLE}:test_no_lost_append", "--strategy", strategy, "-n", "200")
        assert found.returncode == 1, found.stdout + found.stderr
        assert (
            "FAILED: AssertionError: an append was lost" in found.stdout and "(time passes)" in found.stdout
        )
    replay = next(line for line in found.stdout.splitlines() if line.startswith("replay: "))
    again = turncheck(*replay.removeprefix("replay: turncheck ").split())
    assert again.returncode == 1
    steps = [line for line in found.stdout.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert steps == [line for line in again.stdout.splitlines() if line[:4].strip().rstrip(".").isdigit()]


def test_the_ok_line_names_a_thread_the_test_started() -> None:
    """A pass where a thread the test started answered says what of it was explored (its answer
    before or after each timer) and what was not (what it does before it answers) — never the
    bare 'every schedule' of a run that had no such thread."""
    result = explore(make_test(list(SHAPES)[0], STARTED[0], locked=True), strategy="exhaustive")
    lines = ok_report(result)
    assert result.exhausted and "every schedule within 2 reorderings" in lines[0]
    assert "a thread the test started itself, taken before or after each timer" in lines[1]
    assert lines[2].startswith("not controlled: what a thread the test started itself does before it answers")
    plain = ok_report(explore(make_test(list(SHAPES)[0], "to_thread", locked=True), strategy="exhaustive"))
    assert "a thread the test started" not in plain[1]


@pytest.mark.parametrize("offload", ["to_thread", STARTED[0]])
def test_one_schedule_does_not_claim_the_timer_fired_first(offload: str) -> None:
    """-n 1 runs asyncio's order only: the timer never fires while the read is in flight, which
    is production's order when the read takes real time. The old OK line said 'timers firing
    while they ran' all the same; it now says that order was NOT run, and how to run it."""
    test = make_test(list(SHAPES)[0], offload, locked=True)
    one = ok_report(explore(test, schedules=1))
    assert "was NOT run (more schedules, or --strategy exhaustive, run it)" in one[1], one[1]
    assert "timers firing while they ran" not in one[1] and "taken before or after" not in one[1]
    every = ok_report(explore(test, strategy="exhaustive"))
    assert "NOT run" not in every[1]
    lost = explore(make_test(list(SHAPES)[0], offload), schedules=1)
    assert lost.failing is None and "NOT run" in ok_report(lost)[1]  # the unlocked store: not found, and said so


def test_the_ok_line_says_what_was_explored_and_what_is_not_controlled() -> None:
    ok = turncheck("race", f"{EXAMPLE}:test_no_lost_append_locked", "--strategy", "exhaustive", "-d", "3")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    lines = ok.stdout.splitlines()[1:]
    head = re.fullmatch(r"OK: (\d+) schedules passed, every schedule within 3 reorderings of asyncio's order; "
                        r"(\d+) distinct interleavings, up to (\d+) choice points a schedule", lines[0])  # fmt: skip
    assert head is not None and head[1] == head[2] and int(head[3]) > 1, lines[0]
    assert "each one's effects (to each time.sleep in it) and its delivery separate steps" in lines[1]
    assert lines[1].endswith("timers firing while they ran")
    assert lines[2].startswith(
        "not controlled: real sockets, subprocesses and threads the test starts itself"
    )
    assert "only time.sleep is a scheduling point" in lines[2]
    sample = turncheck("race", "examples/races/store.py:test_no_lost_append_locked", "-n", "20")
    assert "a random sample, not every schedule" in sample.stdout and "no thread work" in sample.stdout


EXIT_TESTS = {
    "exit_0": "sys.exit(0)",
    "exit_3": "sys.exit(3)",
    "exit_in_a_child_task": "sys.exit(0)",
    "exit_in_a_thread": "sys.exit(0)",
    "os_exit": "os._exit(0)",
    "os_exit_in_an_unawaited_task": "os._exit(5)",
    "os_exit_in_a_callback": "os._exit(0)",
    "os_exit_caught": "os._exit(0)",
    "keyboard_interrupt": "KeyboardInterrupt raised by the test",
    "exit_in_an_executor_job": "sys.exit(4)",
    "keyboard_interrupt_in_an_executor_job": "KeyboardInterrupt raised by the test",
    "exit_in_a_pool_the_test_passes": "sys.exit(0)",
    "os_exit_in_a_thread_the_test_starts": "os._exit(0)",
}


@pytest.mark.parametrize("name", sorted(EXIT_TESTS))
def test_a_test_that_exits_fails_in_one_line(name: str) -> None:
    ref = f"{EXITS}:{name}"
    proc = turncheck("race", ref, "-n", "5")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr == ""  # no traceback, no "Task exception was never retrieved"
    (line,) = proc.stdout.splitlines()
    assert line.startswith(f"FAILED: {ref} exited under schedule 0.0: — ")
    assert f"{EXIT_TESTS[name]}: a test that exits never passes" in line
    assert line.endswith(f"replay: turncheck race {ref} --schedule 0.0:")
    replayed = turncheck("race", ref, "--schedule", "0.0:")
    assert replayed.returncode == 1 and replayed.stderr == "" and replayed.stdout == proc.stdout


ESCAPES = {
    "own_base_in_a_callback": "OwnBase: the test's own escaped the loop callback _raise_own",
    "generator_exit_in_an_unawaited_task": "GeneratorExit escaped the task generator_exit_in_an_unawaited_task",
    "keyboard_interrupt_in_a_thread_the_test_starts": "KeyboardInterrupt escaped the thread the test started",
    "exit_in_a_thread_the_test_starts": "SystemExit: 3 escaped the thread the test started",
    "error_in_a_thread_the_test_starts": "IndexError: list index out of range escaped the thread the test started",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
@pytest.mark.parametrize("how", [("-n", "3"), ("--strategy", "exhaustive")])
def test_what_production_prints_and_loses_fails_the_schedule(name: str, how: tuple[str, str]) -> None:
    """A BaseException that is no Exception out of a callback or an unawaited task, and anything
    a thread the test started lets escape: production prints it (a SystemExit there ends only
    that thread, silently) and the old race printed that traceback and passed (exit 0)."""
    ref = f"{EXITS}:{name}"
    proc = turncheck("race", ref, *how, "-q")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr == ""  # no traceback
    assert f"FAILED: Escaped: {ESCAPES[name]}" in proc.stdout
    assert "(production " in proc.stdout and f"replay: turncheck race {ref} --schedule" in proc.stdout


def test_a_base_exception_the_test_catches_is_no_failure() -> None:
    proc = turncheck("race", f"{EXITS}:own_base_caught", "--strategy", "exhaustive")
    assert proc.returncode == 0 and "OK: " in proc.stdout, (proc.stdout, proc.stderr)


def test_an_exit_in_process_is_the_schedules_outcome_and_os_exit_is_restored() -> None:
    import race_exits  # type: ignore[import-not-found]

    real, real_sleep, real_hook = os._exit, time.sleep, threading.excepthook
    for name in EXIT_TESTS:
        exc, _ = run_controlled(getattr(race_exits, name), lambda c: 0)
        assert isinstance(exc, (SystemExit, KeyboardInterrupt)) or type(exc).__name__ == "ExitCalled", name
    assert os._exit is real and time.sleep is real_sleep and threading.excepthook is real_hook


@pytest.mark.parametrize(
    ("name", "where"),
    [("blocks_the_loop", "a synchronous call at tests/race_exits.py:"),
     ("thread_work_never_returns", "thread work (Event.wait) that had not returned")],
)  # fmt: skip
def test_a_schedule_past_its_wall_clock_bound_fails_naming_where_the_loop_was_blocked(
    name: str, where: str
) -> None:
    started = time.monotonic()
    proc = turncheck("race", f"tests/race_exits.py:{name}", "--max-seconds", "0.5", "-n", "3")
    assert time.monotonic() - started < 30  # a stuck job thread does not hold the process at exit
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "FAILED: Overrun: the schedule ran past its wall-clock bound of 0.5 s: the loop was blocked in "
        in proc.stdout
    )
    assert where in proc.stdout and "Traceback" not in proc.stderr


MARKED = """
import asyncio, os, sys, time, pytest
sys.path.insert(0, {root!r})
from examples.races import json_store

@pytest.mark.race(schedules=200)
async def test_lost():
    await json_store.test_no_lost_append()

@pytest.mark.race(schedules=200, strategy="pct")
async def test_lost_pct():
    await json_store.test_no_lost_append()

@pytest.mark.race(schedules=50)
async def test_locked():
    await json_store.test_no_lost_append_locked()

@pytest.mark.race(schedules=5)
async def test_exit_0():
    sys.exit(0)

@pytest.mark.race(schedules=5)
async def test_os_exit():
    os._exit(0)

@pytest.mark.race(schedules=5)
async def test_interrupt():
    raise KeyboardInterrupt

@pytest.mark.race(max_seconds=0.5)
async def test_blocks():
    time.sleep(3600)
"""


def test_the_pytest_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marked=MARKED.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=6)
    out = result.stdout.str()
    assert "an append was lost" in out and "(time passes)" in out
    for name, how in (("test_exit_0", "sys.exit(0)"), ("test_os_exit", "os._exit(0)"),
                      ("test_interrupt", "KeyboardInterrupt raised by the test")):  # fmt: skip
        assert f"test_marked.py::{name} exited under schedule 0.0: — {how}" in out
    assert "Task exception was never retrieved" not in out
    assert "wall-clock bound of 0.5 s: the loop was blocked in a synchronous call at test_marked.py:" in out


sys.path.insert(0, str(EXITS.parent))


def turncheck(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turncheck", *argv], capture_output=True, text=True, cwd=ROOT
    )
