"""Per-request time of each strategy at 10²–10⁴ events: measured, so kept out of ``peers.json``.

A trimmer runs before every model call, so its time on a long history is latency an agent pays
on each turn. Time is a property of this machine and of what else it is running, never of the
seed: the figures go in a file of their own, ``peers.timing.json`` (a result of scenario
``peers-timing``), written beside the byte-reproducible ``peers.json`` and left out of every
determinism comparison — like the measured columns of ``real-locking``. The file names the
machine's processor count and its load average when the run started.

One request at the end of one long session of real text (parallel calls 0.30) cut to each size,
after a warm-up request on a short history (imports and caches are not timed); a strategy whose
time at one size, scaled linearly to the next size, would pass ``cap`` seconds is not tried there
(``> cap``): trimmers are at least linear in the history, so this skips nothing that would have
finished in time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from turncheck.models.cost import CostModel
from turncheck.models.events import Event
from turncheck.models.history import History
from turncheck.models.projector import project
from turncheck.models.workload import WorkloadParams, generate_columns
from turncheck.scenarios.base import Cell, ScenarioResult, Table
from turncheck.scenarios.real_text import Phrasebook, dressed_sessions

TIMING_SCENARIO = "peers-timing"
TIMING_FILE = "peers.timing.json"
OVER_CAP = "> cap"


def size_column(n: int) -> str:
    return f"ms@{n}ev"


def long_session(sizes: Sequence[int], book: Phrasebook, seed: int) -> list[Event]:
    """One session of real text with at least ``max(sizes)`` events (~5 events a turn)."""
    params = WorkloadParams(sessions=1, turns=max(sizes) // 4 + 10, seed=seed, p_parallel=0.3)
    return list(next(iter(dressed_sessions(generate_columns(params), book, seed))))


def timing_rows(
    strategies: Sequence[str], sizes: Sequence[int], budget: int, cost: CostModel, cap: float,
    book: Phrasebook, seed: int,
) -> list[tuple[Cell, ...]]:  # fmt: skip
    """Per strategy: milliseconds of one request at the end of the session cut to each size."""
    session = long_session(sizes, book, seed)
    rows: list[tuple[Cell, ...]] = []
    for name in strategies:
        project(History(session[:20], costs=(cost,)), budget, name, cost)  # warm-up: imports, caches
        cells: list[Cell] = []
        last: tuple[int, float] | None = None
        for n in sizes:
            if last is not None and (last[1] * n / last[0] > cap or cells[-1] == OVER_CAP):
                cells.append(OVER_CAP)
                continue
            h = History(session[:n], costs=(cost,))
            t0 = time.perf_counter()
            project(h, budget, name, cost)
            dt = time.perf_counter() - t0
            last = (n, dt)
            cells.append(round(dt * 1000, 3))
        rows.append((name, *cells))
    return rows


def timing_result(
    strategies: Sequence[str], sizes: Sequence[int], budget: int, cost: CostModel, cap: float,
    book: Phrasebook, seed: int, params: dict[str, Any],
) -> ScenarioResult:  # fmt: skip
    """The ``peers-timing`` result: the timing table, titled with the machine and its load."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cpus = os.cpu_count() or 0
    rows = timing_rows(strategies, sizes, budget, cost, cap, book, seed)
    table = Table(
        "timing",
        f"Per-request time (ms, measured on this machine: {cpus} CPUs, load average {load:.2f} at the start)",
        ("strategy", *(size_column(n) for n in sizes)),
        tuple(rows),
        f"MEASURED, varies run to run and machine to machine (not part of peers.json or its determinism). One "
        f"request at the end of one session of real text cut to each size, budget {budget}, {cost.name}, after "
        f"a warm-up request; '{OVER_CAP}': the time at the previous size, scaled linearly, passes {cap:g} s.",
    )
    return ScenarioResult(TIMING_SCENARIO, params, int(params.get("seed", 0)), (table,))
