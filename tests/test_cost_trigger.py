"""The cost-trigger model (issue 52, item 2): each property holds with an exact estimator, no frame
and a fresh count, and breaks — shortest run first — under the variant the threads report: an
undercount, a frame the estimate leaves out, a stale count, a summarizer over the window. Checked
on the explorer (every property) and on Hypothesis (the invariants; a finite run never shows a
lasso, and the report says so), and through the command line the issue's done-when names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.catalog import build_model
from turncheck.models.cost_trigger import (
    COMPACT,
    NO_COMPACTION_LOOP,
    OVER_THRESHOLD_COMPACTED,
    REQUEST,
    REQUEST_FITS,
    SUMMARIZER_FITS,
    TRIGGER_FIRES,
    CostTriggerModel,
)
from turncheck.models.errors import BadParameter
from turncheck.sim.checking import run_check
from turncheck.sim.explorer import explore

ALWAYS = (REQUEST_FITS, SUMMARIZER_FITS)
EVENTUALLY = (OVER_THRESHOLD_COMPACTED, NO_COMPACTION_LOOP)

# variant → (the property it breaks, the shortest run to it: steps to the break, or to a lasso's loop)
BREAKS: list[tuple[dict[str, Any], str, int]] = [
    ({"estimate": 0.75}, REQUEST_FITS, 12),  # 11 real, counted 8: sent, refused
    ({"estimate": 0.75}, OVER_THRESHOLD_COMPACTED, 12),  # …and retried for ever, never compacted
    ({"frame": 3}, REQUEST_FITS, 8),  # history 8 counted 8, sent as 11
    ({"frame": 3}, OVER_THRESHOLD_COMPACTED, 8),
    ({"stale": True, "threshold": 6}, NO_COMPACTION_LOOP, 10),  # compacts, re-fires on the old count
    ({"stale": True}, SUMMARIZER_FITS, 12),  # the stale count lags an append: compacts 12 > 10
    ({"summarizer": 11}, SUMMARIZER_FITS, 10),  # letta #3279: the summarizer over the window
    ({"summarizer": 1}, SUMMARIZER_FITS, 10),  # its prompt + the history it reads: 11 > 10
    ({"summarizer": 1}, NO_COMPACTION_LOOP, 10),  # the refused compaction fires again and again
    ({"summary": 9}, NO_COMPACTION_LOOP, 10),  # a summary over the threshold: openclaw PR #115309's shape
]


def _model(params: dict[str, Any]) -> CostTriggerModel:
    model = build_model(
        "cost-trigger", {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}
    )
    assert isinstance(model, CostTriggerModel)
    return model


def _properties(model: CostTriggerModel, *names: str) -> list[Any]:
    return [p for p in model.properties() if p.name in names]


def test_exact_estimator_no_frame_fresh_count_holds_everything() -> None:
    result = explore(_model({"estimate": 1.0, "frame": 0}))
    assert result.exhausted
    assert {p.name: p.status for p in result.properties} == {
        REQUEST_FITS: "holds", SUMMARIZER_FITS: "holds", OVER_THRESHOLD_COMPACTED: "holds",
        NO_COMPACTION_LOOP: "holds", TRIGGER_FIRES: "reached",
    }  # fmt: skip
    worst = {w.metric: w.value for w in result.worst}
    assert worst["request_cost"] == 8 and worst["summarizer_cost"] == 10  # threshold, window: both met


@pytest.mark.parametrize(("params", "name", "depth"), BREAKS, ids=lambda v: str(v))
def test_each_variant_breaks_its_property_shortest_first(
    params: dict[str, Any], name: str, depth: int
) -> None:
    model = _model(params)
    result = explore(model, properties=_properties(model, name))
    outcome = result.outcome(name)
    assert result.exhausted and outcome.status == "violated" and outcome.depth == depth
    if name in EVENTUALLY:
        lasso = result.lassos[name]
        assert not lasso.stutters and len(lasso.actions) - lasso.loop == 1  # a one-step loop, for ever
    # the same property holds with the exact estimator at the same sizes (both ways)
    exact = {k: v for k, v in params.items() if k in ("threshold",)}
    assert explore(_model(exact), properties=_properties(model, name)).outcome(name).status == "holds"


def test_the_stale_count_loop_is_a_compaction_repeated_on_a_compacted_history() -> None:
    model = _model({"stale": True, "threshold": 6})
    result = explore(model, properties=_properties(model, NO_COMPACTION_LOOP))
    lasso = result.lassos[NO_COMPACTION_LOOP]
    loop_states = [result.states[i] for i in lasso.ids[lasso.loop :]]
    assert lasso.actions[lasso.loop :] == ((COMPACT,),)
    for s in loop_states:  # the history is small: only the count, from before the compaction, is over
        assert s.history <= model.summary and model.estimated(s.history) <= model.threshold
        assert model.reads(s) > model.threshold
    fresh = _model({"threshold": 6})
    assert (
        explore(fresh, properties=_properties(fresh, NO_COMPACTION_LOOP)).outcome(NO_COMPACTION_LOOP).status
        == "holds"
    )


@pytest.mark.parametrize("estimate", [0.3, 0.5, 0.75, 0.9, 0.95, 0.99])
def test_every_undercount_breaks_a_property_at_the_defaults(estimate: float) -> None:
    """The headroom window − threshold is one append: any undercount lets a request or the
    summarizer's request past the window."""
    result = explore(_model({"estimate": estimate}), properties=_properties(_model({}), *ALWAYS))
    assert any(p.status == "violated" for p in result.properties)


@pytest.mark.parametrize("estimate", [1.0, 1.25, 2.0, 4.0])
def test_an_exact_count_or_an_overcount_holds(estimate: float) -> None:
    result = explore(_model({"estimate": estimate}))
    assert all(p.status in ("holds", "reached") for p in result.properties)


@pytest.mark.parametrize("frame", [0, 1, 2, 3, 4, 6])
def test_a_frame_breaks_the_window_exactly_when_it_is_over_the_headroom(frame: int) -> None:
    model = _model({"frame": frame})
    status = explore(model, properties=_properties(model, REQUEST_FITS)).outcome(REQUEST_FITS).status
    assert status == ("violated" if frame > model.window - model.threshold else "holds")


@pytest.mark.parametrize(("params", "name"), [({"estimate": 0.75}, REQUEST_FITS), ({"frame": 3}, REQUEST_FITS),
                                              ({"summarizer": 11}, SUMMARIZER_FITS), ({"stale": True}, SUMMARIZER_FITS)])  # fmt: skip
def test_hypothesis_finds_each_broken_invariant(params: dict[str, Any], name: str) -> None:
    model = _model(params)
    report = run_check(model, _properties(model, name), engine="hypothesis", max_examples=80, database=None)
    assert report.stateful is not None and report.stateful.violated == name
    final = model.init_states().__next__()
    for action in report.stateful.actions:  # its run is the model's own: it replays to the break
        final = model.step(final, action)
    assert final.refused if name == REQUEST_FITS else final.summarizer_refused


def test_hypothesis_finds_no_broken_invariant_under_the_exact_model() -> None:
    exact = _model({})
    clean = run_check(exact, _properties(exact, *ALWAYS, TRIGGER_FIRES), engine="hypothesis", max_examples=80,
                      database=None)  # fmt: skip
    assert clean.stateful is not None and clean.stateful.violated is None and clean.verdict == "pass"
    assert clean.goals == {TRIGGER_FIRES: True}


def test_hypothesis_says_it_does_not_check_the_liveness_properties() -> None:
    model = _model({"stale": True, "threshold": 6})
    report = run_check(model, model.properties(), engine="hypothesis", max_examples=60, database=None)
    assert set(report.unchecked) == set(EVENTUALLY) and report.verdict == "inconclusive"


def test_a_refused_request_is_retried_unchanged_and_the_history_cannot_grow() -> None:
    model = _model({"frame": 3})
    state = model.init_states().__next__()._replace(history=8, due=True)
    assert model.actions(state) == [(REQUEST,)]
    after = model.step(state, (REQUEST,))
    assert after.refused and after.due and model.actions(after) == [(REQUEST,)]
    assert model.step(after, (REQUEST,)) == after


def test_the_estimate_is_exact_in_decimal() -> None:
    assert _model({"estimate": 0.29}).estimated(100) == 29  # 0.29 × 100 is 28.999… in binary
    assert _model({"estimate": 0.75}).estimated(11) == 8


@pytest.mark.parametrize(("params", "word"), [({"estimate": 0}, "estimate"), ({"window": 0}, "window"),
                                              ({"frame": -1}, "frame"), ({"turn": 0}, "turn")])  # fmt: skip
def test_bad_parameters_are_refused_by_name(params: dict[str, Any], word: str) -> None:
    with pytest.raises(BadParameter, match=word):
        _model(params)


@pytest.fixture
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("_in_tmp")
def test_the_done_when_commands(cli: Any, tmp_path: Path) -> None:
    code, out, _ = cli("check", "cost-trigger", "--param", "estimate=0.75", "--engine", "explore", "-q",
                       "--trace-out", str(tmp_path / "t.json"))  # fmt: skip
    assert code == 1 and "request-fits-window broken in 12 steps (shortest, by breadth-first search)" in out
    assert "refused, over the window 10" in out
    code, out, _ = cli("check", "cost-trigger", "--param", "estimate=1.0", "--param", "frame=0", "--engine",
                       "explore", "-q")  # fmt: skip
    assert code == 0 and out.rstrip().endswith("every eventually-property holds on every fair run")
    code, out, _ = cli("check", "cost-trigger", "--param", "stale=true", "--param", "threshold=6", "-i",
                       NO_COMPACTION_LOOP, "--engine", "explore", "--format", "json")  # fmt: skip
    cx = json.loads(out)["counterexample"]
    assert code == 1 and cx["loop"] == 10 and cx["steps"] == 11
    code, out, _ = cli("replay", str(tmp_path / "t.json"))
    assert code == 1 and "request-fits-window" in out


def _largest_history_sent(estimate: str, threshold: int) -> int:
    """The largest history a fresh count lets through: the largest h with ⌊estimate × h⌋ ≤
    threshold (appends of 1 reach every size), computed apart from the model, in exact decimals."""
    from fractions import Fraction

    ratio, h = Fraction(estimate), 0
    while int(ratio * (h + 1)) <= threshold:
        h += 1
    return h


# Held-out sizes (none of them the defaults): estimate, frame, window, threshold, turn, summary, summarizer
HELD_OUT = [
    ("1.0", 0, 20, 15, 3, 4, 0), ("1.0", 0, 20, 17, 3, 4, 0), ("1.0", 0, 20, 18, 3, 4, 0),
    ("1.0", 2, 20, 15, 3, 4, 0), ("1.0", 6, 20, 15, 3, 4, 0), ("0.9", 0, 30, 20, 4, 5, 0),
    ("0.8", 0, 30, 20, 4, 5, 0), ("0.6", 0, 30, 12, 3, 5, 0), ("1.0", 0, 30, 20, 4, 5, 6),
    ("1.0", 0, 30, 20, 4, 5, 7), ("1.17", 0, 25, 20, 2, 3, 0), ("0.5", 0, 12, 4, 1, 2, 0),
    ("1.0", 1, 7, 5, 1, 1, 1), ("0.95", 0, 40, 30, 5, 10, 2),
]  # fmt: skip


@pytest.mark.parametrize("sizes", HELD_OUT, ids=lambda v: "-".join(map(str, v)))
def test_the_window_verdicts_at_held_out_sizes_match_their_arithmetic(sizes: tuple[Any, ...]) -> None:
    """With a fresh count the largest history sent is H = max{h : ⌊estimate·h⌋ ≤ threshold}, and
    the largest the summarizer reads is H + turn (one append past it): a request fits exactly when
    frame + H ≤ window, the summarizer's exactly when summarizer + H + turn ≤ window. The explorer
    agrees at every held-out size, and Hypothesis (its appends drawn largest first) shrinks each
    broken invariant to the explorer's shortest length."""
    estimate, frame, window, threshold, turn, summary, summarizer = sizes
    model = _model({"estimate": estimate, "frame": frame, "window": window, "threshold": threshold, "turn": turn,
                    "summary": summary, "summarizer": summarizer})  # fmt: skip
    top = _largest_history_sent(estimate, threshold)
    expected = {REQUEST_FITS: frame + top <= window, SUMMARIZER_FITS: summarizer + top + turn <= window}
    result = explore(model, properties=_properties(model, *ALWAYS))
    assert result.exhausted
    assert {n: result.outcome(n).status == "holds" for n in ALWAYS} == expected
    for name in (n for n in ALWAYS if not expected[n]):
        alone = _properties(model, name)
        report = run_check(model, alone, engine="hypothesis", max_examples=200, database=None)
        assert report.stateful is not None and report.stateful.violated == name
        assert len(report.stateful.actions) == result.outcome(name).depth
