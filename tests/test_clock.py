"""Writer clocks and read orders: the model's property, the column functions, the scenario."""

from __future__ import annotations

import numpy as np
import pytest

from turncheck.models.catalog import build_model
from turncheck.models.clock import ClockModel, ClockParams
from turncheck.models.clock_columns import read_permutation, reorder_columns, stamp_columns
from turncheck.models.errors import BadParameter
from turncheck.models.invariants import SEQ_ORDERED_TURNS
from turncheck.models.workload import WorkloadParams, generate_block
from turncheck.scenarios.base import get_scenario, no_progress, parse_params


def first_violation(model: ClockModel) -> int | None:
    """Depth of the shallowest state breaking seq-ordered-turns (None: it always holds)."""
    prop = next(p for p in model.properties() if p.name == SEQ_ORDERED_TURNS)
    (s0,) = model.init_states()
    seen, frontier, depth = {s0}, [s0], 0
    while frontier:
        if any(not prop.holds(s) for s in frontier):
            return depth
        nxt = []
        for s in frontier:
            for a in model.actions(s):
                t = model.step(s, a)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier, depth = nxt, depth + 1
    return None


def test_seq_order_keeps_turns_and_ts_order_breaks_them() -> None:
    assert first_violation(ClockModel(order="seq")) is None
    assert first_violation(ClockModel(order="seq", offset=-1, quantum=2, backsteps=1)) is None
    assert first_violation(ClockModel(order="ts")) is not None  # equal stamps, arrival order
    assert first_violation(ClockModel(order="ts-seq")) is None  # seq breaks the ties
    assert first_violation(ClockModel(order="ts-seq", offset=-1)) is not None  # the tool clock lags


def test_model_actions_describe_the_run() -> None:
    m = build_model("clock", {"order": "ts", "quantum": "2"})
    (s,) = m.init_states()
    assert ("emit", 1) in m.actions(s)
    assert "quantized" in m.format_action(s._replace(time=3), ("emit", 1))
    s = m.step(s, ("emit", 0))
    assert m.actor(s, ("deliver", 0)) == "store"
    assert "store receives seq 0 USER" in m.format_action(s, ("deliver", 0))
    assert m.metrics(m.step(s, ("deliver", 0)))["stored"] == 1
    with pytest.raises(BadParameter, match="order"):
        ClockModel(order="wallclock")
    with pytest.raises(BadParameter, match="horizon"):
        ClockModel(horizon=-1)


def test_stamps_and_read_orders() -> None:
    cols = generate_block(WorkloadParams(sessions=40, turns=10), 0)
    stamps = stamp_columns(cols, ClockParams(), 5)
    again = stamp_columns(cols, ClockParams(), 5)
    assert np.array_equal(stamps.ts, again.ts) and np.array_equal(stamps.arrival, again.arrival)
    quantized = np.mean(stamps.ts != stamps.true_time)
    assert 0.02 < quantized < 0.06  # ~5 % floored to tens (a few were multiples of ten already)
    assert np.array_equal(read_permutation(cols, stamps.ts, stamps.arrival, "seq"), np.arange(len(cols)))
    by_ts = reorder_columns(cols, read_permutation(cols, stamps.ts, stamps.arrival, "ts-seq"), stamps.ts)
    assert by_ts.offsets.tolist() == cols.offsets.tolist()  # sessions stay contiguous
    for lo, hi in zip(cols.offsets[:-1], cols.offsets[1:], strict=True):
        key = list(zip(by_ts.ts[lo:hi], by_ts.seq[lo:hi], strict=True))
        assert key == sorted(key)
    with pytest.raises(BadParameter, match="quantize_share"):
        ClockParams(quantize_share=1.5)


def test_clock_skew_scenario_reproduces_the_seed_direction() -> None:
    sc = get_scenario("clock-skew")
    result = sc.run(parse_params(sc, {"sessions": "300"}), no_progress)
    rows = {r["order"]: r for r in result.table("orders").records()}
    assert rows["seq"]["orphanRes"] == 0 and rows["seq"]["mispair"] == 0
    assert rows["ts"]["orphanRes"] > 0 and rows["ts"]["tieInversions"] > 0  # type: ignore[operator]
    assert rows["ts-seq"]["tieInversions"] == 0 and rows["ts-seq"]["orphanRes"] > 0  # type: ignore[operator]
    assert all(j.passed for j in result.judgements)
    again = sc.run(parse_params(sc, {"sessions": "300"}), no_progress)
    assert again == result
    with pytest.raises(BadParameter, match="quantum"):
        parse_params(sc, {"quantum": "0"})
