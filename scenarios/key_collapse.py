"""Scenario ``key-collapse``: sessions stored under too few keys (seed 004 §7).

``sessions`` concurrent sessions (seed 004's manifold) are written under ``keys`` storage keys
(``session mod keys``) with call ids from a pool of ``call_ids``; a reader projects each key's
log once with ``strategy`` (M1) at ``budget``. The control row stores each session under its own
key (S = K). Columns are the projector core's counters summed over windows: windows holding more
than one true session (mixedSources), turn segments mixing sessions (turnSrcMix), call ids seen
twice in a window (dupCallId), and the orphan results the collisions cause. The seed: 60 000 →
256 keys, 32 ids: 96.1 % mixed windows, 4 625 turnSrcMix, 933 dupCallId; S = K: zeros.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from turncheck.models.columns import build_histories
from turncheck.models.cost import EstimateCost
from turncheck.models.key_columns import collapse_columns, concurrent_times
from turncheck.models.keys import KeyParams
from turncheck.models.projector import check_strategy, project
from turncheck.models.report import Aggregate
from turncheck.models.workload import SEED, EventColumns, WorkloadParams, blocks, concat, generate_block
from turncheck.scenarios.base import (
    Judgement,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    params_dict,
    register,
    require,
)

COUNTERS = ("mixedSources", "turnSrcMix", "dupCallId", "orphanRes")
SEED_FIGURES = {"collapsed": (246, 4625, 933), "control": (0, 0, 0)}


@dataclass(frozen=True)
class KeyCollapseParams:
    sessions: int = 60_000
    keys: int = 256
    call_ids: int = 32
    budget: int = 4000
    strategy: str = "M1"
    key_batch: int = 16
    seed: int = SEED

    def __post_init__(self) -> None:
        require(self.sessions >= 1, f"parameter sessions must be >= 1, got {self.sessions}")
        require(self.keys >= 1, f"parameter keys must be >= 1, got {self.keys}")
        require(self.call_ids >= 1, f"parameter call_ids must be >= 1, got {self.call_ids}")
        require(self.budget >= 1, f"parameter budget must be >= 1, got {self.budget}")
        require(self.key_batch >= 1, f"parameter key_batch must be >= 1, got {self.key_batch}")
        check_strategy(self.strategy)


def _project_keys(cols: EventColumns, params: KeyParams, p: KeyCollapseParams, agg: Aggregate,
                  times: np.ndarray, keys: np.ndarray | None) -> None:  # fmt: skip
    cost = EstimateCost()
    for h in build_histories(collapse_columns(cols, times, params, keys), (cost,)):
        agg.add(project(h, p.budget, p.strategy, cost).report)


def run(params: KeyCollapseParams, progress: Progress) -> ScenarioResult:
    workload = WorkloadParams(sessions=params.sessions, seed=params.seed)
    todo = blocks(workload)
    keys = min(params.keys, params.sessions)
    batches = [np.arange(lo, min(lo + params.key_batch, keys)) for lo in range(0, keys, params.key_batch)]
    total = len(todo) + len(batches)
    progress(0, total)
    # control (S = K): every session under its own key; block by block
    control = Aggregate(params.budget)
    parts, times = [], []
    for i in range(len(todo)):
        cols = generate_block(workload, i)
        t = concurrent_times(cols, params.seed)
        _project_keys(
            cols, KeyParams(keys=params.sessions, call_ids=params.call_ids), params, control, t, None
        )
        parts.append(cols)
        times.append(t)
        progress(i + 1, total)
    # collapsed: all sessions, a batch of keys at a time
    whole = concat(parts)
    del parts
    all_times = np.concatenate(times)
    collapsed = Aggregate(params.budget)
    kp = KeyParams(keys=keys, call_ids=params.call_ids)
    for j, batch in enumerate(batches):
        _project_keys(whole, kp, params, collapsed, all_times, batch)
        progress(len(todo) + j + 1, total)
    seed_scale = params.sessions == 60_000 and params.keys == 256 and params.call_ids == 32
    rows = []
    for layout, agg, k in (("collapsed", collapsed, keys), ("control", control, params.sessions)):
        seed_row = SEED_FIGURES[layout] if seed_scale else (None, None, None)
        rows.append((layout, params.sessions, k, agg.windows, *(agg[c] for c in COUNTERS),
                     round(agg.rate("mixedSources"), 4), *seed_row))  # fmt: skip
    columns = ("layout", "sessions", "keys", "windows", *COUNTERS, "mixed_rate",
               "seed_mixedSources", "seed_turnSrcMix", "seed_dupCallId")  # fmt: skip
    reading = (
        "One window per key. mixedSources: windows holding events of more than one true session; "
        "turnSrcMix: turn segments (runs of one turn number) mixing sessions; dupCallId: call ids "
        "repeated within a window. The control stores each session under its own key."
    )
    title = f"Key collapse: {params.sessions} sessions on {keys} keys, {params.call_ids} call ids"
    table = Table("keys", title, columns, tuple(rows), reading)
    ctrl = table.records()[1]
    coll = table.records()[0]
    judgements = (
        Judgement("control S = K gives zeros", all(ctrl[c] == 0 for c in COUNTERS[:3]),
                  f"mixedSources={ctrl['mixedSources']}, turnSrcMix={ctrl['turnSrcMix']}, "
                  f"dupCallId={ctrl['dupCallId']}"),
        Judgement("collapsed keys mix sessions", (coll["mixedSources"] or 0) > 0,  # type: ignore[operator]
                  f"mixed windows {coll['mixedSources']}/{coll['windows']}"),
    )  # fmt: skip
    return ScenarioResult("key-collapse", params_dict(params), params.seed, (table,), judgements)


SCENARIO = register(
    Scenario(
        name="key-collapse",
        params_type=KeyCollapseParams,
        run=run,
        summary="S sessions on K keys with a small call-id pool: mixed windows and turns (seed 004 §7).",
        presets={"quick": {"sessions": "2000", "keys": "64"}, "tiny": {"sessions": "64", "keys": "8"}},
        order=70,
    )
)
