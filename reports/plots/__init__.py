"""Plots of result files and counterexample traces (matplotlib, Agg, PNG and SVG).

Every function takes what was saved — a :class:`~scenarios.base.ScenarioResult` read from a
result file, or a trace — and returns the matplotlib :class:`~matplotlib.figure.Figure`, so
tests can read its lines, bars and labels; :func:`write_figure` writes it as PNG and SVG.
A result of the wrong scenario is refused with :class:`~reports.results_dir.WrongResultKind`.
"""

# The one place the built-in plot modules are imported: each registers its plots as it is
# imported (turncheck.reports.plots.plot), and the gallery draws them in this order.
# isort: off
from turncheck.reports.plots.peaks import plot_peak_ratio_heatmap, plot_peaks_vs_max_turns
from turncheck.reports.plots.cost_trigger import plot_cost_trigger
from turncheck.reports.plots.locking_price import plot_locking_price
from turncheck.reports.plots.real_locking import plot_real_locking
from turncheck.reports.plots.strategies import plot_strategies_vs_budget
from turncheck.reports.plots.timeline import plot_counterexample

# isort: on
from turncheck.reports.plots.canvas import data_uri, write_figure
from turncheck.reports.plots.gallery import Drawn, Missing, gallery

__all__ = [
    "Drawn",
    "Missing",
    "data_uri",
    "gallery",
    "plot_cost_trigger",
    "plot_counterexample",
    "plot_locking_price",
    "plot_peak_ratio_heatmap",
    "plot_peaks_vs_max_turns",
    "plot_real_locking",
    "plot_strategies_vs_budget",
    "write_figure",
]
