"""A synchronous race test: its threads scheduled like tasks, its I/O calls their await points.

:func:`threaded_test` turns a plain ``def`` test taking no arguments into what the explorer runs
(:mod:`.explore`, :mod:`.fault_search`): the test's body runs as a controlled thread
(:mod:`.cooperative`), every thread it starts — ``threading.Thread``, a ``ThreadPoolExecutor``'s
workers — is one too, and :class:`ThreadedLoop` is the scheduler: where more than one thread
may go on, the chooser picks. Index 0 keeps the thread that paused at an I/O call running (a
thread is not preempted at a call that returns at once; the others follow, the one that ran
last first), so the first schedule runs each thread to its next wait, and a reordering is a
preemption at an I/O call. Tokens, shrinking, the fault search and the reports are those of async tests.

The run ends when the test's body has returned and no controlled thread but a daemon one can
run (a daemon thread does not keep a process alive; it is stopped with the run); then the
body's exception, or else the first exception a thread let escape (a thread's error is printed
and lost in production: here it fails the run; an injected fault does not), or else a thread
left waiting for ever (a deadlock; an idle pool worker is not one) is the run's failure.

Invariant: the patches of :mod:`.blocking` and :mod:`.io_points` are in place exactly while a
:class:`ThreadedLoop` is open, and every controlled thread has ended (or was stopped) when it
closes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from turncheck.sim.race import blocking, io_points
from turncheck.sim.race.cooperative import FINISHED, ThreadSlot
from turncheck.sim.race.faults import CRASHED, FaultingLoop, InjectedFault
from turncheck.sim.race.guard import Overrun
from turncheck.sim.race.loop import ControlledLoop, Deadlock, _Actor
from turncheck.sim.race.where import Step

THREAD_FAULT_KINDS = ("error", "crash")  # a thread cannot be cancelled


def _patches() -> list[tuple[Any, str, Any]]:
    return [
        (threading, "Lock", blocking.make_lock),
        (threading, "_allocate_lock", blocking.make_lock),
        (threading, "RLock", blocking.make_rlock),
        (threading.Thread, "start", blocking.start),
        (threading.Thread, "join", blocking.join),
        (concurrent.futures.thread, "queue", blocking.PoolQueueModule),
        *io_points.patches(),
    ]


class ThreadedLoop(ControlledLoop):
    """The controlled loop, scheduling the controlled threads of a synchronous test (see the
    module). Its own tasks (the one that waits for the body) are scaffolding: never a step."""

    def __init__(self, chooser: Any, max_steps: int, *rest: Any) -> None:
        super().__init__(chooser, max_steps, *rest)
        self._threads: dict[_Actor, ThreadSlot] = {}
        self._main: ThreadSlot | None = None
        self._settled: asyncio.Future[None] | None = None
        self._stuck = False  # a thread's step never came back (see _step_thread)
        self._restore = [(owner, name, getattr(owner, name)) for owner, name, _ in _patches()]
        for owner, name, stand_in in _patches():
            setattr(owner, name, stand_in)

    # -- the threads ------------------------------------------------------------------------------

    def add_thread(self, slot: ThreadSlot) -> int:
        """A new controlled thread, runnable last (called by the thread starting it, while the
        scheduler waits for that one's step); returns how many the run has started."""
        actor = self._actor(slot.name)
        slot.name = actor.name
        self._threads[actor] = slot
        self._submit(actor)
        return len(self._threads)

    async def run_main(self, body: Callable[[], Any], name: str) -> Any:
        """Run ``body`` as the first controlled thread; return (or raise) the run's outcome."""
        slot = ThreadSlot(self, name, body)
        slot.thread = threading.Thread(target=slot.serve, name="turncheck-race-test", daemon=True)
        self._main, self._settled = slot, self.create_future()
        self.add_thread(slot)
        slot.thread.start()
        await self._settled
        return self._outcome()

    def _outcome(self) -> Any:
        assert self._main is not None
        if self._main.error is not None:
            raise self._main.error
        escaped = getattr(self, "escaped", lambda exc: False)
        for slot in self._threads.values():
            if slot.error is not None and not escaped(slot.error):
                raise slot.error
        left = [s for s in self._threads.values() if not s.ended and not s.idle and not s.daemon]
        if left:
            raise Deadlock("the test returned and a thread it started never ended: " + self.waiting())
        return self._main.result

    def moved_since(self, mark: int, name: str) -> bool:
        """Whether a thread other than ``name`` took a step after step ``mark``."""
        return any(s.actor != name for s in self.steps[mark:])

    def waiting(self) -> str:
        where = [f"{s.name} at {s.where}" for s in self._threads.values() if not s.ended]
        return "; ".join(where) or super().waiting()

    # -- the scheduler ----------------------------------------------------------------------------

    def _runnable(self) -> list[_Actor]:
        ready = sorted(super()._runnable(), key=lambda a: a.ready_at)  # a thread at an I/O call: first
        if self._stuck:
            return [a for a in ready if a not in self._threads]
        return [a for a in ready if (s := self._threads.get(a)) is None or s.can_go is None or s.can_go()]

    def _step(self) -> None:
        if not self._eager:
            runnable = self._runnable()
            if not runnable and self._time_out():
                return
            main, settled = self._main, self._settled
            if main is not None and main.ended and settled is not None and not settled.done():
                if all(self._threads[a].daemon for a in runnable if a in self._threads):
                    settled.set_result(None)  # the body returned and only daemon threads could go on
                    return
        super()._step()

    def _time_out(self) -> bool:
        """Nothing can run: the first timed wait's timeout passes (virtual time); False if none."""
        waiting = [a for a in sorted(super()._runnable(), key=lambda a: a.ready_at)
                   if (s := self._threads.get(a)) is not None and s.can_go is not None and s.timed]  # fmt: skip
        if waiting:
            slot = self._threads[waiting[0]]
            slot.timed_out, slot.can_go = True, None
        return bool(waiting)

    def _run_actor(self, actor: _Actor, runnable: tuple[str, ...], chosen: int) -> None:
        slot = self._threads.get(actor)
        if slot is None:  # the scaffolding task: runs, and is not one of the test's steps
            n = len(self.steps)
            ControlledLoop._run_actor(self, actor, runnable, chosen)
            del self.steps[n:]
            return
        start = actor.where
        if self._thread_fault(actor, slot, runnable, chosen):
            return
        if self._step_thread(slot) is FINISHED:
            self._ready.pop(actor, None)
            end = "(returned)" if slot.error is None else f"(raised {type(slot.error).__name__})"
        else:
            end = slot.where  # at an I/O call it goes on by default (first); after a sleep or a wait, last
            actor.ready_at = next(self._seq) * (1 if slot.family is None else -1)
        actor.where = end
        self.steps.append(Step(actor.name, start, end, runnable, chosen, thread=True))

    def _step_thread(self, slot: ThreadSlot) -> object:
        """``slot.step()``; a step that does not come back (the wall-clock bound passed, a
        Ctrl-C) leaves its thread stuck: no controlled thread is stepped again in this run, and
        the bound's message says where the thread was."""
        try:
            return slot.step()
        except BaseException as exc:
            self._stuck = True
            if isinstance(exc, Overrun) and exc.args:
                exc.args = (f"{exc.args[0]}; {slot.name} was blocked at {slot.now()}, in a call the "
                            "scheduler does not pause at (a lock made before the run, at import, is a "
                            "real lock)",)  # fmt: skip
            raise

    def _thread_fault(self, actor: _Actor, slot: ThreadSlot, runnable: tuple[str, ...], chosen: int) -> bool:
        """Inject a fault at this step (:class:`ThreadedFaultingLoop`); True: the step is done."""
        return False

    def _own_threads(self) -> set[threading.Thread]:
        return super()._own_threads() | {s.thread for s in self._threads.values() if s.thread is not None}

    def close(self) -> None:
        if self._closed:
            return
        try:
            for slot in self._threads.values():
                slot.stop()
        finally:
            for owner, name, real in self._restore:
                setattr(owner, name, real)
            super().close()


class ThreadedFaultingLoop(ThreadedLoop, FaultingLoop):
    """Faults at the controlled threads' I/O calls: each resumption of a thread paused at one is
    a fault point (its first step, a sleep and a wait are not). An ``error`` raises from the call
    instead of it; a ``crash`` stops the thread there — it is never resumed in the run, its
    joiners see it ended, and the scheduler-aware locks it held are released (as a dead
    process's locks are); a ``cancel`` does nothing (a thread cannot be cancelled)."""

    def _thread_fault(self, actor: _Actor, slot: ThreadSlot, runnable: tuple[str, ...], chosen: int) -> bool:
        if slot.family is None or slot.can_go is not None or actor.where == "(start)":
            return False
        point: int = self.points  # type: ignore[has-type]
        self.points = point + 1
        kind = self.plan.get(point)
        if kind not in THREAD_FAULT_KINDS:
            return False
        self.hits.append(f"{kind} at fault point {point}: {actor.name} at {actor.where}")
        if kind == "crash":
            slot.crashed = True
            for lock in slot.held:
                if lock.locked():
                    lock._lock.release()
            slot.held.clear()
            self._ready.pop(actor, None)
            self.steps.append(Step(actor.name, actor.where, CRASHED, runnable, chosen, thread=True))
            actor.where = CRASHED
            return True
        message = f"injected by turncheck race --faults at fault point {point}"
        if slot.family == "sqlite" and self.error is InjectedFault:
            exc: BaseException = io_points.InjectedSqliteError(f"disk I/O error ({message})")
        else:
            exc = self._fault("error", point)
        self.injected.append(exc)
        slot.throw = exc
        return False


def threaded_test(test: Callable[[], Any], name: str | None = None) -> Callable[[], Coroutine[Any, Any, Any]]:
    """``test`` (a plain ``def``, taking no arguments) as a race test: its body and the threads
    it starts run under :class:`ThreadedLoop` (see the module)."""
    title = str(name or getattr(test, "__qualname__", "test"))

    async def run_threads() -> Any:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, ThreadedLoop)
        return await loop.run_main(test, title)

    run_threads.__qualname__ = f"(the threads of {title})"
    run_threads.loop_type = ThreadedLoop  # type: ignore[attr-defined]
    run_threads.faulting_loop = ThreadedFaultingLoop  # type: ignore[attr-defined]
    return run_threads


def is_threaded(test: Any) -> bool:
    """Whether ``test`` is a synchronous test made by :func:`threaded_test`."""
    return getattr(test, "loop_type", None) is ThreadedLoop
