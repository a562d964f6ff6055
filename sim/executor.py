"""Executors: map a picklable function over tasks and return the results in task order.

An :class:`Executor` is all a sweep or the testbench needs from whoever runs its cells:
:class:`LocalExecutor` (this process, or a process pool under any start method, ``spawn``
included) and :class:`~turncheck.sim.executor_dask.DaskExecutor` (a cluster) give identical
results, because the callers derive every seed from the task itself and merge in task order.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from turncheck.models.errors import BadParameter

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
    """``jobs`` worker processes on this machine; ``jobs=1`` runs in this process."""

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
        results: list[Any] = [None] * total
        context = multiprocessing.get_context(self.start_method) if self.start_method else None
        with ProcessPoolExecutor(max_workers=min(self.jobs, total), mp_context=context) as pool:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = fut.result()
                progress(done, total)
        return results


__all__ = ["START_METHODS", "Executor", "LocalExecutor", "Progress", "no_progress"]
