"""Threads the loop did not start: how their answers reach a controlled loop.

A thread the test starts itself (``threading.Thread`` with a ``concurrent.futures.Future`` and
``asyncio.wrap_future``, or ``loop.call_soon_threadsafe``; aiosqlite's connection thread) runs
at this machine's pace and reaches the loop only through ``call_soon_threadsafe``. Its callbacks
are taken only when no task is runnable, and those that arrive together are applied in the order
their futures were created. While a timer is pending, whether the thread's answer or the timer
comes first is a **choice** (:data:`FOREIGN` or :data:`~.loop.CLOCK`), as in production it
depends on how long the thread takes: index 0 takes the answer (waiting up to
:data:`FOREIGN_GRACE_S`), the other fires the timer first and gives the thread as much real time.

Invariant: a callback of another thread is applied on the loop's thread, in a batch sorted by
its future's creation, never while a task is runnable.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from turncheck.sim.race.where import Choice, Chooser, Step

FOREIGN_WAIT_S = 30.0  # how long every task may wait on a thread the loop did not start
FOREIGN_SETTLE_S = 0.005  # callbacks of other threads arriving this close together are one batch
FOREIGN_GRACE_S = 0.05  # how long such a thread may take to answer before the clock jumps past it
CLOCK = "(time passes)"  # the choice to let the clock jump to the next timer while a job is in flight
FOREIGN = "(a thread the test started answers)"  # the choice to take such a thread's answer before a timer
FOREIGN_WAITS, FOREIGN_ANSWERED = "(its answer pending)", "(its answer applied)"


class ForeignThreads:
    """The part of :class:`~.loop.ControlledLoop` that takes other threads' callbacks (see the
    module); the loop provides the attributes declared here."""

    _chooser: Chooser
    _max_steps: int
    _points: int
    _now: float
    _seq: Any
    _clock: Any
    _pools: weakref.WeakSet[Any]
    _threads_before: set[threading.Thread]
    _future_order: weakref.WeakKeyDictionary[Any, int]
    steps: list[Step]

    def __init__(self) -> None:
        self._inbox: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], contextvars.Context | None]]
        self._inbox = queue.SimpleQueue()

    def _advance_clock(self) -> None:
        raise NotImplementedError

    def _enqueue(self, handle: asyncio.Handle, cb: Callable[..., Any], args: tuple[Any, ...],
                 ctx: contextvars.Context, owned: bool) -> None:  # fmt: skip
        raise NotImplementedError

    def _livelock(self) -> Exception:
        raise NotImplementedError

    def _foreign_pending(self) -> bool:
        """Whether a thread the loop did not start may still call back: one is alive, or its
        callbacks wait in the inbox."""
        return not self._inbox.empty() or self._foreign_threads()

    def _foreign_or_clock(self) -> None:
        """Nothing can run, a timer is pending and a thread the test started may answer: which
        comes first is a choice, as in production it depends on how long the thread takes.
        Index 0 (asyncio's pick on a fast thread) takes its answer, waiting up to
        :data:`FOREIGN_GRACE_S`, and lets the clock jump if none comes; :data:`CLOCK` fires the
        timer first, after as much real time (at most the grace) for the thread to go on."""
        names = (FOREIGN, CLOCK)
        if len(self.steps) >= self._max_steps:
            raise self._livelock()
        chosen = min(max(0, self._chooser(Choice(self._points, names))), 1)
        self._points += 1
        if chosen == 0 and self._take_foreign(block=False, grace=True):
            self.steps.append(Step(FOREIGN, FOREIGN_WAITS, FOREIGN_ANSWERED, names, chosen))
            return
        before = self._now
        self._advance_clock()
        time.sleep(min(self._now - before, FOREIGN_GRACE_S))  # the thread lives that time, as it would
        self.steps.append(Step(CLOCK, self._clock.where, f"(t={self._now:g}s)", names, chosen))
        self._clock.where = self.steps[-1].end

    def _foreign_threads(self) -> bool:
        """Whether a thread the loop did not start (nor found running) is alive to call back."""
        return not set(threading.enumerate()) <= self._threads_before | self._own_threads()

    def _take_foreign(self, block: bool, grace: bool = False) -> bool:
        """Apply what other threads sent, as one batch in the order their futures were created.
        Before the clock jumps, a thread still alive gets :data:`FOREIGN_GRACE_S` to answer, so a
        thread's answer and a timer do not race."""
        batch = []
        try:
            if block:
                if not self._foreign_threads() and self._inbox.empty():
                    return False  # no thread is left that could call back (one that did and ended has)
                batch.append(self._inbox.get(timeout=FOREIGN_WAIT_S))
            elif grace:
                batch.append(self._inbox.get(timeout=FOREIGN_GRACE_S))
            else:
                batch.append(self._inbox.get_nowait())
            while True:
                batch.append(self._inbox.get(timeout=FOREIGN_SETTLE_S))
        except queue.Empty:
            pass
        if not batch:
            return False
        last = next(self._seq)
        batch.sort(key=lambda item: self._created(item[0], item[1], last))
        for cb, args, ctx in batch:
            handle = asyncio.Handle(cb, args, self, ctx)  # type: ignore[arg-type]
            self._enqueue(
                handle, cb, args, ctx if ctx is not None else contextvars.copy_context(), owned=False
            )
        return True

    def _created(self, cb: Callable[..., Any], args: tuple[Any, ...], last: int) -> int:
        """When the future a thread's callback settles was created (``wrap_future`` passes it
        first; ``fut.set_result`` is bound to it); ``last`` for a callback settling none. A
        first argument that is no future (a list, an int: ``call_soon_threadsafe(f.set_result,
        [..])``) is not looked up: it cannot be a weak key."""
        for key in (args[0] if args else None, getattr(cb, "__self__", None)):
            if isinstance(key, asyncio.Future):
                order = self._future_order.get(key)
                if order is not None:
                    return order
        return last

    def _own_threads(self) -> set[threading.Thread]:
        """The threads of every executor a job ran on: a job's thread is never a foreign one."""
        return {t for pool in self._pools for t in getattr(pool, "_threads", ())}
