"""``turncheck race`` on a plain ``def`` test: its threads and their I/O calls scheduled (issue 53).

A synchronous store — a JSON file through ``open``/``os.replace``, SQLite through ``sqlite3`` —
appended to from ``threading.Thread``s or a ``ThreadPoolExecutor``, its own code unchanged. Plain
threads lose an append sometimes; the scheduler finds the window, prints it in the same words and
tokens as for async code, and the token replays it; the locked store passes. Before this, a
``def`` test was refused ("is not an async def function", exit 2): every test here fails there.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from examples.races import json_store_sync, sqlite_store_sync
from turncheck.sim.race import blocking, io_points
from turncheck.sim.race.cooperative import controlled
from turncheck.sim.race.explore import explore, run_schedule
from turncheck.sim.race.fault_search import search_faults
from turncheck.sim.race.schedule import parse_token
from turncheck.sim.race.threads import threaded_test

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
JSON, SQLITE = "examples/races/json_store_sync.py", "examples/races/sqlite_store_sync.py"


def turncheck(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "turncheck", *argv], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ))  # fmt: skip


def test_plain_threads_lose_an_append_sometimes() -> None:
    """The premise, on real threads: between one append's read and its replace the other lands
    (the fsync leaves the window open); one loss in up to fifty runs is enough."""
    for _ in range(50):
        try:
            json_store_sync.test_no_lost_append()
        except AssertionError as lost:
            assert "an append was lost" in str(lost)
            return
    pytest.fail("plain threads kept both appends in 50 runs")


@pytest.mark.parametrize(("module", "name"), [(json_store_sync, "JSON"), (sqlite_store_sync, "SQLite")])
def test_the_lost_append_is_found_and_its_token_replays_it(module: object, name: str) -> None:
    test = threaded_test(module.test_no_lost_append)  # type: ignore[attr-defined]
    result = explore(test, strategy="exhaustive", schedules=100)
    run = result.failing
    assert run is not None and run.failure is not None, name
    assert run.failure.kind == "AssertionError" and "an append was lost" in run.failure.message
    assert len(run.schedule.reorders) == 1  # one preemption at an I/O call
    assert all(s.thread for s in run.steps)  # the scaffolding task is not one of the steps
    again = run_schedule(test, parse_token(run.schedule.token))
    assert again.failure == run.failure and again.steps == run.steps
    asyncio_order = run_schedule(test, parse_token("0.0:"))  # no preemption: each append runs whole
    assert asyncio_order.failure is None


@pytest.mark.parametrize("test_name", ["test_no_lost_append_locked", "test_no_lost_append_immediate"])
def test_a_threading_lock_or_begin_immediate_keeps_both(test_name: str) -> None:
    """A ``threading.Lock`` made in the test is scheduler-aware (a blocked acquire waits without
    the turn); SQLite's own write lock too (a locked database waits, it does not stall)."""
    module = json_store_sync if test_name.endswith("locked") else sqlite_store_sync
    result = explore(threaded_test(getattr(module, test_name)), strategy="exhaustive", schedules=200)
    assert result.failing is None and result.exhausted and result.threads == 3
    if module is json_store_sync:
        locked = explore(threaded_test(sqlite_store_sync.test_no_lost_append_locked), strategy="exhaustive")
        assert locked.failing is None and locked.exhausted


def test_the_cli_exits_1_with_a_token_and_0_for_the_locked_store() -> None:
    red = turncheck("race", f"{JSON}:test_no_lost_append", "--strategy", "exhaustive", "-q")
    assert red.returncode == 1 and red.stderr == "", red.stderr
    assert "reordering of the threads' own order" in red.stdout
    assert (
        "(os.replace)" in red.stdout
        and "[reordered: the threads would run JsonFileStore.append]" in red.stdout
    )
    token = red.stdout.split("schedule ")[-1].split()[0]
    again = turncheck("race", f"{JSON}:test_no_lost_append", "--schedule", token)
    assert again.returncode == 1 and again.stdout.splitlines()[0] == red.stdout.splitlines()[2]
    green = turncheck("race", f"{JSON}:test_no_lost_append_locked", "--strategy", "exhaustive", "-q")
    assert green.returncode == 0, green.stdout + green.stderr
    lines = green.stdout.splitlines()
    assert "every schedule within 2 reorderings of the threads' own order" in lines[1]
    assert lines[2].startswith("explored: the order of up to 3 threads at every I/O call")
    assert lines[3].startswith("not controlled: I/O outside those calls")


def test_the_same_seed_gives_the_same_json() -> None:
    runs = [
        turncheck("race", f"{SQLITE}:test_no_lost_append", "-n", "20", "--format", "json") for _ in range(2)
    ]
    assert runs[0].returncode == 1 and runs[0].stdout == runs[1].stdout
    assert json.loads(runs[0].stdout)["verdict"] == "failed"


def test_faults_at_the_io_calls_find_an_in_place_write_and_pass_an_atomic_one() -> None:
    found = search_faults(threaded_test(json_store_sync.test_acknowledged_kept_in_place), budget=60)
    assert found.failing is not None and found.failing.failure is not None and found.threaded
    assert "the history is empty" in found.failing.failure.message
    assert found.failing.faults[0].startswith("crash at fault point 7:")
    assert "`f.write(json.dumps(messages))` in append" in found.failing.faults[0]
    kept = search_faults(threaded_test(json_store_sync.test_acknowledged_kept), budget=60)
    assert kept.failing is None and kept.kinds == ("error", "crash") and kept.singles[0] == kept.singles[1]


def test_an_injected_sqlite_error_is_an_operational_error() -> None:
    seen: list[BaseException] = []

    def test() -> None:
        db = sqlite3.connect(":memory:")
        try:
            db.execute("select 1")
        except sqlite3.OperationalError as exc:
            seen.append(exc)

    run = run_schedule(threaded_test(test), parse_token("0.0:/1=error"))
    assert run.failure is None and len(seen) == 1
    assert isinstance(seen[0], io_points.InjectedSqliteError) and "fault point 1" in str(seen[0])
    refused = turncheck("race", f"{JSON}:test_acknowledged_kept", "--faults", "--fault-kinds", "cancel")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().endswith("take error and crash faults, not cancel")


def test_two_locks_in_opposite_orders_deadlock_and_the_same_order_passes() -> None:
    def make(opposite: bool) -> object:
        def test() -> None:
            a, b = threading.Lock(), threading.Lock()

            def one(first: threading.Lock, second: threading.Lock) -> None:
                with first:
                    open(os.devnull).close()  # an I/O call: a point where the other may run
                    with second:
                        pass

            threads = [threading.Thread(target=one, args=(a, b)),
                       threading.Thread(target=one, args=(b, a) if opposite else (a, b))]  # fmt: skip
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        return threaded_test(test)

    run = explore(make(True), strategy="exhaustive").failing  # type: ignore[arg-type]
    assert run is not None and run.failure is not None and run.failure.kind == "Deadlock"
    assert "waits for a lock" in run.failure.message
    assert explore(make(False), strategy="exhaustive").failing is None  # type: ignore[arg-type]


def test_an_error_escaping_a_thread_fails_the_run_without_a_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def test() -> None:
        def work() -> None:
            raise ValueError("the store refused the row")

        t = threading.Thread(target=work)
        t.start()
        t.join()

    run = run_schedule(threaded_test(test), parse_token("0.0:"))
    assert run.failure is not None and run.failure.kind == "ValueError"
    assert "the store refused the row" in run.failure.message
    assert capfd.readouterr().err == ""  # threading.excepthook never printed it


def test_every_patch_is_restored_and_applies_only_to_controlled_threads() -> None:
    real = (builtins.open, io.open, os.replace, os.rename, os.fsync, sqlite3.connect, threading.Lock,
            threading.RLock, threading.Thread.start, threading.Thread.join)  # fmt: skip
    inside: list[object] = []

    def test() -> None:
        with open(os.devnull) as f:
            inside.append(type(f))
        inside.append(type(threading.Lock()))
        inside.append(controlled() is not None)
        raise AssertionError("the test fails: the patches go anyway")

    run = run_schedule(threaded_test(test), parse_token("0.0:"))
    assert run.failure is not None and run.failure.kind == "AssertionError"
    assert inside == [io_points.RaceFile, blocking.RaceLock, True]
    after = (builtins.open, io.open, os.replace, os.rename, os.fsync, sqlite3.connect, threading.Lock,
             threading.RLock, threading.Thread.start, threading.Thread.join)  # fmt: skip
    assert after == real and controlled() is None
    assert not [t for t in threading.enumerate() if t.name == "turncheck-race-test"]


PYTEST_FILE = """
import sys, pytest
sys.path.insert(0, {root!r})
from examples.races.json_store_sync import check_both_kept, JsonFileStore, LockedJsonFileStore

@pytest.mark.race(strategy="exhaustive")
def test_lost():
    check_both_kept(JsonFileStore)

@pytest.mark.race(strategy="exhaustive")
def test_locked():
    check_both_kept(LockedJsonFileStore)
"""


def test_the_pytest_marker_runs_a_def_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sync_store=PYTEST_FILE.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "an append was lost" in out and "@pytest.mark.race(schedule='0.11:6=1')" in out


MODULE_LOCK = threading.Lock()  # made at import: a real lock, not a scheduler-aware one


def test_a_lock_made_at_import_stalls_only_until_the_bound_and_is_named() -> None:
    def work() -> None:
        with MODULE_LOCK:
            open(os.devnull).close()

    def test() -> None:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    found = explore(threaded_test(test), strategy="exhaustive", max_seconds=1.0).failing
    assert found is not None and found.failure is not None and found.failure.kind == "Overrun"
    assert "work#2 was blocked at tests/test_race_threads.py:" in found.failure.message
    assert "`with MODULE_LOCK:` in work" in found.failure.message
    assert not MODULE_LOCK.locked()  # the parked holder was unwound at the schedule's end


def test_a_daemon_thread_left_running_does_not_hold_the_run() -> None:
    """A background flusher that never ends: with ``daemon=True`` the run ends when the test
    returns (as the process would); without, the thread keeps the run going: a livelock."""

    def make(daemon: bool) -> object:
        def test() -> None:
            stop = threading.Event()

            def flusher() -> None:
                while not stop.wait(1.0):
                    open(os.devnull).close()

            threading.Thread(target=flusher, daemon=daemon).start()
            open(os.devnull).close()

        return threaded_test(test)

    assert run_schedule(make(True), parse_token("0.0:"), max_steps=2_000).failure is None  # type: ignore[arg-type]
    held = run_schedule(make(False), parse_token("0.0:"), max_steps=2_000).failure  # type: ignore[arg-type]
    assert held is not None and held.kind == "Deadlock" and "livelock" in held.message


def test_a_thread_crashed_holding_a_lock_releases_it() -> None:
    """A crash stops a thread as a dead process stops: the scheduler-aware locks it held are
    released, so the other appender goes on, and every acknowledged message is kept."""
    import shutil
    import tempfile

    from turncheck.sim.race.faults import Acknowledged, after_run

    def test() -> None:
        folder = tempfile.mkdtemp()
        store = json_store_sync.LockedJsonFileStore(os.path.join(folder, "s.json"))
        history = Acknowledged(store.messages)
        after_run(lambda: shutil.rmtree(folder))

        def append(message: str) -> None:
            store.append(message)
            history.ack(message)

        threads = [threading.Thread(target=append, args=(m,)) for m in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    result = search_faults(threaded_test(test), budget=40, kinds=("crash",))
    assert result.failing is None and result.singles[0] == result.singles[1] > 0
