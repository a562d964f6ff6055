"""The projector core against the brute-force reference, and the SPEC's universal properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models.cost import CostModel, EstimateCost, Utf8JsonCost, message_of, placeholder_event
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import (
    MandatoryInputExceedsBudget,
    _unanswered_call_in,
    compared_strategies,
    project,
)
from turncheck.testing import soup, well_formed

COSTS = [EstimateCost(), EstimateCost(cjk_ratio=2.5), Utf8JsonCost("python", system="sys", current="q?")]


# -- the brute-force reference projector: every definition evaluated from scratch, O(n²) --------
# The real projector must agree with it on every history; nothing here shares code with the
# index except the cost models and the placeholder event.


def pairs_of(events: list[Event]) -> dict[int, int]:
    """FIFO pairing by call id in read order, both directions (CALL-first or RESULT-first)."""
    partner: dict[int, int] = {}
    open_: dict[tuple[Kind, str], list[int]] = {}
    for i, e in enumerate(events):
        if e.kind not in (Kind.CALL, Kind.RESULT):
            continue
        other = Kind.RESULT if e.kind is Kind.CALL else Kind.CALL
        waiting = open_.get((other, e.call_id or ""), [])
        if waiting:
            a = waiting.pop(0)
            partner[a] = i
            partner[i] = a
        else:
            open_.setdefault((e.kind, e.call_id or ""), []).append(i)
    return partner


def window_cost(events: list[Event], s: int, cost: CostModel, placeholders: list[int] = ()) -> int:
    kept = []
    for i in range(s, len(events)):
        kept.append(events[i])
        if i in placeholders:
            kept.append(placeholder_event(events[i]))
    if isinstance(cost, Utf8JsonCost):
        return len(cost.request([message_of(e) for e in kept]).encode("utf-8"))
    return cost.frame + sum(cost.event_cost(e) for e in kept)


def fit_start(events: list[Event], budget: int, cost: CostModel) -> int:
    for s in range(len(events) + 1):
        if window_cost(events, s, cost) <= budget:
            return s
    return len(events)


def segment_starts(events: list[Event]) -> list[int]:
    return [i for i in range(len(events)) if i == 0 or events[i].turn != events[i - 1].turn]


def safe(events: list[Event], p: int, partner: dict[int, int]) -> bool:
    return not any(a < p <= b for a, b in partner.items() if a < b)


def reference_start(events: list[Event], budget: int, cost: CostModel, strategy: str):
    """Returns (start, placeholders, fallback)."""
    n = len(events)
    i0 = fit_start(events, budget, cost)
    starts = segment_starts(events)
    partner = pairs_of(events)
    back = max([t for t in starts if t <= i0], default=0) if i0 < n else n
    fwd = min([t for t in starts if t >= i0], default=n)
    if strategy == "M0":
        return i0, [], 0
    if strategy == "M1":
        return back, [], 0
    if strategy == "M2":
        s = back
        while s < n and events[s].kind is Kind.RESULT and not (s <= partner.get(s, -1) < n):
            s += 1
        ph = []
        if s < n:
            end = min([t for t in starts if t > s], default=n)
            ph = [
                i for i in range(s, end) if events[i].kind is Kind.CALL and not (s <= partner.get(i, -1) < n)
            ]
        return s, ph, 0
    if strategy in ("M3", "REQ"):
        return fwd, [], 0
    if strategy == "M4":
        if fwd >= n and n > 0:
            return i0, [], 1
        return fwd, [], 0
    if strategy == "M5":
        return next(p for p in range(i0, n + 1) if safe(events, p, partner)), [], 0
    raise ValueError(strategy)


def reference_report(events: list[Event], budget: int, cost: CostModel, strategy: str) -> dict[str, int]:
    n = len(events)
    i0 = fit_start(events, budget, cost)
    s, ph, fallback = reference_start(events, budget, cost, strategy)
    partner = pairs_of(events)
    win = range(s, n)
    inside = lambda j: s <= j < n  # noqa: E731
    value = window_cost(events, s, cost, ph)
    seg_of = {}
    seg = -1
    for i, e in enumerate(events):
        if i == 0 or e.turn != events[i - 1].turn:
            seg += 1
        seg_of[i] = seg
    groups: dict[int, set[str]] = {}
    for i in win:
        groups.setdefault(seg_of[i], set()).add(events[i].true_session)
    calls = [events[i].call_id for i in win if events[i].kind is Kind.CALL]
    return {
        "start": s,
        "orphanRes": sum(1 for i in win if events[i].kind is Kind.RESULT and not inside(partner.get(i, -1))),
        "orphanCall": sum(1 for i in win if events[i].kind is Kind.CALL and not inside(partner.get(i, -1)))
        - len(ph),
        "pairSplit": int(s > 0 and events[s - 1].kind is Kind.CALL and partner.get(s - 1, -1) >= s),
        "overBudget": int(value > budget),
        "keptCost": value,
        "empty": int(n > 0 and s >= n and not ph),
        "droppedPartial": int(strategy in ("M3", "M4", "REQ") and not fallback and s > i0),
        "fallback": fallback,
        "repairs": len(ph),
        "tieInversions": sum(
            1
            for j in range(s + 1, n)
            if events[j].seq < events[j - 1].seq and events[j].ts == events[j - 1].ts
        ),
        "seqInversions": sum(1 for j in range(s + 1, n) if events[j].seq < events[j - 1].seq),
        "mispair": sum(
            1 for i in win if events[i].kind is Kind.RESULT and inside(partner.get(i, -1)) and partner[i] > i
        ),
        "mixedSources": int(len({events[i].true_session for i in win}) > 1),
        "turnSrcMix": sum(1 for srcs in groups.values() if len(srcs) > 1),
        "dupCallId": len(calls) - len(set(calls)),
    }


# -- the projector against it --------------------------------------------------------------------


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


@settings(max_examples=200, deadline=None)
@given(events=soup())
def test_m2_skips_its_scan_only_where_no_call_lacks_a_later_result(events):
    """M2 looks for placeholder CALLs only where the open or late CALL lists say one may be:
    every CALL in a turn's tail whose partner precedes the cut must be found by that check."""
    h = History(events)
    for s in range(len(h.kind)):
        end = h.segment_end(s)
        needs = any(h.kind[p] == int(Kind.CALL) and h.partner[p] < s for p in range(s, end))
        if needs:
            assert _unanswered_call_in(h, s, end), (s, end)
    assert h.late_calls == sorted(h.late_calls)
    assert all(h.kind[q] == int(Kind.CALL) and 0 <= h.partner[q] < q for q in h.late_calls)


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
