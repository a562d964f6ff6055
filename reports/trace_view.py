"""What the interactive trace viewer shows, computed in Python from a saved trace.

A counterexample is replayed against the current code (as the transcript and the timeline do)
and every step becomes one plain JSON-ready record: the actor's lane and what it did, the whole
state after the step with the fields that changed since the previous step marked, every
property's value, the model's metrics, and — for models that project a window — the window the
reader would send at that moment (its events, their cost, the orphans). The browser only pages
through these records; it computes nothing, so what a test asserts in Python is what the page
shows.

Model knowledge is kept in two small tables, as :mod:`reports.plots.timeline` does: how a
state's fields read (:data:`STATE_FIELDS`; the default reads a named tuple's or dataclass's
fields) and what "the window" is (:func:`window_panel`: any model with a ``window(state)``
method returning a :class:`models.projector.Window` or ``windows(state)`` returning one per
key, and for ``trigger`` the live turns in the
store, each marked *uncounted* when it arrived inside the check-then-act gap). Only catalog models
are replayed: a trace naming a user's class is shown from its saved actions alone, because
rendering a file must never import code a data file names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.catalog import build_model
from turncheck.models.cost import EstimateCost
from turncheck.models.events import Kind
from turncheck.models.protocol import ProtocolModel
from turncheck.sim.trace import Trace, actor_of, loads_no_code, replay

Value = str | list[str]


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
class WindowItem:
    """One entry of the window panel: an event sent, or a turn in the store."""

    label: str
    marks: tuple[str, ...] = ()
    cost: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label}
        if self.marks:
            out["marks"] = list(self.marks)
        if self.cost is not None:
            out["cost"] = self.cost
        return out


@dataclass(frozen=True)
class WindowPanel:
    """What the reader would send at one step: a title, the items in order, a summary line."""

    title: str
    items: tuple[WindowItem, ...]
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "items": [i.to_json() for i in self.items], "summary": self.summary}


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

    def to_json(self) -> dict[str, Any]:
        return {
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


def _text(value: Any) -> Value:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [str(_text(v)) if not isinstance(v, (list, tuple)) else _inline(v) for v in value]
    return str(value)


def _inline(value: Sequence[Any]) -> str:
    return "(" + ", ".join(str(_text(v)) for v in value) + ")"


def _default_fields(model: Any, state: Any) -> list[tuple[str, Value]]:
    if hasattr(state, "_asdict"):
        return [(k, _text(v)) for k, v in state._asdict().items()]
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return [(f.name, _text(getattr(state, f.name))) for f in dataclasses.fields(state)]
    if isinstance(state, tuple):
        return [(f"field {i}", _text(v)) for i, v in enumerate(state)]
    return [("state", repr(state))]


def _trigger_fields(model: Any, state: Any) -> list[tuple[str, Value]]:
    writers = [
        f"writer {w}: {'appended this slot' if used else 'idle this slot'}, "
        + ("unbounded" if left < 0 else f"{left} turn(s) left")
        for w, (used, left) in enumerate(state.writers)
    ]
    pending = (
        "idle"
        if state.pending < 0
        else "due now"
        if state.pending == 0
        else f"acts in {state.pending} slot(s)"
    )
    return [
        ("live turns", str(state.live)),
        ("peak", str(state.peak)),
        ("compactor", pending),
        ("count read", str(state.count_read) if state.pending >= 0 else "-"),
        ("appended since the read", _text(state.dirty)),
        ("store locked (slots)", str(state.busy)),
        ("trigger has fired", _text(state.fired)),
        ("writers", writers),
    ]


def _event_label(kind: int, cid: int, size: int, turn: int) -> str:
    call = f" c{cid}" if cid >= 0 else ""
    return f"{Kind(kind).name}{call} [{size} tok] turn {turn}"


def _projector_fields(model: Any, state: Any) -> list[tuple[str, Value]]:
    events, open_ids, in_turn = state
    return [
        ("history", [f"seq {i}: {_event_label(*e)}" for i, e in enumerate(events)]),
        ("open calls", [f"c{c}" for c in open_ids]),
        ("turn open", _text(in_turn)),
    ]


StateFields = Callable[[Any, Any], list[tuple[str, Value]]]
STATE_FIELDS: dict[str, StateFields] = {"trigger": _trigger_fields, "projector": _projector_fields}


def state_fields(model: Any, state: Any) -> list[tuple[str, Value]]:
    """The state as (name, text) pairs: the model's entry in :data:`STATE_FIELDS`, else its fields."""
    how = STATE_FIELDS.get(getattr(model, "name", ""), _default_fields)
    return how(model, state)


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


# -- the window the reader would send -------------------------------------------------------------


def _window_items(model: Any, w: Any) -> tuple[list[WindowItem], list[str]]:
    """One window's events (cost each, orphan RESULTs marked) and its summary notes."""
    cost_model = getattr(model, "cost", None) or EstimateCost()
    items: list[WindowItem] = []
    calls: set[str] = set()
    marks = set(w.placeholders)
    for pos in range(w.start, w.end):
        e = w.history.events[pos]
        tags: list[str] = []
        if e.kind == Kind.CALL and e.call_id is not None:
            calls.add(e.call_id)
        if e.kind == Kind.RESULT and e.call_id not in calls:
            tags.append("orphan")
        call = f" {e.call_id}" if e.call_id else ""
        source = f", from {e.source}" if e.source is not None and e.source != e.session else ""
        label = f"seq {e.seq}: {e.kind.name}{call} (turn {e.turn}{source})"
        items.append(WindowItem(label, tuple(tags), int(cost_model.event_cost(e))))
        if pos in marks:
            items.append(WindowItem(f"placeholder RESULT{call}", ("placeholder",)))
    r = w.report
    budget = getattr(w, "budget", None)
    notes = [f"cost {w.cost}" + (f" of budget {budget}" if budget is not None else "")]
    notes.append(f"{r.orphanRes} orphan RESULT(s)")
    for flag, words in (
        ("overBudget", "over budget"),
        ("fallback", "fell back to M0"),
        ("empty", "empty window"),
        ("mixedSources", "events of more than one session"),
    ):
        if getattr(r, flag, 0):
            notes.append(words)
    return items, notes


def _projected_window(model: Any, state: Any) -> WindowPanel | None:
    """A model's ``window(state)``: the events sent, their cost, the RESULTs whose CALL is missing."""
    w = model.window(state)
    items, notes = _window_items(model, w)
    title = f"window {getattr(w, 'strategy', '')} would send".replace("  ", " ")
    if not items:
        return WindowPanel(title, (), "nothing is sent: " + ", ".join(notes))
    return WindowPanel(title, tuple(items), ", ".join(notes))


def _projected_windows(model: Any, state: Any) -> WindowPanel | None:
    """A model's ``windows(state)`` (one per stored key): each window's events, under its key."""
    items: list[WindowItem] = []
    summaries: list[str] = []
    for w in model.windows(state):
        key = w.history.events[0].session if len(w.history) else "?"
        its, notes = _window_items(model, w)
        items += [WindowItem(f"{key} · {i.label}", i.marks, i.cost) for i in its]
        summaries.append(f"{key}: " + ", ".join(notes))
    return WindowPanel(
        "windows the reader would send, one per key",
        tuple(items),
        "; ".join(summaries) or "nothing stored yet",
    )


class _TriggerStore:
    """The live turns in the store, step by step (the trigger model keeps only their count).

    Each append adds a turn named by the step that wrote it; whatever lowers ``live`` deletes the
    oldest (compaction and synchronous trims both delete from the front). A turn is *uncounted*
    when it arrived while a compaction was in flight: the count the trigger read does not
    include it, which is how the peak overshoots ``maxTurns``.
    """

    def __init__(self) -> None:
        self.turns: list[tuple[int, str, bool]] = []

    def step(self, index: int, before: Any, action: Any, after: Any) -> None:
        if action[0] == "append":
            self.turns.append((index, f"writer {action[1]}", before.pending > 0))
        drop = len(self.turns) - after.live
        if drop > 0:
            del self.turns[:drop]

    def panel(self, model: Any, index: int, state: Any) -> WindowPanel:
        items = []
        for k, who, uncounted in self.turns:
            marks = ["uncounted"] if uncounted else []
            if k == index:
                marks.append("new")
            items.append(WindowItem(f"step {k}: {who}", tuple(marks)))
        n_unc = sum(1 for *_x, u in self.turns if u)
        summary = (
            f"{len(self.turns)} live turn(s), maxTurns {model.config.max_turns}, bound checked {model.bound}"
        )
        if n_unc:
            summary += f"; {n_unc} arrived inside the gap, not in the count read"
        return WindowPanel(
            "turns in the store (what the agent would send), by the step and writer that appended each",
            tuple(items),
            summary,
        )


def _step_marks(model: Any, before: Any, action: Any) -> tuple[str, ...]:
    if getattr(model, "name", "") == "trigger" and action[0] == "append" and before.pending > 0:
        return ("uncounted gap turn",)
    return ()


# -- the whole trace ------------------------------------------------------------------------------


def _opaque_view(trace: Trace) -> TraceView:
    steps = [StepView(0, None, "(initial state)", (), {}, {})]
    lanes: list[str] = []
    for k, action in enumerate(trace.actions, start=1):
        text = " ".join(str(x) for x in action)
        lane = actor_of(None, None, action, text)  # type: ignore[arg-type]
        if lane not in lanes:
            lanes.append(lane)
        steps.append(StepView(k, lane, text, (), {}, {}))
    message = f"model {trace.model} is not in the catalog: shown from the saved actions, not replayed"
    return TraceView(trace.model, dict(trace.params), trace.violated, trace.engine, "recorded", message,
                     tuple(lanes), (), tuple(steps), None, replayed=False)  # fmt: skip


_ROLES = ("writer", "worker", "agent", "tool", "client", "store", "compactor", "trigger", "reader", "clock")


def _lane_order(lane: str) -> tuple[int, int, str]:
    """Writers first, then the compactor, the reader and the clock (the transcript's order)."""
    role, _, num = lane.partition(" ")
    rank = _ROLES.index(role) if role in _ROLES else len(_ROLES)
    return (rank, int(num) if num.isdigit() else 0, lane)


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


def trace_view(trace: Trace) -> TraceView:
    """Replay ``trace`` (catalog models only) and record every step as the viewer shows it.

    Raises
    ------
    TraceFormatError, UnknownName, BadParameter
        The trace does not fit its model.
    """
    if not loads_no_code(trace):
        return _opaque_view(trace)
    model: ProtocolModel[Any, Any] = build_model(trace.model, trace.params)
    result = replay(model, trace)
    states, actions = _run_past_break(model, result.states, result.actions, trace.actions)
    props = tuple(model.properties())
    has_window = callable(getattr(model, "window", None))
    has_windows = callable(getattr(model, "windows", None))
    store = _TriggerStore() if model.name == "trigger" else None

    def panel(index: int, state: Any) -> WindowPanel | None:
        if store is not None:
            return store.panel(model, index, state)
        if has_window:
            return _projected_window(model, state)
        return _projected_windows(model, state) if has_windows else None

    def holds(state: Any) -> dict[str, bool]:
        return {p.name: bool(p.holds(state)) for p in props}

    prev_fields = state_fields(model, states[0])
    steps = [StepView(0, None, "(initial state)", diff_fields(None, prev_fields), holds(states[0]),
                      dict(model.metrics(states[0])), panel(0, states[0]))]  # fmt: skip
    lanes: list[str] = []
    for k, action in enumerate(actions, start=1):
        before, after = states[k - 1], states[k]
        text = model.format_action(before, action)
        lane = actor_of(model, before, action, text)
        if lane not in lanes:
            lanes.append(lane)
        if store is not None:
            store.step(k, before, action, after)
        fields = state_fields(model, after)
        steps.append(StepView(k, lane, text, diff_fields(prev_fields, fields), holds(after),
                              dict(model.metrics(after)), panel(k, after), _step_marks(model, before, action)))  # fmt: skip
        prev_fields = fields
    return TraceView(
        trace.model, dict(model.params), trace.violated, trace.engine, result.verdict, result.message,
        tuple(sorted(lanes, key=_lane_order)),
        tuple(PropertyView(p.name, p.expectation, p.doc) for p in props), tuple(steps),
        result.step if result.still_fails else None,
    )  # fmt: skip
