"""``turncheck race --faults``: errors, cancellations and crashes between writes (issue 53).

The compaction of openai/openai-agents-python#3116 clears the session, then re-adds; a failure
between the two loses the history. No fault-free schedule shows it (plain race passes), the
fault search finds it with the fault point named and a token that replays it, and the same
compaction written as one swap passes. Then each fault kind's meaning, the tokens (old ones
still replay), the ``Acknowledged`` invariants, ``--fault-error`` and the pytest marker.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from examples.races import compaction_faults as example
from examples.races.compaction_faults import Session
from turncheck.sim.race.explore import explore, run_schedule
from turncheck.sim.race.fault_search import search_faults
from turncheck.sim.race.faults import Acknowledged, Crashed, InjectedFault, after_run
from turncheck.sim.race.schedule import Schedule, parse_token

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/races/compaction_faults.py"


def turncheck(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "turncheck", *argv], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ))  # fmt: skip


def test_clear_then_add_passes_plain_race_and_fails_under_faults_with_the_point_named() -> None:
    assert explore(example.test_compaction_clear_then_add, schedules=30).failing is None
    found = search_faults(example.test_compaction_clear_then_add, budget=60).failing
    assert found is not None and found.failure is not None
    assert "the history is empty" in found.failure.message
    # the shortest: one fault, fewest steps (a cancellation ends the test before its own check)
    assert found.schedule.faults == ((4, "cancel"),)
    assert found.faults[0].startswith("cancel at fault point 4:")
    assert f"{EXAMPLE}:34 `await asyncio.sleep(0)` in add_items ← compact_clear_then_add" in found.faults[0]
    again = run_schedule(example.test_compaction_clear_then_add, parse_token(found.schedule.token))
    assert again.failure == found.failure and again.steps == found.steps


def test_the_swap_passes_under_faults_and_says_what_it_covered() -> None:
    result = search_faults(example.test_compaction_swap, budget=200)
    assert result.failing is None and result.points == 5
    assert result.singles == (15, 15) and result.pairs[0] > 0 and result.unchecked == 0
    assert "15 of 15 single faults" in result.lines()[0]


def test_the_cli_names_the_fault_and_replays_it_and_plain_race_is_unchanged() -> None:
    red = turncheck("race", f"{EXAMPLE}:test_compaction_clear_then_add", "--faults", "-q")
    assert red.returncode == 1, red.stderr
    assert "fault: cancel at fault point 4: " in red.stdout and "schedule 0.0:/4=cancel" in red.stdout
    replay = turncheck("race", f"{EXAMPLE}:test_compaction_clear_then_add", "--schedule", "0.0:/4=crash")
    assert replay.returncode == 1 and "(crashed: never resumed)" in replay.stdout
    # the check that failed ran after the test, from turncheck's helper: no line of turncheck is named
    assert (
        replay.stdout.splitlines()[0]
        == "FAILED: AssertionError: the history is empty after it held 2 acknowledged items"
    )
    green = turncheck("race", f"{EXAMPLE}:test_compaction_swap", "--faults", "-q")
    assert green.returncode == 0 and "faults: " in green.stdout and "faults unchecked: 0 runs" in green.stdout
    plain = turncheck("race", f"{EXAMPLE}:test_compaction_clear_then_add", "-q")
    assert plain.returncode == 0 and "faults:" not in plain.stdout and "fault point" not in plain.stdout


async def _three_writers(log: list[str]) -> None:
    async def writer(name: str) -> None:
        try:
            await asyncio.sleep(0)
            log.append(name)
        except OSError:
            log.append(f"{name}: error")
            raise
        except asyncio.CancelledError:
            log.append(f"{name}: cancelled")
            raise
        finally:
            log.append(f"{name}: finally")

    outcomes = await asyncio.gather(writer("a"), writer("b"), return_exceptions=True)
    log.append(" ".join(type(o).__name__ for o in outcomes))


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("error", ["a: error", "a: finally", "b", "b: finally", "InjectedFault NoneType"]),
        ("cancel", ["a: cancelled", "a: finally", "b", "b: finally", "CancelledError NoneType"]),
        # a's except never runs, its finally only when the dead coroutine is closed after the run
        ("crash", ["b", "b: finally", "Crashed NoneType", "a: finally"]),
    ],
)
def test_each_fault_kind_means_what_it_says(kind: str, expected: list[str]) -> None:
    log: list[str] = []

    async def test() -> None:
        log.clear()
        await _three_writers(log)

    run = run_schedule(test, Schedule(0, 0, (), ((0, kind),)))
    assert run.failure is None and log == expected
    assert issubclass(InjectedFault, ConnectionError) and issubclass(Crashed, OSError)


@pytest.mark.parametrize(("kind", "seen"), [("error", "InjectedFault"), ("cancel", "CancelledError"),
                                            ("crash", "Crashed")])  # fmt: skip
def test_a_thread_job_is_a_fault_point_its_function_never_runs(kind: str, seen: str) -> None:
    ran: list[str] = []

    async def test() -> None:
        ran.clear()
        try:
            await asyncio.to_thread(ran.append, "wrote")
        except (OSError, asyncio.CancelledError) as exc:
            ran.append(type(exc).__name__)

    run = run_schedule(test, Schedule(0, 0, (), ((0, kind),)))
    assert run.failure is None and ran == [seen] and run.faults[0].endswith("before it ran in its thread")
    # the next point is the awaiting task resuming: the write landed, and the await fails after it
    assert run_schedule(test, Schedule(0, 0, (), ((1, kind),))).failure is None
    assert ran == ["wrote"] + ([seen] if kind != "crash" else [])


def test_the_fault_type_is_selectable_and_a_wrong_one_is_one_line_exit_2() -> None:
    seen: list[BaseException] = []

    async def test() -> None:
        try:
            await asyncio.sleep(0)
        except TimeoutError as exc:
            seen.append(exc)

    assert run_schedule(test, Schedule(0, 0, (), ((0, "error"),)), error=TimeoutError).failure is None
    assert [type(e) for e in seen] == [TimeoutError]
    bad = turncheck("race", f"{EXAMPLE}:test_compaction_swap", "--faults", "--fault-error", "print")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not an exception class" in bad.stderr
    chosen = turncheck("race", f"{EXAMPLE}:test_compaction_clear_then_add", "--faults", "--fault-kinds", "error",
                       "--fault-error", "TimeoutError", "-q")  # fmt: skip
    assert chosen.returncode == 1 and "--schedule 0.0:/4=error" in chosen.stdout
    replay = f"replay: turncheck race {EXAMPLE}:test_compaction_clear_then_add --fault-error TimeoutError"
    assert f"{replay} --schedule 0.0:/4=error" in chosen.stdout
    kinds = turncheck("race", f"{EXAMPLE}:test_compaction_swap", "--faults", "--fault-kinds", "error,boom")
    assert kinds.returncode == 2 and kinds.stderr.count("\n") == 1 and "--fault-kinds" in kinds.stderr


def test_fault_kinds_narrow_the_search() -> None:
    errors = search_faults(example.test_compaction_clear_then_add, budget=60, kinds=("error",))
    assert errors.failing is not None and errors.failing.schedule.faults == ((4, "error"),)
    assert errors.singles == (6, 6) and errors.failed == 1


def test_tokens_old_ones_replay_as_before_and_faults_round_trip() -> None:
    assert parse_token("0.4:4=1") == Schedule(0, 4, ((4, 1),))
    assert parse_token("0.4:4=1").token == "0.4:4=1"
    both = parse_token("3.2:1=1/2=error,5=crash")
    assert (
        both == Schedule(3, 2, ((1, 1),), ((2, "error"), (5, "crash")))
        and both.token == "3.2:1=1/2=error,5=crash"
    )
    for bad in ("0.0:/2=boom", "0.0:/5=error,2=crash", "0.0:/"):
        with pytest.raises(Exception, match="schedule"):
            parse_token(bad)


def test_an_escaped_fault_with_no_check_is_counted_unchecked_and_after_run_checks_run() -> None:
    async def unchecked() -> None:
        await asyncio.sleep(0)

    nothing = search_faults(unchecked, budget=10)
    assert nothing.points == 1 and nothing.runs == nothing.unchecked == 6  # the fault escaped every run
    ran: list[str] = []

    async def checked() -> None:
        after_run(lambda: ran.append("checked"))
        await asyncio.sleep(0)

    result = search_faults(checked, budget=10)
    assert result.unchecked == 0 and ran.count("checked") == result.runs + 1  # and the counting run


def test_acknowledged_items_lost_and_an_emptied_history_fail_the_check() -> None:
    async def lose_one() -> None:
        session = Session()
        history = Acknowledged(session.get_items)
        await session.add_items(["a", "b"])
        history.ack("a", "b")
        await session.replace_items(["b"])

    lost = run_schedule(lose_one, Schedule(0, 0, (), ((99, "error"),)))
    assert lost.failure is not None and "acknowledged, then lost: ['a']" in lost.failure.message

    async def keep() -> None:
        session = Session()
        history = Acknowledged(session.get_items)
        await session.add_items(["a"])
        history.ack("a")
        await history.check()

    assert run_schedule(keep, Schedule(0, 0, (), ((99, "error"),))).failure is None


PYTEST_FILE = """
import sys, pytest
sys.path.insert(0, {root!r})
from examples.races.compaction_faults import check_compaction, compact_clear_then_add, compact_swap

@pytest.mark.race(schedules=40, faults=True)
async def test_clear_then_add():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(schedules=40, faults=True)
async def test_swap():
    await check_compaction(compact_swap)

@pytest.mark.race(schedules=40)
async def test_clear_then_add_without_faults():
    await check_compaction(compact_clear_then_add)
"""


def test_the_pytest_marker_takes_faults(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_compaction=PYTEST_FILE.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    assert "@pytest.mark.race(schedule='0.0:/4=cancel')" in result.stdout.str()


MARKER_OPTIONS_FILE = """
import sys, pytest
sys.path.insert(0, {root!r})
from examples.races.compaction_faults import check_compaction, compact_clear_then_add

@pytest.mark.race(schedules=40, faults=True, fault_kinds="error", fault_error="TimeoutError")
async def test_named_builtin():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(schedules=40, faults=True, fault_kinds="error", fault_error="builtins:ConnectionResetError")
async def test_named_class():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(faults=True, fault_error=42)
async def test_not_a_class():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(faults=True, fault_error="nosuch.mod:Err")
async def test_no_such_class():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(faults=True, fault_kinds="boom")
async def test_bad_kinds():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(schedule="garbage")
async def test_bad_token():
    await check_compaction(compact_clear_then_add)

@pytest.mark.race(strategy="nope")
async def test_bad_strategy():
    await check_compaction(compact_clear_then_add)
"""


FAULT_FAILURE = "FAILED: AssertionError: the history is empty after it held 2"


def test_the_marker_names_its_fault_error_as_the_cli_does_and_refuses_bad_options_in_one_line(
    pytester: pytest.Pytester,
) -> None:
    """``fault_error="TimeoutError"`` (or ``"pkg.mod:Name"``) is the type ``--fault-error``
    names, not a ``TypeError`` inside the run; the replay names it; a malformed option is one
    line, never a traceback (each used to fail as a ``TypeError`` run or a ``BadParameter``
    traceback)."""
    pytester.makepyfile(test_opts=MARKER_OPTIONS_FILE.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider", "-rf")
    out = result.stdout.str()
    result.assert_outcomes(failed=7)
    assert "TypeError" not in out and "Traceback" not in out and "BadParameter:" not in out, out
    # Counted at the start of a line: pytest's short summary repeats each message after
    # "FAILED test_opts.py::… - " in full when CI is set, and cut to the terminal width otherwise.
    found = [line for line in out.splitlines() if line.startswith(FAULT_FAILURE)]
    assert len(found) == 2, out
    assert "fault_error='TimeoutError')" in out and "--fault-error TimeoutError" in out
    assert "fault_error='builtins:ConnectionResetError')" in out
    assert "fault_error 42 is not an exception class" in out
    assert "cannot import --fault-error module 'nosuch.mod'" in out
    assert "fault kind 'boom'" in out or "'boom'" in out
    assert "garbage" in out and "nope" in out


SIBLING_TEST = '''
from compaction_store import compact, make
from project_settings import ITEMS


async def test_compaction_keeps_history():
    store = make()
    for item in ITEMS:
        await store.add(item)
    try:
        await compact(store)
    except OSError:
        pass
    assert await store.all(), "the history is gone"
'''
SIBLING_STORE = '''
import asyncio


class Store:
    def __init__(self):
        self.rows = []

    async def all(self):
        await asyncio.sleep(0)
        return list(self.rows)

    async def add(self, item):
        await asyncio.sleep(0)
        self.rows.append(item)

    async def clear(self):
        await asyncio.sleep(0)
        self.rows = []


def make():
    return Store()


async def compact(store):
    old = await store.all()
    await store.clear()
    for item in ("summary", old[-1]):
        await store.add(item)
'''


def test_a_race_test_file_imports_its_siblings_and_the_working_directory_as_pytest_does(
    tmp_path: Path,
) -> None:
    """A test file under ``tests/`` importing a module beside it and one at the project root (the
    working directory) loads under ``turncheck race FILE:test`` as under ``python -m pytest`` —
    the marker prints that command as its replay. Run isolated (``python -I``), so that neither
    the interpreter nor the launcher puts the working directory on ``sys.path`` (the console
    script ``turncheck`` does not): it used to fail ``No module named 'compaction_store'``."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sibling.py").write_text(SIBLING_TEST)
    (tmp_path / "tests" / "compaction_store.py").write_text(SIBLING_STORE)
    (tmp_path / "project_settings.py").write_text("ITEMS = ('user: hi', 'assistant: hello')\n")

    def race(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-I", "-m", "turncheck", "race", *argv],
                              capture_output=True, text=True, cwd=tmp_path)  # fmt: skip

    ref = "tests/test_sibling.py:test_compaction_keeps_history"
    assert race(ref, "-n", "5").returncode == 0
    found = race(ref, "-n", "40", "--faults", "--fault-kinds", "error")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "fault: error at fault point " in found.stdout and "compaction_store.py:" in found.stdout
    token = found.stdout.split("replay: ")[1].split("--schedule ")[1].strip()
    again = race(str(tmp_path / ref), "--schedule", token)
    assert again.returncode == 1 and "the history is gone" in again.stdout, again.stdout + again.stderr


def acknowledged_appends(tmp: Path) -> None:
    """Two threads append to the example's read-modify-write JSON store, each acknowledging its
    message once ``append`` returned; ``Acknowledged`` judges it with a plain-function read."""
    import threading

    from examples.races.json_store_sync import JsonFileStore

    store = JsonFileStore(str(tmp / "session.json"))
    history = Acknowledged(store.messages)

    def append(message: str) -> None:
        store.append(message)
        history.ack(message)

    threads = [threading.Thread(target=append, args=(m,)) for m in ("user: hi", "tool: 21°C")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history.check()


def test_acknowledged_checks_in_a_def_test_so_plain_race_finds_the_lost_append(tmp_path: Path) -> None:
    """``history.check()`` in a ``def`` test used to make a coroutine nobody awaited: the check
    never ran and plain ``race --strategy exhaustive`` said "OK: 60 schedules passed" over a store
    that loses an append. Now it checks at once and the lost append is found."""
    from turncheck.sim.race.threads import threaded_test

    runs = iter(range(1000))

    def test() -> None:
        folder = tmp_path / str(next(runs))
        folder.mkdir()
        acknowledged_appends(folder)

    found = explore(threaded_test(test), strategy="exhaustive", schedules=200).failing
    assert found is not None and found.failure is not None
    assert "acknowledged, then lost: " in found.failure.message


def test_acknowledged_checks_at_once_outside_a_race_and_refuses_an_async_read_in_a_def_test(
    tmp_path: Path,
) -> None:
    history = Acknowledged(lambda: ["a"])
    history.ack("a", "b")
    with pytest.raises(AssertionError, match=r"acknowledged, then lost: \['b'\]"):
        history.check()
    emptied = Acknowledged(list)
    emptied.ack("a")
    with pytest.raises(AssertionError, match="the history is empty after it held 1"):
        emptied.observe()
    kept = Acknowledged(lambda: ["a", "b"])
    kept.ack("a", "b")
    assert kept.check().value is None and list(kept.observe().value) == ["a", "b"]
    assert asyncio.run(_awaited(kept)) == ["a", "b"]  # the same helper awaited in an async test

    async def read() -> list[str]:
        return []

    with pytest.raises(TypeError, match=r"Acknowledged.check\(\) in a def test: its read returned an awaitable"):
        Acknowledged(read).check()


async def _awaited(history: Acknowledged) -> list[str]:
    await history.check()
    return list(await history.observe())


def test_a_fault_pass_says_when_nothing_was_injected_or_nothing_was_judged() -> None:
    """A test with no fault point used to pass with "faults: 0 runs over 0 fault points"; one
    whose every faulted run ended with the fault escaping and no check, with the same line as a
    search that judged every run but for a count. Both now say what the search did not do."""

    async def no_awaits() -> None:
        assert [1]

    none = search_faults(no_awaits, budget=20)
    assert none.failing is None
    assert none.lines() == ["faults: none injected: the test reached no fault point (no await resumed "
                            "in its tasks, no thread job)"]  # fmt: skip

    async def unjudged() -> None:
        await asyncio.sleep(0)

    vacuous = search_faults(unjudged, budget=20)
    assert vacuous.failing is None and vacuous.unchecked == vacuous.runs > 0
    assert "faults unchecked: all " in vacuous.lines()[1] and "the fault search judged nothing" in vacuous.lines()[1]

    async def judged() -> None:
        session = Session()
        history = Acknowledged(session.get_items)
        await session.add_items(["a"])
        history.ack("a")
        await history.check()

    some = search_faults(judged, budget=30, kinds=("error",))
    assert some.failing is None and "(those runs checked nothing)" in some.lines()[1]


class LockedSession(Session):
    """The example's session with its appends under one ``asyncio.Lock``, read-modify-write."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = asyncio.Lock()

    async def append(self, item: str) -> None:
        async with self.lock:
            items = await self.get_items()
            await self.replace_items([*items, item])


def test_a_crash_releases_the_asyncio_lock_its_task_held() -> None:
    """A crashed task's ``finally`` never runs, and its ``async with lock`` never exited: the
    other appender waited for ever and a correctly locked store failed ``--faults`` with a
    "Deadlock". A dead process holds no lock: the crash releases it, the store passes, and a
    store without the lock still loses an acknowledged append."""

    async def appends(session: Session, append: Any) -> None:
        history = Acknowledged(session.get_items)

        async def one(item: str) -> None:
            await append(item)
            history.ack(item)

        await asyncio.gather(one("a"), one("b"), return_exceptions=True)
        await history.check()

    async def locked() -> None:
        session = LockedSession()
        await appends(session, session.append)

    crash = run_schedule(locked, parse_token("0.0:/0=crash"))
    assert crash.failure is None, crash.failure
    assert search_faults(locked, budget=60).failing is None

    async def unlocked() -> None:
        session = LockedSession()

        async def append(item: str) -> None:
            items = await session.get_items()
            await session.replace_items([*items, item])

        await appends(session, append)

    assert explore(unlocked, schedules=60).failing is not None


LEAKING_TEST = '''
import asyncio
import threading

STOP = threading.Event()


async def test_leaves_a_thread_running():
    """A connection's worker thread, never closed (as after a fault between connect and close)."""
    threading.Thread(target=STOP.wait, name="connection-worker").start()
    await asyncio.sleep(0)
'''


def test_the_command_ends_when_the_test_left_a_thread_running(tmp_path: Path) -> None:
    """A faulted run can keep a test from closing its client (aiosqlite's worker thread): the
    command printed its result and then never exited, the interpreter waiting for those threads.
    Now it says how many were left and exits with its status."""
    (tmp_path / "leaky.py").write_text(LEAKING_TEST)
    proc = subprocess.run([sys.executable, "-m", "turncheck", "race", "leaky.py:test_leaves_a_thread_running",
                           "-n", "3", "--faults"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: 3 schedules passed" in proc.stdout
    assert "still ran after its last schedule (connection-worker, connection-worker" in proc.stderr
    assert "exiting without waiting for them" in proc.stderr


def test_a_fault_inside_a_library_names_the_line_of_the_test_code_that_called_it(tmp_path: Path) -> None:
    """With aiosqlite (a real library) the await a fault hits is the library's own
    (``aiosqlite/core.py:… return await future``), and the fault line named only that and the
    function names, not which of the user's two commits it was: it now adds the user's line."""
    aiosqlite = pytest.importorskip("aiosqlite")

    async def compaction() -> None:
        async with aiosqlite.connect(tmp_path / "m.db") as db:
            await db.execute("create table if not exists m (body text)")
            await db.commit()  # the first commit
            await db.execute("delete from m")
            await db.commit()  # the second commit

    found = search_faults(compaction, budget=40, kinds=("error",))
    assert found.failing is None  # every fault escapes; nothing checks: the search passes
    lines = {run_schedule(compaction, parse_token(f"0.0:/{p}=error")).faults[0] for p in range(found.points)}
    first = [hit for hit in lines if "await db.commit()  # the first commit" in hit]
    assert first and all(
        "aiosqlite/core.py:" in hit and "test_race_faults.py:" in hit.split(" (called at ")[1] for hit in first
    )
