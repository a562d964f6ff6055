"""The trimmers people already use next to M0–M5, drawn from a ``peers`` result.

Four panels share one axis of strategies (ours first, then each peer library): orphan results
per window, the share of windows over budget, the share of empty windows, and the overrun
ratio. Within each strategy one bar per manifold (``p_result`` 1.00 / 0.97 / 0.90), so a reader
sees both how a library compares with ours and whether dangling tool calls in the data change it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from turncheck.reports.plots.canvas import footnote, new_figure, titled
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult

PEERS_SCENARIOS: tuple[str, ...] = ("peers",)
_NEEDED = ("strategy", "windows", "orphanRes", "overBudget", "empty", "overrun")
_MANIFOLD = ("manifold", "p_result")
# (panel title, y label, value of one row)
PANELS: tuple[tuple[str, str], ...] = (
    ("orphan results per window", "orphan RESULTs / windows"),
    ("windows over budget (share)", "share of windows"),
    ("empty windows (share)", "share of windows"),
    ("overrun ratio = Σ kept cost / (budget × windows)", "overrun ratio"),
)
MANIFOLD_COLOURS = ("#4c72b0", "#dd8452", "#c44e52", "#8172b3", "#937860")


def _value(rec: dict[str, Cell], panel: int) -> float:
    windows = float(rec["windows"] or 0)  # type: ignore[arg-type]
    if panel == 3:
        return float(rec["overrun"])  # type: ignore[arg-type]
    count = float(rec[("orphanRes", "overBudget", "empty")[panel]])  # type: ignore[arg-type]
    return count / windows if windows else 0.0


def _manifold_label(value: Cell) -> str:
    if isinstance(value, float):
        return f"p_result {value:.2f}"
    return str(value)


def peer_records(result: ScenarioResult, plot: str = "peers") -> list[dict[str, Cell]]:
    """The ``peers`` table's rows, checked for the columns the plot reads; each row gets a
    ``manifold`` label (from a ``manifold`` or ``p_result`` column)."""
    require_scenario(result, PEERS_SCENARIOS, plot)
    table = next((t for t in result.tables if t.name == "peers"), result.tables[0] if result.tables else None)
    column = next((c for c in _MANIFOLD if table is not None and c in table.columns), None)
    if table is None or column is None or any(c not in table.columns for c in _NEEDED):
        raise WrongResultKind(
            f"plot {plot}: the peers result has no table with columns {', '.join(_NEEDED)} and manifold or p_result"
        )
    return [{**rec, "manifold": _manifold_label(rec[column])} for rec in table.records()]


def plot_peers(result: ScenarioResult) -> Figure:
    """Four panels (:data:`PANELS`), one bar container per manifold in each (label = manifold),
    bars in strategy order (the table's order: M0–M5, then the peers)."""
    records = peer_records(result)
    strategies = list(dict.fromkeys(str(r["strategy"]) for r in records))
    manifolds = list(dict.fromkeys(str(r["manifold"]) for r in records))
    by = {(str(r["strategy"]), str(r["manifold"])): r for r in records}
    fig = new_figure(max(10.0, 1.0 + 0.85 * len(strategies)), 8.6)
    axes = fig.subplots(2, 2, sharex=True).ravel()
    x = np.arange(len(strategies), dtype=float)
    width = 0.8 / max(1, len(manifolds))
    for k, ax in enumerate(axes):
        for j, m in enumerate(manifolds):
            heights = [_value(by[(s, m)], k) if (s, m) in by else np.nan for s in strategies]
            ax.bar(x - 0.4 + width * (j + 0.5), heights, width, label=m,
                   color=MANIFOLD_COLOURS[j % len(MANIFOLD_COLOURS)])  # fmt: skip
        title, ylabel = PANELS[k]
        ax.set_title(title, fontsize=9.5)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
        peers_start = next((i for i, s in enumerate(strategies) if not s.startswith("M")), None)
        if peers_start is not None:
            ax.axvline(peers_start - 0.5, color="#888888", lw=0.8)
        if k == 3:
            ax.axhline(1.0, ls=":", color="#555555", lw=1)
        if k in (1, 2):
            ax.set_ylim(0, 1.02)
    for ax in axes[2:]:
        ax.set_xticks(x, strategies, rotation=35, ha="right", fontsize=8)
    axes[0].legend(title="manifold", fontsize=8, title_fontsize=8, loc="upper left")
    p = result.params
    titled(
        fig,
        "Peer libraries next to M0–M5: orphans, over-budget and empty windows, overrun",
        f"{p.get('sessions', '?')} sessions × {p.get('turns', '?')} turns per manifold; budget {p.get('budget', '?')}; "
        f"cost model {p.get('cost', '?')}; one window per session; peers seed {result.seed}",
    )
    footnote(
        fig,
        "Left of the grey line our strategies, right of it the libraries (peer:NAME, run offline on the same "
        "histories). An orphan RESULT is a tool result sent without the call that asked for it; manifolds with "
        "p_result < 1 hold tool calls whose result was never written. No bar means zero.",
    )
    return fig


def peers_reading(result: ScenarioResult) -> str:
    """One line: which strategies or peers send orphans, go over budget, or go empty."""
    records = peer_records(result)
    parts = []
    for k, words in ((0, "send orphan results"), (1, "run over budget"), (2, "send empty windows")):
        who = list(dict.fromkeys(str(r["strategy"]) for r in records if _value(r, k) > 0))
        parts.append(f"{words}: {', '.join(who) if who else 'none'}")
    return "; ".join(parts) + "."
