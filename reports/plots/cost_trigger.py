"""The real cost the trigger lets through, drawn from a ``cost-trigger`` result.

x: the estimate ratio (the trigger's count ÷ the provider's), on a log scale; y: ``reach`` — the
largest real cost of a request the agent sends when the provider refuses nothing — as a share of
the window, on a log scale; one line per frame (the system prompt and tool schemas the count leaves
out). The window is the line at 1 and the threshold the dotted line under it. A filled marker is a
configuration the model breaks with the window in place (a request or the summarizer's refused, a
context never compacted, a compaction loop); a hollow one holds every property. The ratios the
threads measured are shaded bands (a single measured ratio a broad line), named above the axes, from the result's ``measured`` table.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from turncheck.reports.plots.canvas import footnote, new_figure, titled, unnamed_style
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import Cell, ScenarioResult

COST_TRIGGER_SCENARIOS: tuple[str, ...] = ("cost-trigger",)
_NEEDED = ("estimate", "frame", "reach_ratio", "request_fits", "summarizer_fits", "compacted", "no_loop")
_PROPERTIES = ("request_fits", "summarizer_fits", "compacted", "no_loop")
_BANDS = ("#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1")


def cost_trigger_records(result: ScenarioResult) -> list[dict[str, Cell]]:
    """The sweep's rows, checked for the columns the plot reads."""
    require_scenario(result, COST_TRIGGER_SCENARIOS, "cost-trigger")
    table = result.table("sweep")
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise WrongResultKind(f"plot cost-trigger: table 'sweep' lacks column(s) {', '.join(missing)}")
    if not table.rows:
        raise WrongResultKind("plot cost-trigger: the result has no rows")
    return table.records()


def _broken(record: dict[str, Cell]) -> bool:
    return not all(record[c] is True for c in _PROPERTIES)


def plot_cost_trigger(result: ScenarioResult) -> Figure:
    """One line per frame (label ``frame F``); the window at y = 1, the threshold dotted."""
    records = cost_trigger_records(result)
    p = result.params
    window, threshold = float(p.get("window", 100)), float(p.get("threshold", 80))
    fig = new_figure(9.0, 5.4)
    ax = fig.subplots()
    estimates = sorted({float(r["estimate"]) for r in records})  # type: ignore[arg-type]
    reaches = [float(r["reach_ratio"]) for r in records]  # type: ignore[arg-type]
    low_x, high_x = min(estimates) / 1.15, max(estimates) * 1.15
    for k, u in enumerate(
        result.table("measured").records() if "measured" in {t.name for t in result.tables} else []
    ):
        lo, hi = float(u["low"]), float(u["high"])  # type: ignore[arg-type]
        if hi > lo:
            ax.axvspan(lo, hi, color=_BANDS[k % len(_BANDS)], alpha=0.55, lw=0, zorder=0)
        else:  # one measured ratio, not a range: a band of no width would not show
            ax.axvline(lo, color=_BANDS[k % len(_BANDS)], lw=4.0, alpha=0.9, zorder=0)
        ax.text((lo * hi) ** 0.5, 1.01 + 0.05 * (k % 2), str(u["source"]), transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=7.5, rotation=0, color="#333333")  # fmt: skip
        low_x, high_x = min(low_x, lo / 1.1), max(high_x, hi * 1.1)
    ax.axhline(1.0, color="#b2182b", lw=1.4, zorder=1)
    ax.axhline(threshold / window, color="#555555", lw=1.0, ls=":", zorder=1)
    ax.axvline(1.0, color="#999999", lw=0.8, ls="--", zorder=1)
    for i, frame in enumerate(sorted({int(r["frame"]) for r in records})):  # type: ignore[arg-type]
        mine = sorted((r for r in records if r["frame"] == frame), key=lambda r: float(r["estimate"]))  # type: ignore[arg-type]
        style = unnamed_style(i)
        xs = [float(r["estimate"]) for r in mine]  # type: ignore[arg-type]
        ys = [float(r["reach_ratio"]) for r in mine]  # type: ignore[arg-type]
        ax.plot(xs, ys, color=style.colour, ls=style.linestyle, lw=1.6, zorder=3, label=f"frame {frame}")
        for r, x, y in zip(mine, xs, ys, strict=True):
            face = style.colour if _broken(r) else "white"
            ax.plot([x], [y], ls="none", marker="o", ms=5.5, mec=style.colour, mfc=face, mew=1.3, zorder=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low_x, high_x)
    ax.set_ylim(min(min(reaches), threshold / window) / 1.3, max(max(reaches), 1.0) * 1.3)
    # the canvas writes log ticks as a reader does (1.5 would read "2"): ticks it writes exactly
    ticks = [t for t in (0.1, 0.15, 0.2, 0.25, 0.33, 0.5, 0.75, 1, 2, 3, 5) if low_x <= t <= high_x]
    top = max(max(reaches), 1.0) * 1.3
    for axis, marks in (
        (ax.xaxis, ticks),
        (ax.yaxis, [t for t in (0.25, 0.5, 0.8, 1, 2, 3, 5, 8) if t <= top]),
    ):
        axis.set_major_locator(FixedLocator(marks))
        axis.set_minor_locator(NullLocator())
    ax.set_xlabel("estimate ratio: the trigger's count ÷ the provider's (log scale; < 1 undercounts)")
    ax.set_ylabel("real cost reached before the trigger fires ÷ window")
    ax.grid(True, which="major", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0] + [
        Line2D([], [], color="#b2182b", lw=1.4, label="the window"),
        Line2D([], [], color="#555555", lw=1.0, ls=":", label=f"the threshold ({threshold / window:g} of it)"),
        Line2D([], [], ls="none", marker="o", mfc="#444444", mec="#444444", label="breaks a property (window kept)"),
        Line2D([], [], ls="none", marker="o", mfc="white", mec="#444444", label="every property holds"),
    ]  # fmt: skip
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.95)
    titled(fig, "The cost the trigger measures vs the cost the provider counts",
           f"model cost-trigger, explored exhaustively per point: window {window:g}, threshold {threshold:g}, "
           f"appends of 1 to {p.get('turn', '?')}, summary {p.get('summary', '?')}")  # fmt: skip
    footnote(fig, "Shaded: the undercounts and overcounts the threads measured, as each states it. A frame "
             "(system prompt, tool schemas) is real cost the count leaves out: it lifts every line by itself.")  # fmt: skip
    return fig


def cost_trigger_reading(result: ScenarioResult) -> str:
    """One line: per frame, the smallest estimate ratio at which every property still holds."""
    records = cost_trigger_records(result)
    parts = []
    for frame in sorted({int(r["frame"]) for r in records}):  # type: ignore[arg-type]
        mine = sorted((r for r in records if r["frame"] == frame), key=lambda r: float(r["estimate"]))  # type: ignore[arg-type]
        holding = [float(r["estimate"]) for r in mine if not _broken(r)]  # type: ignore[arg-type]
        worst = max(mine, key=lambda r: float(r["reach_ratio"]))  # type: ignore[arg-type]
        first = (
            f"every property holds from ratio {min(holding):g}" if holding else "no ratio of the sweep holds"
        )
        parts.append(f"frame {frame}: {first}; at ratio {worst['estimate']} the context reaches "
                     f"{worst['reach_ratio']}× the window")  # fmt: skip
    return "; ".join(parts) + "."


register_plot(Plot("cost-trigger", "Real cost reached vs estimate ratio, per frame", plot_cost_trigger,
                   cost_trigger_reading, draws=COST_TRIGGER_SCENARIOS))  # fmt: skip
