"""What each locking strategy guarantees and what it costs, drawn from a ``locking`` result.

Two panels share one x axis of (writers, gap) cells. Above: the observed peak of live turns per
strategy as bars, with the strategy's declared bound as a black tick on its bar (strategies that
declare none get no tick) and maxTurns as a dashed line; runs where ``cas`` starved are hatched.
Below: the 99th percentile of append latency in slots — the price of the bound. A bound that
holds with a latency near zero is free; one bought by making every append wait behind a
compaction is not.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from turncheck.reports.plots.canvas import LOCKING_COLOURS, PALETTE, footnote, new_figure, titled
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult

LOCKING_SCENARIOS: tuple[str, ...] = ("locking", "sweep-locking")
_NEEDED = ("locking", "writers", "gap", "max_turns", "peak", "declared_bound", "latency_p99")
_ORDER = tuple(LOCKING_COLOURS)


def locking_records(result: ScenarioResult, plot: str = "locking-price") -> list[dict[str, Cell]]:
    """The rows of a locking result (or a locking sweep), checked for the columns the plot reads."""
    require_scenario(result, LOCKING_SCENARIOS, plot)
    table = result.tables[0]
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise WrongResultKind(f"plot {plot}: table {table.name!r} lacks column(s) {', '.join(missing)}")
    if not table.rows:
        raise WrongResultKind(f"plot {plot}: the locking result has no rows")
    return table.records()


def _strategies(records: Sequence[dict[str, Cell]]) -> list[str]:
    seen = list(dict.fromkeys(str(r["locking"]) for r in records))
    return sorted(seen, key=lambda s: (_ORDER.index(s) if s in _ORDER else len(_ORDER), s))


def plot_locking_price(result: ScenarioResult) -> Figure:
    """Observed peak and declared bound (top) next to append latency p99 (bottom), per strategy.

    The top axis holds one bar container per strategy (label = strategy, heights = peaks in cell
    order) and one ``"declared bound"`` line of tick markers; the bottom axis one bar container
    per strategy with the p99 latencies. Cells are the sorted (writers, gap) pairs.
    """
    records = locking_records(result)
    strategies = _strategies(records)
    cells = sorted({(int(r["writers"]), int(r["gap"])) for r in records})  # type: ignore[arg-type]
    by = {(str(r["locking"]), int(r["writers"]), int(r["gap"])): r for r in records}  # type: ignore[arg-type]
    max_turns = sorted({int(r["max_turns"]) for r in records})  # type: ignore[arg-type]
    fig = new_figure(min(13.5, 4.5 + 0.95 * len(cells)), 7.2)
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = np.arange(len(cells), dtype=float)
    width = 0.8 / max(1, len(strategies))
    bound_x: list[float] = []
    bound_y: list[float] = []
    post_x: list[float] = []
    post_y: list[float] = []
    for i, s in enumerate(strategies):
        colour = LOCKING_COLOURS.get(s, PALETTE[i % len(PALETTE)])
        xs = x - 0.4 + width * (i + 0.5)
        rows = [by.get((s, a, g)) for a, g in cells]
        peaks = [float(r["peak"]) if r else np.nan for r in rows]  # type: ignore[arg-type]
        p99 = [float(r["latency_p99"]) if r else np.nan for r in rows]  # type: ignore[arg-type]
        bars = top.bar(xs, peaks, width, color=colour, label=s, edgecolor="white", linewidth=0.4)
        for bar, r in zip(bars, rows, strict=True):
            if r is not None and r.get("starved"):
                bar.set_hatch("////")
                bar.set_edgecolor("black")
        bottom.bar(xs, p99, width, color=colour, label=s, edgecolor="white", linewidth=0.4)
        for xv, r in zip(xs, rows, strict=True):
            if r is not None and r.get("post_peak"):  # the second reading: right after a compaction
                post_x.append(float(xv))
                post_y.append(float(r["post_peak"]))  # type: ignore[arg-type]
            if r is not None and r["declared_bound"] is not None:
                bound_x.append(float(xv))
                bound_y.append(float(r["declared_bound"]))  # type: ignore[arg-type]
    top.plot(bound_x, bound_y, ls="none", marker="_", ms=max(6.0, 60 * width), mew=2.2, color="black",
             label="declared bound")  # fmt: skip
    if post_x:
        top.plot(post_x, post_y, ls="none", marker="v", ms=5, color="black", markerfacecolor="white",
                 label="after compaction", zorder=4)  # fmt: skip
    for m in max_turns:
        top.axhline(m, ls="--", lw=1.4, color="black", zorder=5)
    top.set_yscale("log")
    top.set_ylabel("peak live turns (log scale)")
    top.grid(True, axis="y", alpha=0.3, which="both")
    bottom.set_yscale("symlog", linthresh=1.0)
    bottom.set_ylabel("append latency p99 (slots, symlog)")
    bottom.grid(True, axis="y", alpha=0.3)
    bottom.set_xticks(x, [f"A={a}, G={g}" for a, g in cells], rotation=0, fontsize=8)
    label = "cell: A writers (turns per slot, at most), gap G in slots between read and delete"
    bottom.set_xlabel(
        "\n".join(textwrap.wrap(label, int(fig.get_figwidth() * 9)))
    )  # a few cells: a narrow figure
    handles = _legend_handles(strategies, max_turns)
    top.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="locking",
               title_fontsize=8)  # fmt: skip
    p = result.params
    slots = p.get("slots", "?")
    arrivals = p.get("arrivals", "slots")
    titled(
        fig,
        "The price of each locking guarantee: bounded peak (top) vs append latency p99 (bottom)",
        f"maxTurns {', '.join(map(str, max_turns))}; {slots} slots per run; arrivals {arrivals}; "
        f"{result.scenario} seed {result.seed}",
    )
    footnote(
        fig,
        "Declared bounds: mutex M+1, append-sync M, trim-to M+A·G; none and cas declare none. Latency = slots "
        "from a turn's arrival to its append (no bar: the append never waited); a bound bought by blocking "
        "shows up as latency.",
    )
    return fig


def _legend_handles(strategies: list[str], max_turns: list[int]) -> list[Artist]:
    """One colour per strategy, then the markers the bars are read against."""
    handles: list[Artist] = [
        Patch(color=LOCKING_COLOURS.get(s, PALETTE[i % len(PALETTE)]), label=s)
        for i, s in enumerate(strategies)
    ]
    handles += [
        Line2D([], [], ls="none", marker="_", ms=12, mew=2.2, color="black", label="declared bound"),
        Line2D(
            [],
            [],
            ls="none",
            marker="v",
            ms=5,
            color="black",
            markerfacecolor="white",
            label="live turns right after a compaction",
        ),
        Line2D([], [], ls="--", lw=1.4, color="black", label="maxTurns " + ", ".join(map(str, max_turns))),
        Patch(facecolor="white", edgecolor="black", hatch="////", label="starved (cas commits keep failing)"),
    ]
    return handles


def locking_reading(result: ScenarioResult) -> str:
    """One line: which strategies kept their bound, and what the bounded ones cost at worst."""
    records = locking_records(result)
    parts = []
    for s in _strategies(records):
        mine = [r for r in records if r["locking"] == s]
        peak = max(int(r["peak"]) for r in mine)  # type: ignore[arg-type]
        p99 = max(float(r["latency_p99"]) for r in mine)  # type: ignore[arg-type]
        bounded = [r for r in mine if r["declared_bound"] is not None]
        held = all(r.get("within_bound") for r in bounded) if bounded else None
        starved = sum(1 for r in mine if r.get("starved"))
        word = "no bound" if held is None else "bound held" if held else "BOUND BROKEN"
        extra = f", starved in {starved} cell(s)" if starved else ""
        wait = "appends never wait" if p99 == 0 else f"append wait p99 ≤ {p99:g} slots"
        parts.append(f"{s}: {word}, peak ≤ {peak}, {wait}{extra}")
    return "; ".join(parts) + "."


register_plot(Plot("locking-price", "Locking: bound and observed peak vs append latency p99", plot_locking_price,
                   locking_reading, draws=LOCKING_SCENARIOS))  # fmt: skip
