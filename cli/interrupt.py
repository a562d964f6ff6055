"""A Ctrl-C that Python or a library swallowed is delivered again.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives, and two kinds
of place drop it, after which the command runs to its end as if the key had never been pressed
(seen: ``check`` going on for minutes, the testbench for 20 s, ``scenario testbench-fit`` writing
its whole result in about 1 of 100 interrupted runs under load):

* code the interpreter runs on its own — a garbage-collector callback (Hypothesis installs one to
  time its runs), a ``__del__``, a weakref callback — prints "Exception ignored in …" with a
  traceback and carries on;
* a library that clears whatever error a call raised: numpy drops any exception from looking up
  ``__array_ufunc__`` on an operand's type (numpy issue 14801), and on Python 3.11 that lookup on
  an ``Enum`` class runs Python code (``EnumType.__getattr__``), so ``kind == Kind.CALL`` on an
  array can eat a Ctrl-C without a word.

So while a command runs, SIGINT raises ``KeyboardInterrupt`` through a handler of ours that also
starts a watcher. The watcher looks at the main thread every :data:`REDELIVER_AFTER` seconds:
as long as no ``KeyboardInterrupt`` is being handled there (caught, or in the ``__context__`` of
what is, so cleanup on the way out is never disturbed), the interrupt was dropped, and it hands
it back to the handler, which raises again at the next ordinary line. The unraisable hook keeps
the interpreter's "Exception ignored" print of an interrupt off stderr (and starts the watcher
too); every other unraisable exception goes to the hook that was there before.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

REDELIVER_AFTER = 0.005
"""Seconds between the watcher's looks. It cannot hand the interrupt back from where it was
dropped: the handler would run at that code's next line and raise there, where it is dropped again."""


class _Watch:
    """One command's watch. ``running`` is read by the SIGINT handler, which takes no lock: it
    can run in the main thread at any line, holding one included."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """Held by the watcher while it looks and hands back, so that once the command's end has
        taken it, no hand-back can come after."""
        self.running = True
        self.watching = False
        self.main = threading.get_ident()  # made on the main thread

    def start(self) -> None:
        if self.running and not self.watching:
            self.watching = True
            _thread.start_new_thread(self._watch, ())  # not threading.Thread: its start() waits

    def _watch(self) -> None:
        while True:
            time.sleep(REDELIVER_AFTER)
            with self.lock:
                if not self.running:
                    return
                if not _interrupt_being_handled(sys._current_exceptions().get(self.main)):
                    _thread.interrupt_main(signal.SIGINT)


def _interrupt_being_handled(current: Any) -> bool:
    """Whether the exception the main thread is handling (an ``exc_info`` tuple on 3.11, the
    exception from 3.12), or one it was raised from, is a ``KeyboardInterrupt``."""
    exc = current[1] if isinstance(current, tuple) else current
    seen: set[int] = set()
    while isinstance(exc, BaseException) and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ if exc.__cause__ is not None else exc.__context__
    return False


def ignore_unawaited_coroutines() -> None:
    """From a Ctrl-C on, Python's "coroutine … was never awaited" warning is not printed: a run
    cut short leaves coroutines made and never awaited (a race schedule's test, when the Ctrl-C
    lands between making it and running it), collected during the way out — before or after the
    run's one "interrupted" line, which must stay the only one."""
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)


def _drain() -> None:
    """A call: the interpreter runs a handler still pending on entering it (a watcher's last hand
    back, after the command ended), while ours, now a no-op, is installed."""


@contextmanager
def swallowed_interrupts_redelivered() -> Iterator[None]:
    """While inside, an interrupt that was dropped is raised again. Python's own SIGINT handler is
    replaced only where it is the one installed (SIGINT ignored, as in a background job, or an
    embedding program's handler, stays); off the main thread, where no signal lands, nothing is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watch = _Watch()
    previous_hook = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            watch.start()
            return
        previous_hook(unraisable)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if watch.running:
            watch.start()
            ignore_unawaited_coroutines()
            raise KeyboardInterrupt

    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, on_sigint)
    sys.unraisablehook = hook
    try:
        yield
    finally:
        watch.running = False  # first, and no call before it: a pending hand-back now does nothing
        with watch.lock:
            pass
        _drain()
        sys.unraisablehook = previous_hook
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)


__all__ = ["swallowed_interrupts_redelivered"]
