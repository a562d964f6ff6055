"""What the interactive trace viewer shows, computed in Python from a saved trace.

A counterexample is replayed against the current code (as the transcript and the timeline do)
and every step becomes one plain JSON-ready record: the actor's lane and what it did, the whole
state after the step with the fields that changed since the previous step marked, every
property's value, the model's metrics, and — for models that project a window — the window the
reader would send at that moment (its events, their cost, the orphans). The browser only pages
through these records; it computes nothing, so what a test asserts in Python is what the page
shows.

Everything model-specific is asked of the model through its
:class:`models.protocol.ProtocolModel` hooks: how a state's fields read (``state_fields``), what
"the window" is at each step (``window_panels`` — the projected window for the projector and
clock models, one per key for the keys model, the live turns in the store for the trigger), the
marks on a step (``step_marks``) and the lanes' order (``order_lanes``). Only catalog models are
replayed from the trace alone; a trace naming a user's class is replayed only on the model the
caller loaded from its own command line (``turncheck replay --model REF --html``), and otherwise
shown from the run it recorded (or its saved actions), because rendering a file must never
import code a data file names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from turncheck.models.catalog import build_model
from turncheck.models.protocol import (
    FieldValue,
    ProtocolModel,
    WindowItem,
    WindowPanel,
    as_model,
    lane_in_text,
)
from turncheck.sim.trace import Trace, loads_no_code, recording, replay
from turncheck.sim.transcript import loop_closes

Value: TypeAlias = FieldValue  # a field's text, or a list of texts
__all__ = ["Field", "PropertyView", "StepView", "TraceView", "WindowItem", "WindowPanel", "diff_fields",
           "trace_view"]  # fmt: skip


@dataclass(frozen=True)
class Field:
    """One field of a state: its value as text (or a list of texts), and what changed.

    ``changed`` is True when the value differs from the previous step's; for list values,
    ``new`` holds the positions of the items that were not there, equal, at the previous step.
    """

    name: str
    value: Value
    changed: bool = False
    new: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "value": self.value}
        if self.changed:
            out["changed"] = True
        if self.new:
            out["new"] = list(self.new)
        return out


@dataclass(frozen=True)
class StepView:
    """Step ``index`` (0 = the initial state): who acted, what it did, and the state after."""

    index: int
    lane: str | None
    text: str
    fields: tuple[Field, ...]
    holds: Mapping[str, bool]
    metrics: Mapping[str, int]
    window: WindowPanel | None = None
    marks: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "lane": self.lane,
            "text": self.text,
            "fields": [f.to_json() for f in self.fields],
            "holds": dict(self.holds),
            "metrics": dict(self.metrics),
        }
        if self.window is not None:
            out["window"] = self.window.to_json()
        if self.marks:
            out["marks"] = list(self.marks)
        return out


@dataclass(frozen=True)
class PropertyView:
    name: str
    expectation: str
    doc: str


@dataclass(frozen=True)
class TraceView:
    """The whole counterexample as the viewer pages through it.

    Invariant: ``steps[0]`` is the initial state and ``steps[k]`` the state after action ``k``;
    ``broken_at`` is the first step whose state breaks ``violated`` (None when it no longer does).
    A lasso has ``loop``: the steps after it repeat for ever (the last step is back in the state
    after step ``loop``; with ``loop`` the last step, the run stutters there).
    """

    model: str
    params: Mapping[str, Any]
    violated: str
    engine: str
    verdict: str
    message: str
    lanes: tuple[str, ...]
    properties: tuple[PropertyView, ...]
    steps: tuple[StepView, ...]
    broken_at: int | None
    replayed: bool = True
    loop: int | None = None
    back: str = ""  # how the loop closes, in words (sim.transcript.loop_closes), when it was replayed

    def to_json(self) -> dict[str, Any]:
        return {
            "loop": self.loop,
            "model": self.model,
            "params": dict(self.params),
            "violated": self.violated,
            "engine": self.engine,
            "verdict": self.verdict,
            "message": self.message,
            "lanes": list(self.lanes),
            "properties": [dataclasses.asdict(p) for p in self.properties],
            "steps": self._steps_json(),
            "broken_at": self.broken_at,
            "replayed": self.replayed,
            **({"back": self.back} if self.back else {}),
        }

    def _steps_json(self) -> list[dict[str, Any]]:
        """Steps as deltas, to keep long runs small: after step 0 only the fields that changed,
        and no window when it equals the previous step's (the page carries both forward)."""
        out = []
        prev: StepView | None = None
        for s in self.steps:
            j = s.to_json()
            if prev is not None:
                j["fields"] = [f.to_json() for f in s.fields if f.changed]
                if s.window is not None and s.window == prev.window:
                    del j["window"]
                    j["same_window"] = True
            out.append(j)
            prev = s
        return out


# -- states as fields -----------------------------------------------------------------------------


def diff_fields(
    before: Sequence[tuple[str, Value]] | None, after: Sequence[tuple[str, Value]]
) -> tuple[Field, ...]:
    """Mark what changed between two steps (nothing is marked at the initial state)."""
    prev = dict(before) if before is not None else None
    out = []
    for name, value in after:
        if prev is None:
            out.append(Field(name, value))
            continue
        old = prev.get(name)
        if isinstance(value, list):
            olds = old if isinstance(old, list) else []
            new = tuple(i for i, item in enumerate(value) if i >= len(olds) or olds[i] != item)
            out.append(Field(name, value, old != value, new))
        else:
            out.append(Field(name, value, old != value))
    return tuple(out)


# -- the whole trace ------------------------------------------------------------------------------


def _opaque_view(trace: Trace) -> TraceView:
    """A trace whose model is not replayed: the run it recorded (its words, lanes and metrics,
    as the model told them when the trace was saved), else its saved actions alone."""
    rec = recording(trace)
    steps = [
        StepView(0, None, "(initial state)", (), {}, dict(rec.metrics[0]) if rec and rec.metrics else {})
    ]
    lanes: list[str] = []
    for k, action in enumerate(trace.actions, start=1):
        text = rec.words[k - 1] if rec else " ".join(str(x) for x in action)
        lane = rec.actors[k - 1] if rec else lane_in_text(text)
        if lane not in lanes:
            lanes.append(lane)
        metrics = dict(rec.metrics[k]) if rec and rec.metrics else {}
        steps.append(StepView(k, lane, text, (), {}, metrics))
    if rec is not None:
        how = "shown from the run it recorded when it was checked, not replayed"
        return TraceView(trace.model, dict(trace.params), trace.violated, trace.engine, "recorded",
                         f"model {trace.model} is not in the catalog: {how}", rec.lanes, (), tuple(steps),
                         rec.broken_at, replayed=False, loop=trace.loop)  # fmt: skip
    message = f"model {trace.model} is not in the catalog: shown from the saved actions, not replayed"
    return TraceView(trace.model, dict(trace.params), trace.violated, trace.engine, "recorded", message,
                     tuple(lanes), (), tuple(steps), None, replayed=False, loop=trace.loop)  # fmt: skip


def _run_past_break(
    model: ProtocolModel[Any, Any],
    states: Sequence[Any],
    done: Sequence[Any],
    saved: Sequence[tuple[Any, ...]],
) -> tuple[list[Any], list[Any]]:
    """The replay stops at the first broken state; the viewer shows the rest of a saved run too
    (a worst-case witness goes on after the invariant breaks), as long as each action is enabled."""
    states, done = list(states), list(done)
    for action in saved[len(done) :]:
        enabled = {(tuple(e) if isinstance(e, (list, tuple)) else (e,)): e for e in model.actions(states[-1])}
        if tuple(action) not in enabled:
            break
        chosen = enabled[tuple(action)]
        states.append(model.step(states[-1], chosen))
        done.append(chosen)
    return states, done


def trace_view(trace: Trace, model: ProtocolModel[Any, Any] | None = None) -> TraceView:
    """Replay ``trace`` and record every step as the viewer shows it.

    The model replayed is ``model`` when the caller loaded one (the user's class named on its
    command line), else the catalog model the trace names; a trace naming code nobody loaded is
    shown from what it recorded.

    Raises
    ------
    TraceFormatError, UnknownName, BadParameter
        The trace does not fit its model.
    """
    if model is None:
        if not loads_no_code(trace):
            return _opaque_view(trace)
        model = build_model(trace.model, trace.params)
    model = as_model(model)
    result = replay(model, trace)
    states, actions = list(result.states), list(result.actions)
    if result.loop is None:
        states, actions = _run_past_break(model, result.states, result.actions, trace.actions)
    props = tuple(model.properties())
    panels = model.window_panels(states, actions)

    def holds(state: Any) -> dict[str, bool]:
        return {p.name: bool(p.holds(state)) for p in props}

    prev_fields = model.state_fields(states[0])
    steps = [StepView(0, None, "(initial state)", diff_fields(None, prev_fields), holds(states[0]),
                      dict(model.metrics(states[0])), panels[0])]  # fmt: skip
    lanes: list[str] = []
    for k, action in enumerate(actions, start=1):
        before, after = states[k - 1], states[k]
        text = model.format_action(before, action)
        lane = model.actor(before, action)
        if lane not in lanes:
            lanes.append(lane)
        fields = model.state_fields(after)
        steps.append(StepView(k, lane, text, diff_fields(prev_fields, fields), holds(after),
                              dict(model.metrics(after)), panels[k], model.step_marks(before, action)))  # fmt: skip
        prev_fields = fields
    return TraceView(
        trace.model, dict(model.params), trace.violated, trace.engine, result.verdict, result.message,
        model.order_lanes(lanes),
        tuple(PropertyView(p.name, p.expectation, p.doc) for p in props), tuple(steps),
        result.step if result.still_fails else None, loop=result.loop,
        back=loop_closes(model, states, result.loop) if result.loop is not None and result.loop < len(actions) else "",
    )  # fmt: skip
