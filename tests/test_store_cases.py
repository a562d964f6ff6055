"""The store cases of the corpus raced against a session store (issue 54: ``--against`` a store).

A store is openai-agents' ``Session`` protocol made by ``Factory(session_id)``. A store whose
``add_items`` reads, awaits and writes back loses an append under some schedule; a locked one
never does; a store whose own replacement clears, then adds, loses the history when a fault lands
between the two writes (openai-agents-python#3116), while the SDK's own clear → add with its
restore keeps it. The real ``SQLiteSession`` of the installed openai-agents is raced as well.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turncheck.models.cases import CASES, PENDING, StoreInput
from turncheck.sim.cases import run_case, store_cases
from turncheck.sim.race.fault_search import search_faults
from turncheck.sim.race.faults import Acknowledged
from turncheck.sim.store_cases import race_store

ROOT = Path(__file__).resolve().parents[1]
REF = "store:turncheck.sim.session_stores:"
APPENDS, COMPACTION = CASES["store-concurrent-appends"], CASES["store-compaction-clear-then-add"]
pytest_plugins = ["pytester"]

MY_STORES = '''
import asyncio


class ReadModifyWrite:
    """add_items reads the list, awaits the round trip, then writes the list back."""

    def __init__(self, session_id):
        self.session_id, self._items = session_id, []

    async def get_items(self, limit=None):
        await asyncio.sleep(0)
        return list(self._items)

    async def add_items(self, items):
        stored = await self.get_items()
        await asyncio.sleep(0)
        self._items = stored + list(items)

    async def pop_item(self):
        return self._items.pop() if self._items else None

    async def clear_session(self):
        await asyncio.sleep(0)
        self._items = []


class Locked(ReadModifyWrite):
    def __init__(self, session_id):
        super().__init__(session_id)
        self.lock = asyncio.Lock()

    async def add_items(self, items):
        async with self.lock:
            await super().add_items(items)


class NoSessionId(ReadModifyWrite):
    def __init__(self):
        super().__init__("fixed")


def two_ids(user, session_id):
    return ReadModifyWrite(f"{user}/{session_id}")


class NotASession:
    def __init__(self, session_id):
        self.session_id = session_id

    def get_items(self):
        return []
'''


def turncheck(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "turncheck", *argv], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=600)  # fmt: skip


def agents() -> None:
    pytest.importorskip(
        "agents", reason="the compaction case runs openai-agents' compaction (the peers extra)"
    )


def test_the_store_cases_are_registered_and_3116_is_no_longer_pending() -> None:
    assert {c.name for c in store_cases()} == {APPENDS.name, COMPACTION.name}
    assert COMPACTION.source == "openai/openai-agents-python#3116"
    assert "openai/openai-agents-python#3116" not in PENDING
    assert isinstance(COMPACTION.input, StoreInput) and COMPACTION.input.fault_kinds == "error,cancel"


def test_a_read_modify_write_store_loses_an_append_a_locked_one_does_not() -> None:
    lost = race_store(APPENDS, REF + "ReadModifyWriteSession")
    assert lost.reproduced and lost.token is not None
    assert "an append was lost" in lost.report[0]
    assert any("ReadModifyWriteSession.add_items" in line for line in lost.report)  # the tasks are named
    kept = race_store(APPENDS, REF + "LockedSession")
    assert not kept.reproduced and kept.explored == "50 schedules"


def test_a_store_that_replaces_by_clear_then_add_loses_the_history_under_a_fault() -> None:
    agents()
    lost = race_store(COMPACTION, REF + "ClearThenAddSession")
    assert lost.reproduced and "the history is empty after it held 2 acknowledged items" in lost.report[0]
    assert any(line.startswith("fault: ") and "_atomic_replace_items" in line for line in lost.report)
    kept = race_store(COMPACTION, REF + "LockedSession")  # the SDK's own clear → add, with its restore
    assert not kept.reproduced and "fault runs (error,cancel)" in kept.explored


def test_the_store_cases_behave_as_recorded() -> None:
    assert run_case(APPENDS).status == "as recorded"
    run = run_case(COMPACTION)
    if run.skipped is None:
        assert run.status == "as recorded"
    else:  # openai-agents absent or at another release: skipped, saying which
        assert "openai-agents" in run.skipped


def test_a_missing_library_skips_the_case_saying_so() -> None:
    case = dataclasses.replace(
        COMPACTION, input=dataclasses.replace(COMPACTION.input, pinned=("no-such-dist-turncheck==1.0",))
    )
    run = race_store(case, REF + "LockedSession")
    assert (
        run.skipped
        == "no-such-dist-turncheck is not installed (the scenario runs it; recorded on no-such-dist-turncheck==1.0)"
    )
    assert run_case(case).status == "skipped"


def test_the_real_sqlite_session_passes_both() -> None:
    """openai-agents' SQLiteSession (in memory) locks each call and runs it in a thread job;
    under the compaction it keeps the history through errors and cancellations."""
    agents()
    for case in (APPENDS, COMPACTION):
        fewer = dataclasses.replace(case, input=dataclasses.replace(case.input, schedules=8))
        run = race_store(fewer, "store:agents:SQLiteSession")
        assert run.skipped is None or "installed; the case was recorded on" not in run.skipped
        assert not run.reproduced, run.report


def test_a_check_s_own_thread_read_is_never_a_fault_point() -> None:
    """``Acknowledged.check`` reading through ``to_thread`` in the checks' task: a fault there
    would fail a store for the check's own read (it did, for SQLiteSession)."""

    async def test() -> None:
        items = ["a"]

        async def read() -> list[str]:
            return await asyncio.to_thread(list, items)

        history = Acknowledged(read)
        history.ack("a")
        await history.check()

    result = search_faults(test, budget=40)
    assert result.failing is None, result.failing and result.failing.faults
    assert (
        result.points == 2
    )  # the test task resuming after its read, and its read's job; not the check's job


def test_cases_run_against_your_store(tmp_path: Path) -> None:
    (tmp_path / "my_store.py").write_text(MY_STORES)
    lost = turncheck("cases", "run", "--against", "store:my_store.py:ReadModifyWrite", "-q", cwd=tmp_path)
    assert lost.returncode == 1, lost.stderr
    out = lost.stdout
    assert "| store-concurrent-appends | lucianfialho/effect-gates#64 | no-lost-append | reproduces |" in out
    assert "interleaving (" in out and "ReadModifyWrite.add_items" in out and "\nschedule " in out
    assert out.rstrip().splitlines()[-1].startswith(
        "FAIL: store:my_store.py:ReadModifyWrite reproduces 1 of "
    ) and out.rstrip().endswith("store failures run: lucianfialho/effect-gates#64")
    assert lost.stderr == ""
    kept = turncheck("cases", "run", "--against", "store:my_store.py:Locked", "-q", cwd=tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "OK: store:my_store.py:Locked reproduces none of the " in kept.stdout
    assert "not every schedule or fault" in kept.stdout and kept.stderr == ""


@pytest.mark.parametrize(
    ("store", "line"),
    [
        ("store:my_store.py:NotASession",
         "turncheck: error: store NotASession is not an openai-agents Session: no async def get_items, add_items, "
         "pop_item, clear_session"),
        ("store:missing.py:Store", "turncheck: error: store file 'missing.py' does not exist"),
        ("store:my_store.py:NoSessionId",
         "turncheck: error: store factory NoSessionId() cannot be called with one session id (too many positional "
         "arguments): the store cases make each session as Factory(session_id), as openai-agents' "
         "SQLiteSession('s')"),
        ("store:my_store.py:two_ids",
         "turncheck: error: store factory two_ids(user, session_id) cannot be called with one session id (missing "
         "a required argument: 'session_id'): the store cases make each session as Factory(session_id), as "
         "openai-agents' SQLiteSession('s')"),
        ("store:", "turncheck: error: store reference '' must be written package.module:factory or file.py:factory"),
    ],
)  # fmt: skip
def test_a_store_that_cannot_be_raced_is_one_line(tmp_path: Path, store: str, line: str) -> None:
    (tmp_path / "my_store.py").write_text(MY_STORES)
    proc = turncheck("cases", "run", "--against", store, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == line


def test_the_known_failures_fixture_races_a_store(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_store=MY_STORES)
    pytester.makepyfile(
        test_store="""
from my_store import Locked, ReadModifyWrite

def test_read_modify_write(known_failures):
    known_failures.check_store(ReadModifyWrite)

def test_locked(known_failures):
    known_failures.check_store("store:my_store.py:Locked")
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin",
                                           "-p", "no:faker", "-p", "no:anyio")  # fmt: skip
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "store:ReadModifyWrite reproduces 1 real failure(s)" in out
    assert "lucianfialho/effect-gates#64 (store-concurrent-appends)" in out and "interleaving (" in out
