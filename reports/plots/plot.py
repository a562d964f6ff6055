"""What a plot is, and the registry the report's gallery draws from.

A :class:`Plot` declares which files it is drawn from — the result files of the scenarios it
names in ``draws`` (one figure per file), or every counterexample trace (``traces=True``) — and
how: ``draw`` returns the figure, ``reading`` the one line under it, each from what was saved,
never from a re-run. ``with_first`` names scenarios whose first result file is read alongside
(the testbench's strategies are drawn with the peers next to them when a peers result is there);
``when`` lets a plot pass over a file it has nothing to show for (the peak-vs-maxTurns lines
need a sweep over ``max_turns``).

Built-in plots register at the end of their module and :mod:`turncheck.reports.plots` imports
each such module in one place (:mod:`turncheck.integrations.plots` those of the integrations);
an extension registers with ``turncheck.register_plot``. The gallery draws them in registration
order, plots of result files before plots of traces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from matplotlib.figure import Figure

from turncheck.models.registry import Registry


@dataclass(frozen=True)
class Plot:
    """One kind of figure: its file stem, caption title, the files it draws, and how.

    ``title`` is a string or a function of the file's content (a result or a trace).
    ``draw(subject[, companion])`` and ``reading(subject[, companion])`` take the result (or
    trace) and, when ``with_first`` is declared, the first such result or None. A
    :class:`~turncheck.models.errors.TurncheckError` from either (a file lacking the columns the
    plot reads) makes the plot *missing* with that reason, not the page fail.
    """

    name: str
    title: str | Callable[[Any], str]
    draw: Callable[..., Figure]
    reading: Callable[..., str]
    draws: tuple[str, ...] = ()
    traces: bool = False
    with_first: tuple[str, ...] = ()
    when: Callable[[Any], bool] | None = None

    def caption(self, subject: Any) -> str:
        return self.title if isinstance(self.title, str) else self.title(subject)


PLOTS: Registry[Plot] = Registry(
    "plot", home=("turncheck.reports.plots", "turncheck.integrations.plots"), key=attrgetter("traces")
)
"""Every plot by name, in the order the gallery draws them: result plots in registration order
(:mod:`turncheck.reports.plots`, then :mod:`turncheck.integrations.plots`), then trace plots."""


def register_plot(plot: Plot) -> Plot:
    """Add ``plot`` to the gallery (public as ``turncheck.register_plot``); a name is taken once."""
    return PLOTS.register(plot.name, plot)
