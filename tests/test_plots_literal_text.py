"""Text from data files is drawn literally, never parsed as mathtext (issue 17, class 8).

A session name or label ``$\\frac{$`` once crashed ``report`` and ``plot`` inside matplotlib's
mathtext parser, so no page was written.
"""

from __future__ import annotations

import pytest

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
