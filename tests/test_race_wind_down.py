"""A Ctrl-C during ``race`` ends on one line: the schedule's wind-down leaves no coroutine
"never awaited" and no "Task was destroyed but it is pending!" for Python to print at exit
(under load, the interrupt landed inside the wind-down and both were printed after
``turncheck: interrupted``)."""

from __future__ import annotations

import gc
import logging
import subprocess
import sys
import warnings
from typing import Any

import pytest

from turncheck.sim.race.loop import ControlledLoop, _wind_down


def test_a_stop_inside_the_wind_down_leaves_no_coroutine_never_awaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = ControlledLoop(lambda choice: 0)

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
