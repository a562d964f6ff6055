"""What each trimming strategy costs as the budget grows, drawn from ``testbench`` (and ``peers``).

Four panels over the budget: the orphaned tool results per window (a result sent without its call,
which the providers refuse), the share of windows over budget, the share of empty windows, and the
overrun ratio (Σ kept cost / (budget × windows)); one line per strategy M0–M5, plus one dashed
line per peer library when a ``peers`` result is given. Strategies often share a figure (M0, M4
and M5 are never over budget): each line of a panel is drawn a fixed number of points above or
below its value (:func:`_side_by_side`), so equal lines run side by side and none hides another;
the values, the ticks and the files keep the exact figures.

The figures are read from whatever tables the result carries, in either of two shapes:

* **long** — a table with a ``budget`` column, a ``strategy`` (or ``projector`` / ``peer``)
  column and metric columns (``overBudget rate``, ``empty rate``, ``overrun ratio``, or the counts
  ``overBudget`` / ``empty`` with ``windows``). Rows of other manifolds than the clean one
  (``p_result`` 1.00) and of a second CJK ratio are left out;
* **wide** — the seed's tables: a ``budget`` column and columns named ``"<strategy> <metric>"``
  (``M1 overBudget``, ``M3 empty rate``, ``M5 overrun`` …), with the window count per budget from a
  ``windows`` / ``M0 windows`` column.

A strategy appears in a panel only where the result has its figure, so the plot never invents a
point; which strategies are drawn is the table's choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.transforms import offset_copy

from turncheck.models.projector import STRATEGIES, compared_strategies
from turncheck.reports.plots.canvas import (
    SERIES_STYLES,
    SeriesStyle,
    footnote,
    new_figure,
    titled,
    unnamed_style,
)
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult, Table

STRATEGY_SCENARIOS: tuple[str, ...] = ("testbench",)
PEER_SCENARIOS: tuple[str, ...] = ("peers",)
METRICS: tuple[str, ...] = ("orphan rate", "overBudget rate", "empty rate", "overrun ratio")
LINE_SPACING = 1.6  # points between two lines' drawn positions in a panel (at most; see _side_by_side)
SPREAD = 16.0  # points the lines of one panel span at most, however many there are
_NAME_COLUMNS = ("strategy", "projector", "peer", "trimmer")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


# normalized column name → (metric, is a count that needs the window count)
_METRIC_COLUMNS: dict[str, tuple[str, bool]] = {
    "overbudgetrate": ("overBudget rate", False), "overbudgetshare": ("overBudget rate", False),
    "overbudget": ("overBudget rate", True),
    "emptyrate": ("empty rate", False), "emptyshare": ("empty rate", False), "empty": ("empty rate", True),
    "overrunratio": ("overrun ratio", False), "overrun": ("overrun ratio", False),
    "orphanres": ("orphan rate", True), "orphanrate": ("orphan rate", False),
}  # fmt: skip


@dataclass
class Curves:
    """Per (who, metric): budget → value; ``where`` says which manifold/ratio rows were read."""

    points: dict[tuple[str, str], dict[int, float]] = field(default_factory=dict)
    where: list[str] = field(default_factory=list)

    def put(self, who: str, metric: str, budget: int, value: float) -> None:
        self.points.setdefault((who, metric), {}).setdefault(budget, value)

    def names(self) -> list[str]:
        order = STRATEGIES.names()
        seen = list(dict.fromkeys(w for w, _ in self.points))
        return sorted(seen, key=lambda w: (order.index(w) if w in order else len(order), w))


def _number(v: Cell) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return None


def _column(table: Table, *names: str) -> str | None:
    wanted = {_norm(n) for n in names}
    return next((c for c in table.columns if _norm(c) in wanted), None)


def _clean_rows(table: Table, curves: Curves) -> list[dict[str, Cell]]:
    """Rows of the clean manifold (p_result 1.00) and of the first CJK ratio, when such columns exist."""
    recs = table.records()
    manifold = _column(table, "manifold", "p_result", "presult")
    if manifold is not None:
        values = list(dict.fromkeys(r[manifold] for r in recs))
        clean = next(
            (v for v in values if _number(v) == 1.0 or "1.00" in str(v)), values[0] if values else None
        )
        recs = [r for r in recs if r[manifold] == clean]
        curves.where.append(f"{manifold} {clean}")
    ratio = _column(table, "cjk ratio", "cjk_ratio", "ratio")
    if ratio is not None:
        first = recs[0][ratio] if recs else None
        recs = [r for r in recs if r[ratio] == first]
        curves.where.append(f"CJK ratio {first}")
    return recs


def _read_long(table: Table, name_col: str, curves: Curves, budget_default: int | None) -> None:
    budget_col = _column(table, "budget")
    windows_col = _column(table, "windows")
    for rec in _clean_rows(table, curves):
        budget = _number(rec[budget_col]) if budget_col else budget_default
        if budget is None:
            continue
        who = str(rec[name_col])
        windows = _number(rec[windows_col]) if windows_col else None
        for col in table.columns:
            spec = _METRIC_COLUMNS.get(_norm(col))
            value = _number(rec[col])
            if spec is None or value is None:
                continue
            metric, is_count = spec
            if is_count:
                if not windows:
                    continue
                value = value / windows
            curves.put(who, metric, int(budget), value)


def _windows_by_budget(tables: Sequence[Table]) -> dict[int, float]:
    out: dict[int, float] = {}
    for t in tables:
        budget_col = _column(t, "budget")
        if budget_col is None:
            continue
        for col in t.columns:
            if _norm(col) in ("windows", "m0windows"):
                for rec in t.records():
                    b, w = _number(rec[budget_col]), _number(rec[col])
                    if b is not None and w:
                        out.setdefault(int(b), w)
    return out


def _read_wide(tables: Sequence[Table], curves: Curves) -> None:
    windows = _windows_by_budget(tables)
    for t in tables:
        budget_col = _column(t, "budget")
        if budget_col is None or any(_column(t, n) for n in _NAME_COLUMNS):
            continue
        for col in t.columns:
            who, _, name = col.partition(" ")
            if who not in STRATEGIES or _norm(name) not in _METRIC_COLUMNS:
                continue
            metric, is_count = _METRIC_COLUMNS[_norm(name)]
            for rec in t.records():
                b, v = _number(rec[budget_col]), _number(rec[col])
                if b is None or v is None:
                    continue
                if is_count:
                    if not windows.get(int(b)):
                        continue
                    v = v / windows[int(b)]
                curves.put(who, metric, int(b), v)


def _style(name: str, k_fallback: int) -> SeriesStyle:
    """The shared style of ``name``; a name the registry does not know (a user's projector) gets
    a palette colour and a marker of its own."""
    known = SERIES_STYLES.get(name)
    if known is not None:
        return known
    return unnamed_style(k_fallback)


def _peer_label(name: str) -> str:
    return name if name.startswith("peer") else f"peer:{name}"


def strategy_curves(
    result: ScenarioResult, *, peers: bool = False, plot: str = "strategies-vs-budget"
) -> Curves:
    """Every (strategy or peer, metric, budget) figure the result carries (see the module doc).

    Raises
    ------
    WrongResultKind
        A result of another scenario, or one with no such figure at all.
    """
    require_scenario(result, PEER_SCENARIOS if peers else STRATEGY_SCENARIOS, plot)
    curves = Curves()
    budget = result.params.get("budget")
    budget_default = int(budget) if isinstance(budget, int) and not isinstance(budget, bool) else None
    for t in result.tables:
        name_col = _column(t, *_NAME_COLUMNS)
        if name_col is not None:
            _read_long(t, name_col, curves, budget_default)
    _read_wide(result.tables, curves)
    if not curves.points:
        raise WrongResultKind(
            f"plot {plot}: the {result.scenario} result has no overBudget / empty / overrun figures by budget"
        )
    curves.where = list(dict.fromkeys(curves.where))
    return curves


def _draw_panel(ax: Axes, metric: str, curves: Curves, peer_curves: Curves | None) -> None:
    """One metric's lines: each strategy with figures for it, then each peer (dashed), in order."""
    for who in curves.names():
        pts = curves.points.get((who, metric))
        if pts:
            xs = sorted(pts)
            ax.plot(
                xs, [pts[b] for b in xs], label=who, **_style(who, k_fallback=len(ax.lines)).line_kwargs()
            )
    if peer_curves is not None:
        for k, who in enumerate(n for n in peer_curves.names() if n not in STRATEGIES):
            pts = peer_curves.points.get((who, metric))
            if pts:
                xs = sorted(pts)
                ax.plot(xs, [pts[b] for b in xs], label=_peer_label(who),
                        **_style(_peer_label(who), k_fallback=k + 7).line_kwargs(ms=5.5, lw=1.3))  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("budget (tokens per window, log scale)")
    ax.grid(True, alpha=0.3, which="both")
    budgets = sorted({b for (_w, m), pts in curves.points.items() if m == metric for b in pts})
    if budgets:
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()


def _side_by_side(ax: Axes, fig: Figure) -> None:
    """Draw the panel's k-th of n lines ``(k − (n−1)/2) · spacing`` points above its value, spacing
    :data:`LINE_SPACING` (less when n lines would span more than :data:`SPREAD`): lines with equal
    figures run side by side instead of on top of each other. Only the drawing moves; the line's
    data (and what a reader of the figure's values gets) stays exact."""
    lines = list(ax.lines)
    if len(lines) < 2:
        return
    spacing = min(LINE_SPACING, SPREAD / (len(lines) - 1))
    for k, line in enumerate(lines):
        dy = (k - (len(lines) - 1) / 2) * spacing
        line.set_transform(offset_copy(ax.transData, fig=fig, y=dy, units="points"))


PANELS: tuple[tuple[str, str], ...] = (
    ("orphaned tool results per window", "orphaned results / windows"),
    ("windows over budget (share)", "share of windows"),
    ("empty windows (share)", "share of windows"),
    ("overrun ratio", "Σ kept cost / (budget × windows)  (1.0 = budget filled)"),
)


def plot_strategies_vs_budget(testbench: ScenarioResult, peers: ScenarioResult | None = None) -> Figure:
    """Orphaned results per window, overBudget rate, empty rate and overrun ratio against the
    budget, one line per strategy, lines side by side (:func:`_side_by_side`).

    Each of the four axes (in :data:`METRICS` order) holds one line per strategy that has figures
    for it (label = strategy id, x = budgets ascending, y = values) and, with ``peers``, one
    dashed line per peer library (label = ``"peer <name>"``).
    """
    curves = strategy_curves(testbench)
    peer_curves = strategy_curves(peers, peers=True) if peers is not None else None
    fig = new_figure(13.0, 8.6)
    axes = list(fig.subplots(2, 2).flat)
    for ax, metric, (title, ylabel) in zip(axes, METRICS, PANELS, strict=True):
        _draw_panel(ax, metric, curves, peer_curves)
        _side_by_side(ax, fig)
        ax.set_title(title, fontsize=9.5)
        ax.set_ylabel(ylabel)
    axes[3].axhline(1.0, ls=":", color="#555555", lw=1)
    for ax in axes[1:3]:
        ax.set_ylim(-0.04, 1.04)
    axes[0].set_ylim(bottom=min(-0.04 * axes[0].get_ylim()[1], -0.004))
    found: dict[str, Artist] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(label, h)
    order = [*curves.names(), *(_peer_label(n) for n in (peer_curves.names() if peer_curves else []))]
    labels = [label for label in order if label in found]
    handles = [found[label] for label in labels]
    fig.legend(handles, labels, loc="outside right upper", fontsize=8, title="strategy", title_fontsize=8)
    p = testbench.params
    scale = f"{p.get('sessions', '?')} sessions × {p.get('turns', '?')} turns" if "sessions" in p else ""
    where = "; ".join(curves.where) or "p_result 1.00 (clean data)"
    sub = f"{scale}; {where}; testbench seed {testbench.seed}"
    if peers is not None:
        sub += f"; peers seed {peers.seed} (dashed, its own scale and cost model)"
    titled(fig, "What each trimming strategy costs as the budget grows", sub)
    missing = [s for s in compared_strategies() if not any((s, m) in curves.points for m in METRICS)]
    note = (
        "M0 naive cut, M1 whole turns (may overrun), M2 M1 + placeholder repairs, M3 complete turns only (may be "
        "empty), M4 whole turns with fallback to M0, M5 pair-safe cut. Lines with equal figures are drawn side by "
        f"side, up to {LINE_SPACING:g} pt apart, so none hides another. A strategy without a line in a panel has no "
        "such figure in the result file."
    )
    if missing:
        note += f" Not in this result at all: {', '.join(missing)}."
    footnote(fig, note)
    return fig


def strategies_reading(testbench: ScenarioResult, peers: ScenarioResult | None = None) -> str:
    """One line: who runs over budget most, who goes empty most, at the smallest budget shown."""
    curves = strategy_curves(testbench)
    parts = []
    for metric, words in (("overBudget rate", "over budget"), ("empty rate", "empty")):  # shares of windows
        best: tuple[float, str, int] | None = None
        for (who, m), pts in curves.points.items():
            if m != metric:
                continue
            b = min(pts)
            if best is None or pts[b] > best[0]:
                best = (pts[b], who, b)
        if best is not None:
            parts.append(f"{best[1]} is {words} in {100 * best[0]:.0f} % of windows at budget {best[2]}")
    over = curves.points
    ratios = {w: max(pts.values()) for (w, m), pts in over.items() if m == "overrun ratio"}
    if ratios:
        worst = max(ratios, key=lambda w: ratios[w])
        parts.append(f"largest overrun ratio {ratios[worst]:.2f} ({worst})")
    if peers is not None:
        parts.append(
            f"peers: {', '.join(n for n in strategy_curves(peers, peers=True).names() if n not in STRATEGIES)}"
        )
    return "; ".join(parts) + "."


register_plot(Plot("strategies-vs-budget", "Strategies vs budget: over budget, empty, overrun",
                   plot_strategies_vs_budget, strategies_reading, draws=STRATEGY_SCENARIOS,
                   with_first=PEER_SCENARIOS))  # fmt: skip
