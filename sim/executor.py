"""Executors: map a picklable function over tasks and return the results in task order.

An :class:`Executor` is all a sweep or the testbench needs from whoever runs its cells:
:class:`LocalExecutor` (this process, or a process pool under any start method, ``spawn``
included) and :class:`~turncheck.sim.executor_dask.DaskExecutor` (a cluster) give identical
results, because the callers derive every seed from the task itself and merge in task order.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from turncheck.models.errors import BadParameter
from turncheck.sim.run_bounds import watch_this_worker

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as work completes; must not touch stdout."""


def no_progress(done: int, total: int) -> None:
    """The progress callback of a caller that shows none."""
    return None


START_METHODS = ("fork", "forkserver", "spawn")


class Executor(Protocol):
    """Runs ``fn`` over ``items`` and returns the results in item order.

    ``fn`` and the items must be picklable (a module-level function and plain data), so any
    executor — a process pool, a cluster — can ship them. ``progress(done, total)`` is called as
    items complete, in whatever order they complete.
    """

    def map(self, fn: Callable[[T], R], items: Sequence[T], progress: Progress = no_progress) -> list[R]: ...


@dataclass(frozen=True)
class LocalExecutor:
    """``jobs`` worker processes on this machine; ``jobs=1`` runs in this process.

    Ctrl-C (or a failing task) ends the workers at once: they ignore SIGINT and the parent
    terminates them, so an interrupted sweep stops within a second and no worker prints."""

    jobs: int = 1
    start_method: str | None = None
    """How worker processes start (``fork``, ``forkserver``, ``spawn``); ``None``: the platform's
    default. Every task function is importable on its own, so all three give the same results."""

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise BadParameter(f"parameter jobs must be >= 1, got {self.jobs}")
        if self.start_method is not None and self.start_method not in START_METHODS:
            raise BadParameter(
                f"start method must be one of {', '.join(START_METHODS)}, got {self.start_method!r}"
            )

    def map(self, fn: Callable[[T], R], items: Sequence[T], progress: Progress = no_progress) -> list[R]:
        total = len(items)
        progress(0, total)
        if self.jobs == 1 or total <= 1:
            out: list[R] = []
            for i, item in enumerate(items):
                out.append(fn(item))
                progress(i + 1, total)
            return out
        # the pool's modules (multiprocessing, concurrent.futures: a tenth of a small command's
        # start-up) are imported by the run that starts one, not by whoever imports this module
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        results: list[Any] = [None] * total
        context = multiprocessing.get_context(self.start_method) if self.start_method else None
        pool = None
        try:
            with _interrupts_held():  # the workers start (at the submits) with Ctrl-C held back
                pool = ProcessPoolExecutor(
                    min(self.jobs, total), mp_context=context, initializer=_ignore_interrupt
                )
                futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = fut.result()
                progress(done, total)
        except BaseException:  # Ctrl-C or a failed task: stop the workers now, run nothing more
            if pool is not None:
                _terminate(pool)
            raise
        pool.shutdown(wait=True)
        return results


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT blocked in this thread while the pool starts its workers, and delivered (to this
    process, as ``KeyboardInterrupt``) once they have started. A worker inherits the blocked
    mask at fork and ignores SIGINT in :func:`_ignore_interrupt` before unblocking it, so a
    Ctrl-C during a worker's start-up — before its initializer, in ``multiprocessing``'s own
    bootstrap — no longer prints the worker's ``KeyboardInterrupt`` traceback (seen under load on
    a sweep of 2 workers)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _ignore_interrupt() -> None:
    """A worker leaves Ctrl-C to its parent, which terminates the pool: a terminal's SIGINT
    reaches the whole process group, and workers raising ``KeyboardInterrupt`` would print
    tracebacks while a pool waiting on shutdown ran every remaining task to the end. A parent
    killed by a signal it cannot handle ends the worker too (:func:`die_with_parent`; under
    ``forkserver`` the parent is the server, which ends with the run), and each worker keeps the
    memory budget (:func:`~turncheck.sim.run_bounds.watch_this_worker`)."""
    from turncheck.models.parent_death import die_with_parent  # ctypes: in the workers alone

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # blocked at fork (_interrupts_held): now ignored
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent()
    watch_this_worker()


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers at once (``shutdown(wait=True)``, what
    the ``with`` block runs, waits for every queued task; a sweep once took minutes to stop).
    ``terminate_workers`` is Python 3.14's public form of the loop below. The pool's manager
    thread is joined last: it closes its wake-up pipe once it sees the workers gone, and the
    interpreter's exit hook writes to that pipe unless it is closed — racing the close, it printed
    ``OSError: [Errno 9] Bad file descriptor`` after "interrupted" (Python 3.11, a sweep on 2 workers)."""
    stop = getattr(pool, "terminate_workers", None)
    if stop is not None:
        stop()
        return
    workers = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        if proc.is_alive():
            proc.terminate()
    for proc in workers:
        proc.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


__all__ = ["START_METHODS", "Executor", "LocalExecutor", "Progress", "no_progress"]
