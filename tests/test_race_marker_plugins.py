"""``@pytest.mark.race`` beside pytest-asyncio and anyio's pytest plugin (issue 55, item 5).

pytest-asyncio's auto mode (and its strict mode, for a test marked ``asyncio``) hands pytest a
synchronous wrapper of the ``async def``; anyio's plugin runs a marked coroutine itself in a
``tryfirst`` ``pytest_pyfunc_call``. Either way the race marker must still find the store's lost
append (which plain asyncio never loses: a test run once by either plugin would pass) and pass the
locked store. Each case runs pytest in a subprocess on a temporary project holding its own
``pyproject.toml``, as a user's project does. The ``interleaving`` line is printed by the race
runner only, so a run that another plugin took over cannot satisfy these tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STORE = (ROOT / "examples" / "races" / "store.py").read_text()

pytest_plugins = ["pytester"]
QUIET = ("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin", "-p", "no:faker",
         "-p", "no:hypothesispytest", "-v")  # fmt: skip
"""Plugins the extras bring that these runs do not use (a third of each run's CPU), off."""

ASYNCIO_TESTS = """
import pytest
from store import ChatStore, KeyValue, LockedChatStore, check_both_kept

{mark}
@pytest.mark.race(schedules=50)
async def test_no_lost_append():
    await check_both_kept(ChatStore(KeyValue()))

{mark}
@pytest.mark.race(schedules=50)
async def test_no_lost_append_locked():
    await check_both_kept(LockedChatStore(KeyValue()))
"""

ANYIO_TESTS = """
import anyio
import pytest


class Store:
    '''append reads, awaits (anyio.sleep), then writes back; the lock makes it one section.'''

    def __init__(self, locked):
        self.items, self.lock = [], anyio.Lock() if locked else None

    async def _append(self, item):
        items = list(self.items)
        await anyio.sleep(0)
        self.items = [*items, item]

    async def append(self, item):
        if self.lock is None:
            return await self._append(item)
        async with self.lock:
            await self._append(item)


async def both(store):
    async with anyio.create_task_group() as tg:
        tg.start_soon(store.append, "user")
        tg.start_soon(store.append, "tool")
    assert len(store.items) == 2, f"an append was lost: {store.items}"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


@pytest.mark.anyio
@pytest.mark.race(schedules=50)
async def test_lost():
    await both(Store(locked=False))


@pytest.mark.anyio
@pytest.mark.race(schedules=50)
async def test_locked():
    await both(Store(locked=True))
"""


def _project(pytester: pytest.Pytester, ini: str, tests: str) -> None:
    pytester.makepyprojecttoml(f"[tool.pytest.ini_options]\n{ini}\n")
    pytester.makepyfile(store=STORE, test_store=tests)


def _lost_and_locked(result: pytest.RunResult) -> str:
    out = result.stdout.str()
    assert "test_store.py::test_no_lost_append FAILED" in out, out
    assert "test_store.py::test_no_lost_append_locked PASSED" in out, out
    assert "an append was lost" in out and "interleaving (" in out, out
    return out


@pytest.mark.parametrize(
    ("ini", "mark"),
    [
        ('asyncio_mode = "auto"', ""),
        ('asyncio_mode = "strict"', "@pytest.mark.asyncio"),
        ('asyncio_mode = "strict"', ""),
    ],
    ids=["auto", "strict-marked", "strict-unmarked"],
)
def test_race_marker_under_pytest_asyncio(pytester: pytest.Pytester, ini: str, mark: str) -> None:
    pytest.importorskip("pytest_asyncio", reason="pytest-asyncio is in the test extra")
    _project(pytester, ini, ASYNCIO_TESTS.format(mark=mark))
    result = pytester.runpytest_subprocess(*QUIET, "-p", "no:anyio")
    result.assert_outcomes(passed=1, failed=1)
    out = _lost_and_locked(result)
    assert "needs an async def test" not in out


def test_race_marker_under_pytest_asyncio_auto_mode_from_the_command_line(pytester: pytest.Pytester) -> None:
    """The issue's own check: ``--asyncio-mode=auto`` given on the command line."""
    pytest.importorskip("pytest_asyncio", reason="pytest-asyncio is in the test extra")
    _project(pytester, "", ASYNCIO_TESTS.format(mark=""))
    result = pytester.runpytest_subprocess(*QUIET, "-p", "no:anyio", "--asyncio-mode=auto")
    result.assert_outcomes(passed=1, failed=1)
    _lost_and_locked(result)


def test_race_marker_under_anyio(pytester: pytest.Pytester) -> None:
    """anyio's plugin would run the test once itself; the race runner goes first, explores
    asyncio schedules for the asyncio backend and skips the trio one, saying why."""
    pytest.importorskip("anyio", reason="anyio is in the test extra")
    _project(pytester, "", ANYIO_TESTS)
    result = pytester.runpytest_subprocess(*QUIET, "-p", "no:asyncio", "-rs")
    result.assert_outcomes(passed=1, failed=1, skipped=2)
    out = result.stdout.str()
    assert "test_lost[asyncio] FAILED" in out and "test_locked[asyncio] PASSED" in out, out
    assert "an append was lost" in out and "interleaving (" in out
    assert "explores asyncio schedules; this run's anyio_backend is 'trio'" in out
    assert "turncheck race " in out and "test_store.py:test_lost --schedule" in out  # the CLI takes the name


def test_race_marker_with_both_plugins_loaded(pytester: pytest.Pytester) -> None:
    """pytest-asyncio in auto mode and anyio's plugin loaded together, as the test extra installs
    them: the asyncio tests still run under the race runner."""
    pytest.importorskip("pytest_asyncio", reason="pytest-asyncio is in the test extra")
    pytest.importorskip("anyio", reason="anyio is in the test extra")
    _project(pytester, 'asyncio_mode = "auto"', ASYNCIO_TESTS.format(mark=""))
    result = pytester.runpytest_subprocess(*QUIET)
    result.assert_outcomes(passed=1, failed=1)
    _lost_and_locked(result)


SHARED_FIXTURE_TESTS = """
import asyncio

import pytest
from store import KeyValue, LockedChatStore, check_both_kept


class Rows:
    '''A locked store that also keeps every append it ever saw: one schedule's rows stay for the next.'''

    def __init__(self):
        self.rows, self.lock = [], asyncio.Lock()

    async def add(self, item):
        async with self.lock:
            rows = list(self.rows)
            await asyncio.sleep(0)
            self.rows = [*rows, item]


@pytest.fixture
def rows():
    return Rows()


@pytest.mark.race(schedules=20)
async def test_locked_store_from_a_fixture(rows):
    await asyncio.gather(rows.add(1), rows.add(2))
    assert len(rows.rows) == 2


@pytest.mark.parametrize("n", [2])
@pytest.mark.race(schedules=20)
async def test_locked_store_built_in_the_body(n):
    await check_both_kept(LockedChatStore(KeyValue()))
"""


def test_a_failure_after_the_first_schedule_names_the_fixtures_every_schedule_shared(
    pytester: pytest.Pytester,
) -> None:
    """Fixtures are made once for all of a marked test's schedules. A correct (locked) store given by
    a fixture failed at the second schedule with ``assert 4 == 2`` and an interleaving, read as a
    race: the report now says the fixture's state was shared, and how to tell (replay the token
    alone). A parametrized value (``n``) and a store built in the body are not named."""
    _project(pytester, "", SHARED_FIXTURE_TESTS)
    result = pytester.runpytest_subprocess(*QUIET, "-p", "no:anyio", "-p", "no:asyncio")
    out = result.stdout.str()
    assert "test_locked_store_from_a_fixture FAILED" in out, out
    assert "test_locked_store_built_in_the_body[2] PASSED" in out, out
    assert "fixtures made once for every schedule: rows" in out, out
    assert "fixtures made once for every schedule: n" not in out
