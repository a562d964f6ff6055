"""Block projection equals the projector core, window by window.

:class:`models.block_projection.BlockProjector` computes M0–M5 for every session of a block from
the block's index arrays; every start, cost and report counter must equal what the projector
computes on that session's own history — on generated blocks (clean and with dangling calls),
on arbitrary event soups (reordered, repeated call ids, mixed sources) and at budgets from
"nothing fits" to "everything fits".
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import soup

from turncheck.models.block_projection import BlockProjector, block_projectable
from turncheck.models.columns import build_histories, columns_from_events
from turncheck.models.cost import EstimateCost, Utf8JsonCost
from turncheck.models.projector import PROJECTORS, STRATEGIES
from turncheck.models.report import COUNTERS, Aggregate
from turncheck.models.workload import EventColumns, WorkloadParams, generate_columns


def _assert_same_windows(cols: EventColumns, budget: int, cost: EstimateCost) -> None:
    block = BlockProjector(cols)
    histories = list(build_histories(cols, [cost]))
    lo = cols.offsets[:-1].tolist()
    for name in PROJECTORS:
        w = block.windows(name, budget, cost)
        columns = block.report_columns(w, budget)
        for k, h in enumerate(histories):
            window = STRATEGIES[name](h, budget, cost)
            got = (int(w.start[k]) - lo[k], int(w.cost[k]), *(int(columns[c][k]) for c in COUNTERS))
            want = (window.start, window.cost, *window.report)
            assert got == want, (name, budget, k)
        whole, summed = Aggregate(budget), Aggregate(budget)
        whole.extend(STRATEGIES[name](h, budget, cost).report for h in histories)
        block.aggregate(name, budget, cost, summed)
        assert summed == whole


@pytest.mark.parametrize("p_result", [1.0, 0.97, 0.6])
@pytest.mark.parametrize("budget", [1, 400, 4000, 10**9])
def test_generated_blocks(p_result: float, budget: int) -> None:
    cols = generate_columns(WorkloadParams(sessions=60, turns=12, p_result=p_result, p_parallel=0.3))
    _assert_same_windows(cols, budget, EstimateCost(1.5))


@settings(max_examples=200, deadline=None)
@given(events=soup(), budget=st.integers(1, 300), ratio=st.sampled_from([1.5, 2.5]))
def test_any_log(events, budget, ratio):  # type: ignore[no-untyped-def]
    cols = columns_from_events(events)
    _assert_same_windows(cols, budget, EstimateCost(ratio))


@settings(max_examples=60, deadline=None)
@given(logs=st.lists(soup(), min_size=2, max_size=4), budget=st.integers(1, 300))
def test_several_soups_in_one_block(logs, budget):  # type: ignore[no-untyped-def]
    """Sessions of different shapes side by side: no figure may leak across a session end."""
    events = [replace(e, session=f"{k}{e.session}", source=e.source and f"{k}{e.source}")
              for k, log in enumerate(logs) for e in log]  # fmt: skip
    _assert_same_windows(columns_from_events(events), budget, EstimateCost())


def test_empty_block_and_what_it_computes() -> None:
    cols = columns_from_events([])
    agg = Aggregate(100)
    BlockProjector(cols).aggregate("M5", 100, EstimateCost(), agg)
    assert agg == Aggregate(100)
    assert block_projectable(PROJECTORS, [EstimateCost()])
    assert not block_projectable([*PROJECTORS, "REQ"], [EstimateCost()])
    assert not block_projectable(PROJECTORS, [Utf8JsonCost()])
    with pytest.raises(ValueError, match="not computed per block"):
        BlockProjector(generate_columns(WorkloadParams(sessions=1, turns=1))).windows(
            "REQ", 10, EstimateCost()
        )
    assert np.array_equal(BlockProjector(cols).fit(10, EstimateCost()), np.zeros(0))
