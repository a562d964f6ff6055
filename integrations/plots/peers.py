"""The trimmers people use next to M0–M5, drawn from a ``peers`` result.

Four panels share one axis of cases (the seed's manifolds, parallel calls, the oversized turn):
orphan results per request, the share of requests that send an unmatched call, the share of
requests over budget, and the mean overrun (keptCost / budget). Within each case one bar per
strategy, ours first, then each peer; every strategy has its own colour (no two share one), so a
reader can follow one library across the panels.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from turncheck.reports.plots.canvas import SERIES_STYLES, footnote, new_figure, titled
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult

PEERS_SCENARIOS: tuple[str, ...] = ("peers",)
_COUNT = ("requests", "windows")
_NEEDED = ("strategy", "orphanRes", "overBudget", "empty", "overrun")
_MANIFOLD = ("case", "manifold", "p_result")
# (panel title, y label)
PANELS: tuple[tuple[str, str], ...] = (
    ("orphan results per request", "orphan RESULTs / requests"),
    ("requests sending an unmatched call (share)", "share of requests"),
    ("requests over budget (share)", "share of requests"),
    ("overrun = mean keptCost / budget", "overrun ratio"),
)


def strategy_colours(strategies: list[str]) -> dict[str, str]:
    """A distinct colour per strategy: its house colour (:data:`SERIES_STYLES`, the same in
    every plot) when it has one, else the next ``tab20``/``tab20b`` colour no other series uses.

    Invariant: no two strategies of the list share a colour (up to 40 strategies)."""
    palette = [colormaps["tab20"](i) for i in range(20)] + [colormaps["tab20b"](i) for i in range(20)]
    taken = {style.colour for style in SERIES_STYLES.values()}
    free = iter(
        h
        for h in ("#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in rgba[:3])) for rgba in palette)
        if h not in taken
    )
    out: dict[str, str] = {}
    for name in strategies:
        known = SERIES_STYLES.get(name)
        colour = known.colour if known is not None else next(free, None)
        if colour is None:
            raise WrongResultKind(
                f"plot peers: {len(strategies)} strategies, more than there are distinct colours"
            )
        out[name] = colour
    return out


def _count(rec: dict[str, Cell]) -> float:
    return float(next((rec[c] for c in _COUNT if c in rec), 0) or 0)  # type: ignore[arg-type]


def _value(rec: dict[str, Cell], panel: int) -> float:
    n = _count(rec)
    if panel == 3:
        return float(rec["overrun"])  # type: ignore[arg-type]
    if panel == 1:
        hits = rec.get("orphanCallRequests", rec.get("orphanCall", 0))
        return float(hits or 0) / n if n else 0.0  # type: ignore[arg-type]
    count = float(rec[("orphanRes", "", "overBudget")[panel]])  # type: ignore[arg-type]
    return count / n if n else 0.0


def _manifold_label(value: Cell) -> str:
    if isinstance(value, float):
        return f"p_result {value:.2f}"
    return str(value)


def peer_records(result: ScenarioResult, plot: str = "peers") -> list[dict[str, Cell]]:
    """The ``peers`` table's rows, checked for the columns the plot reads; each row gets a
    ``manifold`` label (from a ``case``, ``manifold`` or ``p_result`` column)."""
    require_scenario(result, PEERS_SCENARIOS, plot)
    table = next((t for t in result.tables if t.name == "peers"), result.tables[0] if result.tables else None)
    column = next((c for c in _MANIFOLD if table is not None and c in table.columns), None)
    if (table is None or column is None or any(c not in table.columns for c in _NEEDED)
            or not any(c in table.columns for c in _COUNT)):  # fmt: skip
        raise WrongResultKind(
            f"plot {plot}: the peers result has no table with columns {', '.join(_NEEDED)}, requests or windows, "
            "and case, manifold or p_result"
        )
    return [{**rec, "manifold": _manifold_label(rec[column])} for rec in table.records()]


def plot_peers(result: ScenarioResult) -> Figure:
    """Four panels (:data:`PANELS`), one bar container per strategy in each (label = strategy,
    its own colour), grouped by case on the x axis."""
    records = peer_records(result)
    strategies = list(dict.fromkeys(str(r["strategy"]) for r in records))
    manifolds = list(dict.fromkeys(str(r["manifold"]) for r in records))
    colours = strategy_colours(strategies)
    by = {(str(r["strategy"]), str(r["manifold"])): r for r in records}
    fig = new_figure(max(11.0, 2.0 + 2.2 * len(manifolds)), 9.4)
    axes = fig.subplots(2, 2, sharex=True).ravel()
    x = np.arange(len(manifolds), dtype=float)
    width = 0.86 / max(1, len(strategies))
    for k, ax in enumerate(axes):
        for j, s in enumerate(strategies):
            heights = [_value(by[(s, m)], k) if (s, m) in by else np.nan for m in manifolds]
            ax.bar(x - 0.43 + width * (j + 0.5), heights, width, label=s, color=colours[s],
                   hatch="//" if s.startswith("peer:") else None, edgecolor="white", linewidth=0.3)  # fmt: skip
        title, ylabel = PANELS[k]
        ax.set_title(title, fontsize=9.5)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
        if k == 3:
            ax.axhline(1.0, ls=":", color="#555555", lw=1)
        if k in (1, 2):
            ax.set_ylim(0, 1.02)
    for ax in axes[2:]:
        ax.set_xticks(x, manifolds, fontsize=8.5)
    axes[1].legend(*axes[0].get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                   fontsize=7.5, title="strategy", title_fontsize=8, frameon=False)  # fmt: skip
    p = result.params
    titled(
        fig,
        "Agent frameworks' trimmers next to M0–M5, per request: orphans, unmatched calls, over budget, overrun",
        f"{p.get('sessions', '?')} sessions × {p.get('turns', '?')} turns per case; budget {p.get('budget', '?')}; "
        f"cost model {p.get('cost', '?')}; every request of every session; peers seed {result.seed}",
    )
    footnote(
        fig,
        "Plain bars: our strategies; hatched: the libraries (peer:NAME, run offline on the same histories, at every "
        "model call). An orphan RESULT is a tool result sent without its call; an unmatched call a call sent "
        "without its result (on p_result < 1 cases the data has them). No bar means zero.",
    )
    return fig


def peers_reading(result: ScenarioResult) -> str:
    """One line: which strategies or peers send orphans, unmatched calls, go over budget."""
    records = peer_records(result)
    parts = []
    for k, words in ((0, "send orphan results"), (1, "send unmatched calls"), (2, "run over budget")):
        who = list(dict.fromkeys(str(r["strategy"]) for r in records if _value(r, k) > 0))
        parts.append(f"{words}: {', '.join(who) if who else 'none'}")
    return "; ".join(parts) + "."


register_plot(Plot("peers", "Peer libraries next to M0–M5", plot_peers, peers_reading, draws=PEERS_SCENARIOS))
