"""Faults between writes: the controlled loop injecting an error, a cancellation or a crash.

Data is lost between two writes — a compaction clears the session, then its re-add fails
(openai/openai-agents-python#3116) — and no schedule of a fault-free run shows it. Under
``turncheck race --faults`` every resumption of a task at an ``await`` (not a task's first
step, and never the checks' own task) is a numbered **fault point**, and so is each thread job
(``to_thread``, ``run_in_executor``) about to run, unless the checks' task submitted it — faulted, its function never runs; a run
injects, at the
points its schedule names (``/F=KIND`` in the token), one of :data:`~.schedule.FAULT_KINDS`:

* ``error`` — the ``await`` raises :class:`InjectedFault` (a ``ConnectionError``), or the type
  chosen, as a connection that broke mid-call would; the awaited call's own outcome is dropped;
* ``cancel`` — the task is cancelled there (``Task.cancel``: its ``await`` raises
  ``CancelledError``, as a timeout or a client disconnect does);
* ``crash`` — the task stops there: its coroutine is not resumed again during the run, so no
  ``except`` and no ``finally`` of it runs before the checks and only what it had already
  written survives; whoever awaits the task sees :class:`Crashed`; the in-memory locks,
  semaphores and conditions it held (asyncio's, anyio's: :mod:`.held`) are released, as a dead
  process holds none of its memory. (After the checks the
  coroutine is closed, so its ``finally`` runs then, unreported: a process that died would
  never run it, and a crash here cannot undo what that cleanup writes after the checks.)

The test then ends as it ends — catching the fault and checking, or letting it escape — and the
checks registered with :func:`after_run` run after it, on the same loop and store, in every
run. An injected fault escaping the test is not itself a failure (the operation failed because
the fault made it fail); what fails a run is a check, an assertion, or another exception.

Invariant: the same program, chooser answers and fault plan inject the same faults at the same
steps in every run (the points are counted in step order, which the chooser fixes).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import functools
import inspect
import sys
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from typing import Any, Generic, TypeVar

from turncheck.models.errors import BadParameter
from turncheck.sim.race import held
from turncheck.sim.race.loop import ControlledLoop
from turncheck.sim.race.where import Step

T = TypeVar("T")
CRASHED = "(crashed: never resumed)"
CHECKS = "(the test, then its after_run checks)"  # the task that runs both: never a fault point
_CHECKS: list[Callable[[], Any]] = []  # the running test's after-run checks (one test at a time)


class InjectedFault(ConnectionError):
    """The error ``--faults`` raises at a fault point by default: an ``OSError``, as a store's
    client raises when its connection breaks, so code that handles I/O errors handles it."""


class Crashed(ConnectionAbortedError):
    """What the awaiter of a crashed task sees: the task stopped at its fault point."""


def after_run(check: Callable[[], Any]) -> Callable[[], Any]:
    """Register ``check`` (a function or an ``async def``, taking no arguments) to run after the
    test, in this run, also when an injected fault or crash ended the test; usable as a
    decorator. Its exception fails the run. Outside a race run the check is never called."""
    _CHECKS.append(check)
    return check


class FaultingLoop(ControlledLoop):
    """The controlled loop, counting fault points and injecting ``plan`` (point → kind).
    Tasks are asyncio's pure-Python ``Task`` here, whose step can be given an exception."""

    task_type: Any = asyncio.tasks._PyTask  # type: ignore[attr-defined]

    def __init__(
        self, chooser: Any, max_steps: int, plan: dict[int, str], error: type[BaseException]
    ) -> None:
        super().__init__(chooser, max_steps)
        self.plan, self.error = plan, error
        self.points = 0
        self.hits: list[str] = []
        self.injected: list[BaseException] = []
        self.checker: asyncio.Task[Any] | None = None
        self.crashed: list[Any] = []
        self._jobs: dict[Any, asyncio.Future[Any]] = {}
        self._checks_jobs: set[Any] = set()  # jobs the checks' own task submitted: never faulted
        self.checking = False  # the test has ended and its after_run checks run
        self._checks_tasks: set[Any] = set()  # tasks the checks started (a library's close task)
        self.holdings = held.Holdings()  # what each task holds in memory, let go at its crash

    def run_until_complete(self, future: Any) -> Any:
        """The run, with the in-memory locks each task acquires noted (:mod:`.held`), so that a
        crash releases what the crashed task held (a dead process holds no lock)."""
        with self.holdings.follow():
            return super().run_until_complete(future)

    def waiting(self) -> str:
        """Where each task waits; after a crash, first what a crash does not let go (a
        failure's message is cut at 400 characters)."""
        if not self.crashed:
            return super().waiting()
        return (
            f"(after a crash, which released the {held.FOLLOWED} the crashed task held; not another "
            "library's lock, a transaction left open on a shared connection, or a file lock) "
            + super().waiting()
        )

    def create_task(self, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = super().create_task(coro, **kwargs)
        if self.checker is None:  # the first task is the one that runs the test and its checks
            self.checker = task
        elif self.checking and self._in_the_checks():
            self._checks_tasks.add(task)  # a task a check started: its awaits are no fault points
        return task

    def _in_the_checks(self) -> bool:
        current = asyncio.current_task(self)
        return current is not None and (current is self.checker or current in self._checks_tasks)

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:  # type: ignore[override]
        fut = super().run_in_executor(executor, func, *args)
        self._jobs[self._actors[-1]] = fut  # the job actor just made, and the future it settles
        if self.checker is not None and self._in_the_checks():
            self._checks_jobs.add(self._actors[-1])  # a check's read (to_thread) is no fault point
        return fut

    def _fault_job(self, actor: Any, runnable: tuple[str, ...], chosen: int) -> None:
        """A job about to run in its thread is a fault point too: faulted, its function never
        runs, and its awaiter's ``await`` raises the error, is cancelled, or sees :class:`Crashed`."""
        point, self.points = self.points, self.points + 1
        kind, fut = self.plan.get(point), self._jobs.get(actor)
        if kind is not None and fut is not None:
            self.hits.append(f"{kind} at fault point {point}: {actor.name} before it ran in its thread")
            exc = (
                self._fault(kind, point)
                if kind != "crash"
                else Crashed(f"{actor.name} crashed at fault point {point}")
            )
            settle = (
                functools.partial(fut.cancel)
                if kind == "cancel"
                else functools.partial(fut.set_exception, exc)
            )
            self.injected.append(exc)
            actor.job = lambda: lambda: None if fut.done() or settle() else None  # its delivery: settle
        super()._run_actor(actor, runnable, chosen)

    def _fault(self, kind: str, point: int) -> BaseException:
        if kind == "cancel":
            return asyncio.CancelledError()
        try:
            return self.error(f"injected by turncheck race --faults at fault point {point}")
        except TypeError:  # an exception class whose constructor wants other arguments
            return self.error.__new__(self.error)

    def _run_actor(self, actor: Any, runnable: tuple[str, ...], chosen: int) -> None:
        if actor.job is not None and actor.where == "(runs in a thread)" and actor not in self._checks_jobs:
            self._fault_job(actor, runnable, chosen)
            return
        task: Any = actor.task
        if (task is None or task is self.checker or task in self._checks_tasks or actor.where == "(start)"
                or (self.checker is not None and self.checker.done())  # the wind-down: no fault point
                or not actor.handles
                or getattr(actor.handles[0][1], "__self__", None) is not task
                or held.waits_in_a_primitive(actor.task.get_coro())):  # fmt: skip
            super()._run_actor(actor, runnable, chosen)
            return
        assert task is not None
        point, self.points = self.points, self.points + 1
        kind = self.plan.get(point)
        if kind is not None:
            self.hits.append(f"{kind} at fault point {point}: {actor.name} at {actor.where}")
        if kind == "crash":
            self._crash(actor, runnable, chosen, point)
            return
        if kind == "cancel":
            task.cancel(f"injected by turncheck race --faults at fault point {point}")
            self.injected.append(asyncio.CancelledError())
        elif kind == "error":
            exc = self._fault(kind, point)
            self.injected.append(exc)
            handle, _, _, ctx = actor.handles[0]
            actor.handles[0] = (handle, task._Task__step, (exc,), ctx)
        super()._run_actor(actor, runnable, chosen)

    def _crash(self, actor: Any, runnable: tuple[str, ...], chosen: int, point: int) -> None:
        task = actor.task
        for handle, *_ in actor.handles:
            handle.cancel()
        actor.handles.clear()
        self._ready.pop(actor, None)
        self.crashed.append(task.get_coro())  # kept: not closed (its finally run) before the checks
        self.holdings.release(task, self)  # its finally never runs: what it held is let go
        exc = Crashed(f"{actor.name} crashed at fault point {point} (turncheck race --faults)")
        self.injected.append(exc)
        asyncio.futures._PyFuture.set_exception(task, exc)  # type: ignore[attr-defined]
        self.steps.append(Step(actor.name, actor.where, CRASHED, runnable, chosen))
        actor.where = CRASHED

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        """A fault this run injected, left unretrieved in a future, is not the test's error to log."""
        exc = context.get("exception")
        if exc is None or not self.escaped(exc):
            super().call_exception_handler(context)

    def escaped(self, exc: BaseException) -> bool:
        """Whether ``exc``, out of the test, is a fault this run injected (or a group of them)."""
        if isinstance(exc, BaseExceptionGroup):
            return all(self.escaped(e) for e in exc.exceptions)
        if isinstance(exc, asyncio.CancelledError):
            return any(isinstance(e, asyncio.CancelledError) for e in self.injected)
        if any(e is exc for e in self.injected):
            return True
        # a library's or the store's own error raised ``from`` the fault (SQLAlchemy's
        # StatementError wraps the driver's): the operation failed because of it; never an
        # assertion, and never an error merely raised while handling it (``__context__``)
        cause = exc.__cause__
        return cause is not None and not isinstance(exc, AssertionError) and self.escaped(cause)


MARK = "injected by turncheck race --faults"


def _from_a_fault(exc: BaseException | None, depth: int = 0) -> bool:
    """Whether ``exc`` is a fault this tool injected, the ``GeneratorExit`` of a crashed task's
    close, or an exception raised from or while handling one."""
    if exc is None or depth > 20:
        return False
    if isinstance(exc, (Crashed, GeneratorExit)) or MARK in str(exc):
        return True
    if isinstance(exc, RuntimeError) and str(exc) == "coroutine ignored GeneratorExit":
        return True  # a crashed (never resumed) task's coroutine, closed or collected
    return _from_a_fault(exc.__cause__, depth + 1) or _from_a_fault(exc.__context__, depth + 1)


@contextlib.contextmanager
def fault_logs_dropped() -> Iterator[None]:
    """While a faulted run lasts (and its crashed tasks are closed), a library's log record
    whose exception is one of the injected faults (SQLAlchemy's pool logs "Exception during
    reset or similar" with the traceback) is not printed, nor an "Exception ignored in" of a
    crashed task's coroutine collected: the fault is turncheck's, reported once as the run's
    fault line. Any other record or unraisable exception is handled as usual."""
    real_hook = sys.unraisablehook

    def unraisable(info: Any) -> None:  # a crashed task's coroutine, collected: "Exception ignored in"
        if not _from_a_fault(info.exc_value):
            real_hook(info)

    sys.unraisablehook = unraisable
    try:
        if "logging" not in sys.modules:  # nothing logs: logging is not imported for this
            yield
            return
        import logging

        real = logging.Logger.handle

        def handle(logger: logging.Logger, record: logging.LogRecord) -> Any:
            if record.exc_info and _from_a_fault(record.exc_info[1]):
                return None
            return real(logger, record)

        logging.Logger.handle = handle  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            logging.Logger.handle = real  # type: ignore[method-assign]
    finally:
        sys.unraisablehook = real_hook


def fault_error(name: str) -> type[BaseException]:
    """The exception type ``--fault-error`` names: a builtin (``TimeoutError``) or
    ``package.module:Name``; anything else is one :class:`BadParameter` line."""
    if ":" in name:
        from turncheck.models.user_code import load_object

        found: Any = load_object(name, "--fault-error", noun="exception class")
    else:
        found = getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise BadParameter(
            f"--fault-error {name!r} is not an exception class (e.g. TimeoutError or pkg.mod:Error)"
        )
    return found


class Injection:
    """One run's fault plan: the loop to run it on and the test wrapped with its checks."""

    def __init__(self, plan: dict[int, str], error: type[BaseException]) -> None:
        self.plan, self.error = plan, error
        self.loop: FaultingLoop | None = None
        self.unchecked = False  # an injected fault ended the test and no check ran after it
        self.loop_type: Any = FaultingLoop  # a synchronous test's own (:mod:`.threads`), once wrapped

    def make_loop(self, chooser: Any, max_steps: int) -> FaultingLoop:
        self.loop = self.loop_type(chooser, max_steps, self.plan, self.error)
        assert self.loop is not None
        return self.loop

    def wrap(self, test: Callable[[], Coroutine[Any, Any, Any]]) -> Callable[[], Coroutine[Any, Any, Any]]:
        self.loop_type = getattr(test, "faulting_loop", FaultingLoop)

        async def after_the_test() -> None:
            loop = asyncio.get_running_loop()
            assert isinstance(loop, FaultingLoop)
            _CHECKS.clear()
            task = loop.create_task(test())
            await asyncio.wait([task])
            exc = asyncio.CancelledError() if task.cancelled() else task.exception()
            if exc is not None and not loop.escaped(exc):
                raise exc
            checks = list(_CHECKS)
            _CHECKS.clear()
            loop.checking = True
            self.unchecked = exc is not None and not checks
            for check in checks:
                outcome = check()
                if inspect.isawaitable(outcome):
                    await outcome

        after_the_test.__qualname__ = CHECKS
        return after_the_test

    def close(self) -> None:
        """After the run and its checks: the crashed coroutines are closed, whatever their
        ``finally`` does then (it runs after everything was checked, and is never reported)."""
        for coro in self.loop.crashed if self.loop is not None else ():
            try:
                coro.close()
            except BaseException:  # noqa: BLE001, S110 - a dead task's cleanup is not the test's outcome
                pass

    @property
    def hits(self) -> tuple[str, ...]:
        return tuple(self.loop.hits) if self.loop is not None else ()

    @property
    def points(self) -> int:
        return self.loop.points if self.loop is not None else 0


class Acknowledged:
    """The two durability invariants of a store, checked after the run (:func:`after_run`):
    **every item acknowledged before the fault is in the store after it**, and **the history is
    never empty once it held something** (checked at the end and at every :meth:`observe`).

    ``read`` returns the store's items (a function or an ``async def``); ``covered`` maps what
    the store holds to the items it stands for (a compaction's summary stands for the items it
    replaced; default: the items themselves). Call :meth:`ack` when the store acknowledged an
    item (its write returned), and :meth:`check` at the test's end too, so that a run without
    faults (where no fault ends the test early) checks the same: in an ``async def`` test
    ``await history.check()``; in a ``def`` test, with a plain-function ``read``,
    ``history.check()`` checks at once (and so does :meth:`observe`). An ``async def`` ``read``
    called from a ``def`` test is refused: its check could never run.
    """

    def __init__(self, read: Callable[[], Any], covered: Callable[[list[Any]], Any] | None = None) -> None:
        self.read, self.covered = read, covered
        self.items: list[Any] = []
        self.held = False
        after_run(self.check)

    def ack(self, *items: Any) -> None:
        self.items.extend(items)
        self.held = self.held or bool(items)

    def observe(self) -> Any:
        """Read the store now; the history must not be empty once it held something. With a
        plain-function ``read`` this reads and judges at once and returns the items (which may
        also be awaited); with an ``async def`` ``read``, a coroutine giving them."""
        stored = self.read()
        if inspect.isawaitable(stored):
            return self._observe_later(_in_a_loop(stored, "observe"))
        return _Now(self._seen(list(stored)))

    def check(self) -> Any:
        """Both invariants on the store as it is: at once with a plain-function ``read`` (the
        result may still be awaited), else a coroutine to await."""
        stored = self.read()
        if inspect.isawaitable(stored):
            return self._check_later(_in_a_loop(stored, "check"))
        self._judge(self._seen(list(stored)))
        return _Now(None)

    async def _observe_later(self, stored: Awaitable[Any]) -> list[Any]:
        return self._seen(list(await stored))

    async def _check_later(self, stored: Awaitable[Any]) -> None:
        self._judge(self._seen(list(await stored)))

    def _seen(self, stored: list[Any]) -> list[Any]:
        if self.held and not stored:
            raise AssertionError(f"the history is empty after it held {len(self.items)} acknowledged items")
        self.held = self.held or bool(stored)
        return stored

    def _judge(self, stored: list[Any]) -> None:
        kept = list(self.covered(stored) if self.covered is not None else stored)
        lost = [item for item in self.items if item not in kept]
        if lost:
            raise AssertionError(f"acknowledged, then lost: {lost} (the store holds {stored})")


class _Now(Generic[T]):
    """A value already computed, awaitable too: ``await history.check()`` in an ``async def``
    test and ``history.check()`` in a ``def`` test both check, and at the same moment."""

    def __init__(self, value: T) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, T]:
        return self.value
        yield  # a generator that yields nothing: awaiting it gives the value at once


def _in_a_loop(stored: Awaitable[Any], what: str) -> Awaitable[Any]:
    """``stored`` (what an ``async def`` ``read`` returned), refused outside an event loop — in a
    ``def`` test nothing would ever await it, and the check would silently not run."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if inspect.iscoroutine(stored):
            stored.close()
        raise TypeError(
            f"Acknowledged.{what}() in a def test: its read returned an awaitable, which nothing would "
            "await (give Acknowledged a plain function, or check from an async def test)"
        ) from None
    return stored
