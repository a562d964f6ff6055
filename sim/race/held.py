"""What a crashed task held in memory: the locks a dead process no longer holds.

``race --faults`` crashes a task (:mod:`.faults`): its coroutine is never resumed, so no
``finally`` and no ``__aexit__`` of it runs. A real crash kills a process, and everything the
process held *in memory* dies with it — its in-process locks, semaphores and conditions, which
other processes never shared — while what it had written to the store stays. So a crash here
releases every in-memory synchronisation primitive the task had acquired and not released, and
nothing else: it does not run the task's cleanup (a ``finally`` that writes would hide the very
window a crash opens), and what the task wrote stays written.

The primitives followed (:data:`FOLLOWED`) are asyncio's ``Lock``, ``Semaphore`` /
``BoundedSemaphore`` and ``Condition`` (its lock, also a module-level ``Condition`` made before
the run, through ``async with``), and, when anyio is imported, anyio's ``Lock``, ``Semaphore``,
``Condition`` (an anyio ``Lock``) and ``CapacityLimiter`` on the asyncio backend. Not followed,
and so still held after a crash (a run then ends in a deadlock whose message says so): another
library's primitive, a ``Condition`` made before the run and acquired by a direct
``cond.acquire()`` call, a database transaction left open on a connection the crashed task
shared with others, an OS file lock. Awaiting inside one of these primitives (waiting for the
lock) is not a fault point (:func:`waits_in_a_primitive`): no I/O happens there, and an error
raised into asyncio's own wait breaks its hand-over (asyncio's ``Lock`` wakes its next waiter
only on a cancellation), which no real connection error can do.

Invariant: between :meth:`Holdings.follow`'s enter and exit, each followed primitive's
acquisitions by a task are noted against it and its releases un-note them, whichever task
releases; after exit the classes are as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from types import CoroutineType, GeneratorType
from typing import Any

FOLLOWED = (
    "asyncio Lock, Semaphore, BoundedSemaphore and Condition; anyio Lock, Semaphore, Condition and "
    "CapacityLimiter"
)
_INHERITED = object()  # a method the class inherits: deleted again, not set, after the run
_LOCKS_FILE = os.path.join(os.path.dirname(asyncio.__file__), "locks.py")
_ANYIO_WAITS = ("Lock.acquire", "Semaphore.acquire", "CapacityLimiter.acquire_on_behalf_of",
                "Condition.wait", "Event.wait")  # fmt: skip


class Holdings:
    """Which followed primitives each task holds, and their release at a crash."""

    def __init__(self) -> None:
        # task → {key: release}; key is the primitive (a semaphore: one key per token held)
        self.held: dict[Any, dict[Any, Callable[[], None]]] = {}

    def _note(self, key: Any, release: Callable[[], None]) -> None:
        self.held.setdefault(asyncio.current_task(), {})[key] = release

    def _forget(self, match: Callable[[Any], bool]) -> None:
        """Un-note the first key ``match`` accepts: the current task's own first, then any task's."""
        mine = asyncio.current_task()
        order = [mine, *(t for t in self.held if t is not mine)]
        for task in order:
            for key in self.held.get(task, {}):
                if match(key):
                    del self.held[task][key]
                    return

    def release(self, task: Any, loop: asyncio.AbstractEventLoop) -> int:
        """Release what ``task`` held, as ``task`` (anyio's ``Lock`` checks its owner); how many."""
        releases = list(self.held.pop(task, {}).values())
        with _as_task(loop, task):
            for release in releases:
                release()
        return len(releases)

    @contextlib.contextmanager
    def follow(self) -> Iterator[None]:
        """Note acquisitions and releases of the followed primitives while the run lasts."""
        saved: list[tuple[type, str, Any]] = []
        try:
            for cls, name, wrapper in self._wrappers():
                saved.append((cls, name, cls.__dict__.get(name, _INHERITED)))
                setattr(cls, name, wrapper)
            yield
        finally:
            for cls, name, real in reversed(saved):
                if real is _INHERITED:
                    delattr(cls, name)
                else:
                    setattr(cls, name, real)

    def _wrappers(self) -> list[tuple[type, str, Any]]:
        out = self._asyncio_wrappers()
        if "anyio" in sys.modules:
            from anyio._backends import _asyncio as backend  # the classes anyio's objects are made of

            out += self._anyio_wrappers(backend)
        return out

    def _asyncio_wrappers(self) -> list[tuple[type, str, Any]]:
        lock_acquire, lock_release = asyncio.Lock.acquire, asyncio.Lock.release
        sem_acquire, sem_release = asyncio.Semaphore.acquire, asyncio.Semaphore.release
        cond_enter, cond_exit = asyncio.Condition.__aenter__, asyncio.Condition.__aexit__
        note, forget = self._note, self._forget

        async def acquire_lock(lock: asyncio.Lock) -> bool:
            got = await lock_acquire(lock)
            note(lock, lambda: lock_release(lock) if lock.locked() else None)
            return got

        def release_lock(lock: asyncio.Lock) -> None:
            lock_release(lock)
            forget(lambda key: key is lock)

        async def acquire_token(sem: asyncio.Semaphore) -> bool:
            got = await sem_acquire(sem)
            note(_Token(sem), lambda: sem_release(sem))
            return got

        def release_token(sem: asyncio.Semaphore) -> None:
            sem_release(sem)
            forget(lambda key: isinstance(key, _Token) and key.primitive is sem)

        async def enter_condition(cond: asyncio.Condition) -> None:
            await cond_enter(cond)  # acquire bound before the run: the lock is noted here
            lock = cond._lock  # type: ignore[attr-defined]
            note(lock, lambda: lock_release(lock) if lock.locked() else None)

        async def exit_condition(cond: asyncio.Condition, *exc: Any) -> None:
            await cond_exit(cond, *exc)
            forget(lambda key: key is cond._lock)  # type: ignore[attr-defined]

        return [(asyncio.Lock, "acquire", acquire_lock), (asyncio.Lock, "release", release_lock),
                (asyncio.Semaphore, "acquire", acquire_token), (asyncio.Semaphore, "release", release_token),
                (asyncio.Condition, "__aenter__", enter_condition),
                (asyncio.Condition, "__aexit__", exit_condition)]  # fmt: skip

    def _anyio_wrappers(self, backend: Any) -> list[tuple[type, str, Any]]:
        out: list[tuple[type, str, Any]] = []
        note, forget = self._note, self._forget
        import anyio

        # anyio >= 4.5 makes its asyncio objects of the backend's own classes; before, anyio.Lock and
        # anyio.Semaphore are the classes themselves (the lowest anyio, 4.0, has no backend.Lock)
        classes = ((getattr(backend, "Lock", anyio.Lock), False), (getattr(backend, "Semaphore", anyio.Semaphore), True))
        inside: set[tuple[Any, int]] = set()  # (task, primitive) in an acquire that notes what it gets
        for cls, token in classes:
            real_acquire, real_nowait, real_release = cls.acquire, cls.acquire_nowait, cls.release

            def noted(prim: Any, token: bool = token, real_release: Any = real_release) -> None:
                note(_Token(prim) if token else prim, lambda: real_release(prim))

            async def acquire(prim: Any, real_acquire: Any = real_acquire, noted: Any = noted) -> None:
                key = (asyncio.current_task(), id(prim))
                inside.add(key)  # anyio 4.0's acquire takes its token through acquire_nowait: noted once
                try:
                    await real_acquire(prim)
                finally:
                    inside.discard(key)
                noted(prim)

            def acquire_nowait(prim: Any, real_nowait: Any = real_nowait, noted: Any = noted) -> None:
                real_nowait(prim)
                if (asyncio.current_task(), id(prim)) not in inside:
                    noted(prim)

            def release(prim: Any, real_release: Any = real_release) -> None:
                real_release(prim)
                forget(lambda key: key is prim or (isinstance(key, _Token) and key.primitive is prim))

            out += [
                (cls, "acquire", acquire),
                (cls, "acquire_nowait", acquire_nowait),
                (cls, "release", release),
            ]
        limiter = backend.CapacityLimiter
        borrow, borrow_nowait = limiter.acquire_on_behalf_of, limiter.acquire_on_behalf_of_nowait
        give_back = limiter.release_on_behalf_of

        def lent(lim: Any, borrower: Any) -> None:
            note((lim, borrower), lambda: give_back(lim, borrower) if borrower in lim._borrowers else None)

        async def acquire_on_behalf_of(lim: Any, borrower: Any) -> None:
            await borrow(lim, borrower)
            lent(lim, borrower)

        def acquire_on_behalf_of_nowait(lim: Any, borrower: Any) -> None:
            borrow_nowait(lim, borrower)
            lent(lim, borrower)

        def release_on_behalf_of(lim: Any, borrower: Any) -> None:
            give_back(lim, borrower)
            forget(lambda key: key == (lim, borrower))

        return out + [(limiter, "acquire_on_behalf_of", acquire_on_behalf_of),
                      (limiter, "acquire_on_behalf_of_nowait", acquire_on_behalf_of_nowait),
                      (limiter, "release_on_behalf_of", release_on_behalf_of)]  # fmt: skip


class _Token:
    """One token of a semaphore a task holds (a task may hold several of one semaphore)."""

    __slots__ = ("primitive",)

    def __init__(self, primitive: Any) -> None:
        self.primitive = primitive


@contextlib.contextmanager
def _as_task(loop: asyncio.AbstractEventLoop, task: Any) -> Iterator[None]:
    """Run the block with ``task`` as the loop's current task (and the previous one after)."""
    current = asyncio.current_task(loop)
    if current is not None:
        asyncio.tasks._leave_task(loop, current)  # type: ignore[attr-defined]
    asyncio.tasks._enter_task(loop, task)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        asyncio.tasks._leave_task(loop, task)  # type: ignore[attr-defined]
        if current is not None:
            asyncio.tasks._enter_task(loop, current)  # type: ignore[attr-defined]


def waits_in_a_primitive(coro: Any) -> bool:
    """Whether the suspended ``coro`` waits inside a synchronisation primitive (asyncio's
    ``locks`` module, anyio's lock, semaphore, limiter, condition or event, or this module's
    wrappers): a wait, where no I/O happens and so no fault point is."""
    obj = coro
    while obj is not None:
        kind = type(obj)
        if kind is CoroutineType:
            frame, obj = obj.cr_frame, obj.cr_await
        elif kind is GeneratorType:
            frame, obj = obj.gi_frame, obj.gi_yieldfrom
        else:
            frame = getattr(obj, "cr_frame", None) or getattr(obj, "gi_frame", None)
            obj = getattr(obj, "cr_await", None) or getattr(obj, "gi_yieldfrom", None)
        if frame is None:
            continue
        code = frame.f_code
        if code.co_filename == _LOCKS_FILE or code.co_filename == __file__:
            return True
        if "anyio" in code.co_filename and code.co_qualname in _ANYIO_WAITS:
            return True
    return False
