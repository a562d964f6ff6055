"""A Ctrl-C the interpreter swallows (raised inside a ``__del__`` or a gc callback) or a library
drops (numpy, inside a lookup on an operand's type) is raised again, silently, while a command
runs; one being handled on the way out is left alone; other unraisable exceptions still reach the
old hook."""

from __future__ import annotations

import gc
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from turncheck.cli.interrupt import swallowed_interrupts_redelivered


@pytest.fixture(autouse=True)
def ctrl_c_as_a_terminal_gives_it() -> Iterator[None]:
    """Python's own SIGINT handler, as a shell prompt gives it: a suite started in the background
    (``nohup``, ``cmd &`` in a script) ignores SIGINT, and then ``interrupt_main`` does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class InterruptedWhileCollected:
    """Stands for the Ctrl-C that lands inside code the interpreter runs on its own."""

    def __init__(self, exc: type[BaseException]) -> None:
        self.exc = exc

    def __del__(self) -> None:
        raise self.exc()


def spin(seconds: float = 10.0) -> None:
    """Ordinary code running on: where the interrupt must land, however slow the machine."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def test_a_swallowed_interrupt_is_raised_again_without_a_word(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(KeyboardInterrupt), swallowed_interrupts_redelivered():
        InterruptedWhileCollected(KeyboardInterrupt)
        spin()
    assert capsys.readouterr().err == ""


def test_without_the_hook_python_swallows_it() -> None:
    """The failure the hook exists for: the interrupt is printed as ignored, and the code runs on."""
    seen: list[Any] = []
    previous, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        InterruptedWhileCollected(KeyboardInterrupt)
        spin(0.1)
    finally:
        sys.unraisablehook = previous
    assert [u.exc_type for u in seen] == [KeyboardInterrupt]


def test_a_gc_callback_interrupt_is_raised_again() -> None:
    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc.callbacks.remove(callback)
            raise KeyboardInterrupt

    gc.callbacks.append(callback)
    try:
        with pytest.raises(KeyboardInterrupt), swallowed_interrupts_redelivered():
            gc.collect()
            spin()
    finally:
        if callback in gc.callbacks:
            gc.callbacks.remove(callback)


def test_other_unraisables_reach_the_previous_hook_which_is_restored() -> None:
    seen: list[Any] = []
    previous, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        hook = sys.unraisablehook
        with swallowed_interrupts_redelivered():
            InterruptedWhileCollected(ValueError)
            spin(0.1)
        assert sys.unraisablehook is hook
    finally:
        sys.unraisablehook = previous
    assert [u.exc_type for u in seen] == [ValueError]


class LandsInTheLookup(type):
    """Stands for ``EnumType`` on Python 3.11: a type whose attribute lookups run Python code, where
    the Ctrl-C arrives while numpy looks for ``__array_ufunc__`` on an operand's type."""

    def __getattr__(cls, name: str) -> Any:
        if name == "__array_ufunc__":
            signal.raise_signal(signal.SIGINT)
        raise AttributeError(name)


class Operand(metaclass=LandsInTheLookup):
    pass


def test_without_the_watch_numpy_drops_it() -> None:
    """The second failure the watch exists for (numpy issue 14801): numpy clears every error of
    that lookup, the interrupt included, and the code runs on without a word."""
    assert not (np.arange(3) == Operand()).any()
    spin(0.1)


def test_an_interrupt_numpy_dropped_is_raised_again(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(KeyboardInterrupt), swallowed_interrupts_redelivered():
        np.arange(3) == Operand()  # noqa: B015
        spin()
    assert capsys.readouterr().err == ""


def test_cleanup_on_the_way_out_is_not_interrupted_again() -> None:
    """While the interrupt is being handled (caught, or the context of what is), the watch looks
    many times and hands nothing back: cleanup runs to its end; then Python's handler is back."""
    cleaned = []
    with pytest.raises(KeyboardInterrupt), swallowed_interrupts_redelivered():
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            try:
                raise OSError("a cleanup step's own error")
            except OSError:
                spin(0.3)
            cleaned.append(True)
            raise
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
