"""Sweeps (and the testbench) on a Dask distributed cluster: the same ``map`` as the local pool.

:class:`DaskExecutor` connects to a running scheduler, submits ``fn(item)`` for every item and
returns the results in item order, so the tables are identical to :class:`turncheck.sim.executor.LocalExecutor`
ones: cell seeds are hashes of the cells (never of who runs them) and results are merged in
cell order. Workers need turncheck importable (install it on every worker, the same version)
because ``fn`` travels by reference to its module. Tasks are submitted with ``pure=False``: two
equal items are two tasks, never one cached result standing in for another.

``dask[distributed]`` is an optional extra (:func:`~turncheck.models.extras.install_hint` names its packages); without it, or
when the scheduler cannot be reached, the executor raises a :class:`TurncheckError` that says
so in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.extras import install_hint
from turncheck.sim.executor import Executor, LocalExecutor, Progress, no_progress

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("local", "dask")


class DaskUnavailable(TurncheckError):
    """The optional extra is not installed, or the scheduler does not answer."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable(
            f"--executor dask needs the optional extra: {install_hint('dask')}"
        ) from None
    return distributed


@dataclass(frozen=True)
class DaskExecutor:
    """Runs tasks on the Dask cluster whose scheduler listens at ``scheduler``
    (``tcp://host:8786``); ``timeout`` is how long to try to connect, in seconds."""

    scheduler: str
    timeout: float = 20.0

    def __post_init__(self) -> None:
        if not self.scheduler.strip():
            raise BadParameter("--scheduler must be a Dask scheduler address such as tcp://10.0.0.5:8786")
        if not self.timeout > 0:
            raise BadParameter(f"the Dask connect timeout must be positive, got {self.timeout}")

    def map(self, fn: Callable[[T], R], items: Sequence[T], progress: Progress = no_progress) -> list[R]:
        distributed = _distributed()
        total = len(items)
        progress(0, total)
        if not total:
            return []
        try:
            client = distributed.Client(self.scheduler, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {self.scheduler}: {exc}") from None
        try:
            futures = client.map(fn, list(items), pure=False)
            for done, _ in enumerate(distributed.as_completed(futures, loop=client.loop), start=1):
                progress(done, total)
            return list(client.gather(futures))
        finally:
            client.close()


def make_executor(kind: str, jobs: int = 1, scheduler: str | None = None) -> Executor:
    """The executor a command line asks for: ``local`` (``jobs`` processes) or ``dask``
    (the cluster at ``scheduler``). A scheduler without ``dask``, or ``dask`` without a
    scheduler, is refused rather than guessed at."""
    if kind not in EXECUTORS:
        raise BadParameter(f"--executor must be one of {', '.join(EXECUTORS)}, got {kind!r}")
    if kind == "dask":
        if not scheduler:
            raise BadParameter("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
        _distributed()
        return DaskExecutor(scheduler)
    if scheduler:
        raise BadParameter("--scheduler is only used with --executor dask")
    return LocalExecutor(jobs)


__all__ = ["EXECUTORS", "DaskExecutor", "DaskUnavailable", "make_executor"]
