"""Which plots a results directory can show, drawn once each: the one list ``report``, ``plot``
and ``demo`` all use.

Each registered :class:`~turncheck.reports.plots.plot.Plot` declares the files it draws (see
:mod:`turncheck.reports.plots.plot`); the gallery walks the plots in registration order and, for
each, every result file of the scenarios it names (or every counterexample trace), in path
order; consecutive plots of the same files are drawn file by file. The built-ins: the heatmap of peak / maxTurns and the peak-vs-maxTurns lines from
trigger-gap results and sweeps, the price of each locking guarantee, the model against real
stores, the strategies against the budget (with the peers added when a peers result is there),
the peers next to M0–M5, and each counterexample's swim-lane timeline.

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
from turncheck.reports.plots.plot import PLOTS, Plot
from turncheck.reports.results_dir import ResultsDir
from turncheck.sim.executor import no_progress


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


def _groups(plots: list[Plot]) -> list[list[Plot]]:
    """Consecutive plots of the same files, together: they are drawn file by file (a file's
    plots next to each other), the groups in registration order."""
    groups: list[list[Plot]] = []
    for plot in plots:
        if groups and (groups[-1][0].draws, groups[-1][0].traces) == (plot.draws, plot.traces):
            groups[-1].append(plot)
        else:
            groups.append([plot])
    return groups


def gallery(
    directory: ResultsDir, progress: Callable[[int, int], None] | None = None
) -> tuple[list[Drawn], list[Missing]]:
    """Every plot the directory's results and traces can give, in page order, each drawn and
    rendered to PNG once; ``progress(done, total)`` is called as plots are finished."""
    planned: list[tuple[str, list[Path], str, Callable[[], Figure], Callable[[], str]]] = []
    missing: list[Missing] = []
    for group in _groups(list(PLOTS.values())):
        first = group[0]
        if first.traces:
            subjects = [(tf.path, tf.trace) for tf in directory.traces]
        else:
            subjects = [(rf.path, rf.result) for rf in directory.of(*first.draws)]
        for path, subject in subjects:
            for plot in group:
                companions = directory.of(*plot.with_first) if plot.with_first else []
                extra = (companions[0].result if companions else None,) if plot.with_first else ()
                also = [companions[0].path] if companions else []
                try:
                    if plot.when is not None and not plot.when(subject):
                        continue
                    title = plot.caption(subject)
                except TurncheckError as exc:
                    missing.append(Missing(plot.name, path, str(exc)))
                    continue
                planned.append((plot.name, [path, *also], title, partial(plot.draw, subject, *extra),
                                partial(plot.reading, subject, *extra)))  # fmt: skip
    drawn: list[Drawn] = []
    used: set[str] = set()
    report = progress or no_progress
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
