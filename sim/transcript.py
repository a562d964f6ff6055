"""A counterexample told step by step: one numbered line per step, one lane per actor.

The lanes come in the model's own order (writers, compactor, reader …), so an interleaving reads
at a glance; then the model's columns (seq, ts, live turns …), the window that was sent and the
property that broke — every piece asked of the model through its
:class:`models.protocol.ProtocolModel` hooks (``actor``, ``order_lanes``, ``columns``,
``describe_window``). Pure rendering of a model's own states: saving, loading and replaying a
trace are :mod:`sim.trace`'s, which prints its replays through here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from turncheck.models.protocol import ProtocolModel, as_model

LANE_WIDTH = 36


def strip_actor(text: str, lane: str) -> str:
    """A step's words without its lane's name in front (the lane column already says who)."""
    if text.lower().startswith(lane.lower()) and lane != "step":
        return text[len(lane) :].lstrip(" :")
    return text


def transcript(
    model: ProtocolModel[Any, Any],
    init: Any,
    actions: Sequence[Any],
    violated: str | None = None,
    *,
    title: str = "",
    loop: int | None = None,
) -> str:
    """A numbered transcript of the run ``actions`` from ``init``, one lane per actor.

    The columns between the step number and the lanes are the model's ``columns(state)`` hook
    (or its metrics) after each step; lane texts longer than :data:`LANE_WIDTH` wrap. The last lines
    show the window sent in the final state (``describe_window`` hook) and the property that
    broke, with its description. A lasso (``loop``: the steps after it repeat for ever, see
    :class:`sim.witness.ConcretePath`) gets a line where its loop starts.
    """
    model = as_model(model)
    states = [init]
    for a in actions:
        states.append(model.step(states[-1], a))
    texts = [model.format_action(s, a) for s, a in zip(states, actions, strict=False)]
    lanes_of = [model.actor(s, a) for s, a in zip(states, actions, strict=False)]
    lanes = list(model.order_lanes(lanes_of)) or [""]  # broken in the initial state: no action, one lane
    col_rows = [dict(model.columns(s)) for s in states]
    col_names: list[str] = []
    for row in col_rows:
        for name in row:
            if name not in col_names:
                col_names.append(name)
    cells = [[""] * len(lanes) for _ in actions]
    for i, (lane, text) in enumerate(zip(lanes_of, texts, strict=False)):
        cells[i][lanes.index(lane)] = strip_actor(text, lane)
    # a lane is as wide as its longest text, but no wider than LANE_WIDTH: longer texts wrap
    widths = [
        min(LANE_WIDTH, max([len(lane)] + [len(row[j]) for row in cells])) for j, lane in enumerate(lanes)
    ]
    widths = [max(w, len(lane)) for w, lane in zip(widths, lanes, strict=True)]
    if not actions:  # broken in the initial state: one lane, as wide as the initial row's text
        widths = [len("(initial)")]
    cwidths = [max([len(n)] + [len(str(r.get(n, ""))) for r in col_rows]) for n in col_names]

    def line(step: str, col_cells: Sequence[str], lane_cells: Sequence[str]) -> list[str]:
        wrapped = [textwrap.wrap(c, w) or [""] for c, w in zip(lane_cells, widths, strict=True)]
        out = []
        for k in range(max(len(x) for x in wrapped)):
            parts = [(step if k == 0 else "").rjust(4)]
            parts += [(c if k == 0 else "").rjust(w) for c, w in zip(col_cells, cwidths, strict=True)]
            parts += [(x[k] if k < len(x) else "").ljust(w) for x, w in zip(wrapped, widths, strict=True)]
            out.append("  ".join(parts).rstrip())
        return out

    out = []
    if title:
        out.append(title)
    out += line("step", col_names, lanes)
    for i, lane_cells in enumerate([["(initial)"] + [""] * (len(lanes) - 1), *cells]):
        if loop is not None and i == loop + 1:
            out.append(
                f"  ↻ loop: {repeating(loop, len(actions))} for ever ({loop_closes(model, states, loop)})"
            )
        out += line(str(i), [str(col_rows[i].get(n, "")) for n in col_names], lane_cells)
    if loop is not None and loop == len(actions):
        out.append(f"  ↻ stutters: no action is enabled after step {loop}, so the run stays there for ever")
    window = model.describe_window(states[-1])
    if window:
        out.append(f"window sent: {window}")
    prop = next((p for p in model.properties() if p.name == violated), None)
    if prop is not None and prop.expectation == "eventually":
        doc = f": {prop.doc}" if prop.doc else ""
        where = "on the loop" if loop is not None else f"after step {len(actions)}"
        out.append(f"eventually {violated} never holds {where}{doc}")
    elif violated is not None:
        doc = next((p.doc for p in model.properties() if p.name == violated), "")
        holds = next((p.holds(states[-1]) for p in model.properties() if p.name == violated), None)
        verdict = "broken" if holds is False else "holds here" if holds else "unknown"
        out.append(f"invariant {violated} {verdict} after step {len(actions)}" + (f": {doc}" if doc else ""))
    return "\n".join(out)


def loop_closes(model: ProtocolModel[Any, Any], states: Sequence[Any], loop: int) -> str:
    """How the loop closes: on the state itself, or — over a counting abstraction
    (:meth:`ProtocolModel.saturation`), after passes replayed on the model — on its class."""
    n = len(states) - 1
    if states[-1] == states[loop] or model.saturation() is None:
        return f"step {n} is back in the state after step {loop}"
    return (
        f"step {n} is back in the class of the state after step {loop}, its counts saturated; "
        "the steps before the loop include its earlier passes, replayed on the model's own states"
    )


def repeating(loop: int, steps: int) -> str:
    """A lasso's loop in words: ``steps 4–5 repeat``, or ``step 4 repeats``."""
    return f"step {steps} repeats" if steps == loop + 1 else f"steps {loop + 1}–{steps} repeat"


def params_text(model: ProtocolModel[Any, Any]) -> str:
    """A model's parameters as the command line spells them: ``k=v`` words, lists comma-joined."""
    return " ".join(f"{k}={_plain(v)}" for k, v in model.params.items())


def _plain(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)
