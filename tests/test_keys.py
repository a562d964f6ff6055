"""Key collapse: per-key logs, the small model, and the scenario's control."""

from __future__ import annotations

import numpy as np
import pytest

from turncheck.models.catalog import build_model
from turncheck.models.errors import BadParameter
from turncheck.models.key_columns import collapse_columns, concurrent_times, dense_call_numbers
from turncheck.models.keys import KeyParams, KeysModel
from turncheck.models.workload import WorkloadParams, generate_block
from turncheck.scenarios.base import get_scenario, no_progress, parse_params


def holds_everywhere(model: KeysModel, name: str) -> bool:
    prop = next(p for p in model.properties() if p.name == name)
    (s0,) = model.init_states()
    seen, frontier = {s0}, [s0]
    while frontier:
        nxt = []
        for s in frontier:
            if not prop.holds(s):
                return False
            for a in model.actions(s):
                t = model.step(s, a)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return True


def test_model_shared_key_mixes_sessions_own_keys_do_not() -> None:
    assert not holds_everywhere(KeysModel(sessions=2, keys=1), "single-source-windows")
    assert not holds_everywhere(KeysModel(sessions=2, keys=1, turns=2, budget=4), "no-orphan-results")
    assert holds_everywhere(KeysModel(sessions=2, keys=2), "single-source-windows")
    assert holds_everywhere(KeysModel(sessions=2, keys=2, turns=2, budget=4), "no-orphan-results")
    m = build_model("keys", {"sessions": "3", "keys": "2"})
    (s,) = m.init_states()
    assert "under key 0" in m.format_action(s, ("append", 2))
    with pytest.raises(BadParameter, match="keys"):
        KeysModel(keys=0)


def test_collapse_columns() -> None:
    cols = generate_block(WorkloadParams(sessions=20, turns=6), 0)
    times = concurrent_times(cols, 1)
    dense = dense_call_numbers(cols)
    for lo, hi in zip(cols.offsets[:-1], cols.offsets[1:], strict=True):
        calls = dense[lo:hi][dense[lo:hi] >= 0]
        assert sorted(set(calls.tolist())) == list(range(len(set(calls.tolist()))))
    kc = collapse_columns(cols, times, KeyParams(keys=4, call_ids=3))
    assert kc.sessions == 4 and len(kc) == len(cols)
    assert set(np.unique(kc.session).tolist()) == {0, 1, 2, 3}
    assert ((kc.source % 4) == kc.session).all()
    assert kc.call.max() < 3
    with pytest.raises(BadParameter, match="call_ids"):
        KeyParams(call_ids=0)


def test_key_collapse_scenario_control_is_clean() -> None:
    sc = get_scenario("key-collapse")
    result = sc.run(parse_params(sc, {"sessions": "400", "keys": "16"}), no_progress)
    collapsed, control = result.table("keys").records()
    assert control["windows"] == 400 and control["keys"] == 400
    assert control["mixedSources"] == control["turnSrcMix"] == control["dupCallId"] == 0
    assert collapsed["windows"] == 16 and collapsed["mixedSources"] > 0  # type: ignore[operator]
    assert all(j.passed for j in result.judgements)
