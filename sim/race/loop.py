"""An asyncio event loop whose every scheduling decision is asked of a chooser.

Under :class:`ControlledLoop` the user's real coroutines run unchanged; what changes is who runs
next. asyncio's own loop runs its ready callbacks first in, first out; here every callback is
owned by an **actor** — a task (the callbacks scheduled with the task's context, which is how
``asyncio.Task`` and ``Future`` call :meth:`call_soon`) or a thread offload — and where more than
one actor is runnable, the chooser picks one by its index in FIFO order (index 0 is asyncio's
pick). The loop uses the public :class:`asyncio.AbstractEventLoop` surface only, never
``BaseEventLoop._run_once`` or ``_ready``, so it does not depend on one CPython's internals.

The rules that make a schedule replay exactly:

* a callback owned by no actor (a future's done callback in a fresh context, ``gather``'s
  bookkeeping, a timer's callback) runs at once, in order, before the next choice: it is the
  loop's own work, not an interleaving;
* ``run_in_executor`` / ``asyncio.to_thread`` become an actor of their own, a **job**: when
  chosen, its function runs in a worker thread while the loop waits — to its end, or, on the
  default executor, to its next ``time.sleep`` (a step of its own: :class:`~.guard.Slot`); when
  chosen after that, its result (or error) is delivered. Between steps, as while a real thread
  takes its time, any task may run and any timer fire. Jobs on a one-worker executor run in the
  order submitted; on the default executor (many workers), in any order;
* time is virtual: code takes none, and the clock jumps to the next timer when no actor is
  runnable — or, while a job is in flight, whenever the chooser picks :data:`CLOCK` (always
  offered last, so index 0 keeps asyncio's order); a sleep otherwise wakes after everything
  that could run before it;
* a thread the loop did not start (the test's own, aiosqlite's connection thread) reaches the
  loop only through ``call_soon_threadsafe``; its callbacks are taken only when no actor is
  runnable, and whether its answer or a pending timer comes first is a choice (:mod:`.foreign`).

Invariant: given the same program and the same answers from the chooser, the sequence of
steps — which actor ran, from which await to which — is the same in every run and process.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import heapq
import itertools
import logging
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from turncheck.models.errors import TurncheckError
from turncheck.sim.race.foreign import CLOCK, ForeignThreads
from turncheck.sim.race.guard import EXITS, PARKED, Escaped, JobThread, Slot, guarded, wait_for_job
from turncheck.sim.race.where import Choice, Chooser, Step, callable_name, suspended_at

SHOWN_RUNNABLE = 16  # the most runnable names a step keeps (10 000 ready tasks: 1.2 GB of them)
RAN, DELIVERED, PAUSED = "(ran in a thread)", "(delivered)", "(in time.sleep, in its thread)"


class Deadlock(TurncheckError):
    """Every task waits and nothing can wake one: no runnable task, no timer, no thread."""


class RaceUnsupported(TurncheckError, NotImplementedError):
    """What the controlled loop does not run (sockets, subprocesses, signals)."""


Callback = tuple[asyncio.Handle, Callable[..., Any], tuple[Any, ...], contextvars.Context]


Job = Callable[[], Any]  # a job's next step: the run returns the delivery, the delivery None


class _Actor:
    __slots__ = ("name", "handles", "ready_at", "task", "job", "where", "serial")

    def __init__(self, name: str) -> None:
        self.name = name
        self.handles: deque[Callback] = deque()
        self.ready_at = 0
        self.task: asyncio.Task[Any] | None = None
        self.job: Job | None = None
        self.where = "(start)"
        self.serial: deque[_Actor] | None = None  # its executor's queue, when that has one worker


class _Names(Sequence[str]):
    """The runnable actors' names, each made when read (a chooser of 10 000 tasks reads one)."""

    def __init__(self, actors: list[_Actor]) -> None:
        self._actors = actors

    def __len__(self) -> int:
        return len(self._actors)

    def __getitem__(self, i: Any) -> Any:
        return self._actors[i].name if isinstance(i, int) else [a.name for a in self._actors[i]]


class ControlledLoop(ForeignThreads, asyncio.AbstractEventLoop):
    """An event loop that asks ``chooser`` which runnable actor runs next (see the module).

    Parameters
    ----------
    chooser
        Called at every point with more than one runnable actor; returns an index into
        :attr:`Choice.names` (clamped into range).
    max_steps
        A run taking more steps than this stops with :class:`Deadlock` (a livelock under the
        schedule).
    """

    task_type: Any = asyncio.Task

    def __init__(self, chooser: Chooser, max_steps: int = 100_000) -> None:
        self._chooser = chooser
        self._max_steps = max_steps
        self._actors: list[_Actor] = []
        self._by_context: dict[int, tuple[contextvars.Context, _Actor]] = {}
        self._eager: deque[Callback] = deque()
        self._ready: dict[_Actor, None] = {}  # the actors with a callback or a job to run, in ready_at order
        self._timers: list[
            tuple[float, int, asyncio.TimerHandle, Callable[..., Any], tuple[Any, ...], contextvars.Context]
        ] = []
        ForeignThreads.__init__(self)
        self._future_order: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._seq = itertools.count(1)
        self._names: dict[str, int] = {}
        self._now = 0.0
        self._points = 0
        self._running = False
        self._stopping = False
        self._closed = False
        self._debug = False
        self._thread: int | None = None
        self._awaited: asyncio.Future[Any] | None = None
        self._worker: JobThread | None = None
        self._in_flight = 0  # jobs submitted and not yet delivered
        self._serial: weakref.WeakKeyDictionary[Any, deque[_Actor]] = weakref.WeakKeyDictionary()
        self._clock = _Actor(CLOCK)
        self._clock.where = "(t=0s)"
        self._pools: weakref.WeakSet[Any] = weakref.WeakSet()  # the executors jobs were sent to
        self._slots: list[Slot] = []  # the jobs on the loop's own threads (released on close)
        self._exception_handler: Any = None
        self._asyncgens: weakref.WeakSet[Any] = weakref.WeakSet()
        self._threads_before = set(threading.enumerate())
        self.steps: list[Step] = []
        self._escaped: Escaped | None = None  # see _run_handle and unretrieved()

    # -- the scheduler ----------------------------------------------------------------------------

    def _actor(self, base: str) -> _Actor:
        k = self._names.get(base, 0) + 1
        self._names[base] = k
        actor = _Actor(base if k == 1 else f"{base}#{k}")
        self._actors.append(actor)
        return actor

    def _enqueue(self, handle: asyncio.Handle, cb: Callable[..., Any], args: tuple[Any, ...],
                 ctx: contextvars.Context, owned: bool) -> None:  # fmt: skip
        owner = self._by_context.get(id(ctx)) if owned else None
        if owner is not None and owner[0] is ctx:
            actor = owner[1]
            if not actor.handles:
                self._queue(actor)
            actor.handles.append((handle, cb, args, ctx))
        else:
            self._eager.append((handle, cb, args, ctx))

    def _run_handle(self, item: Callback) -> None:
        handle, cb, args, ctx = item
        if handle.cancelled():
            return
        try:
            ctx.run(cb, *args)
        except EXITS:
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception):  # GeneratorExit, the test's own: never meant to escape
                self._escaped = self._escaped or Escaped.of(exc, f"the loop callback {callable_name(cb)}")
                return
            self.call_exception_handler(
                {"message": f"Exception in callback {cb!r}", "exception": exc, "handle": handle}
            )

    def _runnable(self) -> list[_Actor]:
        return list(self._ready)

    def _step(self) -> None:
        while self._eager:
            self._run_handle(self._eager.popleft())
            if self._stopping:
                return
        runnable = self._runnable()
        if runnable and self._in_flight and self._timer_pending():
            runnable.append(self._clock)
        if runnable:
            if len(self.steps) >= self._max_steps:
                raise self._livelock()
            chosen, names = 0, ()  # most steps: no choice
            if len(runnable) > 1:
                many = len(runnable) > SHOWN_RUNNABLE  # names made only as a chooser reads them (pct)
                seen: Any = _Names(runnable) if many else tuple([a.name for a in runnable])
                chosen = min(max(0, self._chooser(Choice(self._points, seen))), len(runnable) - 1)
                self._points += 1
                names = seen if not many else (  # a step keeps the first, the chosen and the last
                    *(a.name for a in runnable[: SHOWN_RUNNABLE - 3]),
                    f"(… {len(runnable) - SHOWN_RUNNABLE + 1} more)", runnable[chosen].name, runnable[-1].name)  # fmt: skip
            self._run_actor(runnable[chosen], names, chosen)
        elif self._timer_pending() and self._foreign_pending():
            self._foreign_or_clock()
        elif self._take_foreign(block=False):
            pass
        elif self._timers:
            self._advance_clock()
        elif not self._take_foreign(block=True):
            raise Deadlock("every task waits and nothing can wake one: " + self.waiting())

    def _livelock(self) -> Exception:
        return Deadlock(f"no end after {self._max_steps} steps: the tasks keep running (a livelock)")

    def _run_actor(self, actor: _Actor, runnable: tuple[str, ...], chosen: int) -> None:
        start = actor.where
        if actor is self._clock:
            self._advance_clock()
            self.steps.append(Step(CLOCK, start, f"(t={self._now:g}s)", runnable, chosen))
            actor.where = self.steps[-1].end
            return
        if actor.job is not None:
            self._run_job(actor, runnable, chosen)
            return
        try:
            self._run_handle(actor.handles.popleft())
        finally:  # also when the test exits (:mod:`.guard`): the loop stays consistent for the cleanup
            if actor.handles:
                self._queue(actor)
            else:
                self._ready.pop(actor, None)
        task = actor.task
        if task is None:
            end = "(ran)"
        elif task.done():  # its exception read, not retrieved: unretrieved() looks at that flag
            exc = None if task.cancelled() else getattr(task, "_exception", None) or task.exception()
            end = (
                "(cancelled)"
                if task.cancelled()
                else f"(raised {type(exc).__name__})"
                if exc
                else "(returned)"
            )
        else:
            end = suspended_at(task.get_coro())
        actor.where = end
        self.steps.append(Step(actor.name, start, end, runnable, chosen))

    def _run_job(self, actor: _Actor, runnable: tuple[str, ...], chosen: int) -> None:
        """A job's run (its effects; its delivery becomes runnable, last in FIFO order) or its
        delivery (the awaiting future settles, and the job is no longer in flight)."""
        job, start = actor.job, actor.where
        assert job is not None
        actor.job = job()
        if actor.job is None:
            self._ready.pop(actor, None)
            self._in_flight -= 1
        else:
            self._queue(actor)
            if actor.job is job:  # parked in time.sleep, inside its thread
                actor.where = PAUSED
                self.steps.append(Step(actor.name, start, PAUSED, runnable, chosen))
                return
            if actor.serial is not None:
                actor.serial.popleft()
                if actor.serial:
                    self._submit(actor.serial[0])
        actor.where = RAN if actor.job is not None else DELIVERED
        self.steps.append(Step(actor.name, start, actor.where, runnable, chosen))

    def _submit(self, actor: _Actor) -> None:
        self._queue(actor)

    def _queue(self, actor: _Actor) -> None:
        """``actor`` runnable, last in FIFO order: kept in that order, so a step costs no sort
        (10 000 ready tasks made every step sort them: minutes for one schedule)."""
        actor.ready_at = next(self._seq)
        self._ready.pop(actor, None)
        self._ready[actor] = None

    def _timer_pending(self) -> bool:
        while self._timers and self._timers[0][2].cancelled():
            heapq.heappop(self._timers)
        return bool(self._timers)

    def _advance_clock(self) -> None:
        if not self._timer_pending():
            return
        self._now = max(self._now, self._timers[0][0])
        while self._timers and self._timers[0][0] <= self._now:
            _, _, handle, cb, args, ctx = heapq.heappop(self._timers)
            self._eager.append((handle, cb, args, ctx))

    def waiting(self) -> str:
        """Where each unfinished task waits, in words."""
        where = [f"{a.name} at {a.where}" for a in self._actors if a.task is not None and not a.task.done()]
        return "; ".join(where) or "no task"

    # -- AbstractEventLoop: callbacks and time ----------------------------------------------------

    def call_soon(self, callback: Callable[..., Any], *args: Any,  # type: ignore[override]
                  context: contextvars.Context | None = None) -> asyncio.Handle:  # fmt: skip
        self._check_closed()
        ctx = context if context is not None else contextvars.copy_context()
        handle = asyncio.Handle(callback, args, self, ctx)
        self._enqueue(handle, callback, args, ctx, owned=context is not None)
        return handle

    def call_soon_threadsafe(  # type: ignore[override]
        self, callback: Callable[..., Any], *args: Any, context: contextvars.Context | None = None
    ) -> asyncio.Handle:
        if threading.get_ident() == self._thread or self._thread is None:
            return self.call_soon(callback, *args, context=context)
        self._inbox.put((callback, args, context))
        return asyncio.Handle(callback, args, self, context)

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any,  # type: ignore[override]
                   context: contextvars.Context | None = None) -> asyncio.TimerHandle:  # fmt: skip
        return self.call_at(self._now + max(0.0, delay), callback, *args, context=context)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any,  # type: ignore[override]
                context: contextvars.Context | None = None) -> asyncio.TimerHandle:  # fmt: skip
        self._check_closed()
        ctx = context if context is not None else contextvars.copy_context()
        handle = asyncio.TimerHandle(when, callback, args, self, ctx)
        heapq.heappush(self._timers, (when, next(self._seq), handle, callback, args, ctx))
        return handle

    def time(self) -> float:
        return self._now

    def create_future(self) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.Future(loop=self)
        self._future_order[fut] = next(self._seq)
        return fut

    def create_task(self, coro: Any, *, name: str | None = None, context: contextvars.Context | None = None,
                    **kwargs: Any) -> asyncio.Task[Any]:  # fmt: skip
        self._check_closed()
        ctx = context if context is not None else contextvars.copy_context()
        base = name or getattr(coro, "__qualname__", None) or type(coro).__name__
        actor = self._actor(base)
        self._by_context[id(ctx)] = (ctx, actor)
        task: asyncio.Task[Any] = self.task_type(coro, loop=self, name=actor.name, context=ctx, **kwargs)
        actor.task = task
        return task

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:  # type: ignore[override]
        """A job actor (see the module): first ``func(*args)`` runs in a thread while the loop
        waits, later its outcome is delivered to the returned future. An executor of one worker
        (``max_workers=1``) runs its jobs in the order they were submitted."""
        self._check_closed()
        fut = self.create_future()
        owner = asyncio.current_task(self)
        actor = self._actor(f"{owner.get_name() if owner else 'loop'} → {callable_name(func)}")
        actor.where = "(runs in a thread)"
        if executor is None and self._worker is None:
            self._worker = JobThread()
        pool: Any = self._worker if executor is None else executor
        self._pools.add(pool)
        slot = Slot(self._worker, func, args) if executor is None and self._worker is not None else None
        if slot is not None:
            self._slots.append(slot)

        def deliver(result: Any, exc: BaseException | None) -> None:
            if fut.cancelled():
                return
            if exc is not None:  # the caller's await raises it
                fut.set_exception(exc)
            else:
                fut.set_result(result)

        def run() -> Job:
            try:
                if slot is None:
                    result = wait_for_job(func, pool.submit(func, *args).result)
                else:
                    outcome = slot.step()
                    if outcome is PARKED:
                        return run  # parked in time.sleep: its next step resumes it
                    result, exc = outcome
                    if exc is not None:
                        return functools.partial(deliver, None, exc)
            except BaseException as exc:
                return functools.partial(deliver, None, exc)
            return functools.partial(deliver, result, None)

        actor.job = run
        self._in_flight += 1
        if getattr(executor, "_max_workers", 0) == 1:
            actor.serial = self._serial.setdefault(executor, deque())
            actor.serial.append(actor)
            if len(actor.serial) > 1:
                return fut  # submitted when the jobs before it have run
        self._submit(actor)
        return fut

    def set_default_executor(self, executor: Any) -> None:
        raise RaceUnsupported("the controlled loop runs thread offloads one at a time in its own worker")

    # -- AbstractEventLoop: running and closing ---------------------------------------------------

    def run_forever(self) -> None:
        if self._running:
            raise RuntimeError("This event loop is already running")
        self._check_closed()
        old_hooks = sys.get_asyncgen_hooks()
        try:  # a Ctrl-C may land on any line: the loop is left stopped whichever it was
            sys.set_asyncgen_hooks(firstiter=self._asyncgens.add, finalizer=self._finalize_asyncgen)
            self._running, self._thread = True, threading.get_ident()
            asyncio.events._set_running_loop(self)
            while not self._stopping:
                self._step()
        finally:
            self._running = self._stopping = False
            asyncio.events._set_running_loop(None)
            sys.set_asyncgen_hooks(*old_hooks)

    def run_until_complete(self, future: Any) -> Any:
        self._check_closed()
        task = asyncio.ensure_future(future, loop=self)
        self._awaited = task  # an earlier call's task finishing later (cancelled) stops nothing
        task.add_done_callback(lambda done: self.stop() if done is self._awaited else None)
        self.run_forever()
        if not task.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return task.result()

    def _finalize_asyncgen(self, agen: Any) -> None:
        self.call_soon_threadsafe(self.create_task, agen.aclose())

    async def shutdown_asyncgens(self) -> None:
        gens = list(self._asyncgens)
        self._asyncgens.clear()
        if gens:
            await asyncio.gather(*(g.aclose() for g in gens), return_exceptions=True)

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True)

    def get_task_factory(self) -> None:
        """None: every task comes from :meth:`create_task`, which gives it its actor (anyio asks)."""
        return None

    def stop(self) -> None:
        self._stopping = True

    def is_running(self) -> bool:
        return self._running

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._running:
            raise RuntimeError("Cannot close a running event loop")
        self._closed = True
        for slot in self._slots:
            slot.release()
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    def _check_closed(self) -> None:
        if self._closed:
            raise RuntimeError("Event loop is closed")

    def settled(self) -> bool:
        """Nothing to wind down (every task done; no async generator, callback, actor or job left):
        closing no async generator is then a lone step of a task of its own (no choice, no fault
        point), which :func:`_wind_down` skips — most schedules end so, and nothing else changes."""
        return not (self._asyncgens or self._eager or self._ready or self._in_flight
                    or any(a.task is not None and not a.task.done() for a in self._actors))  # fmt: skip

    def tasks(self) -> list[asyncio.Task[Any]]:
        return [a.task for a in self._actors if a.task is not None]

    def unretrieved(self) -> Escaped | None:
        """The first task that ended with a ``BaseException`` that is no ``Exception``
        (``GeneratorExit``, the test's own) and that nothing retrieved (``_log_traceback``,
        asyncio's "never retrieved" flag), else the first such callback's. Every finished task's
        exception is retrieved then, as each step's report used to (no "never retrieved" log)."""
        found = None
        for task in self.tasks():
            if task.done() and not task.cancelled() and getattr(task, "_log_traceback", False):
                exc = task.exception()
                if found is None and exc is not None and not isinstance(exc, (Exception, *EXITS)):
                    found = Escaped.of(exc, f"the task {task.get_name()}, never awaited")
        return found or self._escaped

    # -- AbstractEventLoop: errors and debug ------------------------------------------------------

    def get_debug(self) -> bool:
        return self._debug

    def set_debug(self, enabled: bool) -> None:
        self._debug = enabled

    def set_exception_handler(self, handler: Any) -> None:
        self._exception_handler = handler

    def get_exception_handler(self) -> Any:
        return self._exception_handler

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        if self.is_closed() and context.get("message") == "Task was destroyed but it is pending!":
            return  # a task of a schedule a Ctrl-C cut short, collected at exit: cancelled, not lost
        exc = context.get("exception")
        logging.getLogger("asyncio").error(context.get("message", "unhandled error"), exc_info=exc)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        if self._exception_handler is None:
            self.default_exception_handler(context)
        else:
            self._exception_handler(self, context)

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        """Called by ``TimerHandle.cancel``; the clock skips cancelled timers when it advances."""


def _wind_down(loop: ControlledLoop, retrieve: bool) -> BaseException | None:
    """Cancel the tasks a run left and close its async generators, under its chooser; returns
    how the test exited if it did so while being cancelled. ``retrieve`` (after an exit or a
    Ctrl-C): every finished task's exception is marked retrieved, as asyncio's "Task exception
    was never retrieved" with its traceback is not the report."""
    left = [t for t in loop.tasks() if not t.done()]
    for t in left:
        t.cancel()
    closing = loop.shutdown_asyncgens() if left or not loop.settled() else None
    own: list[asyncio.Future[Any]] = []  # the wind-down's own tasks: a Ctrl-C may end one of them
    try:
        if left:
            own.append(asyncio.ensure_future(asyncio.gather(*left, return_exceptions=True), loop=loop))
            loop.run_until_complete(own[-1])
        if closing is not None:
            own.append(asyncio.ensure_future(closing, loop=loop))
            loop.run_until_complete(own[-1])
    except Deadlock:
        pass
    except EXITS as exc:
        return exc
    finally:
        if closing is not None:
            closing.close()  # not awaited when a stop came first: closed, never warned about at exit
        for t in [*own, *loop.tasks()] if retrieve else own:  # type: ignore[assignment]
            if t.done() and not t.cancelled():
                t.exception()
    return None


def run_controlled(test: Callable[[], Coroutine[Any, Any, Any]], chooser: Chooser, max_steps: int = 100_000,
                   max_seconds: float | None = None, loop_type: Callable[..., ControlledLoop] | None = None,
                   ) -> tuple[BaseException | None, Sequence[Step]]:  # fmt: skip
    """Run ``test()`` to completion under one schedule; returns its exception (None: it passed)
    and the steps. Tasks it left running are cancelled and its async generators closed, under
    the same chooser, so nothing leaks into the next schedule. A test that exits (``sys.exit``,
    ``os._exit``, its own ``KeyboardInterrupt``) returns that as its exception, every task's
    exception retrieved so none is logged later; a real Ctrl-C is raised again once the tasks
    are wound down, as ``asyncio.run`` does (:mod:`.guard`). Past ``max_seconds`` of wall-clock
    time the schedule fails with :class:`~.guard.Overrun`, saying where the loop was blocked;
    its tasks get as long again to wind down, and a job thread still stuck is left behind (a
    daemon thread: it does not hold the process). ``loop_type``: a loop that also injects faults
    (:mod:`.faults`); else a test's own ``loop_type`` (a synchronous test: :mod:`.threads`)."""
    make = loop_type or getattr(test, "loop_type", None) or ControlledLoop  # a threaded test's own
    loop = make(chooser, max_steps)  # type: ignore[abstract]
    outcome: BaseException | None = None
    with guarded(max_seconds) as guard:
        try:
            try:
                loop.run_until_complete(test())
            except BaseException as exc:
                if guard.interrupted:  # what the Ctrl-C made of the test's code (EBADF in its cleanup, …)
                    with contextlib.suppress(Exception, KeyboardInterrupt):  # best effort; a 2nd Ctrl-C
                        _wind_down(loop, True)  # in the handler: cli/interrupt.py does not deliver it again
                    raise KeyboardInterrupt from None  # is an interrupt, not the test's error
                outcome = exc
            steps, escaped = tuple(loop.steps), loop.unretrieved()
            if guard.overrun is not None:
                guard.rearm()
            exited = _wind_down(loop, isinstance(outcome, EXITS) or guard.exit_called is not None)
            if outcome is None:  # what production prints and loses fails the run (guard.Escaped)
                outcome = guard.escaped or escaped
            if not isinstance(outcome, EXITS) or guard.overrun is not None:  # os._exit in a thread, …
                outcome = guard.overrun or exited or guard.exit_called or outcome
        finally:
            if guard.overrun is not None and loop._worker is not None:
                loop._worker.shutdown(wait=False)  # its job may never return
                loop._worker = None
            with contextlib.suppress(*((Exception, KeyboardInterrupt) if guard.interrupted else ())):
                loop.close()  # after a Ctrl-C, as far as it gets: the process is ending
        if guard.interrupted:
            raise KeyboardInterrupt
    return outcome, steps
