"""What a race test may not do to the run that checks it: end it.

A test that calls ``sys.exit`` (any code, 0 included), raises ``KeyboardInterrupt`` or calls
``os._exit`` has not passed, whatever the code: under plain ``pytest`` or ``asyncio.run`` it
would have ended the process, and a race run that let it would print a traceback and exit with
the *test's* code — 0 reads as "every schedule passed", 3 as turncheck's "inconclusive". So
while a schedule runs, :func:`guarded`:

* replaces ``os._exit`` by a function that raises :class:`ExitCalled` (in this process only: a
  child forked from the test still exits as it asked), so the process lives to report it;
* notes a real Ctrl-C: the SIGINT handler in place (Python's, or the command's of
  :mod:`turncheck.cli.interrupt`) is wrapped so that a ``KeyboardInterrupt`` that comes from the
  signal is told apart from one the test raised. The first still stops the run (exit 130); the
  second fails the schedule like ``SystemExit``.

Invariant: when :func:`guarded` is left, ``os._exit`` and the SIGINT handler are what they
were before it was entered.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, NoReturn


class ExitCalled(BaseException):
    """``os._exit(code)`` called by a race test: raised in its place (a ``BaseException``, so an
    ``except Exception`` in the test does not catch it, as it could not catch the real exit)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


EXITS = (SystemExit, KeyboardInterrupt, ExitCalled)
"""What a test raises to end its process; the loop lets these through every callback."""


@dataclass
class Guard:
    """What happened while a schedule ran: a real Ctrl-C arrived; ``os._exit`` was called
    (kept even when the :class:`ExitCalled` it raised was caught or never awaited)."""

    interrupted: bool = False
    exit_called: ExitCalled | None = None


def exit_text(exc: BaseException) -> str:
    """How the test exited, as the call it made: ``sys.exit(3)``, ``os._exit(0)``, ``raise
    KeyboardInterrupt``."""
    if isinstance(exc, ExitCalled):
        return f"os._exit({exc.code})"
    if isinstance(exc, SystemExit):
        return f"sys.exit({exc.code!r})"
    return "KeyboardInterrupt raised by the test"


@contextmanager
def guarded() -> Iterator[Guard]:
    """While inside, ``os._exit`` raises :class:`ExitCalled` and a real SIGINT is noted (see
    the module)."""
    guard = Guard()
    pid, real_exit = os.getpid(), os._exit

    def exit_instead(status: int) -> NoReturn:
        if os.getpid() != pid:  # a child forked from the test: exit as it asked
            real_exit(status)
        guard.exit_called = ExitCalled(status)
        raise guard.exit_called

    previous = (
        signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    )

    def noted(signum: int, frame: FrameType | None) -> Any:
        guard.interrupted = True
        assert callable(previous)
        return previous(signum, frame)

    if callable(previous):
        signal.signal(signal.SIGINT, noted)
    os._exit = exit_instead
    try:
        yield guard
    finally:
        os._exit = real_exit
        if callable(previous):
            signal.signal(signal.SIGINT, previous)
