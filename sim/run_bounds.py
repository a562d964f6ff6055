"""The bounds every run keeps, whatever engine it drives: a memory budget and a hard deadline.

The engines stop themselves at their own bounds (``--max-states``, ``--timeout``) between two
steps, and say so in their result. A single step, though, can be unbounded: building the
initial state of a model with 131 072 sessions, expanding one state into 131 072 successors of
1 MB each, one Hypothesis example over huge parameters. Issue 57 measured ``check keys -p
sessions=131072`` at 10.6 GB in 40 s whatever ``--timeout 10`` or ``--max-states 1000`` said.
So a :class:`RunWatch` — one daemon thread per command — looks at the process's resident memory
and the clock every :data:`POLL` seconds and, past :func:`memory_budget` or the deadline a
command set (:func:`stop_by`), stops the main thread wherever it is (a signal, ``SIGUSR2``, so a
blocking call ends too): it raises
:class:`BoundReached`, a ``KeyboardInterrupt``, so everything that cleans up after a Ctrl-C
(pool workers, partial files) cleans up after it too, and the command ends with one line naming
the bound.

Invariant kept: a command's resident memory does not grow past the budget by more than what
one :data:`POLL` of allocation adds, and it does not run past its deadline by more than
:data:`GRACE` — on POSIX, where a thread can interrupt the main one (``SIGUSR2``); elsewhere
only the engines' own bounds apply.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from turncheck.models.errors import BadParameter, TurncheckError

MEMORY_BUDGET = 2 << 30
"""Resident memory a command may add to what the process held when it started (2 GiB): what the
parameter limits are measured against (docs/checking.md)."""
BUDGET_VARIABLE = "TURNCHECK_MEMORY_BUDGET"
"""Environment variable: the budget in MiB, for a machine with less (or more) to give."""
POLL = 0.02
"""Seconds between two looks at the memory and the clock."""
WATCH_STACK = 256 << 10
"""Bytes of stack for the watch's thread: it only polls."""
REDELIVER = 1.0
"""Seconds between two interruptions of a main thread that went on past its bound."""
GRACE = 1.0
"""Seconds past its deadline a run may take before it is stopped wherever it is: an engine
stops itself at its next step, and says what it covered; the hard stop is for a step that
never ends."""
_SIGNAL = getattr(signal, "SIGUSR2", None)


class BoundReached(KeyboardInterrupt):  # noqa: N818 - a stop, as KeyboardInterrupt is
    """The run reached a bound in the middle of a step; ``str()`` names it."""


class WorkerOverBudget(TurncheckError):
    """A pool worker reached the memory budget: the task fails with it, and the parent, which
    stops every worker on a failed task, reports it in one line."""


def memory_budget() -> int:
    """The budget in bytes: ``TURNCHECK_MEMORY_BUDGET`` (MiB) when set, else :data:`MEMORY_BUDGET`."""
    raw = os.environ.get(BUDGET_VARIABLE, "").strip()
    if not raw:
        return MEMORY_BUDGET
    try:
        mib = int(raw)
    except ValueError:
        mib = 0
    if mib < 1:
        raise BadParameter(f"{BUDGET_VARIABLE} must be a positive number of MiB, got {raw!r}")
    return mib << 20


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux ``/proc/self/statm``), or its peak where there
    is no ``/proc`` (``getrusage``), or None."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def shown_size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def process_memory_limit() -> tuple[str, int] | None:
    """The address-space or data limit this process runs under (``ulimit -v``/``-d``), as
    (its name, bytes), or None when there is none."""
    try:
        import resource
    except ImportError:
        return None
    for name, which in (("ulimit -v", "RLIMIT_AS"), ("ulimit -d", "RLIMIT_DATA")):
        soft = resource.getrlimit(getattr(resource, which))[0] if hasattr(resource, which) else -1
        if soft != resource.RLIM_INFINITY and soft > 0:
            return name, soft
    return None


def out_of_memory_line() -> str:
    """What a refused allocation says: the budget, and the process's own limit when one is set
    (it is reached first when it is lower: "the budget is 2.0 GiB" alone misled under ulimit)."""
    budget = shown_size(memory_budget())
    limit = process_memory_limit()
    if limit is None:
        return f"out of memory (the budget is {budget}; smaller parameters fit)"
    name, size = limit
    return (
        f"out of memory: this process's memory limit ({name}: {shown_size(size)} of address space) was"
        f" reached before the {budget} budget; smaller parameters fit, or set {BUDGET_VARIABLE} (MiB) lower"
    )


def caused_by_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is, wraps or groups a MemoryError (Hypothesis re-raises one that broke
    an example as a flaky-test error or an exception group)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, MemoryError):
            return True
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
        todo += list(getattr(e, "exceptions", ()) or ())
    return False


class RunWatch:
    """One command's watch (see the module doc); ``reason`` names the bound once one is reached."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.baseline = resident_bytes() or 0
        """What the process held when the command started (an interpreter that ran other commands
        before, a test runner, holds what the command did not take)."""
        self.deadline: float | None = None
        self.seconds = 0.0
        self.reason: str | None = None
        self.running = True
        self.ended = threading.Event()
        self.thread: threading.Thread | None = None

    def watch(self) -> None:
        """The thread's loop: a bound past, the main thread is interrupted, and again every
        :data:`REDELIVER` seconds while the bound is still past and the main thread is not
        handling the stop (code that swallowed it — an ``except BaseException``, a library
        that clears errors — does not get to run on)."""
        delivered = -REDELIVER
        while self.running and not self.ended.wait(POLL):
            reason = self.past()
            if reason is None:
                continue
            self.reason = reason
            now = time.monotonic()
            if now - delivered >= REDELIVER and self.running and _SIGNAL is not None and not _stopping():
                _interrupt_main()
                delivered = now

    def start(self) -> None:
        """The watch's thread, on a small stack (it only polls: an address-space limit that
        leaves little room must not fail the command for it). A thread the system refuses leaves
        the run to its engines' own bounds, as off POSIX."""
        size = threading.stack_size(WATCH_STACK)
        try:
            self.thread = threading.Thread(target=self.watch, name="turncheck-run-watch", daemon=True)
            self.thread.start()
        except RuntimeError:  # "can't start new thread": no memory left for one
            self.thread = None
        finally:
            threading.stack_size(size)

    def stop(self) -> None:
        """End the watch and wait for its thread, so none outlives its command (callers that run
        many commands in one process, tests and notebooks, keep no trail of them)."""
        self.running = False
        self.ended.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join()

    def past(self) -> str | None:
        """The bound the run is past now, in words, or None."""
        used = resident_bytes()
        if used is not None and used - self.baseline > self.budget:
            return (f"memory budget reached: the run holds {(used - self.baseline) >> 20} MiB, past the budget of "
                    f"{shown_size(self.budget)} ({BUDGET_VARIABLE} sets it in MiB); smaller parameters fit")  # fmt: skip
        if self.deadline is not None and time.monotonic() > self.deadline:
            return f"timeout reached: --timeout {self.seconds:g} s, stopped in the middle of a step"
        return None


def _interrupt_main() -> None:
    """Send the main thread our signal: a real one (``pthread_kill``), which also ends a
    blocking call (a ``sleep``, a read) there; ``interrupt_main`` only flags it for the next line."""
    main = threading.main_thread().ident
    if _SIGNAL is None or main is None:
        return
    try:
        signal.pthread_kill(main, _SIGNAL)
    except (AttributeError, OSError):
        _thread.interrupt_main(_SIGNAL)


def _stopping() -> bool:
    """Whether the main thread is handling a stop of ours (or an exception raised from one)."""
    main = threading.main_thread().ident
    current = sys._current_exceptions().get(main) if main is not None else None
    exc = current[1] if isinstance(current, tuple) else current
    seen: set[int] = set()
    while isinstance(exc, BaseException) and id(exc) not in seen:
        if isinstance(exc, (BoundReached, WorkerOverBudget)):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ if exc.__cause__ is not None else exc.__context__
    return False


_CURRENT: list[RunWatch] = []


def stop_by(seconds: float) -> None:
    """Stop the current command :data:`GRACE` seconds after ``seconds`` from now, wherever it is
    (a command's ``--timeout``); nothing outside a :func:`watched` block."""
    if _CURRENT:
        _CURRENT[-1].seconds = seconds
        _CURRENT[-1].deadline = time.monotonic() + seconds + GRACE


def watch_this_worker() -> None:
    """In a pool worker (its initializer): the same watch over the worker's own memory for as
    long as it lives, each worker with the whole budget; past it, the task it runs raises
    :class:`WorkerOverBudget`. Main thread, POSIX only, as :func:`watched`."""
    if _SIGNAL is None or threading.current_thread() is not threading.main_thread():
        return
    watch = RunWatch(memory_budget())

    def on_bound(signum: int, frame: FrameType | None) -> None:
        raise WorkerOverBudget(f"a worker process: {watch.reason}")

    signal.signal(_SIGNAL, on_bound)
    watch.start()


@contextmanager
def watched() -> Iterator[RunWatch]:
    """Run the block under a :class:`RunWatch` (main thread, POSIX; elsewhere the watch only
    records). A bound reached raises :class:`BoundReached` in the block."""
    watch = RunWatch(memory_budget())
    ours = _SIGNAL is not None and threading.current_thread() is threading.main_thread()

    def on_bound(signum: int, frame: FrameType | None) -> None:
        if watch.running:
            raise BoundReached(watch.reason or "a bound")

    previous = signal.signal(_SIGNAL, on_bound) if ours and _SIGNAL is not None else None
    _CURRENT.append(watch)
    if ours:
        watch.start()
    try:
        yield watch
    finally:
        watch.stop()
        _CURRENT.remove(watch)
        # A handler someone else installed comes back. The default one (which ends the process)
        # does not: a signal the watch sent just before the end must find ours, which is inert now.
        if ours and _SIGNAL is not None and previous not in (signal.SIG_DFL, None):
            signal.signal(_SIGNAL, previous)
