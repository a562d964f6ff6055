"""The seed004-fit preset: a profile fills the text sizes left at their defaults; the fitting
run ranks candidates by their largest deviation from the seed and names the preset's winner."""

from __future__ import annotations

import pytest

from turncheck.models.errors import BadParameter
from turncheck.scenarios.base import get_scenario, no_progress, parse_params
from turncheck.scenarios.testbench import PROFILES, TestbenchParams


def test_profile_fills_only_what_was_left_at_default() -> None:
    fit = parse_params(get_scenario("testbench"), {"profile": "seed004-fit"})
    assert (fit.call_chars, fit.term_chars) == (
        PROFILES["seed004-fit"]["call_chars"],
        PROFILES["seed004-fit"]["term_chars"],
    )
    assert fit.call_chars == (20, 140) and fit.term_chars == (20, 600)
    mine = parse_params(get_scenario("testbench"), {"profile": "seed004-fit", "call_chars": "30,90"})
    assert mine.call_chars == (30, 90) and mine.term_chars == (20, 600)
    assert TestbenchParams().call_chars == (20, 200)
    with pytest.raises(BadParameter, match="profile"):
        parse_params(get_scenario("testbench"), {"profile": "seed999"})


def test_fitting_run_ranks_candidates_and_reports_the_unfittable() -> None:
    sc = get_scenario("testbench-fit")
    result = sc.run(
        parse_params(sc, {"sessions": "600", "call_hi": "140", "term_hi": "400,600"}), no_progress
    )
    rows = result.table("candidates").records()
    assert [(r["call_chars"], r["term_chars"]) for r in rows] == [("20–140", "20–400"), ("20–140", "20–600")]
    assert all(r["max deviation"] >= 0 for r in rows)
    figures = [r["figure"] for r in result.table("figures").records()]
    assert "M4 orphanRes (ratio 2.5, budget 4000)" not in figures  # no preset can fit it
    assert "M1 overBudget (ratio 1.5, budget 4000)" in figures
    assert "M4 orphanRes at ratio 2.5 is left out" in result.table("candidates").reading
    (judgement,) = result.judgements
    assert judgement.name == "the seed004-fit preset is this run's winner"
    with pytest.raises(BadParameter, match="sessions"):
        parse_params(sc, {"sessions": "5"})
