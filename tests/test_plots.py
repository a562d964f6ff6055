"""Plots: each writes a non-empty PNG and SVG whose matplotlib content matches its input table,
and refuses a result file of the wrong kind with one clear line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text

from turncheck.integrations.plots import plot_peers
from turncheck.models.errors import TurncheckError
from turncheck.reports.plots import (
    plot_counterexample,
    plot_locking_price,
    plot_peak_ratio_heatmap,
    plot_peaks_vs_max_turns,
    plot_strategies_vs_budget,
    write_figure,
)
from turncheck.reports.plots.canvas import figure_bytes
from turncheck.reports.plots.locking_price import locking_reading
from turncheck.reports.plots.timeline import timeline_of
from turncheck.reports.results_dir import ResultFileError, WrongResultKind, load_result
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import Judgement, ScenarioResult, Table, get_scenario, parse_params
from turncheck.sim.trace import Trace, TraceFormatError, save_trace

PEAK_COLUMNS = ("max_turns", "writers", "gap", "locking", "iterations", "peak", "worst_case", "post_peak")


def peaks_result(scenario: str = "sweep-trigger-gap") -> ScenarioResult:
    rows = []
    for a, g in ((1, 0), (1, 2), (4, 2)):
        for m in (4, 8, 16):
            worst = m if g == 0 else m + 2 * a * g - 1
            rows.append((m, a, g, "none", 1000, min(worst, m + a * g), worst, m if g == 0 else m + a * g - 1))
    return ScenarioResult(
        scenario, {"grid": {"max_turns": [4, 8, 16]}}, 7, (Table("sweep", "t", PEAK_COLUMNS, tuple(rows)),)
    )


LOCK_COLUMNS = ("locking", "writers", "gap", "max_turns", "peak", "declared_bound", "within_bound", "latency_p99",
                "starved")  # fmt: skip


def locking_result() -> ScenarioResult:
    rows = []
    for a, g in ((1, 0), (4, 2)):
        rows.append(("none", a, g, 8, 8 + 3 * a * g, None, None, 0.0, False))
        rows.append(("cas", a, g, 8, 8 + 50 * a * g, None, None, 0.0, a * g >= 2))
        rows.append(("mutex", a, g, 8, 9 if g else 8, 9 if g else 8, True, 10.0 * g, False))
    return ScenarioResult("locking", {"slots": 100}, 3, (Table("locking", "t", LOCK_COLUMNS, tuple(rows)),))


def bench_result() -> ScenarioResult:
    """A long table (every strategy × budget) plus a wide seed-shaped one for M1's overrun."""
    long_rows = []
    for b in (400, 4000):
        for s, over, empty, ratio in (
            ("M0", 0, 0, 0.8),
            ("M1", 90, 0, 1.5),
            ("M3", 0, 40 if b == 400 else 5, 0.6),
        ):
            long_rows.append((b, s, 100, over, empty, ratio))
    long = Table("by-strategy", "t", ("budget", "strategy", "windows", "overBudget", "empty", "overrun ratio"),
                 tuple(long_rows))  # fmt: skip
    wide = Table("m5", "t", ("budget", "M5 overrun", "M5 windows"), ((400, 0.4, 100), (1600, 0.6, 100)))
    return ScenarioResult("testbench", {"sessions": 100, "turns": 10}, 11, (long, wide))


def peers_result() -> ScenarioResult:
    cols = ("strategy", "p_result", "windows", "orphanRes", "overBudget", "empty", "overrun")
    rows = []
    for m in (1.0, 0.9):
        for s, orphans in (("M0", 3), ("M5", 0), ("peer:lib", 1)):
            rows.append((s, m, 10, orphans, 2 if s == "peer:lib" else 0, 0, 0.9))
    return ScenarioResult(
        "peers", {"budget": 4000, "sessions": 10, "turns": 5}, 5, (Table("peers", "t", cols, tuple(rows)),)
    )


def trigger_trace() -> Trace:
    return Trace("trigger", {"writers": 2, "gap": 1, "max_turns": 2, "locking": "none", "turns": 4},
                 (("append", 0), ("append", 1), ("tick",), ("append", 0)), "bounded-peak-turns", engine="explore")  # fmt: skip


def assert_writes_images(fig: Figure, tmp_path: Path, stem: str) -> None:
    paths = write_figure(fig, tmp_path, stem)
    assert [p.suffix for p in paths] == [".png", ".svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert b"<svg" in svg[:1000] and len(svg) > 10_000


def titles(fig: Figure) -> str:
    return fig._suptitle.get_text() if fig._suptitle is not None else ""  # type: ignore[attr-defined]


def test_peaks_vs_max_turns_lines_match_the_table(tmp_path: Path) -> None:
    result = peaks_result()
    fig = plot_peaks_vs_max_turns(result)
    assert_writes_images(fig, tmp_path, "peaks")
    ax = fig.axes[0]
    observed = [ln for ln in ax.lines if ln.get_label().startswith("observed")]
    closed = [ln for ln in ax.lines if ln.get_label().startswith("closed form")]
    assert len(observed) == len(closed) == 3  # one per (writers, gap)
    rec = {(r["writers"], r["gap"]): r for r in result.tables[0].records() if r["max_turns"] == 16}
    for line, (a, g) in zip(observed, ((1, 0), (1, 2), (4, 2)), strict=True):
        assert f"A={a} writers, G={g} slot" in line.get_label()
        assert list(line.get_xdata()) == [4, 8, 16]
        assert line.get_ydata()[-1] == rec[(a, g)]["peak"]
    assert closed[2].get_linestyle() == "--" and list(closed[2].get_ydata()) == [4 + 15, 8 + 15, 16 + 15]
    assert [ln.get_label() for ln in ax.lines][0] == "peak = maxTurns"
    assert "maxTurns" in ax.get_xlabel() and "peak live turns" in ax.get_ylabel()
    assert "Peak live turns vs maxTurns" in titles(fig) and "seed 7" in titles(fig)


def test_heatmap_cells_are_peak_over_max_turns(tmp_path: Path) -> None:
    fig = plot_peak_ratio_heatmap(peaks_result("trigger-gap"))
    assert_writes_images(fig, tmp_path, "heat")
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == [
        f"{reading}: maxTurns = {m}" for reading in ("instantaneous", "post-compaction") for m in (4, 8, 16)
    ]
    result = peaks_result("trigger-gap")
    rec = {(r["writers"], r["gap"], r["max_turns"]): r for r in result.tables[0].records()}
    grid = panels[0].images[0].get_array()
    # rows: writers 1, 4; columns: gaps 0, 2 — (4, 0) never ran, so it is masked
    assert grid[0, 0] == 1.0 and grid[0, 1] == pytest.approx(6 / 4) and grid[1, 1] == pytest.approx(12 / 4)
    assert np.ma.is_masked(grid[1, 0])
    post = panels[3].images[0].get_array()  # the same cells, read right after each compaction
    assert post[1, 1] == pytest.approx(rec[(4, 2, 4)]["post_peak"] / 4) and np.ma.is_masked(post[1, 0])
    assert post[1, 1] < grid[1, 1]
    assert "gap G" in panels[0].get_xlabel() and "writers A" in panels[0].get_ylabel()
    assert any("turns / maxTurns" in ax.get_ylabel() for ax in fig.axes if not ax.images)  # the colour bar


def test_locking_price_bars_bounds_and_latency(tmp_path: Path) -> None:
    result = locking_result()
    fig = plot_locking_price(result)
    assert_writes_images(fig, tmp_path, "locking")
    top, bottom = fig.axes[:2]
    bars = [c for c in top.containers if isinstance(c, BarContainer)]
    assert [c.get_label() for c in bars] == ["none", "cas", "mutex"]
    assert [b.get_height() for b in bars[1]] == [8.0, 8.0 + 50 * 8]
    assert bars[1][1].get_hatch() == "////"  # cas starved at (4, 2)
    bound = next(ln for ln in top.lines if ln.get_label() == "declared bound")
    assert list(bound.get_ydata()) == [8.0, 9.0]  # only mutex declares one
    lat = [c for c in bottom.containers if isinstance(c, BarContainer)]
    assert [b.get_height() for b in lat[2]] == [0.0, 20.0]
    assert "latency p99" in bottom.get_ylabel() and "peak live turns" in top.get_ylabel()
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["A=1, G=0", "A=4, G=2"]
    assert locking_reading(result) == (
        "none: no bound, peak ≤ 32, appends never wait; "
        "cas: no bound, peak ≤ 408, appends never wait, starved in 1 cell(s); "
        "mutex: bound held, peak ≤ 9, append wait p99 ≤ 20 slots."
    )


def test_strategies_vs_budget_reads_long_and_wide_tables(tmp_path: Path) -> None:
    fig = plot_strategies_vs_budget(bench_result(), peers_result())
    assert_writes_images(fig, tmp_path, "strategies")
    orphans, over, empty, overrun = fig.axes[:4]
    assert [ln.get_label() for ln in over.lines] == ["M0", "M1", "M3", "peer:lib"]
    m1 = next(ln for ln in over.lines if ln.get_label() == "M1")
    assert list(m1.get_xdata()) == [400, 4000] and list(m1.get_ydata()) == [0.9, 0.9]
    m3 = next(ln for ln in empty.lines if ln.get_label() == "M3")
    assert list(m3.get_ydata()) == [0.4, 0.05]
    m5 = next(ln for ln in overrun.lines if ln.get_label() == "M5")  # from the wide table
    assert list(m5.get_xdata()) == [400, 1600] and list(m5.get_ydata()) == [0.4, 0.6]
    peer = next(ln for ln in over.lines if ln.get_label() == "peer:lib")
    assert list(peer.get_xdata()) == [4000] and list(peer.get_ydata()) == [0.2]  # clean manifold only
    assert "budget" in over.get_xlabel() and over.get_title().startswith("windows over budget")
    # the orphan panel: orphanRes / windows, peers' clean manifold included
    assert orphans.get_title() == "orphaned tool results per window"
    assert [ln.get_label() for ln in orphans.lines] == ["peer:lib"]  # the bench's long table has no orphanRes
    assert list(next(ln for ln in orphans.lines).get_ydata()) == [0.1]


def test_peers_bars_per_strategy_each_its_own_colour(tmp_path: Path) -> None:
    fig = plot_peers(peers_result())
    assert_writes_images(fig, tmp_path, "peers")
    orphans = fig.axes[0]
    bars = [c for c in orphans.containers if isinstance(c, BarContainer)]
    assert [c.get_label() for c in bars] == ["M0", "M5", "peer:lib"]
    assert [b.get_height() for b in bars[0]] == [0.3, 0.3] and [b.get_height() for b in bars[2]] == [0.1, 0.1]
    assert [t.get_text() for t in fig.axes[2].get_xticklabels()] == ["p_result 1.00", "p_result 0.90"]
    assert len({c.patches[0].get_facecolor() for c in bars}) == 3


def test_peer_colours_are_distinct_for_every_strategy() -> None:
    from turncheck.integrations.plots.peers import strategy_colours
    from turncheck.models.peer import PEERS
    from turncheck.models.projector import compared_strategies

    names = [*compared_strategies(), *PEERS]
    colours = strategy_colours(names)
    assert len(set(colours.values())) == len(names) == len(colours)


def test_counterexample_timeline_lanes_window_and_break(tmp_path: Path) -> None:
    trace = trigger_trace()
    path = save_trace(trace, tmp_path / "cx.json")
    fig = plot_counterexample(path)
    assert_writes_images(fig, tmp_path, "timeline")
    lanes, metrics = fig.axes[:2]
    by_label = {ln.get_label(): ln for ln in lanes.lines}
    assert list(by_label["writer 0"].get_xdata()) == [1, 4]
    assert list(by_label["writer 1"].get_xdata()) == [2]
    assert list(by_label["clock"].get_xdata()) == [3]
    assert list(by_label["broken: bounded-peak-turns"].get_xdata()) == [4]
    assert [t.get_text() for t in lanes.get_yticklabels()] == ["writer 0", "writer 1", "clock"]
    live = next(ln for ln in metrics.lines if ln.get_label().startswith("live turns"))
    assert list(live.get_ydata()) == [0, 1, 2, 2, 3]
    limit = next(ln for ln in metrics.lines if ln.get_label().startswith("bound = 2"))
    assert list(limit.get_ydata()) == [2, 2]
    tl = timeline_of(trace)
    assert (
        tl.window == frozenset({1, 2, 4}) and tl.broken_at == 4
    )  # the three live turns; the clock tick is not one
    assert "Counterexample: bounded-peak-turns breaks after 4 steps" in titles(fig)
    assert "step of the run" in metrics.get_xlabel()


def test_user_model_trace_is_drawn_without_importing_it(tmp_path: Path) -> None:
    trace = Trace(
        "no_such_pkg.mod:Lock", {"x": 1}, (("writer", 1, "go"), ("reader",)), "mine", engine="hypothesis"
    )
    fig = plot_counterexample(trace)
    lanes = fig.axes[0]
    assert {ln.get_label() for ln in lanes.lines} >= {"writer 1", "reader"}
    assert "drawn from the saved actions" in titles(fig)


def test_plots_from_real_scenario_results(tmp_path: Path) -> None:
    """The column names the plots read are the scenarios' own (tiny runs, written and read back)."""
    for name, params in (
        ("trigger-gap", {"iterations": "300"}),
        ("locking", {"slots": "20", "writers": "1,2", "gap": "0,1"}),
    ):
        sc = get_scenario(name)
        write_result(sc.run(parse_params(sc, params), lambda d, t: None), tmp_path)
    trigger = load_result(tmp_path / "trigger-gap.json")
    assert len(plot_peak_ratio_heatmap(trigger).axes) >= 2
    assert len(plot_locking_price(load_result(tmp_path / "locking.json")).axes) == 2


@pytest.mark.parametrize(
    ("plot", "source", "needs"),
    [
        (plot_peaks_vs_max_turns, locking_result, "trigger-gap"),
        (plot_peak_ratio_heatmap, bench_result, "trigger-gap"),
        (plot_locking_price, peaks_result, "locking"),
        (plot_strategies_vs_budget, locking_result, "testbench"),
        (plot_peers, bench_result, "peers"),
    ],
)
def test_wrong_kind_of_result_is_refused(plot, source, needs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(WrongResultKind) as err:
        plot(source())
    message = str(err.value)
    assert needs in message and source().scenario in message and "\n" not in message
    assert isinstance(err.value, TurncheckError)


def test_result_without_the_columns_is_refused() -> None:
    bare = ScenarioResult("locking", {}, 0, (Table("locking", "t", ("locking", "peak"), (("none", 3),)),))
    with pytest.raises(WrongResultKind, match="lacks column"):
        plot_locking_price(bare)
    empty = ScenarioResult(
        "testbench", {}, 0, (Table("x", "t", ("a",), ((1,),)),), (Judgement("j", True, ""),)
    )
    with pytest.raises(WrongResultKind, match="no overBudget"):
        plot_strategies_vs_budget(empty)


def test_wrong_kind_of_file_is_refused(tmp_path: Path) -> None:
    trace = save_trace(trigger_trace(), tmp_path / "cx.json")
    with pytest.raises(ResultFileError, match="not a turncheck result file"):
        load_result(trace)
    write_result(locking_result(), tmp_path)
    with pytest.raises(TraceFormatError, match="not a turncheck trace"):
        plot_counterexample(tmp_path / "locking.json")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(ResultFileError, match="malformed JSON"):
        load_result(tmp_path / "bad.json")


def _text_outside(fig: Figure) -> list[str]:
    """The titles, labels and notes a reader must see that reach past the figure's edges."""
    figure_bytes(fig, "png")  # lays the figure out as written
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    texts: list[Text] = [fig._suptitle, *fig.texts] if fig._suptitle is not None else list(fig.texts)  # type: ignore[attr-defined]
    texts += [t for ax in fig.axes if ax.get_visible() for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    box = fig.bbox
    out = []
    for t in texts:
        if t.get_visible() and t.get_text().strip():
            e = t.get_window_extent(renderer)
            if e.x0 < -1 or e.y0 < -1 or e.x1 > box.x1 + 1 or e.y1 > box.y1 + 1:
                out.append(t.get_text())
    return out


def _one_max_turns(result: ScenarioResult) -> ScenarioResult:
    t = result.tables[0]
    rows = tuple(r for r in t.rows if r[0] == t.rows[0][0])
    return ScenarioResult(
        result.scenario, result.params, result.seed, (Table(t.name, t.title, t.columns, rows),)
    )


@pytest.mark.parametrize(
    "draw",
    [
        lambda: plot_peak_ratio_heatmap(_one_max_turns(peaks_result())),  # one panel: narrower than its title
        lambda: plot_peak_ratio_heatmap(peaks_result()),
        lambda: plot_peaks_vs_max_turns(peaks_result()),
        lambda: plot_locking_price(locking_result()),
    ],
    ids=["heatmap-one-panel", "heatmap", "peaks-vs-max-turns", "locking-price"],
)
def test_titles_and_notes_stay_inside_the_figure(draw) -> None:  # type: ignore[no-untyped-def]
    assert _text_outside(draw()) == []
