"""A Ctrl-C that Python swallowed is delivered again.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. If that is
inside code the interpreter runs on its own — a garbage-collector callback (Hypothesis installs
one to time its runs), a ``__del__``, a weakref callback — the exception cannot propagate: the
interpreter prints "Exception ignored in …" with a traceback and carries on, and the command runs
to its end as if the key had never been pressed (seen: ``check`` going on for minutes, the
testbench for 20 s). The hook below hands such a swallowed interrupt back to the SIGINT handler,
which raises ``KeyboardInterrupt`` again at the next ordinary line, and prints nothing; every other
unraisable exception goes to the hook that was there before.
"""

from __future__ import annotations

import _thread
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REDELIVER_AFTER = 0.005
"""Seconds before the interrupt is handed back. It cannot be handed back from inside the hook:
the handler would run at the hook's next line and raise there, where it is swallowed again."""


def _redeliver() -> None:
    """Runs in a thread of its own, so the main thread first leaves the code that swallowed the
    interrupt. Should it still be inside, the interrupt is swallowed once more and comes back here."""
    time.sleep(REDELIVER_AFTER)
    _thread.interrupt_main(signal.SIGINT)


@contextmanager
def swallowed_interrupts_redelivered() -> Iterator[None]:
    """While inside, an interrupt the interpreter could not raise is raised again."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _thread.start_new_thread(_redeliver, ())  # not threading.Thread: its start() waits
            return
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


__all__ = ["swallowed_interrupts_redelivered"]
