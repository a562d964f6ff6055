"""No series hides another: one colour per strategy and peer across all plots, and within any one
plot no two labelled series share colour *and* style (marker, line style, marker fill).

Series that coincide (equal values on every point) are drawn on purpose here: they must still be
told apart by their marker and line style.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from turncheck.integrations.plots import plot_peers
from turncheck.reports.plots import (
    plot_locking_price,
    plot_peak_ratio_heatmap,
    plot_peaks_vs_max_turns,
    plot_strategies_vs_budget,
)
from turncheck.reports.plots.canvas import SERIES_STYLES, UNNAMED_COLOURS
from turncheck.scenarios.base import ScenarioResult, Table, get_scenario, no_progress, parse_params

STRATEGIES = ("M0", "M1", "M2", "M3", "M4", "M5")
PEERS = ("peer:langchain", "peer:langchain-human", "peer:llamaindex", "peer:litellm", "peer:openai-agents")


def coinciding_testbench() -> ScenarioResult:
    """Every strategy with the SAME figures at every budget: all lines lie on top of each other."""
    rows = [(b, s, 100, 90, 5, 1.3) for b in (400, 4000) for s in STRATEGIES]
    cols = ("budget", "strategy", "windows", "overBudget", "empty", "overrun ratio")
    return ScenarioResult(
        "testbench", {"sessions": 100, "turns": 10}, 1, (Table("strategies", "t", cols, tuple(rows)),)
    )


def coinciding_peers() -> ScenarioResult:
    cols = ("strategy", "p_result", "windows", "orphanRes", "overBudget", "empty", "overrun")
    rows = [(s, m, 100, 1, 90, 5, 1.3) for m in (1.0, 0.9) for s in (*STRATEGIES, *PEERS)]
    return ScenarioResult(
        "peers", {"budget": 4000, "sessions": 10, "turns": 5}, 5, (Table("peers", "t", cols, tuple(rows)),)
    )


def real(name: str, **params: str) -> ScenarioResult:
    sc = get_scenario(name)
    result: ScenarioResult = sc.run(parse_params(sc, params), no_progress)
    return result


def figures() -> Iterator[tuple[str, Figure]]:
    yield "strategies", plot_strategies_vs_budget(coinciding_testbench(), coinciding_peers())
    yield "peers", plot_peers(coinciding_peers())
    trigger = real("trigger-gap", iterations="2000")
    yield "peaks", plot_peaks_vs_max_turns(trigger)
    yield "heatmap", plot_peak_ratio_heatmap(trigger)
    yield "locking", plot_locking_price(real("locking", slots="30", writers="1,4", gap="0,2", budget="0"))


def line_style(line: Line2D) -> tuple[str, str, str, str]:
    face = line.get_markerfacecolor()
    return (to_hex(line.get_color()), str(line.get_linestyle()), str(line.get_marker()), to_hex(face))


def test_every_named_series_has_its_own_colour() -> None:
    colours = [s.colour.lower() for s in SERIES_STYLES.values()]
    assert len(set(colours)) == len(colours)
    assert not set(colours) & {c.lower() for c in UNNAMED_COLOURS}
    assert set(STRATEGIES) | set(PEERS) | {"none", "cas", "trim-to", "mutex", "append-sync"} <= set(
        SERIES_STYLES
    )


@pytest.mark.parametrize("name,fig", list(figures()), ids=lambda x: x if isinstance(x, str) else "")
def test_no_two_series_in_a_plot_share_colour_and_style(name: str, fig: Figure) -> None:
    for ax in fig.axes:
        lines = [ln for ln in ax.lines if not str(ln.get_label()).startswith("_")]
        styles = [line_style(ln) for ln in lines]
        dupes = {s for s in styles if styles.count(s) > 1}
        assert not dupes, f"{name}: {[ln.get_label() for ln in lines if line_style(ln) in dupes]}"
        bars = [
            c for c in ax.containers if isinstance(c, BarContainer) and not str(c.get_label()).startswith("_")
        ]
        faces = [to_hex(c.patches[0].get_facecolor()) for c in bars if c.patches]
        assert len(set(faces)) == len(faces), f"{name}: bar series share a colour"
        # one colour per strategy and peer across all plots
        for ln in lines:
            style = SERIES_STYLES.get(str(ln.get_label()))
            if style is not None:
                assert to_hex(ln.get_color()) == style.colour
        for c in bars:
            style = SERIES_STYLES.get(str(c.get_label()))
            if style is not None and c.patches:
                assert to_hex(c.patches[0].get_facecolor()) == style.colour


def test_coinciding_strategies_stay_visible() -> None:
    fig = plot_strategies_vs_budget(coinciding_testbench(), coinciding_peers())
    labels = [ln.get_label() for ln in fig.axes[1].lines]  # over budget (axes[0]: orphans)
    assert set(STRATEGIES) <= set(labels) and {p for p in PEERS} <= set(labels)


def test_coinciding_lines_are_drawn_side_by_side_and_keep_their_values() -> None:
    """Equal figures (every strategy here) still give lines a reader sees: no two lines of a panel
    are drawn at the same place, while each line's data stays the exact figure."""
    fig = plot_strategies_vs_budget(coinciding_testbench(), coinciding_peers())
    fig.canvas.draw()
    for ax in fig.axes:
        lines = [ln for ln in ax.lines if not str(ln.get_label()).startswith("_")]
        drawn = [ln.get_transform().transform(ln.get_xydata()) for ln in lines]
        for i in range(len(drawn)):
            for j in range(i + 1, len(drawn)):
                if drawn[i].shape == drawn[j].shape:
                    gap = abs(drawn[i][:, 1] - drawn[j][:, 1]).min()
                    assert gap >= 1.0, (ax.get_title(), lines[i].get_label(), lines[j].get_label(), gap)
    over = fig.axes[1]
    assert {float(y) for ln in over.lines for y in ln.get_ydata()} == {0.9}  # 90 of 100 windows, unmoved


def test_peaks_plot_shows_both_readings_and_the_max_turns_line() -> None:
    fig = plot_peaks_vs_max_turns(real("trigger-gap", iterations="2000"))
    labels = [str(ln.get_label()) for ln in fig.axes[0].lines]
    assert any(lb.startswith("after compaction") for lb in labels)
    assert any(lb.startswith("observed") for lb in labels)
    promise = next(ln for ln in fig.axes[0].lines if ln.get_label() == "peak = maxTurns")
    assert promise.get_zorder() > max(ln.get_zorder() for ln in fig.axes[0].lines if ln is not promise)
