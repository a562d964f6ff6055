"""A crash lets go of what a dead process would not hold (sim/race/held.py), and nothing more.

Found in the issue-53 re-audit: a crash released only an ``asyncio.Lock``; a correct store
guarded by an ``asyncio.Semaphore``, a ``Condition`` or an anyio ``Lock`` failed ``race
--faults`` with "Deadlock: every task waits" (the crashed task's ``async with`` never exited),
and an ``error`` injected while a task *waited* for an ``asyncio.Lock`` stranded its other
waiters (asyncio hands the lock on only on a cancellation) — a false Deadlock too, at an await
where no I/O happens. Each primitive below guards a read-modify-write append: crashed inside its
critical section the store passes, unguarded it loses an acknowledged append, and an unfollowed
primitive's deadlock says what the crash did not release.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from turncheck.sim.race.explore import run_schedule
from turncheck.sim.race.fault_search import search_faults
from turncheck.sim.race.faults import Acknowledged
from turncheck.sim.race.schedule import parse_token

BUDGET = 40
"""Fault runs per search: the unguarded store's search (the control below) finds its lost append
within it, so a guarded store passing the same search is no vacuous pass."""
MODULE_CONDITION = asyncio.Condition()  # made at import, before any run patches anything


class Store:
    def __init__(self, guard: Any) -> None:
        self.items: list[str] = []
        self.guard = guard

    async def read(self) -> list[str]:
        await asyncio.sleep(0)  # the store's I/O
        return list(self.items)

    async def append(self, item: str) -> None:
        if self.guard is None:
            await self._append(item)
            return
        async with self.guard:
            await self._append(item)

    async def _append(self, item: str) -> None:
        items = await self.read()
        await asyncio.sleep(0)  # the write's I/O
        self.items = [*items, item]


def appends(make_guard: Callable[[], Any]) -> Callable[[], Any]:
    async def test() -> None:
        store = Store(make_guard())
        history = Acknowledged(store.read)

        async def one(item: str) -> None:
            await store.append(item)
            history.ack(item)

        await asyncio.gather(one("a"), one("b"), one("c"), return_exceptions=True)
        await history.check()

    return test


GUARDS: dict[str, Callable[[], Any]] = {
    "asyncio.Lock": asyncio.Lock,
    "asyncio.Semaphore": lambda: asyncio.Semaphore(1),
    "asyncio.BoundedSemaphore": lambda: asyncio.BoundedSemaphore(1),
    "asyncio.Condition": asyncio.Condition,
    "module-level asyncio.Condition": lambda: MODULE_CONDITION,
    "anyio.Lock": anyio.Lock,
    "anyio.Semaphore": lambda: anyio.Semaphore(1),
    "anyio.CapacityLimiter": lambda: anyio.CapacityLimiter(1),
    "anyio.Condition": anyio.Condition,
}
if "fast_acquire" in inspect.signature(anyio.Lock).parameters:  # anyio >= 4.5
    GUARDS["anyio.Lock(fast_acquire)"] = lambda: anyio.Lock(fast_acquire=True)


@pytest.mark.parametrize("name", list(GUARDS))
def test_a_crash_inside_the_critical_section_releases_the_guard(name: str) -> None:
    test = appends(GUARDS[name])
    crash = run_schedule(test, parse_token("0.0:/0=crash"))  # the first append crashes at its read
    assert crash.faults and "crash at fault point 0" in crash.faults[0] and "in read" in crash.faults[0]
    assert crash.failure is None, crash.failure
    result = search_faults(test, budget=BUDGET)
    assert result.failing is None, result.failing


def test_without_a_guard_the_same_search_loses_an_acknowledged_append() -> None:
    result = search_faults(appends(lambda: None), budget=BUDGET)
    assert result.failing is not None and result.failing.failure is not None
    assert "acknowledged, then lost" in result.failing.failure.text


def test_an_error_is_not_injected_into_a_wait_for_a_lock() -> None:
    """The token that failed with a false Deadlock: task 2 waits in ``asyncio.Lock.acquire``;
    that wait is no fault point any more, so point 2 is an await of the store's own I/O."""
    run = run_schedule(appends(asyncio.Lock), parse_token("0.0:/2=error"))
    assert run.failure is None, run.failure
    assert run.faults and "acquire" not in run.faults[0]


class HomemadeLock:
    """A lock no table follows: a crash cannot know the task held it."""

    def __init__(self) -> None:
        self.owner: asyncio.Future[None] | None = None

    async def __aenter__(self) -> None:
        while self.owner is not None:
            await self.owner
        self.owner = asyncio.get_running_loop().create_future()

    async def __aexit__(self, *exc: Any) -> None:
        owner, self.owner = self.owner, None
        assert owner is not None
        owner.set_result(None)


def test_a_primitive_turncheck_does_not_follow_stays_held_and_the_deadlock_says_so() -> None:
    run = run_schedule(appends(HomemadeLock), parse_token("0.0:/0=crash"))
    assert run.failure is not None and run.failure.kind == "Deadlock"
    assert "after a crash, which released the asyncio Lock" in run.failure.text
    assert "not another library's lock" in run.failure.text


def test_the_classes_are_as_they_were_after_a_run() -> None:
    from anyio._backends import _asyncio as backend

    before = {(cls, name): cls.__dict__.get(name) for cls in (asyncio.Lock, asyncio.Semaphore,
              asyncio.Condition, getattr(backend, "Lock", anyio.Lock),
              getattr(backend, "Semaphore", anyio.Semaphore), backend.CapacityLimiter)
              for name in ("acquire", "release", "__aenter__", "__aexit__", "acquire_on_behalf_of")}  # fmt: skip
    run_schedule(appends(asyncio.Condition), parse_token("0.0:/0=crash"))
    after = {key: key[0].__dict__.get(key[1]) for key in before}
    assert after == before


class StoreError(Exception):
    """A store's own error type, raised ``from`` the driver's (as SQLAlchemy's StatementError is)."""


def test_a_fault_a_library_wraps_is_not_the_test_failing_but_an_assertion_from_it_is() -> None:
    """SQLAlchemy wraps the driver's error (``raise StatementError(...) from err``): a fault in a
    setup step escaped the test wrapped and failed ``race --faults`` as if the test had failed."""

    async def wrapped() -> None:
        try:
            await asyncio.sleep(0)
        except ConnectionError as err:
            raise StoreError("could not open the store") from err

    async def asserted() -> None:
        try:
            await asyncio.sleep(0)
        except ConnectionError as err:
            raise AssertionError("lost") from err

    async def test(body: Any) -> None:
        await asyncio.gather(body(), body())

    assert run_schedule(lambda: test(wrapped), parse_token("0.0:/0=error")).failure is None
    failed = run_schedule(lambda: test(asserted), parse_token("0.0:/0=error")).failure
    assert failed is not None and failed.kind == "AssertionError"


def test_a_library_logging_an_injected_fault_prints_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """SQLAlchemy's pool logs "Exception during reset or similar" with the traceback of the
    fault it met: ``race --faults`` over an async SQLAlchemy store printed 79 tracebacks. A
    record whose exception is an injected fault is dropped; any other record is still handled."""
    import logging

    from turncheck.sim.race.fault_search import search_faults

    log = logging.getLogger("a-store-library")

    async def test() -> None:
        try:
            await asyncio.sleep(0)
        except ConnectionError:
            log.exception("Exception during reset or similar")
        log.warning("a record of its own")

    async def two() -> None:
        await asyncio.gather(test(), test())

    with caplog.at_level(logging.WARNING):
        search_faults(two, budget=6)
        assert "Exception during reset" not in caplog.text
        assert "a record of its own" in caplog.text
        log.error("after the search", exc_info=ConnectionError("injected by turncheck race --faults at point 0"))
        assert "after the search" in caplog.text  # outside a search the same record is handled


def test_a_task_a_check_starts_is_no_fault_point() -> None:
    """SQLAlchemy's ``AsyncSession.__aexit__`` closes the session in a task of its own
    (``_run_to_completion``): inside ``Acknowledged``'s read that task was a fault point, and a
    one-transaction store failed ``--faults`` on its own check's read."""
    store: list[str] = []

    async def close_in_a_task() -> None:
        await asyncio.sleep(0)  # the close's own I/O

    async def read() -> list[str]:
        await asyncio.shield(asyncio.get_running_loop().create_task(close_in_a_task()))
        return list(store)

    async def test() -> None:
        history = Acknowledged(read)

        async def append(item: str) -> None:
            await asyncio.sleep(0)
            store.append(item)
            history.ack(item)

        store.clear()
        await asyncio.gather(append("a"), append("b"), return_exceptions=True)  # checked after_run

    result = search_faults(test, budget=60)
    assert result.points == 3  # the appends' awaits and the test's gather; none in the checks' child
    assert result.failing is None, result.failing


def test_a_crashed_coroutine_collected_prints_no_exception_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """An aiosqlite store crashed inside ``async with connect()``: its coroutines, collected,
    printed "Exception ignored in: <coroutine …> RuntimeError: coroutine ignored GeneratorExit"
    28 times. Within a fault run such an unraisable is dropped; any other still reaches the hook."""
    import sys
    from types import SimpleNamespace

    from turncheck.sim.race.faults import fault_logs_dropped

    seen: list[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_value))
    own = ValueError("the test's own")
    with fault_logs_dropped():
        sys.unraisablehook(SimpleNamespace(exc_value=RuntimeError("coroutine ignored GeneratorExit")))
        sys.unraisablehook(SimpleNamespace(exc_value=own))
    assert seen == [own]


def test_a_search_collects_what_its_runs_made_not_the_callers_objects() -> None:
    """Each crashed run is collected (:func:`~turncheck.sim.race.explore._run`); in a pytest
    worker holding a million objects, a 40-run search spent 12-30 s rescanning them (the suite's
    slowest module, issue 58 item 9). The caller's objects are frozen for the search, so every
    full collection inside it skips them; afterwards they are unfrozen, and a caller that froze
    its own keeps them frozen."""
    import gc

    callers = [{"object": i} for i in range(20_000)]
    scanned: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            scanned.append(sum(len(gc.get_objects(g)) for g in range(3)))

    gc.callbacks.append(record)
    try:
        assert gc.get_freeze_count() == 0
        result = search_faults(appends(asyncio.Lock), budget=BUDGET)
    finally:
        gc.callbacks.remove(record)
    assert result.failing is None and scanned  # the crashed runs were collected
    assert max(scanned) < len(callers), scanned  # none of those collections scanned the caller's
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        search_faults(appends(asyncio.Lock), budget=4)
        assert gc.get_freeze_count() >= frozen  # the caller's own freeze is left as it was
    finally:
        gc.unfreeze()
