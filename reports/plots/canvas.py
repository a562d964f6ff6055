"""Figures drawn off-screen with Agg, and written as PNG and SVG that are the same every time.

Plots never touch ``pyplot``: a :class:`~matplotlib.figure.Figure` is built directly and given an
Agg canvas, so drawing needs no display, leaves no global figure registry behind and is safe in
worker processes and tests. Files are byte-stable for the same input: SVG ids are salted with a
constant and neither format records a date or the software version.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, NullFormatter

from turncheck.models.locking import LOCKINGS, by_strength
from turncheck.models.output_files import write_outputs

if TYPE_CHECKING:  # matplotlib.typing's key alias is newer than our matplotlib>=3.8 floor
    from matplotlib.typing import RcKeyType

FORMATS: tuple[str, ...] = ("png", "svg")
DPI = 110


# One colour AND one marker/line style per named series — projector strategies, peer libraries and
# locking strategies — the same in every plot, and no two names sharing a colour (a test checks
# both). Markers and dashes tell apart lines that coincide (M1 and M2 overrun alike; M0 and M5
# nearly), so no series can hide another.
@dataclass(frozen=True)
class SeriesStyle:
    """How one named series is drawn wherever it appears."""

    colour: str
    marker: str
    linestyle: str = "-"
    hollow: bool = False  # open markers: a line drawn under it stays visible through them

    def line_kwargs(self, ms: float = 5.0, lw: float = 1.6) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "color": self.colour,
            "marker": self.marker,
            "ls": self.linestyle,
            "ms": ms,
            "lw": lw,
        }
        if self.hollow:
            kw.update(markerfacecolor="white", markeredgewidth=1.4)
        return kw


# colours no named series uses: for a strategy registered without a colour, a user's own
# projector or an unknown name — the one palette such series draw from
UNNAMED_COLOURS: tuple[str, ...] = (
    "#000000",
    "#a55194",
    "#5254a3",
    "#ad494a",
    "#9c9ede",
    "#e7cb94",
    "#31a354",
)
UNNAMED_MARKERS = "d*ph"


def unnamed_style(k: int) -> SeriesStyle:
    """The ``k``-th style for a series without a colour of its own (palette order)."""
    return SeriesStyle(
        UNNAMED_COLOURS[k % len(UNNAMED_COLOURS)],
        UNNAMED_MARKERS[k % len(UNNAMED_MARKERS)],
        "-." if k % 2 else "--",
    )


class SeriesStyles(Mapping[str, SeriesStyle]):
    """Every named series' style, read when asked from the registries: each registered
    strategy's declared look (one that declares no colour takes the next :func:`unnamed_style`,
    in registration order), then each peer that declares a colour, then the locking strategies
    (weakest first), so a new one needs no line here."""

    def _table(self) -> dict[str, SeriesStyle]:
        from turncheck.models.peer import PEERS
        from turncheck.models.projector import STRATEGIES

        out: dict[str, SeriesStyle] = {}
        k = 0
        for name, s in STRATEGIES.items():
            if s.colour is None:
                style = unnamed_style(k)
                k += 1
                out[name] = SeriesStyle(style.colour, s.marker or style.marker, s.linestyle, s.hollow)
            else:
                out[name] = SeriesStyle(s.colour, s.marker or "o", s.linestyle, s.hollow)
        for name, p in PEERS.items():
            if p.colour is not None:
                out[name] = SeriesStyle(p.colour, p.marker or "o", p.linestyle, p.hollow)
        for name in by_strength(LOCKINGS.names()):
            out[name] = SeriesStyle(LOCKINGS[name].colour, LOCKINGS[name].marker)
        return out

    def __getitem__(self, name: str) -> SeriesStyle:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


SERIES_STYLES = SeriesStyles()
LOCKING_COLOURS: dict[str, str] = {name: LOCKINGS[name].colour for name in by_strength()}
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
)  # fmt: skip

_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "turncheck", "svg.fonttype": "path", "font.size": 9.0, "text.parse_math": False,
}  # fmt: skip
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}


def new_figure(width: float, height: float) -> Figure:
    """An empty figure with an Agg canvas attached (no pyplot, no display)."""
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def titled(fig: Figure, title: str, subtitle: str = "", width: int | None = None) -> None:
    """The figure's title (what it shows, in words) and a smaller line of parameters and seed,
    both wrapped to the figure's width: a one-panel figure is narrower than its title."""
    width = width if width is not None else int(fig.get_figwidth() * 12.5)
    text = "\n".join(textwrap.wrap(title, width) + textwrap.wrap(subtitle, width))
    fig.suptitle(text, fontsize=10.5, x=0.01, ha="left")


def footnote(fig: Figure, text: str, width: int | None = None) -> None:
    """A small note under the axes (definitions a reader needs, wrapped); the layout keeps room
    for it so it never overlaps an axis label."""
    lines = textwrap.wrap(text, width if width is not None else int(fig.get_figwidth() * 16))
    height_in = fig.get_figheight()
    room = min(0.4, (0.16 * len(lines) + 0.08) / height_in)
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):
        engine.set(rect=(0.0, room, 1.0, 1.0 - room))
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=7.5, color="#444444", va="bottom")


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """The figure rendered as ``png`` or ``svg`` bytes; the first render fixes its layout."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown image format {fmt!r}")
    buf = io.BytesIO()
    for ax in fig.axes:  # with math off, matplotlib's log ticks would read "$\mathdefault{10^{3}}$"
        for axis in (ax.xaxis, ax.yaxis):
            if (scale := axis.get_scale()) in ("log", "symlog"):
                axis.set_major_formatter(FuncFormatter(_plain_tick))
                axis.set_minor_formatter(_minor_ticks(axis) if scale == "log" else NullFormatter())
    for text in fig.findobj(Text):  # data text (session names, labels from files) is literal:
        text.set_parse_math(False)  # a "$\\frac{$" must not reach mathtext
    with matplotlib.rc_context(_RC):  # text created while drawing (ticks) reads the rc: no math
        fig.savefig(buf, format=fmt, metadata=_METADATA[fmt])
    # The constrained layout, a third of a render, was solved by this draw: a later format (the
    # SVG after the PNG) places the axes where it put them rather than solving it again.
    fig.set_layout_engine("none")
    return buf.getvalue()


def _plain_tick(value: float, _position: object) -> str:
    """A log axis's tick as a reader writes it: 1, 10, 1,000, 0.01 (never mathtext)."""
    return f"{value:,.0f}" if abs(value) >= 1 else f"{value:g}"


def _minor_ticks(axis: Axis) -> FuncFormatter:
    """Labels for a log axis's 2s and 5s while it spans under two decades: with a single power
    of ten in view (peaks of 6 to 90), the reader would otherwise have one labelled tick."""

    def label(value: float, position: object) -> str:
        low, high = sorted(axis.get_view_interval())
        if value <= 0 or low <= 0 or high / low >= 100:
            return ""
        mantissa = round(value / 10 ** math.floor(math.log10(value)), 6)
        return _plain_tick(value, position) if mantissa in (2.0, 5.0) else ""

    return FuncFormatter(label)


def data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:`` URI, for a page that must not load anything from outside."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def write_figure(
    fig: Figure,
    out_dir: str | Path,
    stem: str,
    rendered: Mapping[str, bytes] | None = None,
) -> list[Path]:
    """Write ``STEM.png`` and ``STEM.svg`` under ``out_dir``; returns the paths.

    ``rendered`` holds formats already rendered (a page's PNG), so they are not drawn twice.
    Every format is rendered before the first file is written, so a rendering error leaves
    nothing half-written.
    """
    done = dict(rendered or {})
    rendered = {fmt: done[fmt] if fmt in done else figure_bytes(fig, fmt) for fmt in FORMATS}
    out = Path(out_dir)
    return write_outputs({out / f"{stem}.{fmt}": data for fmt, data in rendered.items()}, folder=out)
