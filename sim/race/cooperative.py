"""A thread the race scheduler runs: one controlled thread at a time, each pausing at its I/O.

A synchronous store (``sqlite3``, a JSON file through ``open`` and ``os.replace``) driven from
several threads loses an append between its read and its write exactly as an async one does
between two awaits — but a real thread is preempted wherever the interpreter likes, so the loss
shows rarely and never twice alike. Under ``turncheck race`` on a plain ``def`` test every
thread the test starts (and the test's own body) is a :class:`ThreadSlot`: a real OS thread
that runs only while the scheduler has handed it the turn, and hands the turn back at each
**pause** — an I/O call (:mod:`.io_points`), a ``time.sleep``, or a wait for a lock, a join, a
queue (:mod:`.blocking`). The scheduler (:class:`~.threads.ThreadedLoop`) chooses who runs next.

Invariant: at most one controlled thread runs between two pauses, and it runs only between
:meth:`ThreadSlot.step` handing it the turn and its next pause or its end; so the same choices
give the same steps in every run.
"""

from __future__ import annotations

import _thread
import queue
import sys
from collections.abc import Callable
from typing import Any

from turncheck.sim.race.guard import _JOB, wait_for_job
from turncheck.sim.race.where import RACE_DIR, STDLIB_DIR, _frame_text

PAUSED, FINISHED = object(), object()  # what a step ends in: a pause, or the thread's end
STOP_WAIT_S = 2.0  # how long a thread stopped at a schedule's end may take to unwind


class ThreadStopped(BaseException):
    """Raised at a controlled thread's pause when its schedule ended before it did (it crashed,
    or the test failed first): the thread unwinds, and runs no more of the test's code."""


def _user_frames(frame: Any) -> list[Any]:
    """The frames of the test's code, innermost first: not turncheck's, not the standard
    library's (json, pathlib, threading), an installed library's kept."""
    out: list[Any] = []
    while frame is not None and len(out) < 3:
        name = frame.f_code.co_filename
        own = name.startswith(RACE_DIR) or (name.startswith(STDLIB_DIR) and "-packages" not in name)
        if not own:
            out.append(frame)
        frame = frame.f_back
    return out


def here(call: str) -> str:
    """Where the running thread is, in the words of a step: ``file:line `code` in fn ← caller``
    and the call it pauses at (``open``, ``write``, ``sqlite3 execute``)."""
    frames = _user_frames(sys._getframe(1))
    if not frames:
        return f"({call})"
    return f"{_frame_text(frames[0], [f.f_code.co_name for f in frames[1:]])} ({call})"


class ThreadSlot:
    """One controlled thread. The scheduler calls :meth:`step` (run it to its next pause or its
    end); the thread calls :meth:`pause` at an I/O call or a sleep and :meth:`block` when it must
    wait for another thread. ``family`` names the kind of I/O call it is paused at (``"file"``,
    ``"sqlite"``; None at a sleep or a wait): only those pauses are fault points."""

    def __init__(self, loop: Any, name: str, body: Callable[[], Any]) -> None:
        self.loop, self.name, self.body = loop, name, body
        self.box: queue.SimpleQueue[object] = queue.SimpleQueue()  # to the scheduler: PAUSED / FINISHED
        self.go = _thread.allocate_lock()  # the turn: released by step, taken back at a pause
        self.go.acquire()
        self.free = self.stopping = self.finished = self.crashed = self.idle = False
        self.bypass = 0  # inside a real call turncheck makes for it (Thread.start): not controlled
        self.where: str = "(start)"
        self.family: str | None = None
        self.can_go: Callable[[], bool] | None = None  # while it waits: whether it may go on
        self.timed = self.timed_out = False
        self.throw: BaseException | None = None  # an injected fault, raised at its pause
        self.error: BaseException | None = None
        self.result: Any = None
        self.held: list[Any] = []  # the scheduler-aware locks it holds (released if it crashes)
        self.thread: Any = None  # its OS thread (a threading.Thread)

    @property
    def daemon(self) -> bool:
        """A daemon thread the test started (the test's own body is not one)."""
        return bool(getattr(self.thread, "daemon", False)) and self.thread.name != "turncheck-race-test"

    @property
    def ended(self) -> bool:
        return self.finished or self.crashed

    def serve(self) -> None:
        """The thread's body, run in the thread: waits for its first turn, then runs."""
        _JOB.slot = self
        self.go.acquire()
        try:
            if self.stopping:
                raise ThreadStopped
            self.result = self.body()
        except ThreadStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - the scheduler reports it (a thread's error)
            self.error = exc
        finally:
            _JOB.slot = None
            self.finished = True
            self.box.put(FINISHED)

    def now(self) -> str:
        """Where its thread is at this moment (for a thread that has not come back)."""
        frame = sys._current_frames().get(getattr(self.thread, "ident", None) or -1)
        frames = _user_frames(frame)
        return _frame_text(frames[0], [f.f_code.co_name for f in frames[1:]]) if frames else "(unknown)"

    def step(self) -> object:
        """The scheduler's side: run the thread to its next pause (:data:`PAUSED`) or its end."""
        self.__qualname__ = self.name  # what a wall-clock overrun names (guard._blocked_in)
        self.go.release()
        return wait_for_job(self, self.box.get)

    def _yield(self) -> None:
        self.box.put(PAUSED)
        self.go.acquire()
        if self.stopping:
            raise ThreadStopped

    def pause(self, where: str | None = None, family: str | None = None) -> None:
        """Hand the turn back before an I/O call (``family``) or in a ``time.sleep``; raises the
        fault the scheduler injected here, if any."""
        self.where, self.family = where or here("time.sleep"), family
        self._yield()
        self.family = None
        if self.throw is not None:
            exc, self.throw = self.throw, None
            raise exc

    park = pause  # what the time.sleep stand-in of :mod:`.guard` calls

    def block(self, can_go: Callable[[], bool], timed: bool, where: str, idle: bool = False) -> bool:
        """Wait, without the turn, until ``can_go()`` (a lock freed, a thread ended, an item
        queued); a ``timed`` wait also ends when nothing else can run (its timeout passed, in
        virtual time). Returns whether it timed out."""
        self.where, self.family, self.idle = where, None, idle
        self.can_go, self.timed, self.timed_out = can_go, timed, False
        try:
            self._yield()
        finally:
            self.can_go, self.idle = None, False
        return self.timed_out

    def stop(self) -> None:
        """The schedule is over: the thread unwinds from its pause (:class:`ThreadStopped`), its
        calls no longer paused; waited for a moment, so it touches nothing of the next one."""
        if self.finished:
            return
        self.free = self.stopping = True
        try:
            self.go.release()
        except RuntimeError:  # it holds the turn already (never reached a pause)
            pass
        try:
            self.box.get(timeout=STOP_WAIT_S)
            while not self.finished:
                self.box.get(timeout=STOP_WAIT_S)
        except queue.Empty:
            pass


def controlled() -> ThreadSlot | None:
    """The running thread's slot, when the scheduler controls it (else None: calls run as usual)."""
    slot = getattr(_JOB, "slot", None)
    if isinstance(slot, ThreadSlot) and not slot.free and not slot.bypass:
        return slot
    return None
