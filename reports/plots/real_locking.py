"""Model against real stores, drawn from a ``real-locking`` result: one panel per strategy.

In each panel, per (writers, gap) cell: the model's closed-form worst case as a black tick, the
model peak at saturation as a grey bar, and the measured peak on each store (SQLite, PostgreSQL)
as a coloured bar, on a log scale with maxTurns dashed. A coloured bar above its tick is the
FAIL the scenario judges; ``cas`` has no tick (its worst case is unbounded).
"""

from __future__ import annotations

import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from turncheck.reports.plots.canvas import footnote, new_figure, titled
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult
from turncheck.sim.stress.stores import STORES

REAL_LOCKING_SCENARIOS: tuple[str, ...] = ("real-locking",)
_NEEDED = ("locking", "store", "writers", "gap_ms", "max_turns", "worst_case", "model_peak", "measured_peak")


def real_locking_records(result: ScenarioResult) -> list[dict[str, Cell]]:
    require_scenario(result, REAL_LOCKING_SCENARIOS, "real-locking")
    table = result.tables[0]
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise WrongResultKind(f"plot real-locking: table {table.name!r} lacks column(s) {', '.join(missing)}")
    if not table.rows:
        raise WrongResultKind("plot real-locking: the result has no rows")
    return table.records()


def plot_real_locking(result: ScenarioResult) -> Figure:
    """One axis per strategy (title = strategy); bars labelled ``model`` and each store name."""
    records = real_locking_records(result)
    strategies = list(dict.fromkeys(str(r["locking"]) for r in records))
    stores = [s for s in STORES if any(r["store"] == s for r in records)]
    cells = sorted({(int(r["writers"]), float(r["gap_ms"])) for r in records})  # type: ignore[arg-type]
    fig = new_figure(min(14.0, 2.8 * len(strategies) + 1.5), 4.6)
    axes = fig.subplots(1, len(strategies), sharey=True, squeeze=False)[0]
    series = ["model", *stores]
    width = 0.8 / len(series)
    x = np.arange(len(cells), dtype=float)
    for ax, s in zip(axes, strategies, strict=True):
        mine = [r for r in records if r["locking"] == s]
        for i, name in enumerate(series):
            heights = []
            for w, g in cells:
                rows = [r for r in mine if int(r["writers"]) == w and float(r["gap_ms"]) == g]  # type: ignore[arg-type]
                if name == "model":
                    vals = [float(r["model_peak"]) for r in rows]  # type: ignore[arg-type]
                else:
                    vals = [float(r["measured_peak"]) for r in rows if r["store"] == name]  # type: ignore[arg-type]
                heights.append(max(vals) if vals else np.nan)
            colour = "#999999" if name == "model" else STORES[name].colour
            ax.bar(x - 0.4 + width * (i + 0.5), heights, width, color=colour, label=name)
            if name != "model":
                worst = [
                    max((float(r["worst_case"]) for r in mine  # type: ignore[arg-type]
                         if r["store"] == name and int(r["writers"]) == w and float(r["gap_ms"]) == g
                         and r["worst_case"] is not None), default=np.nan)  # type: ignore[arg-type]
                    for w, g in cells
                ]  # fmt: skip
                ax.plot(
                    x - 0.4 + width * (i + 0.5), worst, ls="none", marker="_", ms=16, mew=2.2, color="black"
                )
        for m in sorted({int(r["max_turns"]) for r in mine}):  # type: ignore[arg-type]
            ax.axhline(m, ls="--", lw=1, color="#555555")
        ax.set_title(s, fontsize=10)
        ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3, which="both")
        ax.set_xticks(x, [f"W={w}\n{g:g} ms" for w, g in cells], fontsize=8)
    axes[0].set_ylabel("peak live turns (log scale)")
    handles: list[Artist] = [Patch(color="#999999", label="model peak (saturated)")]
    handles += [Patch(color=STORES[s].colour, label=f"measured: {s}") for s in stores]
    handles += [
        Line2D([], [], ls="none", marker="_", ms=12, mew=2.2, color="black", label="model worst case"),
        Line2D([], [], ls="--", lw=1, color="#555555", label="maxTurns"),
    ]
    axes[-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    p = result.params
    titled(fig, "Model against real stores: peak live turns per locking strategy",
           f"{p.get('seconds', '?')} s per run; W writer processes + 1 compactor; scenario seed {result.seed}")  # fmt: skip
    footnote(fig, "One model slot = one gap, with the turns per gap the run measured. Measured peaks are exact "
             "(replayed from the store's journal) and vary from run to run; a bar above its tick is a FAIL.")  # fmt: skip
    return fig


def real_locking_reading(result: ScenarioResult) -> str:
    """One line: per store, the worst measured/worst-case ratio and any run above the worst case."""
    records = real_locking_records(result)
    parts = []
    for store in dict.fromkeys(str(r["store"]) for r in records):
        mine = [r for r in records if r["store"] == store]
        above = [str(r["locking"]) for r in mine if r["worst_case"] is not None
                 and float(r["measured_peak"]) > float(r["worst_case"])]  # type: ignore[arg-type]  # fmt: skip
        peaks = ", ".join(f"{r['locking']} {r['measured_peak']}" for r in mine)
        verdict = f"ABOVE the worst case: {', '.join(above)}" if above else "all within the worst case"
        parts.append(f"{store}: {peaks} — {verdict}")
    return "; ".join(parts) + "."


register_plot(Plot("real-locking", "Model against real stores: peak per locking strategy", plot_real_locking,
                   real_locking_reading, draws=REAL_LOCKING_SCENARIOS))  # fmt: skip
