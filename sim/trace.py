"""Counterexample traces: saved as JSON, printed as a transcript, replayed against current code.

A trace is the smallest thing that reproduces a violation: the model (its catalog name or
``package.module:Class``), its parameters, the index of the initial state, the list of actions
(each a JSON list of scalars) and the property it broke. Because every model's ``step`` is pure,
re-applying the actions to a freshly built model either breaks the same property again (the bug is
still there), breaks another one, or no longer fails (fixed).

The transcript prints one numbered line per step with one lane per actor — writers, compactor,
reader, in that order — so interleavings read at a glance, then the model's own columns (seq, ts,
live turns …), the window that was sent and the invariant that broke. Models may offer three
optional hooks, all read with ``getattr``: ``actor(state, action) -> str`` (the lane),
``columns(state) -> Mapping`` (extra columns, default: the model's metrics) and
``describe_window(state) -> str`` (the window sent). Without ``actor``, the lane is read off
the start of ``format_action``'s text ("writer 2 appends …" → lane "writer 2").
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from turncheck.models.errors import TurncheckError
from turncheck.models.protocol import ProtocolModel

FORMAT = "turncheck-trace/1"


class TraceFormatError(TurncheckError, ValueError):
    """A trace file that cannot be read, is not a turncheck trace, or does not fit its model."""


@dataclass(frozen=True)
class Trace:
    """One saved run that broke ``violated`` (JSON-ready: actions are tuples of scalars)."""

    model: str
    params: Mapping[str, Any]
    actions: tuple[tuple[Any, ...], ...]
    violated: str
    init: int = 0
    engine: str = ""
    model_name: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "model": self.model,
            "model_name": self.model_name or self.model,
            "params": dict(self.params),
            "violated": self.violated,
            "engine": self.engine,
            "init": self.init,
            "steps": len(self.actions),
            "actions": [list(a) if isinstance(a, tuple) else a for a in self.actions],
        }
        out.update(self.extra)
        return out

    def dumps(self) -> str:
        """Readable JSON: one field per line, one action per line."""

        def compact(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)

        obj = self.to_json()
        actions = obj.pop("actions")
        lines = [f" {json.dumps(k)}: {compact(v)}," for k, v in obj.items()]
        body = ",\n".join(f"  {compact(a)}" for a in actions)
        lines.append(' "actions": [' + (f"\n{body}\n ]" if actions else "]"))
        return "{\n" + "\n".join(lines) + "\n}\n"


def save_trace(trace: Trace, path: str | Path) -> Path:
    """Write the trace as JSON (parent directories created); returns the path."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(trace.dumps(), encoding="utf-8")
    except OSError as exc:
        raise TurncheckError(f"cannot save the trace to {p}: {exc.strerror or exc}") from None
    return p


def _scalar(x: Any) -> bool:
    return isinstance(x, (str, int, bool)) or x is None


def trace_from_json(obj: Any, where: str = "trace") -> Trace:
    """Validate a decoded trace object; every problem is one line naming the field."""
    if not isinstance(obj, dict):
        raise TraceFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("format") != FORMAT:
        raise TraceFormatError(
            f"{where}: not a turncheck trace (format {obj.get('format')!r}, expected {FORMAT!r})"
        )
    model = obj.get("model")
    if not isinstance(model, str) or not model:
        raise TraceFormatError(f"{where}: field 'model' must be a non-empty string")
    params = obj.get("params", {})
    if not isinstance(params, dict):
        raise TraceFormatError(f"{where}: field 'params' must be an object")
    violated = obj.get("violated")
    if not isinstance(violated, str) or not violated:
        raise TraceFormatError(f"{where}: field 'violated' must name a property")
    init = obj.get("init", 0)
    if isinstance(init, bool) or not isinstance(init, int) or init < 0:
        raise TraceFormatError(f"{where}: field 'init' must be a non-negative integer")
    raw = obj.get("actions")
    if not isinstance(raw, list):
        raise TraceFormatError(f"{where}: field 'actions' must be a list")
    actions: list[tuple[Any, ...]] = []
    for k, a in enumerate(raw, start=1):
        if isinstance(a, list) and all(_scalar(x) for x in a):
            actions.append(tuple(a))
        elif _scalar(a):
            actions.append((a,))
        else:
            raise TraceFormatError(f"{where}: action {k} must be a list of strings, integers or booleans")
    extra: dict[str, Any] = {}
    words = obj.get("words")
    if isinstance(words, list) and len(words) == len(actions) and all(isinstance(w, str) for w in words):
        extra["words"] = list(words)  # the model's own text per step, recorded when the check ran
    return Trace(
        model=model,
        params=params,
        actions=tuple(actions),
        violated=violated,
        init=init,
        engine=str(obj.get("engine", "")),
        model_name=str(obj.get("model_name", model)),
        extra=extra,
    )


def words_of(model: ProtocolModel[Any, Any], init: int, actions: Sequence[Any]) -> list[str]:
    """The model's own words for each step (its ``format_action``, else the action's repr),
    saved with a trace so a reader — the report — can show them without importing the model."""
    state = list(model.init_states())[init]
    fmt = getattr(model, "format_action", None)
    out = []
    for a in actions:
        out.append(str(fmt(state, a)) if callable(fmt) else repr(a))
        state = model.step(state, a)
    return out


def load_trace(path: str | Path) -> Trace:
    """Read and validate a trace file."""
    p = Path(path)
    if not p.exists():
        raise TraceFormatError(f"{p}: no such file")
    if p.is_dir():
        raise TraceFormatError(f"{p}: is a directory, not a trace file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(f"{p}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise TraceFormatError(f"{p}: JSON nested too deeply") from None
    except ValueError as exc:  # an integer past Python's 4300-digit limit
        raise TraceFormatError(f"{p}: unreadable JSON ({str(exc).splitlines()[0][:80]})") from None
    return trace_from_json(obj, str(p))


# -- replay -------------------------------------------------------------------------------------

Verdict = Literal["same", "different", "passes", "diverged"]


@dataclass(frozen=True)
class Replay:
    """What re-running a trace showed.

    ``same``: the trace's property broke again (``step`` is where, 0 = the initial state);
    ``different``: another property broke first; ``passes``: every step ran and nothing broke;
    ``diverged``: an action of the trace is no longer enabled at ``step``.
    """

    verdict: Verdict
    step: int
    violated: str | None
    states: tuple[Any, ...]
    actions: tuple[Any, ...]
    message: str

    @property
    def still_fails(self) -> bool:
        return self.verdict in ("same", "different")


def _match(action: tuple[Any, ...], enabled: Sequence[Any]) -> Any:
    for e in enabled:
        if e == action or (isinstance(e, (list, tuple)) and tuple(e) == action):
            return e
        if not isinstance(e, (list, tuple)) and (e,) == action:
            return e
    return None


def replay(model: ProtocolModel[Any, Any], trace: Trace) -> Replay:
    """Re-execute ``trace`` on ``model``, checking every ``always`` property after each step.

    Raises
    ------
    TraceFormatError
        When the trace cannot belong to this model: an unknown property, an initial state index
        out of range, or a first action the model never offers in its initial state.
    """
    props = [p for p in model.properties() if p.expectation == "always"]
    names = [p.name for p in props]
    if trace.violated not in names:
        raise TraceFormatError(
            f"trace breaks {trace.violated!r}, which model {model.name} does not check "
            f"(checks: {', '.join(names)})"
        )
    inits = list(model.init_states())
    if trace.init >= len(inits):
        raise TraceFormatError(
            f"trace starts from initial state {trace.init}; model {model.name} has {len(inits)}"
        )
    state = inits[trace.init]
    states = [state]
    done: list[Any] = []

    def broken(s: Any) -> str | None:
        # the trace's own property first, so "same" wins when several break together
        for p in sorted(props, key=lambda p: p.name != trace.violated):
            if not p.holds(s):
                return p.name
        return None

    # The trace's own invariant is followed to the end: a trace saved for one invariant may pass
    # through a state that breaks another one first (the trigger's 5-step uncounted-gap run
    # breaks live ≤ maxTurns at step 4). It "fails differently" only when its own never breaks.
    other: tuple[int, str, tuple[Any, ...], tuple[Any, ...]] | None = None
    for k in range(len(trace.actions) + 1):
        name = broken(state)
        if name == trace.violated:
            how = "still fails the same way"
            return Replay("same", k, name, tuple(states), tuple(done), f"{how}: {name} broken at step {k}")
        if name is not None and other is None:
            other = (k, name, tuple(states), tuple(done))
        if k == len(trace.actions):
            if other is not None:
                k0, name0, states0, done0 = other
                how = f"fails differently (the trace broke {trace.violated})"
                return Replay("different", k0, name0, states0, done0, f"{how}: {name0} broken at step {k0}")
            break
        enabled = list(model.actions(state))
        action = _match(trace.actions[k], enabled)
        if action is None:
            if k == 0:
                raise TraceFormatError(
                    f"trace does not fit model {model.name}: its first action {list(trace.actions[0])} "
                    "is not enabled in the initial state"
                )
            return Replay(
                "diverged",
                k + 1,
                None,
                tuple(states),
                tuple(done),
                f"no longer reproduces: step {k + 1} {list(trace.actions[k])} is not enabled any more",
            )
        state = model.step(state, action)
        states.append(state)
        done.append(action)
    return Replay(
        "passes", len(done), None, tuple(states), tuple(done), f"no longer fails: all {len(done)} steps hold"
    )


# -- transcript ---------------------------------------------------------------------------------

_LANE = re.compile(r"^\s*([A-Za-z][\w-]*)(?:\s+(\d+|[A-Za-z]\d+))?\b")
_ROLES = ("writer", "worker", "agent", "tool", "client", "store", "compactor", "trigger", "reader", "clock")


def actor_of(model: ProtocolModel[Any, Any], state: Any, action: Any, text: str) -> str:
    """The lane of one step: the model's ``actor`` hook, else the text's leading '<role> [n]'."""
    hook = getattr(model, "actor", None)
    if callable(hook):
        return str(hook(state, action))
    m = _LANE.match(text)
    if m and m.group(1).lower() in _ROLES:
        return m.group(1).lower() + (f" {m.group(2)}" if m.group(2) else "")
    return "step"


def _lane_order(lane: str) -> tuple[int, int, str]:
    role, _, num = lane.partition(" ")
    rank = _ROLES.index(role) if role in _ROLES else len(_ROLES)
    return (rank, int(num) if num.isdigit() else 0, lane)


def _strip_actor(text: str, lane: str) -> str:
    if text.lower().startswith(lane) and lane != "step":
        return text[len(lane) :].lstrip(" :")
    return text


def transcript(
    model: ProtocolModel[Any, Any],
    init: Any,
    actions: Sequence[Any],
    violated: str | None = None,
    *,
    title: str = "",
    lane_width: int = 36,
) -> str:
    """A numbered transcript of the run ``actions`` from ``init``, one lane per actor.

    The columns between the step number and the lanes are the model's ``columns(state)`` hook
    (or its metrics) after each step; lane texts longer than ``lane_width`` wrap. The last lines
    show the window sent in the final state (``describe_window`` hook) and the property that
    broke, with its description.
    """
    states = [init]
    for a in actions:
        states.append(model.step(states[-1], a))
    texts = [model.format_action(s, a) for s, a in zip(states, actions, strict=False)]
    lanes_of = [actor_of(model, s, a, t) for s, a, t in zip(states, actions, texts, strict=False)]
    lanes = sorted(set(lanes_of), key=_lane_order)
    cols_hook = getattr(model, "columns", None)

    def cols(s: Any) -> Mapping[str, Any]:
        return dict(cols_hook(s)) if callable(cols_hook) else dict(model.metrics(s))

    col_rows = [cols(s) for s in states]
    col_names: list[str] = []
    for row in col_rows:
        for name in row:
            if name not in col_names:
                col_names.append(name)
    cells = [[""] * len(lanes) for _ in actions]
    for i, (lane, text) in enumerate(zip(lanes_of, texts, strict=False)):
        cells[i][lanes.index(lane)] = _strip_actor(text, lane)
    # a lane is as wide as its longest text, but no wider than lane_width: longer texts wrap
    widths = [
        min(lane_width, max([len(lane)] + [len(row[j]) for row in cells])) for j, lane in enumerate(lanes)
    ]
    widths = [max(w, len(lane)) for w, lane in zip(widths, lanes, strict=True)]
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
        out += line(str(i), [str(col_rows[i].get(n, "")) for n in col_names], lane_cells)
    window_hook = getattr(model, "describe_window", None)
    if callable(window_hook):
        out.append(f"window sent: {window_hook(states[-1])}")
    if violated is not None:
        doc = next((p.doc for p in model.properties() if p.name == violated), "")
        holds = next((p.holds(states[-1]) for p in model.properties() if p.name == violated), None)
        verdict = "broken" if holds is False else "holds here" if holds else "unknown"
        out.append(f"invariant {violated} {verdict} after step {len(actions)}" + (f": {doc}" if doc else ""))
    return "\n".join(out)


def loads_no_code(trace: Trace) -> bool:
    """Whether rebuilding the trace's model imports nothing the trace names: a catalog model
    whose parameters name no user code. Reports and viewers replay only such traces; any other
    is shown from what it recorded (a trace is data, and may sit next to a ``.py`` file)."""
    from turncheck.models.catalog import model_names
    from turncheck.models.user_code import names_code

    return trace.model in model_names() and not any(names_code(v) for v in trace.params.values())
