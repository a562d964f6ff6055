"""``turncheck race``: the user's real async code under the controlled scheduler (issue 29).

The example store of examples/races/ reads the session, awaits, then writes it back: plain
``asyncio.run`` keeps both appends, a controlled schedule loses one (exit 1, the interleaving,
a token that replays it, in this process and in two others), the same store with an
``asyncio.Lock`` passes. Then the scheduler's own rules: thread offloads as atomic steps,
virtual time, the exhaustive search's count, a deadlock found, and the pytest marker.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turncheck.models.events import Event, Kind
from turncheck.sim.race.explore import AsyncTest, explore, run_schedule
from turncheck.sim.race.loop import Deadlock, run_controlled
from turncheck.sim.race.recorder import RaceHistory
from turncheck.sim.race.schedule import Schedule, parse_token

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
STORE = "examples/races/store.py"
LOST = f"{STORE}:test_no_lost_append"


def turncheck(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "turncheck", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})})  # fmt: skip


def test_plain_asyncio_never_loses_the_append() -> None:
    proc = subprocess.run([sys.executable, STORE], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "both messages kept" in proc.stdout


def test_lost_append_fails_with_interleaving_and_replay_that_reproduces_it() -> None:
    found = turncheck("race", LOST)
    assert found.returncode == 1, found.stderr
    out = found.stdout
    assert "FAILED: AssertionError: an append was lost" in out
    assert "1 reordering of asyncio's order" in out  # shrunk to the one that matters
    assert "in get ← append ← tool_result" in out and "[reordered: asyncio would run ChatStore.append]" in out
    replay = next(line for line in out.splitlines() if line.startswith("replay: "))
    token = replay.rsplit(" ", 1)[1]
    assert replay == f"replay: turncheck race {LOST} --schedule {token}"
    again = turncheck("race", LOST, "--schedule", token)
    assert again.returncode == 1
    steps = [line for line in out.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert steps and steps == [
        line for line in again.stdout.splitlines() if line[:4].strip().rstrip(".").isdigit()
    ]


def test_the_locked_store_passes_every_schedule() -> None:
    proc = turncheck("race", f"{STORE}:test_no_lost_append_locked", "--schedules", "60")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: 60 schedules passed" in proc.stdout and "distinct interleavings" in proc.stdout
    exhaustive = turncheck(
        "race", f"{STORE}:test_no_lost_append_locked", "--strategy", "exhaustive", "--depth", "3"
    )
    assert exhaustive.returncode == 0 and "every schedule within 3 reorderings" in exhaustive.stdout


def test_every_strategy_finds_the_lost_append_and_module_references_work() -> None:
    for strategy in ("random", "pct", "exhaustive"):
        proc = turncheck(
            "race", "examples.races.store:test_no_lost_append", "--strategy", strategy, "-n", "200"
        )
        assert proc.returncode == 1, (strategy, proc.stdout, proc.stderr)


def test_a_token_replays_the_same_steps_in_other_processes() -> None:
    """Two interpreters with different hash seeds print byte-identical JSON for one token."""
    outs = [turncheck("race", LOST, "--schedule", "7.3:2=1", "--format", "json", env={"PYTHONHASHSEED": s})
            for s in ("1", "2")]  # fmt: skip
    assert [o.returncode for o in outs] == [1, 1]
    assert outs[0].stdout == outs[1].stdout
    found = json.loads(outs[0].stdout)
    assert found["schedule"] == "7.3:2=1" and found["failure"]["type"] == "AssertionError"
    explored = [turncheck("race", LOST, "--seed", "5", "--format", "json", env={"PYTHONHASHSEED": s}).stdout
                for s in ("3", "4")]  # fmt: skip
    assert explored[0] == explored[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["race", f"{STORE}:KeyValue"], "is not a function (turncheck race runs an async def or a def test)"),
        (["race", f"{STORE}:check_both_kept"], "takes arguments (store)"),
        (["race", "missing.py:test"], "does not exist"),
        (["race", LOST, "--schedule", "nonsense"], "is not a schedule token"),
        (["race", LOST, "--schedule", "0.0:3=1,2=1"], "points must increase"),
        (["race", LOST, "--strategy", "dfs"], "Invalid value"),
    ],
)
def test_usage_errors_are_one_line_exit_2(argv: list[str], message: str) -> None:
    proc = turncheck(*argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""


def test_a_thread_offload_is_two_steps_its_effects_then_its_delivery() -> None:
    log: list[str] = []
    orders: set[tuple[str, ...]] = set()

    async def worker(name: str) -> None:
        await asyncio.to_thread(log.append, f"{name} in thread")
        log.append(f"{name} after")

    async def test() -> None:
        log.clear()
        await asyncio.gather(worker("a"), worker("b"))
        orders.add(tuple(log))

    first = run_schedule(test, Schedule(0, 0))
    assert first.failure is None and orders == {("a in thread", "b in thread", "a after", "b after")}
    ends = [(s.actor.rsplit(".", 2)[-2], s.end) for s in first.steps if " → " in s.actor]
    assert ends == [("worker → list", "(ran in a thread)"), ("worker#2 → list", "(ran in a thread)"),
                    ("worker → list", "(delivered)"), ("worker#2 → list", "(delivered)")]  # fmt: skip
    result = explore(test, strategy="exhaustive", depth=3, schedules=500)
    assert result.exhausted and result.failing is None
    # the thread's effect moves with the schedule, and a task resumes only after its delivery
    assert ("b in thread", "b after", "a in thread", "a after") in orders
    assert ("b in thread", "a in thread", "a after", "b after") in orders
    assert all(o.index(f"{n} in thread") < o.index(f"{n} after") for o in orders for n in "ab")
    again = Schedule(0, 0, ((0, 1), (2, 1)))
    assert run_schedule(test, again).steps == run_schedule(test, again).steps


def test_time_is_virtual() -> None:
    seen: list[float] = []

    async def test() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(3600)
        seen.append(loop.time())
        async with asyncio.timeout(10):
            await asyncio.sleep(1)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(10):
                await asyncio.sleep(60)
        seen.append(loop.time())

    exc, _ = run_controlled(test, lambda c: 0)
    assert exc is None and seen == [3600.0, 3611.0]


def test_exhaustive_runs_each_interleaving_once() -> None:
    """Two tasks of four steps each (start, three awaits, return): C(8, 4) = 70 schedules, each
    run once; they give the C(6, 3) = 20 orders of the six appends."""
    orders: set[tuple[str, ...]] = set()
    log: list[str] = []

    async def task(name: str) -> None:
        for k in range(3):
            log.append(f"{name}{k}")
            await asyncio.sleep(0)

    async def test() -> None:
        log.clear()
        await asyncio.gather(task("a"), task("b"))
        orders.add(tuple(log))

    result = explore(test, strategy="exhaustive", depth=6, schedules=1000)
    assert result.exhausted and result.failing is None
    assert result.schedules == result.distinct == 70 and len(orders) == 20


def test_a_lock_order_deadlock_is_found_and_named() -> None:
    async def test() -> None:
        a, b = asyncio.Lock(), asyncio.Lock()

        async def one(first: asyncio.Lock, second: asyncio.Lock) -> None:
            async with first:
                await asyncio.sleep(0)
                async with second:
                    pass

        await asyncio.gather(one(a, b), one(b, a))

    result = explore(test, strategy="exhaustive", depth=2, schedules=100)
    assert result.failing is not None and result.failing.failure is not None
    assert result.failing.failure.kind == Deadlock.__name__
    assert "every task waits" in result.failing.failure.message


def test_a_malformed_token_is_refused() -> None:
    assert parse_token("3.4:1=2,5=1") == Schedule(3, 4, ((1, 2), (5, 1)))
    assert parse_token("0.0:").token == "0.0:"


PYTEST_FILE = """
import asyncio, pytest, sys
sys.path.insert(0, {root!r})
from examples.races.store import ChatStore, LockedChatStore, KeyValue, check_both_kept

@pytest.fixture
def db():
    return KeyValue

@pytest.mark.race(schedules=100)
async def test_no_lost_append(db):
    await check_both_kept(ChatStore(db()))

@pytest.mark.race(schedules=50, strategy="pct")
async def test_no_lost_append_locked(db):
    await check_both_kept(LockedChatStore(db()))

@pytest.mark.race(schedule="0.0:2=1")
async def test_replayed():
    await check_both_kept(ChatStore(KeyValue()))
"""


def test_the_pytest_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_store=PYTEST_FILE.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "an append was lost" in out and "@pytest.mark.race(schedule=" in out
    assert "turncheck race " in out and "test_replayed --schedule 0.0:2=1" in out


def test_the_recorder_runs_the_stress_anomalies_and_window_checks() -> None:
    """The lost append again, caught by the stress checker's ``lost`` rather than the test's own
    assertion; and a read window holding a RESULT without its CALL, caught by the projector's
    structural report."""
    from examples.races.store import ChatStore, KeyValue

    async def test() -> None:
        store, history = ChatStore(KeyValue()), RaceHistory()

        async def later(turn: int) -> None:
            await asyncio.sleep(0)
            await history.append(turn, store.append("s", str(turn)), who="tool")

        await asyncio.gather(history.append(1, store.append("s", "1"), who="user"), later(2))
        history.assert_holds(int(m) for m in await store.messages("s"))

    assert run_schedule(test, Schedule(0, 0)).failure is None
    result = explore(test, schedules=100)
    assert result.failing is not None and result.failing.failure is not None
    assert result.failing.failure.message.startswith("lost: turn 1 (user-0) was acknowledged")

    history = RaceHistory()

    async def window() -> list[Event]:
        return [Event(3, "s", 1, Kind.RESULT, "c1"), Event(4, "s", 1, Kind.TERM)]

    asyncio.run(history.read(window()))
    (broken,) = history.check(())
    assert (
        broken.invariant == "read-window"
        and "orphanRes 1" in broken.reason
        and broken.slice == ("RESULT(c1) TERM",)
    )


def test_the_viewer_shows_the_failing_schedule_one_lane_per_task(tmp_path: Path) -> None:
    from turncheck.reports.race_view import race_view

    page = tmp_path / "race.html"
    proc = turncheck("race", LOST, "--html", str(page))
    assert proc.returncode == 1 and f"trace viewer: {page}" in proc.stdout
    assert "ChatStore.append" in page.read_text(encoding="utf-8")
    from examples.races.store import test_no_lost_append

    token = proc.stdout.rsplit("--schedule ", 1)[1].split()[0]
    view = race_view(LOST, run_schedule(test_no_lost_append, parse_token(token)))
    assert view.lanes == ("test_no_lost_append", "ChatStore.append", "tool_result")
    assert view.broken_at == len(view.steps) - 1 and view.verdict == "violated"
    assert [s.marks for s in view.steps if s.marks] == [("reordered: asyncio would run ChatStore.append",)]
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    refused = turncheck("race", LOST, "--html", str(link))
    assert (
        refused.returncode == 2
        and "is a symlink" in refused.stderr
        and not (tmp_path / "elsewhere.html").exists()
    )


class TurnStore:
    """Turns in a list; every call is one round trip."""

    def __init__(self) -> None:
        self.turns: list[int] = []

    async def append(self, turn: int) -> None:
        await asyncio.sleep(0)
        self.turns.append(turn)

    async def count(self) -> int:
        await asyncio.sleep(0)
        return len(self.turns)

    async def delete_oldest(self, k: int) -> list[int]:
        await asyncio.sleep(0)
        removed, self.turns[: max(0, k)] = self.turns[: max(0, k)], []
        return removed


def double_compaction(locked: bool) -> AsyncTest:
    """Two compactions triggered by one crossing of maxTurns (adk-go #1234's shape): each reads the
    count, then deletes ``count − maxTurns`` of the oldest turns. Held to ``mutex``'s rule: the
    peak at most one over maxTurns, a delete acting on the count read under the lock."""

    async def test() -> None:
        store, history = TurnStore(), RaceHistory(max_turns=2, locking="mutex")
        lock = asyncio.Lock() if locked else None  # one per schedule: a lock belongs to one loop
        for turn in (1, 2, 3):
            await history.append(turn, store.append(turn))

        async def compact() -> None:
            async def once() -> None:
                n = await store.count()
                await history.compact(store.delete_oldest(n - 2), count_read=n)

            if lock is None:
                return await once()
            async with lock:
                await once()

        await asyncio.gather(compact(), compact())
        history.assert_holds(store.turns)

    return test


def test_the_recorder_sees_a_compaction_acting_on_a_stale_count() -> None:
    run = explore(double_compaction(False), schedules=50).failing
    assert run is not None and run.failure is not None
    assert run.failure.message.startswith("over-deletion: compactor-")
    assert "no read outstanding" in run.failure.message
    locked = explore(double_compaction(True), strategy="exhaustive", depth=3, schedules=500)
    assert locked.failing is None and locked.exhausted


SHARED = asyncio.Lock()


async def _uses_a_lock_made_at_import() -> None:
    async with SHARED:
        await asyncio.sleep(0)


def test_a_lock_made_outside_the_test_is_named_as_the_cause() -> None:
    async def test() -> None:
        await asyncio.gather(_uses_a_lock_made_at_import(), _uses_a_lock_made_at_import())

    run = explore(test, schedules=5).failing
    assert (
        run is not None
        and run.failure is not None
        and "make locks, queues and clients inside" in run.failure.message
    )
