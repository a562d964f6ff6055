"""Waiting, made scheduler-aware: the locks, joins and pool queues of controlled threads.

When only one controlled thread runs at a time (:mod:`.cooperative`), a thread that blocks for
real — on a lock another paused thread holds, on ``Thread.join``, on a pool's empty work queue
— stops the whole run. So while a synchronous race test runs, what a *controlled* thread makes
or calls is replaced:

* ``threading.Lock()``, ``threading.RLock()`` and the waiter locks of ``Condition`` (so
  ``Event``, ``Semaphore``, ``Barrier``, ``queue.Queue`` and ``concurrent.futures.Future``):
  :class:`RaceLock`, whose blocked ``acquire`` hands the turn back and waits until the lock is
  free — the lock that makes a locked store pass;
* ``Thread.start``: the new thread is a controlled one, registered with the scheduler before
  ``start`` returns (so where it joins the run does not depend on the machine's pace);
* ``Thread.join``: waits, without the turn, until the thread ended;
* a ``ThreadPoolExecutor``'s work queue: an idle worker waits, without the turn, for work.

A timed wait (``acquire(timeout=…)``, ``Event.wait(1)``) ends early when nothing else can run:
its timeout passed, in virtual time. Called from any other thread, each of these is the real
thing. A lock made before the run (at import: ``LOCK = threading.Lock()`` at module level) is a
real lock, and a controlled thread blocking on it stops the run until ``--max-seconds``.

Invariant: outside a controlled thread, nothing here changes what the call does.
"""

from __future__ import annotations

import _thread
import queue
import threading
from typing import Any

from turncheck.sim.race.cooperative import ThreadSlot, controlled, here
from turncheck.sim.race.where import callable_name

REAL_LOCK = _thread.allocate_lock
REAL_START, REAL_JOIN = threading.Thread.start, threading.Thread.join
REAL_RLOCK = threading.RLock


class RaceLock:
    """A ``threading.Lock`` whose blocking ``acquire`` in a controlled thread waits without the
    turn (see the module); a real lock underneath, so any thread may release it."""

    def __init__(self) -> None:
        self._lock = REAL_LOCK()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        while True:
            if self._lock.acquire(False):
                slot = controlled()
                if slot is not None:
                    slot.held.append(self)
                return True
            if not blocking:
                return False
            slot = controlled()
            if slot is None:
                got = self._lock.acquire(True, timeout)
                return got
            if slot.block(lambda: not self._lock.locked(), timeout >= 0, here("waits for a lock")):
                return False

    def release(self) -> None:
        self._lock.release()
        slot = controlled()
        if slot is not None and self in slot.held:
            slot.held.remove(self)

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _at_fork_reinit(self) -> None:
        self._lock = REAL_LOCK()

    acquire_lock, release_lock = acquire, release


def make_lock() -> Any:
    """``threading.Lock()`` while a race test runs: a :class:`RaceLock` in a controlled thread."""
    return RaceLock() if controlled() is not None else REAL_LOCK()


def make_rlock(*args: Any, **kwargs: Any) -> Any:
    """``threading.RLock()``: the pure-Python ``RLock`` (over a :class:`RaceLock`) in a
    controlled thread."""
    if controlled() is not None:
        return threading._PyRLock(*args, **kwargs)  # type: ignore[attr-defined]
    return REAL_RLOCK(*args, **kwargs)


def _thread_name(thread: threading.Thread) -> str:
    """A controlled thread's name in a report: what it runs (Python's own ``Thread-N`` counts
    every thread the process ever made, so it differs from one schedule to the next)."""
    target = getattr(thread, "_target", None)
    if target is None:
        return f"{type(thread).__qualname__}.run"
    if getattr(target, "__module__", "") == "concurrent.futures.thread":
        return "pool worker"
    return callable_name(target)


_ORDERED: dict[type, type] = {}


def _ordered(cls: type) -> type:
    """``cls`` hashed by the order its threads started in the run, not by address: a library
    keeping threads in a set (``ThreadPoolExecutor._threads``, joined in set order at shutdown)
    then walks them in the same order in every run."""
    if cls in _ORDERED.values():
        return cls
    if cls not in _ORDERED:
        doc = "A controlled thread, hashed by its _turncheck_order (turncheck race)."
        _ORDERED[cls] = type(cls.__name__, (cls,), {"__hash__": _order_hash, "__doc__": doc,
                                                     "__module__": cls.__module__, "__qualname__": cls.__qualname__})  # fmt: skip
    return _ORDERED[cls]


def _order_hash(self: Any) -> int:
    return int(self._turncheck_order)


def start(self: threading.Thread) -> None:
    """``Thread.start`` from a controlled thread: the new thread is controlled (see the module)."""
    parent = controlled()
    if parent is None:
        REAL_START(self)
        return
    run = self.run
    child = ThreadSlot(parent.loop, _thread_name(self), run)
    self.run = child.serve  # type: ignore[method-assign]
    self._turncheck_slot = child  # type: ignore[attr-defined]
    child.thread = self
    self._turncheck_order = parent.loop.add_thread(child)  # type: ignore[attr-defined]
    try:
        self.__class__ = _ordered(type(self))
    except TypeError:  # a subclass with __slots__: kept as it is (hashed by address)
        pass
    parent.bypass += 1
    try:
        REAL_START(self)  # returns once the thread waits for its first turn
    finally:
        parent.bypass -= 1


def join(self: threading.Thread, timeout: float | None = None) -> None:
    """``Thread.join`` from a controlled thread on a controlled one: waits without the turn."""
    slot, target = controlled(), getattr(self, "_turncheck_slot", None)
    if slot is None or target is None:
        REAL_JOIN(self, timeout)
        return
    if not target.ended and slot.block(lambda: target.ended, timeout is not None, here("joins a thread")):
        return
    if target.finished:
        slot.bypass += 1
        try:
            REAL_JOIN(self, timeout)  # its thread is on its way out: returns at once
        finally:
            slot.bypass -= 1


class CooperativeQueue(queue.SimpleQueue):  # type: ignore[type-arg]
    """A ``ThreadPoolExecutor``'s work queue: a controlled idle worker waits without the turn."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        while True:
            try:
                return super().get(False)
            except queue.Empty:
                if not block:
                    raise
            slot = controlled()
            if slot is None:
                return super().get(True, timeout)
            if slot.block(lambda: not self.empty(), timeout is not None, "(an idle pool worker)", idle=True):
                raise queue.Empty


class PoolQueueModule:
    """What ``concurrent.futures.thread`` sees as ``queue`` while a race test runs."""

    SimpleQueue = CooperativeQueue
    Empty = queue.Empty
