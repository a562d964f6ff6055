"""A worker process ends when the process that started it ends, however that one ends.

A parent killed by SIGKILL (or any signal it does not handle) runs no cleanup: the ``stress``
writers and compactor, a sweep's pool workers and an ``exec:`` trimmer it started kept running —
a stress worker went on writing history until ``--seconds`` ran out (issue 57: fifteen minutes
after a ``kill -9``). So each of them asks the kernel to kill it when its parent dies: on Linux,
``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (man 2 prctl: "the signal that the calling process will get
when its parent dies"); elsewhere, a daemon thread that polls ``os.getppid()`` and ends the
process when it changes (the parent is gone: the worker was reparented).

Invariant kept: after :func:`die_with_parent`, the process does not outlive its parent by more
than :data:`POLL` seconds (or at all, with the Linux signal) — including a parent that died
before the call: the parent's pid is compared once the signal is armed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
"""``<linux/prctl.h>``: the signal a process gets when the thread that created it dies."""
POLL = 0.5
"""Seconds between two looks at the parent's pid where the kernel cannot signal its death."""


def parent_death_signal() -> bool:
    """Arm ``SIGKILL`` on the parent's death for this process (Linux only); whether it was armed.

    Async-signal-safe enough for a ``subprocess`` ``preexec_fn``: one ``prctl`` call, no lock.
    The signal is kept across ``execve`` (of a program that is not set-user-id), so a child
    program is covered too. It fires when the *thread* that forked this process ends, so the
    caller forks from a thread that lives as long as the process (the main thread).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent: int | None = None) -> None:
    """End this process when ``parent`` (default: the current parent) ends.

    Linux: the kernel's parent-death signal; anywhere it is not available, a daemon thread polls
    ``os.getppid()`` every :data:`POLL` seconds. ``parent`` is the pid the caller knew before
    forking: a parent that died between the fork and this call is caught at once.
    """
    expected = os.getppid() if parent is None else parent
    armed = parent_death_signal()
    if os.getppid() != expected:  # the parent died before the signal was armed
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(POLL)
        os._exit(1)

    threading.Thread(target=watch, name="turncheck-parent-watch", daemon=True).start()
