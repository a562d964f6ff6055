"""Which plots a results directory can show, drawn once each: the one list ``report``, ``plot``
and ``demo`` all use.

Rules (every plot is drawn from files, never from a re-run):

* each ``trigger-gap`` or ``sweep-trigger-gap`` result → the heatmap of peak / maxTurns, and the
  peak-vs-maxTurns lines when at least two (writers, gap) series ran at two maxTurns or more (a
  sweep over ``max_turns``; the default eight rows alone make points, not lines);
* each ``locking`` or ``sweep-locking`` result → the price of each guarantee;
* each ``real-locking`` result → model against SQLite / PostgreSQL, one panel per strategy;
* each ``testbench`` result → the strategies against the budget, with the first ``peers``
  result's peers added as dashed lines when there is one;
* each ``peers`` result → the peers and M0–M5 side by side;
* each counterexample trace → its swim-lane timeline.

A plot that cannot be drawn from a file (a table lacking the columns it reads) is reported as
``missing`` with the reason, so a page says what it could not show instead of failing whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path

from matplotlib.figure import Figure

from turncheck.models.errors import TurncheckError
from turncheck.reports.plots.canvas import figure_bytes, write_figure
from turncheck.reports.plots.locking_price import LOCKING_SCENARIOS, locking_reading, plot_locking_price
from turncheck.reports.plots.peaks import (
    PEAK_SCENARIOS,
    heatmap_reading,
    peak_points,
    peaks_reading,
    plot_peak_ratio_heatmap,
    plot_peaks_vs_max_turns,
)
from turncheck.reports.plots.peers import PEERS_SCENARIOS, peers_reading, plot_peers
from turncheck.reports.plots.real_locking import (
    REAL_LOCKING_SCENARIOS,
    plot_real_locking,
    real_locking_reading,
)
from turncheck.reports.plots.strategies import plot_strategies_vs_budget, strategies_reading
from turncheck.reports.plots.timeline import counterexample_reading, plot_counterexample
from turncheck.reports.results_dir import ResultFile, ResultsDir


@dataclass(frozen=True)
class Drawn:
    """One plot: file stem, caption title, one-line reading, the figure, and its source files.

    ``anchor`` is the file whose section of a page the plot belongs to.
    """

    name: str
    title: str
    reading: str
    figure: Figure
    sources: tuple[Path, ...]

    @property
    def anchor(self) -> Path:
        return self.sources[0]

    @cached_property
    def png(self) -> bytes:
        """The figure as PNG, rendered once for both the page and the file."""
        return figure_bytes(self.figure, "png")

    def write(self, out_dir: str | Path) -> list[Path]:
        """``NAME.png`` and ``NAME.svg`` under ``out_dir``."""
        return write_figure(self.figure, out_dir, self.name, rendered={"png": self.png})


@dataclass(frozen=True)
class Missing:
    """A plot the directory's files could not give, and why."""

    name: str
    source: Path
    reason: str


def _stem(plot: str, path: Path) -> str:
    return f"{plot}--{path.stem}"


def _has_lines(rf: ResultFile) -> bool:
    points = peak_points([rf.result])
    per_series: dict[tuple[str, int, int], set[int]] = {}
    for p in points:
        per_series.setdefault((p.locking, p.writers, p.gap), set()).add(p.max_turns)
    return sum(1 for v in per_series.values() if len(v) >= 2) >= 2


def gallery(
    directory: ResultsDir, progress: Callable[[int, int], None] | None = None
) -> tuple[list[Drawn], list[Missing]]:
    """Every plot the directory's results and traces can give, in page order, each drawn and
    rendered to PNG once; ``progress(done, total)`` is called as plots are finished."""
    planned: list[tuple[str, list[Path], str, Callable[[], Figure], Callable[[], str]]] = []
    missing: list[Missing] = []
    for rf in directory.of(*PEAK_SCENARIOS):
        r = rf.result
        try:
            lines = _has_lines(rf)
        except TurncheckError as exc:
            missing.append(Missing("peaks-vs-max-turns", rf.path, str(exc)))
            continue
        if lines:
            planned.append(("peaks-vs-max-turns", [rf.path], "Peak live turns vs maxTurns",
                            partial(plot_peaks_vs_max_turns, r), partial(peaks_reading, r)))  # fmt: skip
        planned.append(("peak-ratio-heatmap", [rf.path], "peak / maxTurns over writers × gap",
                        partial(plot_peak_ratio_heatmap, r), partial(heatmap_reading, r)))  # fmt: skip
    for rf in directory.of(*LOCKING_SCENARIOS):
        r = rf.result
        planned.append(("locking-price", [rf.path], "Locking: bound and observed peak vs append latency p99",
                        partial(plot_locking_price, r), partial(locking_reading, r)))  # fmt: skip
    for rf in directory.of(*REAL_LOCKING_SCENARIOS):
        planned.append(("real-locking", [rf.path], "Model against real stores: peak per locking strategy",
                        partial(plot_real_locking, rf.result), partial(real_locking_reading, rf.result)))  # fmt: skip
    peers = directory.of(*PEERS_SCENARIOS)
    for rf in directory.of("testbench"):
        r = rf.result
        p = peers[0].result if peers else None
        sources = [rf.path] + ([peers[0].path] if peers else [])
        planned.append(("strategies-vs-budget", sources, "Strategies vs budget: over budget, empty, overrun",
                        partial(plot_strategies_vs_budget, r, p),
                        partial(strategies_reading, r, p)))  # fmt: skip
    for rf in peers:
        r = rf.result
        planned.append(("peers", [rf.path], "Peer libraries next to M0–M5",
                        partial(plot_peers, r), partial(peers_reading, r)))  # fmt: skip
    for tf in directory.traces:
        t = tf.trace
        planned.append(("counterexample", [tf.path], f"Counterexample: {t.violated} ({t.model})",
                        partial(plot_counterexample, t), partial(counterexample_reading, t)))  # fmt: skip
    drawn: list[Drawn] = []
    used: set[str] = set()
    report = progress or (lambda done, total: None)
    report(0, len(planned))
    for k, (name, sources, title, draw, read) in enumerate(planned, start=1):
        try:
            stem = _stem(name, sources[0])
            unique, n = stem, 2
            while unique in used:
                unique, n = f"{stem}-{n}", n + 1
            d = Drawn(unique, title, read(), draw(), tuple(sources))
            d.png  # noqa: B018 - render now, so progress counts the real work
            used.add(unique)
            drawn.append(d)
        except TurncheckError as exc:
            missing.append(Missing(name, sources[0], str(exc)))
        report(k, len(planned))
    return drawn, missing


__all__ = ["Drawn", "Missing", "gallery"]
