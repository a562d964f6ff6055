"""Scenario ``real-locking`` and its plot: model and real SQLite side by side, and the FAIL line."""

from __future__ import annotations

from turncheck.reports.plots.real_locking import plot_real_locking, real_locking_reading
from turncheck.scenarios.base import get_scenario, no_progress, parse_params
from turncheck.scenarios.real_locking import COLUMNS, judge, model_peak


def test_scenario_runs_sqlite_and_judges_against_the_model() -> None:
    sc = get_scenario("real-locking")
    # a 200 ms gap: even writers slowed by a loaded machine land several turns in it, so the
    # unlocked run's peak exceeds mutex's bound (a 50 ms gap at load 6 once gave exactly 9)
    params = parse_params(sc, ["locking=none,mutex", "stores=sqlite", "seconds=1.2", "gap_ms=200"])
    result = sc.run(params, no_progress)
    rows = result.tables[0].records()
    assert [(r["locking"], r["store"]) for r in rows] == [("none", "sqlite"), ("mutex", "sqlite")]
    none, mutex = rows
    assert none["measured_peak"] > 9 and none["verdict"] == "violated"  # type: ignore[operator]
    assert mutex["measured_peak"] <= 9 and mutex["worst_case"] == 9 and mutex["verdict"] == "ok"  # type: ignore[operator]
    assert all(r["within_worst_case"] and r["lost"] == 0 for r in rows)
    assert all(j.passed for j in result.judgements)
    fig = plot_real_locking(result)
    assert [ax.get_title() for ax in fig.axes] == ["none", "mutex"]
    assert "sqlite: none" in real_locking_reading(result)


def test_a_measured_peak_above_the_worst_case_is_a_fail_line_naming_the_run() -> None:
    good = dict.fromkeys(COLUMNS, 0) | {"locking": "mutex", "store": "sqlite", "writers": 4, "gap_ms": 50,
                                        "worst_case": 9, "measured_peak": 9, "within_worst_case": True,
                                        "verdict": "ok"}  # fmt: skip
    bad = good | {"store": "postgres", "measured_peak": 12, "within_worst_case": False, "verdict": "violated"}
    first, _, bounded, _ = judge([good, bad], [])
    assert not first.passed and "postgres mutex W=4 gap=50 ms: measured 12 > worst case 9" in first.line()
    assert first.line().startswith("FAIL")
    assert not bounded.passed


def test_model_peak_at_saturation_equals_the_closed_form() -> None:
    assert model_peak(5, 8, "none", 50) == 8 + 2 * 5 - 1
    assert model_peak(5, 8, "trim-to", 50) == 8 + 5
    assert model_peak(5, 8, "mutex", 50) == 9


def test_none_and_trim_to_are_held_to_the_prediction_that_they_overshoot() -> None:
    row = dict.fromkeys(COLUMNS, 0) | {"locking": "trim-to", "store": "sqlite", "max_turns": 8,
                                       "turns_per_gap": 3, "worst_case": 11, "measured_peak": 8,
                                       "verdict": "ok"}  # fmt: skip
    *_, overshoot = judge([row], [])
    assert not overshoot.passed and "sqlite trim-to peak 8 ≤ 8" in overshoot.line()
    *_, overshoot = judge([row | {"measured_peak": 11}], [])
    assert overshoot.passed
