"""Peak live turns of the compaction trigger, drawn from ``trigger-gap`` results and their sweeps.

Two pictures answer seed 004 §9's question — *my trigger says maxTurns, how many live turns do I
really get?*: peak live turns against maxTurns, one line per (writers, gap) with the closed-form
worst case dashed in the same colour; and a heatmap of peak / maxTurns over writers × gap, one
panel per maxTurns. Both read the ``peaks`` table of a ``trigger-gap`` result or the ``sweep``
table of a ``sweep-trigger-gap`` result (``turncheck sweep trigger-gap --grid max_turns=…``);
replicates of one cell are folded into their largest peak (the worst observed), since a peak is
itself a maximum over the run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from turncheck.reports.plots.canvas import PALETTE, footnote, new_figure, titled
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.reports.results_dir import WrongResultKind, require_scenario
from turncheck.scenarios.base import ScenarioResult

PEAK_SCENARIOS: tuple[str, ...] = ("trigger-gap", "sweep-trigger-gap")
_NEEDED = ("max_turns", "writers", "gap", "peak")


@dataclass(frozen=True)
class PeakPoint:
    """One (writers, gap, maxTurns, locking) cell: observed peak and closed-form worst case."""

    writers: int
    gap: int
    max_turns: int
    locking: str
    peak: int
    worst: int | None
    iterations: int | None
    post: int | None = None  # live turns right after a compaction (older result files lack it)

    @property
    def ratio(self) -> float:
        return self.peak / self.max_turns


def peak_points(results: Sequence[ScenarioResult], plot: str = "peaks") -> list[PeakPoint]:
    """Every cell of the given trigger-gap results and sweeps (largest peak per cell).

    Raises
    ------
    WrongResultKind
        A result of another scenario, or one whose table lacks the peak columns.
    """
    if not results:
        raise WrongResultKind(f"plot {plot} needs at least one trigger-gap result")
    cells: dict[tuple[int, int, int, str], PeakPoint] = {}
    for result in results:
        require_scenario(result, PEAK_SCENARIOS, plot)
        table = result.tables[0]
        missing = [c for c in _NEEDED if c not in table.columns]
        if missing:
            raise WrongResultKind(
                f"plot {plot}: table {table.name!r} of {result.scenario} lacks column(s) {', '.join(missing)}"
            )
        for rec in table.records():
            worst = rec.get("worst_case")
            iterations = rec.get("iterations")
            post = rec.get("post_peak")
            p = PeakPoint(
                writers=int(rec["writers"]),  # type: ignore[arg-type]
                gap=int(rec["gap"]),  # type: ignore[arg-type]
                max_turns=int(rec["max_turns"]),  # type: ignore[arg-type]
                locking=str(rec.get("locking") or "none"),
                peak=int(rec["peak"]),  # type: ignore[arg-type]
                worst=None if worst is None else int(worst),  # type: ignore[arg-type]
                iterations=None if iterations is None else int(iterations),  # type: ignore[arg-type]
                post=None if post is None else int(post),  # type: ignore[arg-type]
            )
            key = (p.writers, p.gap, p.max_turns, p.locking)
            if key in cells:  # replicates: the worst observed of each reading
                q = cells[key]
                posts = [x for x in (p.post, q.post) if x is not None]
                p = PeakPoint(p.writers, p.gap, p.max_turns, p.locking, max(p.peak, q.peak), p.worst,
                              p.iterations, max(posts) if posts else None)  # fmt: skip
            cells[key] = p
    return sorted(cells.values(), key=lambda p: (p.locking, p.writers, p.gap, p.max_turns))


def _series_key(p: PeakPoint, lockings: int) -> tuple[str, int, int]:
    return (p.locking if lockings > 1 else "", p.writers, p.gap)


def _series_label(key: tuple[str, int, int]) -> str:
    locking, writers, gap = key
    text = f"A={writers} writers, G={gap} slot{'s' if gap != 1 else ''}"
    return f"{locking}: {text}" if locking else text


_HUES = ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys")


def _series_colours(keys: Sequence[tuple[str, int, int]]) -> dict[tuple[str, int, int], str]:
    """One hue per (locking, writers), darker for a longer gap, so a family reads as a group."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    families = sorted({(k[0], k[1]) for k in keys})
    out = {}
    for key in keys:
        family = families.index((key[0], key[1]))
        if len(families) > len(_HUES):
            out[key] = PALETTE[keys.index(key) % len(PALETTE)]
            continue
        gaps = sorted({k[2] for k in keys if (k[0], k[1]) == (key[0], key[1])})
        shade = 0.45 + 0.5 * (gaps.index(key[2]) / max(1, len(gaps) - 1))
        out[key] = to_hex(colormaps[_HUES[family]](shade))
    return out


def _run_words(points: Sequence[PeakPoint], results: Sequence[ScenarioResult]) -> str:
    lockings = sorted({p.locking for p in points})
    iters = sorted({p.iterations for p in points if p.iterations is not None})
    slots = (
        f"{iters[0]:,} slots per cell" if len(iters) == 1 else f"{iters[0]:,}–{iters[-1]:,} slots per cell"
    )
    seeds = ", ".join(f"{r.scenario} seed {r.seed}" for r in results)
    return f"locking {', '.join(lockings)}; arrivals uniform in 0..A turns per slot; {slots}; {seeds}"


def plot_peaks_vs_max_turns(results: ScenarioResult | Sequence[ScenarioResult]) -> Figure:
    """Peak live turns against maxTurns: one solid line per (writers, gap), closed form dashed.

    Lines are drawn in series order (locking, writers, gap); each observed line is labelled
    ``"observed <series>"`` and its closed-form partner ``"closed form <series>"``, and a dotted
    grey ``"peak = maxTurns"`` line shows what the trigger promises.
    """
    results = [results] if isinstance(results, ScenarioResult) else list(results)
    points = peak_points(results, "peaks-vs-max-turns")
    lockings = len({p.locking for p in points})
    series: dict[tuple[str, int, int], list[PeakPoint]] = {}
    for p in points:
        series.setdefault(_series_key(p, lockings), []).append(p)
    fig = new_figure(9.5, 6.0)
    ax = fig.add_subplot()
    max_turns = sorted({p.max_turns for p in points})
    ax.plot(max_turns, max_turns, "-", color="black", lw=2.2, alpha=0.55, zorder=5, label="peak = maxTurns")
    handles: list[Line2D] = []
    colours = _series_colours(list(series))
    for key, pts in series.items():
        colour = colours[key]
        pts = sorted(pts, key=lambda p: p.max_turns)
        xs = [p.max_turns for p in pts]
        (line,) = ax.plot(xs, [p.peak for p in pts], "-o", color=colour, ms=4.5, lw=1.6,
                          label=f"observed {_series_label(key)}")  # fmt: skip
        handles.append(Line2D([], [], color=colour, marker="o", ms=4.5, lw=1.6, label=_series_label(key)))
        worst = [(p.max_turns, p.worst) for p in pts if p.worst is not None]
        if worst:
            ax.plot([w[0] for w in worst], [w[1] for w in worst], "--", color=colour, lw=1.1, zorder=3, marker="_", ms=11,
                    label=f"closed form {_series_label(key)}")  # fmt: skip
        post = [(p.max_turns, p.post) for p in pts if p.post is not None]
        if post:
            ax.plot([q[0] for q in post], [q[1] for q in post], ":", color=colour, lw=1.2, marker="v", ms=5,
                    markerfacecolor="white", label=f"after compaction {_series_label(key)}")  # fmt: skip
    style = [
        Line2D([], [], color="black", marker="o", ms=4.5, lw=1.6, label="observed peak (solid)"),
        Line2D(
            [], [], color="black", ls="--", lw=1.1, marker="_", ms=11, label="closed-form worst case (dashed)"
        ),
        Line2D(
            [],
            [],
            color="black",
            ls=":",
            lw=1.2,
            marker="v",
            ms=5,
            markerfacecolor="white",
            label="live turns right after a compaction (dotted; seed 004 §9's reading)",
        ),
        Line2D([], [], color="black", alpha=0.55, lw=2.2, label="peak = maxTurns (the trigger's promise)"),
    ]
    first = ax.legend(handles=handles, title="writers A, gap G", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      fontsize=8, title_fontsize=8)  # fmt: skip
    ax.add_artist(first)
    ax.legend(handles=style, loc="lower left", bbox_to_anchor=(1.01, 0.0), fontsize=8)
    ax.set_xticks(max_turns)
    ax.set_xlabel("maxTurns — the trigger compacts when live turns exceed it")
    ax.set_ylabel("peak live turns (largest count the log ever held)")
    ax.grid(True, alpha=0.3)
    titled(
        fig,
        "Peak live turns vs maxTurns: with a check-then-act gap the log overshoots its trigger",
        _run_words(points, results),
    )
    footnote(
        fig,
        "TurnCountTrigger(maxTurns) reads the live-turn count when it exceeds maxTurns and, G slots later, deletes "
        "count_read − maxTurns of the oldest turns; turns appended in the gap survive. Closed form (no lock): "
        "M + 2·A·G − 1 for G ≥ 1, M for G = 0.",
    )
    return fig


def peaks_reading(results: ScenarioResult | Sequence[ScenarioResult]) -> str:
    """One line: how far the worst cell overshoots, and what a zero gap does."""
    results = [results] if isinstance(results, ScenarioResult) else list(results)
    points = peak_points(results)
    worst = max(points, key=lambda p: p.ratio)
    zero = [p for p in points if p.gap == 0]
    above = [p for p in points if p.worst is not None and p.peak > p.worst]
    parts = [
        f"worst cell A={worst.writers}, G={worst.gap}, maxTurns {worst.max_turns}: peak {worst.peak} "
        f"= {worst.ratio:.1f}× maxTurns"
    ]
    if zero:
        parts.append(
            "with no gap the peak stays at maxTurns" if all(p.peak <= p.max_turns for p in zero)
            else "even with no gap some peaks exceed maxTurns"
        )  # fmt: skip
    parts.append(
        "no cell exceeds its closed form" if not above else f"{len(above)} cell(s) exceed the closed form"
    )
    return "; ".join(parts) + "."


READINGS: tuple[tuple[str, str], ...] = (
    ("instantaneous", "peak (most live turns at any moment)"),
    ("post-compaction", "after compaction (live turns right after each compaction; seed 004 §9's reading)"),
)


def _reading_value(p: PeakPoint, reading: str) -> int | None:
    return p.peak if reading == "instantaneous" else p.post


def plot_peak_ratio_heatmap(results: ScenarioResult | Sequence[ScenarioResult]) -> Figure:
    """peak / maxTurns over writers (rows) × gap (columns): both readings, one panel per maxTurns each.

    The panels of the instantaneous peak come first (one row of panels), those of the live turns
    right after a compaction below them (left out for older result files that lack ``post_peak``);
    both share one colour scale, so the two readings compare cell by cell. Each panel's image holds
    the ratios (NaN where no cell ran), in the order of the sorted writers and gaps; every cell is
    annotated with its ratio and, below, the turn count.
    """
    results = [results] if isinstance(results, ScenarioResult) else list(results)
    points = peak_points(results, "peak-ratio-heatmap")
    lockings = sorted({p.locking for p in points})
    panels = sorted({(p.locking, p.max_turns) for p in points})
    writers = sorted({p.writers for p in points})
    gaps = sorted({p.gap for p in points})
    readings = [r for r in READINGS if any(_reading_value(p, r[0]) is not None for p in points)]
    vmax = max(p.ratio for p in points)
    cols = 2 if len(panels) == 4 else min(len(panels), 3)
    per_reading = math.ceil(len(panels) / cols)
    rows_n = per_reading * len(readings)
    fig = new_figure(max(4.2, 3.3 * cols + 1.2), 3.1 * rows_n + 1.6)
    axes = fig.subplots(rows_n, cols, squeeze=False)
    image = None
    for block, (reading, _words) in enumerate(readings):
        for k, (locking, m) in enumerate(panels):
            ax = axes[block * per_reading + k // cols][k % cols]
            grid = np.full((len(writers), len(gaps)), np.nan)
            counts: dict[tuple[int, int], int] = {}
            for p in points:
                value = _reading_value(p, reading)
                if (p.locking, p.max_turns) == (locking, m) and value is not None:
                    grid[writers.index(p.writers), gaps.index(p.gap)] = value / m
                    counts[(p.writers, p.gap)] = value
            image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", cmap="YlOrRd", vmin=1.0,
                              vmax=max(vmax, 1.0001), aspect="auto")  # fmt: skip
            for (a, g), count in counts.items():
                r = grid[writers.index(a), gaps.index(g)]
                dark = r > 1 + 0.6 * (vmax - 1)
                label = "peak" if reading == "instantaneous" else "after"
                ax.text(gaps.index(g), writers.index(a), f"{r:.2f}×\n({label} {count})", ha="center",
                        va="center", fontsize=7.5, color="white" if dark else "black")  # fmt: skip
            ax.set_xticks(range(len(gaps)), [str(g) for g in gaps])
            ax.set_yticks(range(len(writers)), [str(a) for a in writers])
            ax.set_xlabel("gap G (slots between read and delete)")
            if k % cols == 0:
                ax.set_ylabel("writers A (turns per slot, at most)")
            ax.set_title(f"{reading}: maxTurns = {m}" + (f", locking {locking}" if len(lockings) > 1 else ""),
                         fontsize=9)  # fmt: skip
            ax.set_facecolor("#eeeeee")
        for k in range(len(panels), per_reading * cols):
            axes[block * per_reading + k // cols][k % cols].set_visible(False)
    if image is not None:
        bar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9)
        bar.set_label("turns / maxTurns  (1.0 = the trigger holds)")
    titled(
        fig,
        "How many times maxTurns the log really holds, over writers × gap: "
        + " / ".join(r for r, _ in readings),
        _run_words(points, results) + "; " + "; ".join(words for _, words in readings) + "; grey = not run",
    )
    return fig


def heatmap_reading(results: ScenarioResult | Sequence[ScenarioResult]) -> str:
    """One line: the ratio's range, where it is largest, and how it moves with maxTurns."""
    results = [results] if isinstance(results, ScenarioResult) else list(results)
    points = peak_points(results)
    worst = max(points, key=lambda p: p.ratio)
    line = (
        f"peak / maxTurns runs from {min(p.ratio for p in points):.2f} to {worst.ratio:.2f} "
        f"(A={worst.writers}, G={worst.gap}, maxTurns {worst.max_turns})"
    )
    same = sorted(
        (p for p in points if (p.locking, p.writers, p.gap) == (worst.locking, worst.writers, worst.gap)),
        key=lambda p: p.max_turns,
    )
    if len(same) > 1:
        lo, hi = same[0], same[-1]
        line += (
            f"; at A={worst.writers}, G={worst.gap} it goes from {lo.ratio:.2f} at maxTurns {lo.max_turns} "
            f"to {hi.ratio:.2f} at maxTurns {hi.max_turns} (overshoot {lo.peak - lo.max_turns} → "
            f"{hi.peak - hi.max_turns} turns)"
        )
    post = [(p.post / p.max_turns, p) for p in points if p.post is not None]
    if post:
        top = max(post, key=lambda x: x[0])
        line += (
            f"; right after a compaction it runs from {min(r for r, _ in post):.2f} to {top[0]:.2f} "
            f"(A={top[1].writers}, G={top[1].gap}, maxTurns {top[1].max_turns})"
        )
    return line + "."


def has_lines(result: ScenarioResult) -> bool:
    """Whether at least two (writers, gap) series ran at two maxTurns or more: a sweep over
    ``max_turns`` (the default eight rows alone make points, not lines)."""
    per_series: dict[tuple[str, int, int], set[int]] = {}
    for p in peak_points([result]):
        per_series.setdefault((p.locking, p.writers, p.gap), set()).add(p.max_turns)
    return sum(1 for v in per_series.values() if len(v) >= 2) >= 2


register_plot(Plot("peaks-vs-max-turns", "Peak live turns vs maxTurns", plot_peaks_vs_max_turns, peaks_reading,
                   draws=PEAK_SCENARIOS, when=has_lines))  # fmt: skip
register_plot(Plot("peak-ratio-heatmap", "peak / maxTurns over writers × gap", plot_peak_ratio_heatmap,
                   heatmap_reading, draws=PEAK_SCENARIOS))  # fmt: skip
