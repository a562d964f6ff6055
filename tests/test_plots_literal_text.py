"""Text from data files is drawn literally, never parsed as mathtext (issue 17, class 8).

A session name or label ``$\\frac{$`` once crashed ``report`` and ``plot`` inside matplotlib's
mathtext parser, so no page was written.
"""

from __future__ import annotations

import pytest
from matplotlib.axes import Axes

from turncheck.reports.plots.canvas import figure_bytes, footnote, new_figure, titled

HOSTILE = ["$\\frac{$", "$x^{$", "a $ b $ c", "$\\undefinedcommand$", "$$", "\\$"]


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_data_text_with_dollars_renders_literally_everywhere(fmt: str) -> None:
    fig = new_figure(4, 3)
    titled(fig, HOSTILE[0], " ".join(HOSTILE))
    footnote(fig, HOSTILE[1])
    ax = fig.add_subplot()
    ax.bar(HOSTILE, range(len(HOSTILE)), label=HOSTILE[2])  # categorical ticks from data
    ax.set_xlabel(HOSTILE[3])
    ax.set_ylabel(HOSTILE[4])
    ax.annotate(HOSTILE[5], (0, 0))
    ax.legend()
    data = figure_bytes(fig, fmt)
    assert data
    if fmt == "svg":
        assert b"frac" not in data or b"\\frac" in data  # drawn as paths: no parse error raised above


def test_log_axes_read_as_numbers_not_mathtext_source() -> None:
    """With mathtext off, matplotlib's log ticks would be drawn as the text
    ``$\\mathdefault{10^{3}}$`` (issue 32): the ticks are plain numbers."""
    fig = new_figure(4, 3)
    top, bottom = fig.subplots(2)
    top.plot([1, 10, 1000, 100000], [0.01, 1, 5, 300])
    top.set_xscale("log")
    top.set_yscale("log")
    bottom.plot([0, 1, 100], [0, 10, 1000])
    bottom.set_yscale("symlog", linthresh=1.0)
    svg = figure_bytes(fig, "svg")
    assert b"mathdefault" not in svg and b"10^" not in svg
    fig.canvas.draw()
    labels = [t.get_text() for t in top.get_xticklabels() if t.get_text()]
    assert "1,000" in labels and all("$" not in x for x in labels)


def test_a_log_axis_under_two_decades_labels_its_2s_and_5s() -> None:
    """Peaks of 6 to 90 on a log axis would show one labelled tick (10); the 20 and 50 are
    labelled too. Across three decades only the powers of ten are."""
    fig = new_figure(4, 3)
    narrow, wide = fig.subplots(2)
    narrow.bar([0, 1, 2], [6, 21, 85])
    narrow.set_yscale("log")
    wide.plot([0, 1], [1, 1500])
    wide.set_yscale("log")
    figure_bytes(fig, "png")

    def labels(ax: Axes) -> list[str]:
        ticks = ax.yaxis.get_majorticklabels() + ax.yaxis.get_minorticklabels()
        low, high = ax.get_ylim()
        return [t.get_text() for t in ticks if t.get_text() and low <= t.get_position()[1] <= high]

    assert sorted(labels(narrow), key=float) == ["10", "20", "50"]
    assert labels(wide) == ["1", "10", "100", "1,000"]
