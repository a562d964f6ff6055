"""What a race test may not do to the run that checks it: end it, or hold it for ever.

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

It also keeps the schedule's time bounded — past ``seconds`` of wall clock, SIGALRM raises
:class:`Overrun` where the loop's thread is, naming the synchronous call or the thread work that
blocked it — and runs the loop's own jobs (:class:`JobThread`, :class:`Slot`): on daemon
threads, which a stuck job does not keep alive, each ``time.sleep`` in a job a point where the
job pauses and the scheduler chooses what runs next.

An ``os._exit`` in a thread the test starts itself raises :class:`ExitCalled` in that thread,
where ``threading.excepthook`` would print it as a traceback: while a schedule runs, the hook
passes it over (the guard has noted it, and the run reports it in one line). Any other exception
such a thread lets escape (printed and lost in production) is noted as :class:`Escaped`, and the
schedule fails with it.

Invariant: when :func:`guarded` is left, ``os._exit``, ``time.sleep``, ``threading.excepthook``,
the SIGINT and SIGALRM handlers and the interval timer are what they were before it was entered.
"""

from __future__ import annotations

import _signal  # the handlers as they are: signal's wrappers turn each into an enum, by a raised ValueError
import concurrent.futures
import functools
import linecache
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, NoReturn, SupportsIndex

from turncheck.sim.race.where import RACE_DIR, STDLIB_DIR, callable_name, place


class ExitCalled(BaseException):
    """``os._exit(code)`` called by a race test: raised in its place (a ``BaseException``, so an
    ``except Exception`` in the test does not catch it, as it could not catch the real exit)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Overrun(BaseException):
    """A schedule ran past its wall-clock bound: raised where the loop's thread was (SIGALRM)."""


class Escaped(Exception):  # noqa: N818 (what happened, as ExitCalled and Overrun say)
    """An exception that production prints and loses, escaped where the test cannot see it: out
    of a thread the test started itself, or a ``BaseException`` that is no ``Exception``
    (``GeneratorExit``, a subclass of the test's own) out of a loop callback or an unawaited
    task. The schedule fails with it, in one line, instead of a traceback and a pass."""

    @classmethod
    def of(cls, exc: BaseException, where: str) -> Escaped:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        then = "ends that thread alone, silently" if isinstance(exc, SystemExit) else "prints it and goes on"
        return cls(f"{text} escaped {where} (production {then})").with_traceback(exc.__traceback__)


EXITS = (SystemExit, KeyboardInterrupt, ExitCalled, Overrun)
"""What ends a schedule at once; the loop lets these through every callback."""


@dataclass
class Guard:
    """What happened while a schedule ran: a real Ctrl-C arrived; ``os._exit`` was called
    (kept even when the :class:`ExitCalled` it raised was caught or never awaited); the
    wall-clock bound passed, and where the loop's thread was then."""

    interrupted: bool = False
    exit_called: ExitCalled | None = None
    overrun: Overrun | None = None
    escaped: Escaped | None = None  # the first exception a thread the test started let escape
    seconds: float | None = None  # the bound, when it is armed (main thread, SIGALRM free)

    def rearm(self) -> None:
        """The bound again, from now: for winding down a schedule that overran."""
        if self.seconds is not None:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)


class JobThread(concurrent.futures.Executor):
    """The loop's own workers for ``to_thread`` and ``run_in_executor(None, …)``: *daemon*
    threads (a ``ThreadPoolExecutor``'s are joined at exit, so work stuck past a schedule's bound
    would keep the process alive), one more whenever every one holds a job (a job parked in
    ``time.sleep`` keeps its thread, as a default executor's many workers allow)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._threads: set[threading.Thread] = set()  # as ThreadPoolExecutor names them: never foreign
        self._idle = 0
        self._lock = threading.Lock()

    def _serve(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            call = self._queue.get()
            with self._lock:
                self._idle -= 1
            if call is None:
                return
            call()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        """``fn`` runs on a thread of its own while it runs (its result goes where ``fn`` puts it)."""
        with self._lock:
            spawn = self._idle == 0
        if spawn:
            thread = threading.Thread(target=self._serve, name="turncheck-race", daemon=True)
            self._threads.add(thread)
            thread.start()
        self._queue.put(functools.partial(fn, *args, **kwargs))
        return concurrent.futures.Future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for thread in self._threads:
                try:
                    thread.join()
                except RuntimeError:  # "before it is started": a Ctrl-C cut its start short (start()
                    continue  # waits to see it run); given its None above, a daemon, nothing to wait for


_JOB = threading.local()  # in a thread of JobThread: the Slot it runs
PARKED = object()


class Slot:
    """One job on :class:`JobThread`, run in steps: each :meth:`step` lets its function run
    until it calls ``time.sleep`` (the stand-in :func:`guarded` installs parks it there, a
    scheduling point: a slow read's effects and the work after its sleep are two steps) or
    returns. The loop waits for one or the other, so one thing runs at a time."""

    def __init__(self, pool: JobThread, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.pool, self.func, self.args = pool, func, args
        self.box: queue.SimpleQueue[Any] = queue.SimpleQueue()  # to the loop: PARKED or (result, exc)
        self.go = threading.Event()
        self.started = self.free = False

    def step(self) -> Any:
        """Run to the next ``time.sleep`` (:data:`PARKED`) or to the end (``(result, exc)``)."""
        if not self.started:
            self.started = True
            self.pool.submit(self._body)
        else:
            self.go.set()
        return wait_for_job(self.func, self.box.get)

    def _body(self) -> None:
        _JOB.slot = self
        try:
            self.box.put((self.func(*self.args), None))
        except BaseException as exc:  # the caller's await raises it
            self.box.put((None, exc))
        finally:
            _JOB.slot = None

    def park(self) -> None:
        self.box.put(PARKED)
        self.go.wait()
        self.go.clear()

    def release(self) -> None:
        """The schedule is over: the job runs on by itself, its sleeps taking no time."""
        self.free = True
        self.go.set()


def exit_text(exc: BaseException) -> str:
    """How the test exited, as the call it made: ``sys.exit(3)``, ``os._exit(0)``, ``raise
    KeyboardInterrupt``."""
    if isinstance(exc, ExitCalled):
        return f"os._exit({exc.code})"
    if isinstance(exc, SystemExit):
        return f"sys.exit({exc.code!r})"
    return "KeyboardInterrupt raised by the test"


def _blocked_in(frame: FrameType | None) -> str:
    """Where the loop's thread was when the bound passed: in a synchronous call of the test's
    code (the innermost frame that is neither the standard library's nor the scheduler's,
    inside the callback the loop was running), waiting for a job's thread work, or in the
    scheduler itself (a schedule of very many steps)."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(RACE_DIR) and code.co_name in ("_run_handle", "run_forever"):
            break
        if code.co_filename == __file__ and code.co_name == "wait_for_job":
            return f"thread work ({callable_name(frame.f_locals.get('func'))}) that had not returned"
        if not code.co_filename.startswith((RACE_DIR, STDLIB_DIR)):
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            return f"a synchronous call at {place(code.co_filename)}:{frame.f_lineno} `{line}` (no await returned control)"
        frame = frame.f_back
    return "its own scheduling: the schedule is very long (--max-steps bounds its steps)"


def wait_for_job(func: Callable[..., Any], wait: Callable[[], Any]) -> Any:
    """``wait()`` for a job running ``func`` in its thread (its name: :func:`_blocked_in`)."""
    return wait()


@contextmanager
def guarded(seconds: float | None = None) -> Iterator[Guard]:
    """While inside, ``os._exit`` raises :class:`ExitCalled`, a real SIGINT is noted, and after
    ``seconds`` of wall-clock time :class:`Overrun` is raised where the loop's thread is (on the
    main thread, where SIGALRM is not already someone's; see the module)."""
    guard = Guard()
    pid, real_exit = os.getpid(), os._exit

    def exit_instead(status: int) -> NoReturn:
        if os.getpid() != pid:  # a child forked from the test: exit as it asked
            real_exit(status)
        guard.exit_called = ExitCalled(status)
        raise guard.exit_called

    previous = (
        _signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    )

    def noted(signum: int, frame: FrameType | None) -> Any:
        guard.interrupted = True
        assert callable(previous)
        return previous(signum, frame)

    def overrun(signum: int, frame: FrameType | None) -> Any:
        if guard.overrun is None:
            guard.overrun = Overrun(f"the schedule ran past its wall-clock bound of {seconds:g} s: "
                                    f"the loop was blocked in {_blocked_in(frame)}")  # fmt: skip
        raise guard.overrun

    if callable(previous):
        _signal.signal(signal.SIGINT, noted)
    alarm = getattr(signal, "SIGALRM", None)  # POSIX only: elsewhere --max-steps is the only bound
    if (
        seconds is not None
        and previous is not None
        and alarm is not None
        and _signal.getsignal(alarm) == signal.SIG_DFL
    ):
        guard.seconds = seconds
        _signal.signal(signal.SIGALRM, overrun)
        guard.rearm()
    real_sleep = time.sleep

    def sleep_instead(seconds: float | SupportsIndex) -> None:
        slot = getattr(_JOB, "slot", None)
        if slot is None:
            real_sleep(seconds)
        elif not slot.free:
            slot.park()

    real_hook = threading.excepthook

    def hook_instead(args: threading.ExceptHookArgs) -> None:
        if isinstance(args.exc_value, ExitCalled):  # noted in the guard: the run reports it
            return
        if args.exc_value is None:
            real_hook(args)
        elif guard.escaped is None:
            name = args.thread.name if args.thread is not None else "?"
            guard.escaped = Escaped.of(args.exc_value, f"the thread the test started ({name})")

    os._exit, time.sleep, threading.excepthook = exit_instead, sleep_instead, hook_instead
    try:
        yield guard
    finally:
        os._exit, time.sleep, threading.excepthook = real_exit, real_sleep, real_hook
        if guard.seconds is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _signal.signal(signal.SIGALRM, _signal.SIG_DFL)
        if callable(previous):
            _signal.signal(signal.SIGINT, previous)
