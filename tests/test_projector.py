"""The projector core against the brute-force reference, and the SPEC's universal properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_report
from strategies import soup, well_formed

from turncheck.models.cost import EstimateCost, Utf8JsonCost
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import (
    MandatoryInputExceedsBudget,
    compared_strategies,
    project,
)

COSTS = [EstimateCost(), EstimateCost(cjk_ratio=2.5), Utf8JsonCost("python", system="sys", current="q?")]


def check_against_reference(events, budget, cost, strategy):
    h = History(events, [cost])
    w = project(h, budget, strategy, cost)
    ref = reference_report(events, budget, cost, strategy)
    got = w.report._asdict()
    got["start"] = w.start
    assert got == ref, (strategy, budget)
    assert w.cost == ref["keptCost"]
    return w


@settings(max_examples=150, deadline=None)
@given(
    events=soup(),
    budget=st.integers(1, 400),
    cost=st.sampled_from(COSTS),
    strategy=st.sampled_from(compared_strategies()),
)
def test_bisection_equals_brute_force_on_any_history(events, budget, cost, strategy):
    check_against_reference(events, budget, cost, strategy)


@settings(max_examples=80, deadline=None)
@given(
    events=soup(with_text=True),
    budget=st.integers(100, 900),
    strategy=st.sampled_from(compared_strategies()),
    profile=st.sampled_from(["python", "java"]),
)
def test_utf8_json_selection_equals_brute_force_with_real_text(events, budget, strategy, profile):
    cost = Utf8JsonCost(profile, system='Be "brief"\n', current="现在呢？😀")
    w = check_against_reference(events, budget, cost, strategy)
    assert len(w.payload(cost).encode("utf-8")) == w.cost


@settings(max_examples=150, deadline=None)
@given(
    events=well_formed(dangling=True),
    budget=st.integers(1, 300),
    cost=st.sampled_from(COSTS),
    strategy=st.sampled_from(compared_strategies()),
)
def test_well_formed_against_reference(events, budget, cost, strategy):
    check_against_reference(events, budget, cost, strategy)


@settings(max_examples=200, deadline=None)
@given(events=well_formed(), budget=st.integers(1, 300), cost=st.sampled_from(COSTS))
def test_universal_rules_on_well_formed_histories(events, budget, cost):
    h = History(events, [cost])
    w = {s: project(h, budget, s, cost) for s in compared_strategies()}
    for s in ("M1", "M2", "M3", "M5"):
        assert w[s].report.orphanRes == 0, s
    for s in ("M3", "M5"):
        assert w[s].report.overBudget == 0 or w[s].cost == cost.frame > budget, s
    # M4 orphans only when it falls back
    if w["M4"].report.orphanRes:
        assert w["M4"].report.fallback == 1
    # nothing under M0 => M1 and M3 empty too
    if w["M0"].start == len(h):
        assert w["M1"].start == w["M3"].start == len(h)
    for win in w.values():
        assert win.report.seqInversions == win.report.tieInversions == win.report.mispair == 0


@settings(max_examples=200, deadline=None)
@given(events=well_formed(parallel=False), budget=st.integers(1, 300), cost=st.sampled_from(COSTS))
def test_m0_orphans_equal_pair_splits_on_clean_sequential_data(events, budget, cost):
    h = History(events, [cost])
    r = project(h, budget, "M0", cost).report
    assert r.orphanRes == r.pairSplit


@settings(max_examples=100, deadline=None)
@given(events=well_formed(dangling=True), budget=st.integers(1, 2000))
def test_req_rejects_exactly_when_mandatory_part_exceeds_budget(events, budget):
    cost = Utf8JsonCost("java", system="You are terse.", current="What was the code name?")
    h = History(events, [cost])
    if cost.frame > budget:
        with pytest.raises(MandatoryInputExceedsBudget):
            project(h, budget, "REQ", cost)
    else:
        w = project(h, budget, "REQ", cost)
        payload = w.payload(cost)
        assert cost.request([]).startswith(payload[: payload.index('"messages":[') + 12])
        assert payload.endswith(',{"role":"user","content":"What was the code name?"}]}')
        assert '{"role":"system","content":"You are terse."}' in payload
        assert w.cost <= budget and len(payload.encode()) == w.cost


def test_projection_never_mutates_history():
    events = [
        Event(i, "s", i // 4, Kind(i % 4), f"c{i // 4}" if i % 4 in (1, 2) else None, chars=99)
        for i in range(40)
    ]
    cost = EstimateCost()
    h = History(events, [cost])
    before = h.index_state()
    snapshot = repr(before)
    for s in (*compared_strategies(), "REQ"):
        project(h, 50, s, cost)
    assert repr(h.index_state()) == snapshot


def test_incremental_index_equals_rebuilt_index():
    events = [
        Event(i, "s", i // 4, Kind(i % 4), f"c{i // 4}" if i % 4 in (1, 2) else None, chars=i)
        for i in range(30)
    ]
    a = History(events[:10], [EstimateCost()])
    a.extend(events[10:])
    b = History(events, [EstimateCost()])
    assert a.index_state() == b.index_state()
    assert a.prefix(EstimateCost()) == b.prefix(EstimateCost())


def test_bad_budget_and_unknown_strategy():
    h = History()
    with pytest.raises(BadParameter):
        project(h, 0, "M0", EstimateCost())
    with pytest.raises(BadParameter):
        project(h, -5, "M0", EstimateCost())
    with pytest.raises(UnknownName):
        project(h, 10, "M9", EstimateCost())
    with pytest.raises(UnknownName):
        project(h, 10, "no_such_module_xyz:fn", EstimateCost())


def test_user_projector_by_dotted_name(tmp_path, monkeypatch):
    (tmp_path / "last_two_trim.py").write_text(
        "from turncheck.models.projector import window_from_start\n"
        "def keep_last_two(history, budget, cost):\n"
        "    return window_from_start(history, budget, cost, max(0, len(history) - 2), 'keep-last-two')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    events = [
        Event(0, "s", 0, Kind.USER, chars=4),
        Event(1, "s", 0, Kind.CALL, "a", chars=4),
        Event(2, "s", 0, Kind.RESULT, "a", chars=4),
    ]
    w = project(History(events), 100, "last_two_trim:keep_last_two", EstimateCost())
    assert (w.start, w.report.orphanRes, w.report.pairSplit) == (1, 0, 0)


def test_window_is_an_immutable_value_with_a_lazy_report():
    import pickle

    from turncheck.models.projector import structural_report

    events = [Event(i, "s", i // 4, kind, f"c{i // 4}" if kind in (Kind.CALL, Kind.RESULT) else None,
                    ts=float(i), chars=40 + i) for i, kind in enumerate([Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM] * 5)]  # fmt: skip
    cost = EstimateCost()
    h = History(events, [cost])
    w = project(h, 30, "M3", cost)
    assert "report" not in w.__dict__  # selection and window only; the report waits to be read
    expected = structural_report(h, w.start, w.cost, 30, dropped_partial=w.dropped_partial)
    assert w.report == expected and w.__dict__["report"] is w.report  # computed once, kept
    with pytest.raises(AttributeError):
        w.start = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        w.anything = 1  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(w))
    assert type(again) is type(w) and tuple(again)[1:] == tuple(w)[1:] and again.report == w.report
    assert project(h, 30, "M3", cost) == project(h, 30, "M3", cost)
