"""A Ctrl-C during ``race`` ends on one line: the schedule's wind-down leaves no coroutine
"never awaited" and no "Task was destroyed but it is pending!" for Python to print at exit
(under load, the interrupt landed inside the wind-down and both were printed after
``turncheck: interrupted``)."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import signal
import subprocess
import sys
import threading
import warnings
from typing import Any

import pytest

from turncheck.sim.race.guard import JobThread
from turncheck.sim.race.loop import ControlledLoop, _wind_down, run_controlled


def test_a_stop_inside_the_wind_down_leaves_no_coroutine_never_awaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = ControlledLoop(lambda choice: 0)

    async def generator() -> Any:
        yield 1

    left = generator()
    loop._asyncgens.add(left)  # an async generator left open: the wind-down has work to do

    def stopped(future: Any) -> Any:
        raise KeyboardInterrupt  # the Ctrl-C lands before the coroutine is started

    monkeypatch.setattr(loop, "run_until_complete", stopped)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert isinstance(_wind_down(loop, True), KeyboardInterrupt)
        gc.collect()
    loop.close()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_a_closed_loop_does_not_report_the_tasks_a_stop_left_pending(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = ControlledLoop(lambda choice: 0)
    loop.close()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        loop.call_exception_handler({"message": "Task was destroyed but it is pending!", "task": None})
        loop.call_exception_handler(
            {"message": "Task exception was never retrieved", "exception": ValueError()}
        )
    assert [r.getMessage() for r in caplog.records] == ["Task exception was never retrieved"]


def test_a_coroutine_left_unawaited_by_the_stop_adds_nothing_after_the_line() -> None:
    """The full suite saw ``sys:1: RuntimeWarning: coroutine 'LockedChatStore.append' was never
    awaited`` after ``turncheck: interrupted``: a schedule cut short leaves the test's coroutines."""
    code = (
        "import gc\nfrom turncheck.cli.app import interrupted\n"
        "async def append(): pass\nleft = append()\ninterrupted()\ndel left\ngc.collect()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stderr == "turncheck: interrupted\n", done.stderr


def _ctrl_c() -> None:
    """What a terminal's Ctrl-C does to the process, here and now."""
    signal.raise_signal(signal.SIGINT)


def test_a_ctrl_c_that_becomes_another_error_in_the_test_s_cleanup_is_still_an_interrupt() -> None:
    """Under load a Ctrl-C landed inside the test's ``TemporaryDirectory`` cleanup (``os.close``),
    which then failed with EBADF: ``race`` printed ``turncheck: error: Bad file descriptor``, exit 2."""

    async def test() -> None:
        try:
            _ctrl_c()
        finally:
            raise OSError(errno.EBADF, "Bad file descriptor")

    with pytest.raises(KeyboardInterrupt):
        run_controlled(test, lambda choice: 0)


def test_a_ctrl_c_as_the_loop_starts_leaves_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """It landed on ``run_forever``'s first lines, before its ``try``: the loop stayed "running",
    so the wind-down and ``close`` raised ``RuntimeError`` and ``race`` printed a traceback, exit 70."""
    import asyncio.events

    real = asyncio.events._set_running_loop
    landed: list[object] = []

    def set_running(loop: object) -> None:
        real(loop)
        if loop is not None and not landed:
            landed.append(loop)
            _ctrl_c()

    monkeypatch.setattr(asyncio.events, "_set_running_loop", set_running)

    async def test() -> None:
        return None

    with pytest.raises(KeyboardInterrupt):
        run_controlled(test, lambda choice: 0)
    (loop,) = landed
    assert not loop.is_running() and loop.is_closed()  # type: ignore[attr-defined]


def test_a_job_thread_whose_start_a_ctrl_c_cut_short_is_not_joined() -> None:
    """``Thread.start`` waits to see the thread run; a Ctrl-C in that wait left a thread never
    marked started in the pool, and ``shutdown`` raised "cannot join thread before it is started"."""
    pool = JobThread()
    pool._threads.add(threading.Thread(target=lambda: None, daemon=True))  # what the cut-short start left
    pool.shutdown(wait=True)


def test_after_a_ctrl_c_no_unawaited_coroutine_is_reported_before_the_line() -> None:
    """The Ctrl-C landed between making the test's coroutine and running it: Python's "never
    awaited" warning came out while the exception unwound, before ``turncheck: interrupted``."""
    code = (
        "import gc, signal\nfrom turncheck.cli.interrupt import swallowed_interrupts_redelivered\n"
        "async def test(): pass\n"
        "try:\n    with swallowed_interrupts_redelivered():\n        left = test()\n"
        "        signal.raise_signal(signal.SIGINT)\nexcept KeyboardInterrupt:\n    del left\n    gc.collect()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr


# A settled run's wind-down is skipped (a schedule's own cost: it made and ran a task of its own);
# each thing a run can leave behind must still be wound down, on the same chooser, as before.


def _noting(body: Any, skip: bool) -> tuple[list[str], list[object]]:
    noted: list[str] = []
    asked: list[object] = []

    def chooser(choice: Any) -> int:
        asked.append(choice)
        return 0

    async def test() -> None:
        await body(noted)

    real = ControlledLoop.settled
    try:
        if not skip:
            ControlledLoop.settled = lambda self: False  # type: ignore[method-assign]
        outcome, _ = run_controlled(test, chooser)
    finally:
        ControlledLoop.settled = real  # type: ignore[method-assign]
    assert outcome is None
    return noted, asked


def _left_behind(body: Any) -> tuple[list[str], list[object]]:
    """Run ``body`` (given the list to note into) as a test, with the skip and with the whole
    wind-down as it ran before the skip (``settled`` never true): what it noted and the choices
    asked must be the same both ways; returns them."""
    skipped = _noting(body, True)
    assert skipped == _noting(body, False)
    return skipped


def test_an_async_generator_left_open_is_closed_in_the_wind_down() -> None:
    async def body(noted: list[str]) -> None:
        async def generator() -> Any:
            try:
                yield 1
                yield 2
            finally:
                noted.append("closed")

        agen = generator()
        await agen.__anext__()

    assert _left_behind(body)[0] == ["closed"]


def test_a_task_left_running_is_cancelled_in_the_wind_down() -> None:
    async def body(noted: list[str]) -> None:
        async def forever() -> None:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                noted.append("cancelled")
                raise

        body.left = asyncio.ensure_future(forever())  # type: ignore[attr-defined]
        await asyncio.sleep(0)

    assert _left_behind(body)[0] == ["cancelled"]


def test_a_thread_job_left_in_flight_runs_in_the_wind_down_against_its_closing() -> None:
    """Its job and the async generators' closing are both runnable: a choice, as before the skip."""

    async def body(noted: list[str]) -> None:
        asyncio.get_running_loop().run_in_executor(None, noted.append, "ran")

    noted, asked = _left_behind(body)
    assert noted == ["ran"] and "ControlledLoop.shutdown_asyncgens" in asked[0].names  # type: ignore[attr-defined]


def test_a_callback_the_stop_left_queued_runs_in_the_wind_down() -> None:
    async def body(noted: list[str]) -> None:
        task = asyncio.current_task()
        assert task is not None
        task.add_done_callback(lambda _: noted.append("called"))  # queued after the loop's stop

    assert _left_behind(body)[0] == ["called"]


def test_a_settled_run_winds_down_without_a_step_or_a_choice() -> None:
    loop = ControlledLoop(lambda choice: 0)

    async def test() -> None:
        await asyncio.sleep(0)

    loop.run_until_complete(test())
    steps = len(loop.steps)
    assert loop.settled()
    assert _wind_down(loop, False) is None
    assert len(loop.steps) == steps and loop.settled()
    loop.close()
