"""Counterexample traces: saved as JSON, replayed against current code.

A trace is the smallest thing that reproduces a violation: the model (its catalog name or
``package.module:Class``), its parameters, the index of the initial state, the list of actions
(each a JSON list of scalars) and the property it broke. Because every model's ``step`` is pure,
re-applying the actions to a freshly built model either breaks the same property again (the bug is
still there), breaks another one, or no longer fails (fixed).

A replay prints as a transcript (:mod:`sim.transcript`): one numbered line per step, one lane
per actor, in the model's own words.

A trace saved by ``turncheck check`` also records the run as the model told it
(:func:`recording_of`): each step's words and lane, the lanes in the model's order, the metrics
after every step, the window the timeline shades and the limit it draws. A report renders a
trace naming a user's class from that record, never importing its code. The fields are
optional (format ``turncheck-trace/1`` throughout): a trace without them — every trace written
before them, and the demo's — loads as before and is replayed when its model is a catalog one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from turncheck.models.display import data_frame, esc
from turncheck.models.errors import TurncheckError, read_json
from turncheck.models.output_files import write_outputs
from turncheck.models.protocol import Property, ProtocolModel, as_model
from turncheck.sim.transcript import params_text, repeating, transcript

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
    loop: int | None = None  # a lasso: the actions from this index on repeat for ever

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
        if self.loop is not None:
            out["loop"] = self.loop
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

    def to_records(self) -> list[dict[str, Any]]:
        """One record per step: its number, the action as compact JSON, and the model's words for
        it when the trace recorded them (None otherwise)."""
        words = self.extra.get("words")
        said = (
            words
            if isinstance(words, list) and len(words) == len(self.actions)
            else [None] * len(self.actions)
        )
        return [
            {"step": k, "action": json.dumps(list(a), ensure_ascii=False, default=str), "words": w}
            for k, (a, w) in enumerate(zip(self.actions, said, strict=True), start=1)
        ]

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return data_frame(self.to_records(), ("step", "action", "words"))

    def _repr_html_(self) -> str:
        """A notebook's view: what broke, in how many steps, and the transcript the report shows."""
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items())) or "none"
        return (
            f"<p><b>Counterexample: {esc(self.violated)}</b> ({esc(self.model)}), {len(self.actions)} steps"
            f"{', engine ' + esc(self.engine) if self.engine else ''}; parameters: {esc(params)}</p>"
            f"<pre>{esc(readable_transcript(self))}</pre>"
        )


def save_trace(trace: Trace, path: str | Path) -> Path:
    """Write the trace as JSON (parent directories created), whole or not at all and never
    through a symlink (:func:`models.output_files.write_outputs`); returns the path."""
    p = Path(path)
    write_outputs({p: trace.dumps()}, folder=p.parent)
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
    loop = obj.get("loop")
    if loop is not None and (
        isinstance(loop, bool) or not isinstance(loop, int) or not 0 <= loop <= len(actions)
    ):
        raise TraceFormatError(f"{where}: field 'loop' must be an integer from 0 to the number of actions")
    extra: dict[str, Any] = {}
    words = obj.get("words")
    if isinstance(words, list) and len(words) == len(actions) and all(isinstance(w, str) for w in words):
        extra["words"] = list(words)  # the model's own text per step, recorded when the check ran
    extra.update(_recorded_fields(obj, len(actions)))
    return Trace(
        model=model,
        params=params,
        actions=tuple(actions),
        violated=violated,
        init=init,
        engine=str(obj.get("engine", "")),
        model_name=str(obj.get("model_name", model)),
        extra=extra,
        loop=loop,
    )


@dataclass(frozen=True)
class Recording:
    """The run of a trace as its model told it when the trace was saved (see :func:`recording_of`).

    Invariant: ``words`` and ``actors`` have one entry per action; ``metrics`` one per state
    (``metrics[0]`` the initial state); ``lanes`` holds every actor once, in the model's order;
    ``broken_at`` is the first state breaking the trace's property (None: none did).
    """

    words: tuple[str, ...]
    actors: tuple[str, ...]
    lanes: tuple[str, ...]
    metrics: tuple[Mapping[str, float], ...]
    broken_at: int | None
    window: tuple[int, ...] = ()
    window_label: str = ""
    window_text: str = ""
    limit: tuple[str, str, float] | None = None
    doc: str = ""


def recording_of(
    model: ProtocolModel[Any, Any], init: int, actions: Sequence[Any], violated: str, loop: int | None = None
) -> dict[str, Any]:
    """Replay ``actions`` from initial state ``init`` and record what a report shows of the run,
    as the JSON fields a trace carries (``words``, ``actors``, ``lanes``, ``timeline``); a
    lasso's ``broken_at`` is where its loop starts."""
    model = as_model(model)
    states = [list(model.init_states())[init]]
    for a in actions:
        states.append(model.step(states[-1], a))
    words = [str(model.format_action(s, a)) for s, a in zip(states, actions, strict=False)]
    actors = [str(model.actor(s, a)) for s, a in zip(states, actions, strict=False)]
    prop = next((p for p in model.properties() if p.name == violated), None)
    broken = next((k for k, s in enumerate(states) if prop is not None and not prop.holds(s)), None)
    if loop is not None:
        broken = loop
    window, label = model.window_steps(states, list(actions)) if actions else (set(), "")
    limit = model.limit()
    return {
        "words": words,
        "actors": actors,
        "lanes": list(model.order_lanes(actors)),
        "timeline": {
            "metrics": [{k: int(v) for k, v in model.metrics(s).items()} for s in states],
            "broken_at": broken,
            "window": sorted(window),
            "window_label": label,
            "window_text": model.describe_window(states[-1]),
            "limit": [limit.metric, limit.name, limit.value] if limit is not None else None,
            "doc": prop.doc if prop is not None else "",
        },
    }


def _recorded_fields(obj: Mapping[str, Any], steps: int) -> dict[str, Any]:
    """The recorded run's fields of a decoded trace, kept only when they are well formed (a trace
    is data: a malformed record is ignored, and the trace shown from its actions alone)."""
    actors, lanes, timeline = obj.get("actors"), obj.get("lanes"), obj.get("timeline")
    if not (isinstance(actors, list) and len(actors) == steps and all(isinstance(a, str) for a in actors)):
        return {}
    if not (isinstance(lanes, list) and all(isinstance(x, str) for x in lanes) and set(lanes) == set(actors)):
        return {}
    out: dict[str, Any] = {"actors": list(actors), "lanes": list(lanes)}
    if isinstance(timeline, dict):
        out["timeline"] = timeline
    return out


def recording(trace: Trace) -> Recording | None:
    """The run ``trace`` recorded when it was saved, or None (an older trace, or the demo's)."""
    extra = trace.extra
    if "actors" not in extra or "words" not in extra:
        return None
    n = len(trace.actions)
    t = extra.get("timeline", {})
    metrics = t.get("metrics")
    if not (
        isinstance(metrics, list)
        and len(metrics) == n + 1
        and all(isinstance(m, dict) and all(isinstance(v, (int, float)) for v in m.values()) for m in metrics)
    ):
        metrics = []
    broken = t.get("broken_at")
    broken = broken if isinstance(broken, int) and not isinstance(broken, bool) and 0 <= broken <= n else None
    window = t.get("window")
    steps = tuple(k for k in window if isinstance(k, int) and 1 <= k <= n) if isinstance(window, list) else ()
    lim = t.get("limit")
    limit = (
        (lim[0], lim[1], float(lim[2]))
        if isinstance(lim, list) and len(lim) == 3 and all(isinstance(x, str) for x in lim[:2])
        and isinstance(lim[2], (int, float)) and not isinstance(lim[2], bool)
        else None
    )  # fmt: skip
    return Recording(
        tuple(extra["words"]), tuple(extra["actors"]), tuple(extra["lanes"]),
        tuple(metrics), broken, steps, str(t.get("window_label", "")), str(t.get("window_text", "")),
        limit, str(t.get("doc", "")),
    )  # fmt: skip


def load_trace(path: str | Path) -> Trace:
    """Read and validate a trace file."""
    p = Path(path)
    if not p.exists():
        raise TraceFormatError(f"{p}: no such file")
    if p.is_dir():
        raise TraceFormatError(f"{p}: is a directory, not a trace file")
    obj = read_json(p, TraceFormatError)
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
    loop: int | None = None

    @property
    def still_fails(self) -> bool:
        return self.verdict in ("same", "different")

    def to_json(self, path: Path, model: ProtocolModel[Any, Any], trace: Trace) -> dict[str, Any]:
        """``replay --format json``: the verdict, against what the trace at ``path`` recorded."""
        return {
            "trace": str(path),
            "model": trace.model,
            "params": dict(model.params),
            "verdict": self.verdict,
            "reproduced": self.verdict == "same",
            "still_fails": self.still_fails,
            "trace_violated": trace.violated,
            "violated": self.violated,
            "steps": len(trace.actions),
            "step": self.step,
            "message": self.message,
        }

    def lines(self, path: Path, model: ProtocolModel[Any, Any], trace: Trace) -> list[str]:
        """``replay``'s table output: the re-executed run as a transcript, then the verdict."""
        title = f"replay of {path}: model {model.name} ({params_text(model)}), {len(trace.actions)} steps"
        text = transcript(model, self.states[0], self.actions, self.violated, title=title, loop=self.loop)
        return [text, self.message]


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
    model = as_model(model)
    lasso = next(
        (p for p in model.properties() if p.name == trace.violated and p.expectation == "eventually"), None
    )
    if lasso is not None:
        return _replay_lasso(model, trace, lasso)
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


def _replay_lasso(model: ProtocolModel[Any, Any], trace: Trace, prop: Property[Any]) -> Replay:
    """Re-execute a lasso: ``same`` while its loop still closes, is fair and never satisfies
    ``prop`` (:func:`sim.liveness.fair_loop`), ``passes`` once it does not, ``diverged`` when
    an action is no longer enabled."""
    from turncheck.sim.liveness import fair_loop

    if trace.loop is None:
        raise TraceFormatError(f"trace breaks eventually-property {prop.name!r} but marks no loop")
    inits = list(model.init_states())
    if trace.init >= len(inits):
        raise TraceFormatError(
            f"trace starts from initial state {trace.init}; model {model.name} has {len(inits)}"
        )
    states: list[Any] = [inits[trace.init]]
    done: list[Any] = []
    for k, recorded in enumerate(trace.actions):
        action = _match(recorded, list(model.actions(states[-1])))
        if action is None:
            if k == 0:
                raise TraceFormatError(
                    f"trace does not fit model {model.name}: its first action {list(recorded)} "
                    "is not enabled in the initial state"
                )
            message = f"no longer reproduces: step {k + 1} {list(recorded)} is not enabled any more"
            return Replay("diverged", k + 1, None, tuple(states), tuple(done), message)
        states.append(model.step(states[-1], action))
        done.append(action)
    loop = trace.loop
    why = fair_loop(model, prop, states, done, loop)
    if why is not None:
        return Replay("passes", len(done), None, tuple(states), tuple(done), f"no longer fails: {why}", loop)
    around = (
        f"{repeating(loop, len(done))} for ever" if loop < len(done) else f"it stutters after step {loop}"
    )
    message = f"still fails the same way: {prop.name} never holds on the loop ({around})"
    return Replay("same", loop, prop.name, tuple(states), tuple(done), message, loop)


# -- reading a trace without running its code ----------------------------------------------


def loads_no_code(trace: Trace) -> bool:
    """Whether rebuilding the trace's model imports nothing the trace names: a catalog model
    whose parameters name no user code. Reports and viewers replay only such traces; any other
    is shown from what it recorded (a trace is data, and may sit next to a ``.py`` file)."""
    from turncheck.models.catalog import model_names
    from turncheck.models.user_code import names_code

    return trace.model in model_names() and not any(names_code(v) for v in trace.params.values())


def readable_transcript(t: Trace) -> str:
    """The trace replayed against the current code for a catalog model; for a user's model
    (``module:Class``), the model's own words recorded with the trace when ``turncheck check`` ran
    — rendering a trace never imports code a data file names (the report and a notebook show this)."""
    from turncheck.models.catalog import build_model

    if not loads_no_code(t):
        return _recorded_transcript(t)
    try:
        model = build_model(t.model, t.params)
        result = replay(model, t)
        text = transcript(
            model, result.states[0], result.actions, result.violated or t.violated, loop=result.loop
        )
        return text + "\n" + result.message
    except TurncheckError as exc:
        return f"cannot replay this trace: {exc}"


def _recorded_transcript(t: Trace) -> str:
    """A user's model's run in its own words (saved by ``turncheck check``), or — for a trace saved
    without them — the recorded actions, saying so."""
    words = t.extra.get("words")
    if isinstance(words, list) and len(words) == len(t.actions):
        lines = [f"{k:>4}  {w}" for k, w in enumerate(words, start=1)]
        if t.loop is not None:
            lines.insert(t.loop, f"  ↻ loop: the steps after {t.loop} repeat for ever")
        head = f"in the words of {t.model}, recorded when the check ran (not replayed: this page imports no user code)"
        end = (
            f"eventually {t.violated} never holds on the loop"
            if t.loop is not None
            else f"invariant {t.violated} broken after step {len(t.actions)}"
        )
        return "\n".join([head, *lines, end])
    raw = "\n".join(f"{k:>4}  {list(a)}" for k, a in enumerate(t.actions, start=1))
    return (
        f"recorded actions of {t.model} (the trace carries no words; this page imports no user code)\n{raw}"
    )
