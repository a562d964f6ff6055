"""The plots of the integrations' scenarios, a home of the plot registry
(:data:`turncheck.reports.plots.plot.PLOTS`, imported by name after :mod:`turncheck.reports.plots`)."""

from turncheck.integrations.plots.peers import plot_peers

__all__ = ["plot_peers"]
