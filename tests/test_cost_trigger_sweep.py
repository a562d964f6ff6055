"""The cost-trigger scenario and its plot (issue 52, item 3): the sweep's table read against the
model's own rule (the trigger ignores the frame, so a frame lifts the reach by itself; a larger
ratio never lets the context grow further), the threads' measured undercounts carried in the
result, byte-identical result files, and the plot's lines, window, bands and images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from turncheck.reports.plots import plot_cost_trigger, write_figure
from turncheck.reports.plots.cost_trigger import cost_trigger_reading
from turncheck.reports.results_dir import WrongResultKind, load_result
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import ScenarioResult, Table, get_scenario, no_progress, parse_params
from turncheck.scenarios.cost_trigger import MEASURED

GRID = {"estimates": "0.25,0.5,0.75,0.81,1.0,2.0", "frames": "0,10,25"}


@pytest.fixture(scope="module")
def result() -> ScenarioResult:
    scenario = get_scenario("cost-trigger")
    return scenario.run(parse_params(scenario, GRID), no_progress)


def test_the_exact_count_with_no_frame_reaches_the_threshold_and_holds(result: ScenarioResult) -> None:
    (row,) = [r for r in result.table("sweep").records() if r["estimate"] == 1.0 and r["frame"] == 0]
    assert row["reach"] == 80 and row["peak_sent"] == 80 and row["shortest_break"] is None
    assert all(row[c] is True for c in ("request_fits", "summarizer_fits", "compacted", "no_loop"))
    assert [j.passed for j in result.judgements] == [True, True]


def test_a_frame_lifts_the_reach_by_itself_and_a_larger_ratio_never_reaches_further(
    result: ScenarioResult,
) -> None:
    rows = result.table("sweep").records()
    by = {(r["estimate"], r["frame"]): r for r in rows}
    for (estimate, frame), r in by.items():
        assert r["reach"] == by[(estimate, 0)]["reach"] + frame  # type: ignore[operator]
        assert r["reach_ratio"] == round(r["reach"] / 100, 3)  # type: ignore[operator]
        assert r["request_fits"] is (r["peak_sent"] <= 100)  # type: ignore[operator]
    for frame in (0, 10, 25):
        reaches = [by[(e, frame)]["reach"] for e in (0.25, 0.5, 0.75, 0.81, 1.0, 2.0)]
        assert reaches == sorted(reaches, reverse=True)  # type: ignore[type-var]
    assert by[(0.25, 0)]["reach"] == 323  # ⌊0.25 × h⌋ > 80 first at h = 324: the last request sent is 323
    assert by[(0.81, 0)]["request_fits"] is True and by[(0.81, 0)]["summarizer_fits"] is False
    assert by[(1.0, 25)]["request_fits"] is False  # a frame over the headroom of 20


def test_the_measured_undercounts_are_carried_in_the_result(result: ScenarioResult) -> None:
    rows = result.table("measured").records()
    assert [r["source"] for r in rows] == [u.source for u in MEASURED]
    pi = [r for r in rows if str(r["source"]).startswith("pi-observational-memory")][0]
    assert (pi["low"], pi["high"]) == (0.54, 0.81)  # "19–46% undercount"
    # cherry-studio #18351's reporter corrected "~4x" under: against the fresh (uncached) input,
    # tokenx's 63,792 over the provider's 54,441 is "only ~+17% off" — an overcount, not a 0.25–0.33
    cherry = [r for r in rows if str(r["source"]).startswith("cherry-studio")][0]
    assert cherry["low"] == cherry["high"] == round(63792 / 54441, 3) and "+17%" in str(cherry["measured"])


def test_the_result_files_are_byte_identical(result: ScenarioResult, tmp_path: Path) -> None:
    scenario = get_scenario("cost-trigger")
    again = scenario.run(parse_params(scenario, GRID), no_progress)
    a, b = write_result(result, tmp_path / "a"), write_result(again, tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert load_result(tmp_path / "a" / "cost-trigger.json") == result


def test_the_plot_draws_a_line_per_frame_the_window_and_the_bands(
    result: ScenarioResult, tmp_path: Path
) -> None:
    fig = plot_cost_trigger(result)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    for frame in (0, 10, 25):
        ys = np.asarray(lines[f"frame {frame}"].get_ydata()).tolist()
        assert ys == [r["reach_ratio"] for r in result.table("sweep").records() if r["frame"] == frame]
    assert any(np.asarray(ln.get_ydata()).tolist() == [1.0, 1.0] for ln in ax.get_lines())  # the window
    labels = {t.get_text() for t in ax.texts}
    assert {u.source for u in MEASURED} <= labels
    assert len(ax.patches) == sum(u.high > u.low for u in MEASURED)  # one shaded band per measured range
    single = [round(u.low, 3) for u in MEASURED if u.high == u.low]  # a single measured ratio: a broad line at it
    assert single and all(
        any(np.asarray(ln.get_xdata()).tolist() == [x, x] for ln in ax.get_lines()) for x in single
    )
    paths = write_figure(fig, tmp_path, "cost-trigger")
    assert paths[0].read_bytes().startswith(b"\x89PNG") and len(paths[0].read_bytes()) > 10_000
    assert "frame 0: every property holds from ratio 1" in cost_trigger_reading(result)


def test_the_plot_refuses_a_result_of_another_scenario() -> None:
    other = ScenarioResult("locking", {}, 0, (Table("sweep", "t", ("a",), ((1,),)),))
    with pytest.raises(WrongResultKind):
        plot_cost_trigger(other)


def test_the_reading_names_the_unit_of_the_window_it_ran_with(result: ScenarioResult) -> None:
    """Costs are percent of the window only at the default window of 100; another window's
    table says its unit instead of a false percentage."""
    assert result.table("sweep").reading.startswith("Costs in percent of the window. reach:")
    scenario = get_scenario("cost-trigger")
    other = scenario.run(parse_params(scenario, {"estimates": "1.0", "frames": "0", "window": "40",
                                                 "threshold": "32"}), no_progress)  # fmt: skip
    assert other.table("sweep").reading.startswith("Costs in the model's units (window 40). reach:")
