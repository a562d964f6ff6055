"""A counterexample as a swim-lane timeline, drawn from a saved trace (``turncheck-trace/1``).

One lane per actor (writers, compactor, clock, reader …, the model's ``actor`` hook, in the
model's own lane order), the run's steps along x in the order they happened — each append takes
the next seq — the window that was sent shaded, and the step where the invariant broke marked in
red. Under the lanes, the model's metrics after every step (live turns, kept cost …) with the
limit the model promises.

A catalog model's trace is replayed against the current code to recover the states between its
actions (a replay, not a new run: the actions are the trace's own). A trace naming a user's class
(``package.module:Class``) is drawn from the run it recorded when ``turncheck check`` saved it —
its lanes, words, metrics, shaded window and limit, as the model told them — because rendering a
results directory must never import code a data file names; an older trace without that record
is drawn from its saved actions alone.

What the shading covers, the window's text and the limit are the model's hooks
(``window_steps``, ``describe_window``, ``limit``): no model is known here by name.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from turncheck.models.catalog import build_model
from turncheck.models.protocol import ProtocolModel, lane_in_text, order_lanes
from turncheck.reports.plots.canvas import PALETTE, footnote, new_figure, titled
from turncheck.reports.plots.plot import Plot, register_plot
from turncheck.sim.trace import Recording, Trace, load_trace, loads_no_code, recording, replay
from turncheck.sim.transcript import strip_actor

WINDOW_COLOUR = "#2ca02c"
BREAK_COLOUR = "#d62728"


@dataclass(frozen=True)
class Step:
    """Step ``index`` (1-based) of the run: the actor's lane and what it did, in domain words."""

    index: int
    lane: str
    text: str


@dataclass(frozen=True)
class Timeline:
    """Everything the picture shows, computed from the trace (tests read this, the plot draws it)."""

    model: str
    params: Mapping[str, Any]
    violated: str
    engine: str
    steps: tuple[Step, ...]
    lanes: tuple[str, ...]
    broken_at: int | None
    verdict: str
    window: frozenset[int] = frozenset()
    window_label: str = ""
    window_text: str = ""
    doc: str = ""
    metrics: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    limit: tuple[str, str, float] | None = None
    replayed: bool = True


def _recorded_timeline(trace: Trace, rec: Recording) -> Timeline:
    """The run as its model told it when the trace was saved (a user's class is never imported)."""
    steps = tuple(Step(k, lane, strip_actor(text, lane))
                  for k, (lane, text) in enumerate(zip(rec.actors, rec.words, strict=True), start=1))  # fmt: skip
    series: dict[str, list[float]] = {}
    for values in rec.metrics:
        for name, value in values.items():
            series.setdefault(name, []).append(float(value))
    limit = rec.limit if rec.limit is not None and rec.limit[0] in series else None
    return Timeline(
        trace.model, dict(trace.params), trace.violated, trace.engine, steps, rec.lanes, rec.broken_at,
        "as-checked", frozenset(rec.window), rec.window_label, rec.window_text, rec.doc,
        {k: tuple(v) for k, v in series.items()}, limit, replayed=False,
    )  # fmt: skip


def _opaque_timeline(trace: Trace) -> Timeline:
    rec = recording(trace)
    if rec is not None:
        return _recorded_timeline(trace, rec)
    steps = []
    for k, action in enumerate(trace.actions, start=1):
        text = " ".join(str(x) for x in action)
        lane = lane_in_text(text)
        steps.append(Step(k, lane, strip_actor(text, lane)))
    lanes = order_lanes(s.lane for s in steps)
    return Timeline(
        trace.model, dict(trace.params), trace.violated, trace.engine, tuple(steps), lanes,
        len(trace.actions), "recorded", replayed=False,
    )  # fmt: skip


def timeline_of(trace: Trace) -> Timeline:
    """Replay ``trace`` (catalog models; others are drawn from what they recorded) and collect
    lanes, window, break and metrics.

    Raises
    ------
    TraceFormatError, UnknownName, BadParameter
        The trace does not fit its model (unknown property, parameters, first action).
    """
    if not loads_no_code(trace):
        return _opaque_timeline(trace)
    model: ProtocolModel[Any, Any] = build_model(trace.model, trace.params)
    result = replay(model, trace)
    states, actions = result.states, result.actions
    steps = []
    for k, (state, action) in enumerate(zip(states, actions, strict=False), start=1):
        text = model.format_action(state, action)
        lane = model.actor(state, action)
        steps.append(Step(k, lane, strip_actor(text, lane)))
    lanes = model.order_lanes(s.lane for s in steps)
    window, label = model.window_steps(states, actions) if actions else (set(), "")
    window_text = model.describe_window(states[-1])
    doc = next((p.doc for p in model.properties() if p.name == trace.violated), "")
    series: dict[str, list[float]] = {}
    for state in states:
        for name, value in model.metrics(state).items():
            series.setdefault(name, []).append(float(value))
    promised = model.limit()
    limit = None
    if promised is not None and promised.metric in series:
        limit = (promised.metric, promised.name, promised.value)
    broken = result.step if result.still_fails else None
    return Timeline(
        trace.model, dict(trace.params), trace.violated, trace.engine, tuple(steps), lanes, broken,
        result.verdict, frozenset(window), label, window_text, doc,
        {k: tuple(v) for k, v in series.items()}, limit,
    )  # fmt: skip


def _runs(steps: set[int] | frozenset[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for k in sorted(steps):
        if out and out[-1][1] == k - 1:
            out[-1] = (out[-1][0], k)
        else:
            out.append((k, k))
    return out


def _as_trace(source: Trace | str | Path) -> Trace:
    return source if isinstance(source, Trace) else load_trace(source)


def plot_counterexample(source: Trace | str | Path) -> Figure:
    """The swim-lane timeline of a trace (a :class:`Trace` or the path of a trace JSON file).

    The lanes axis (first axis) holds one marker line per lane, labelled with the lane, whose x
    data are that lane's steps; the break is a line labelled ``"broken: <property>"``. The second
    axis, when the model has metrics, holds one line per metric over states 0..n (label = metric)
    and the promised limit as a dashed line labelled with the limit's name.
    """
    trace = _as_trace(source)
    tl = timeline_of(trace)
    n = len(tl.steps)
    has_metrics = bool(tl.metrics)
    fig = new_figure(
        max(9.0, min(16.0, 4.0 + 1.25 * n)), 2.6 + 0.62 * len(tl.lanes) + (2.6 if has_metrics else 0)
    )
    if has_metrics:
        lanes_ax, metric_ax = fig.subplots(
            2, 1, sharex=True, height_ratios=[max(1.4, 0.62 * len(tl.lanes)), 2.4]
        )
    else:
        lanes_ax, metric_ax = fig.subplots(1, 1), None
    ypos = {lane: len(tl.lanes) - 1 - i for i, lane in enumerate(tl.lanes)}
    for lo, hi in _runs(tl.window):
        for ax in (lanes_ax, metric_ax):
            if ax is not None:
                ax.axvspan(lo - 0.42, hi + 0.42, color=WINDOW_COLOUR, alpha=0.16, lw=0)
    for i, lane in enumerate(tl.lanes):
        xs = [s.index for s in tl.steps if s.lane == lane]
        lanes_ax.axhline(ypos[lane], color="#dddddd", lw=0.8, zorder=0)
        lanes_ax.plot(
            xs, [ypos[lane]] * len(xs), "o", ms=8, color=PALETTE[i % len(PALETTE)], label=lane, zorder=3
        )
    wrap = 20 if n > 8 else 30 if n <= 6 else 26
    for s in tl.steps:
        if n <= 30 or s.index == tl.broken_at:
            lanes_ax.annotate("\n".join(textwrap.wrap(s.text, wrap)), (s.index, ypos[s.lane]), xytext=(0, 7),
                              textcoords="offset points", ha="center", va="bottom", fontsize=7)  # fmt: skip
    if tl.broken_at is not None:
        b = tl.broken_at
        broken_lane = next((s.lane for s in tl.steps if s.index == b), None)
        y = ypos[broken_lane] if broken_lane is not None else len(tl.lanes) - 1
        lanes_ax.plot([b], [y], "X", ms=15, color=BREAK_COLOUR, zorder=4, label=f"broken: {tl.violated}")
        for ax in (lanes_ax, metric_ax):
            if ax is not None:
                ax.axvline(b, color=BREAK_COLOUR, ls="--", lw=1.1, zorder=1)
    lanes_ax.set_yticks([ypos[lane] for lane in tl.lanes], list(tl.lanes))
    lanes_ax.set_ylim(
        -0.6, len(tl.lanes) - 0.1 + 0.45 * min(4, 1 + max((len(s.text) // wrap for s in tl.steps), default=0))
    )
    lanes_ax.set_xlim(-0.6, n + 0.6)
    lanes_ax.set_ylabel("actor")
    lanes_ax.tick_params(axis="x", labelbottom=not has_metrics)
    handles: list[Artist] = []
    if tl.window:
        handles.append(Patch(color=WINDOW_COLOUR, alpha=0.3, label=tl.window_label))
    if tl.broken_at is not None:
        handles.append(Line2D([], [], ls="--", marker="X", ms=9, color=BREAK_COLOUR,
                              label=f"{tl.violated} broken at step {tl.broken_at}"))  # fmt: skip
    if handles:
        lanes_ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=8, ncol=2,
                        frameon=False)  # fmt: skip
    bottom = metric_ax if metric_ax is not None else lanes_ax
    if metric_ax is not None:
        _draw_metrics(metric_ax, tl)
    bottom.set_xticks(range(0, n + 1))
    bottom.set_xlabel(
        "step of the run in the order it happened (0 = initial state; each append takes the next seq)"
    )
    _caption(fig, tl, n)
    return fig


def _draw_metrics(metric_ax: Axes, tl: Timeline) -> None:
    """The model's metrics over the run, the first drawn thickest, with the promised limit dashed."""
    xs = list(range(len(next(iter(tl.metrics.values())))))
    for j, (name, values) in enumerate(tl.metrics.items()):
        metric_ax.plot(xs, values, drawstyle="steps-post", marker=".", lw=2.4 if j == 0 else 1.4,
                       ls="-" if j == 0 else (0, (4, 2 + j)), label=f"{name.replace('_', ' ')} (ends at {values[-1]:g})",
                       color=PALETTE[(j + 3) % len(PALETTE)])  # fmt: skip
    if tl.limit is not None:
        metric, attr, value = tl.limit
        metric_ax.axhline(value, ls="--", color="black", lw=1.1,
                          label=f"{attr} = {value:g} (limit on {metric.replace('_', ' ')})")  # fmt: skip
    metric_ax.set_ylabel("value after the step")
    metric_ax.grid(True, alpha=0.3)
    metric_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    metric_ax.legend(loc="upper left", fontsize=8, title="model metrics", title_fontsize=8)


def _caption(fig: Figure, tl: Timeline, n: int) -> None:
    """Title, subtitle and footnote: what broke, after how many steps, and whether it still replays."""
    params = " ".join(f"{k}={v}" for k, v in tl.params.items())
    how = {"explore": "shortest, found by exhaustive search", "hypothesis": "shrunk by Hypothesis"}.get(
        tl.engine, ""
    )
    state = {
        "same": "", "different": " — now breaks another property first",
        "passes": " — NO LONGER FAILS with the current code", "diverged": " — no longer replays (an action is disabled)",
        "recorded": " — drawn from the saved actions (model not replayed)",
        "as-checked": " — drawn from the run recorded when it was checked (model not replayed)",
    }.get(tl.verdict, "")  # fmt: skip
    titled(
        fig,
        f"Counterexample: {tl.violated} breaks after {tl.broken_at if tl.broken_at is not None else n} steps{state}",
        f"model {tl.model} ({params})" + (f"; {how}" if how else ""),
    )
    notes = [tl.doc and f"{tl.violated}: {tl.doc}.", tl.window_text and f"Window: {tl.window_text}."]
    if not tl.replayed:
        notes.append(f"Model {tl.model} is not in the catalog; a report never imports a trace's model code.")
    text = " ".join(x for x in notes if x)
    if text:
        footnote(fig, text)


def counterexample_reading(source: Trace | str | Path) -> str:
    """One line: what broke, when, by whose step, and what the shaded window holds."""
    tl = timeline_of(_as_trace(source))
    if tl.broken_at is None:
        return f"the saved run of {len(tl.steps)} steps no longer breaks {tl.violated} ({tl.verdict})."
    step = next((s for s in tl.steps if s.index == tl.broken_at), None)
    who = f" when {step.lane} {step.text}" if step is not None else " in the initial state"
    line = f"{tl.violated} breaks at step {tl.broken_at} of {len(tl.steps)}{who}"
    if tl.window_label:
        line += f"; shaded: {tl.window_label}"
    return line + "."


def counterexample_title(trace: Trace) -> str:
    return f"Counterexample: {trace.violated} ({trace.model})"


register_plot(
    Plot("counterexample", counterexample_title, plot_counterexample, counterexample_reading, traces=True)
)
