"""The one interface every protocol model is written against (Stateright's ``Model`` shape).

A protocol model is defined once: immutable hashable states, the actions enabled in a state, a
pure ``step``, and named properties — the required core of :class:`ProtocolModel`. Everything
else an engine, a transcript or a report asks of a model is an optional hook with a working
default on the same base: its metrics and symmetry, how a step reads in words and which actor
(lane) it belongs to, the order of its lanes, a state's fields, the window a reader would send,
the limit its metrics are held to and the closed forms its worst cases are checked against.

The SimPy runner, the Hypothesis machine, the explorer, the transcript, the trace viewer and the
timeline call these methods and nothing else: no engine or report reads a hook with
``getattr`` or switches on a model's name. Built-in models subclass :class:`ProtocolModel`; a
user's class that does not is wrapped once by :func:`as_model` in :class:`UserModel`, which
forwards what the class defines and supplies the defaults for the rest — the user's object is
never modified.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar

from turncheck.models.errors import BadParameter, UnknownName

if TYPE_CHECKING:
    from turncheck.models.crash_points import CrashPoint

S = TypeVar("S", bound=Hashable)
A = TypeVar("A", bound=Hashable)

FieldValue: TypeAlias = str | list[str]

# The lanes of a transcript, in the order they read best: writers first, then the compactor, the
# reader and the clock. A model without its own ``lane_order`` uses this one; its ``actor`` hook
# (by default) reads a step's lane off the start of its text when the first word is one of these.
LANE_ROLES: tuple[str, ...] = (
    "writer", "worker", "agent", "tool", "client", "session", "store", "compactor", "trigger", "reader",
    "clock",
)  # fmt: skip
REQUIRED: tuple[str, ...] = ("init_states", "actions", "step", "properties")

_LANE = re.compile(r"^\s*([A-Za-z][\w-]*)(?:\s+(\d+|[A-Za-z]\d+))?\b")


@dataclass(frozen=True)
class Property(Generic[S]):
    """A named property of states.

    ``always``: must hold in every reachable state (an invariant; a violation is a
    counterexample). ``sometimes``: must hold in at least one reachable state (a goal; never
    reaching it makes a run inconclusive, never green). ``eventually``: from every reachable
    state — or, built by :meth:`leads_to`, from every state where ``when`` holds — every *fair*
    infinite run reaches a state where ``holds`` is true (liveness; a state with no enabled
    action stutters for ever). Which runs are fair the model says (:meth:`ProtocolModel.fair_actions`);
    a violation is a lasso: a path to a loop on which ``holds`` is false throughout.
    """

    name: str
    expectation: Literal["always", "sometimes", "eventually"]
    holds: Callable[[S], bool]
    doc: str = ""
    when: Callable[[S], bool] | None = None

    def __post_init__(self) -> None:
        # an expectation no checker knows must not quietly become one it does (a misspelt
        # "eventually" used to be checked as a goal, and passed)
        if self.expectation not in EXPECTATIONS:
            raise BadParameter(
                f"property {self.name!r}: expectation {self.expectation!r} is not one of "
                f"{', '.join(EXPECTATIONS)}"
            )
        if self.when is not None and self.expectation != "eventually":
            raise BadParameter(f"property {self.name!r}: only an eventually-property has a 'when'")

    @classmethod
    def leads_to(
        cls, name: str, when: Callable[[S], bool], then: Callable[[S], bool], doc: str = ""
    ) -> Property[S]:
        """Whenever ``when`` holds, eventually ``then`` does (on every fair run from there)."""
        return cls(name, "eventually", then, doc, when)


EXPECTATIONS = ("always", "sometimes", "eventually")


@dataclass(frozen=True)
class ClosedForm:
    """A metric whose worst case the model knows in closed form, so the explorer's exact worst
    case can be held against it (``bound`` None: unbounded; ``reachable``: the model's parameters
    give runs long enough to reach it)."""

    metric: str
    reading: str
    bound: int | None
    formula: str
    reachable: bool


@dataclass(frozen=True)
class Limit:
    """The promised limit on one metric, drawn under the timeline's metrics: ``name = value``."""

    metric: str
    name: str
    value: float


@dataclass(frozen=True)
class WindowItem:
    """One entry of a window panel: an event sent, or a turn in the store."""

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


def lane_in_text(text: str, roles: Sequence[str] = LANE_ROLES) -> str:
    """The lane a step's text names at its start ("writer 2 appends …" → ``writer 2``), or
    ``step`` when its first word is no role."""
    m = _LANE.match(text)
    if m and m.group(1).lower() in roles:
        return m.group(1).lower() + (f" {m.group(2)}" if m.group(2) else "")
    return "step"


def order_lanes(lanes: Iterable[str], roles: Sequence[str] = LANE_ROLES) -> tuple[str, ...]:
    """``lanes`` (each ``role`` or ``role n``) sorted by the role's place in ``roles``, then by
    number; lanes of no listed role come last."""

    def key(lane: str) -> tuple[int, int, str]:
        role, _, num = lane.partition(" ")
        rank = roles.index(role) if role in roles else len(roles)
        return (rank, int(num) if num.isdigit() else 0, lane)

    return tuple(sorted(set(lanes), key=key))


def _text(value: Any) -> FieldValue:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [str(_text(v)) if not isinstance(v, (list, tuple)) else _inline(v) for v in value]
    return str(value)


def _inline(value: Sequence[Any]) -> str:
    return "(" + ", ".join(str(_text(v)) for v in value) + ")"


def field_text(value: Any) -> FieldValue:
    """A state field as the viewer shows it: booleans as ``true``/``false``, sequences as lists."""
    return _text(value)


def plain_fields(state: Any) -> list[tuple[str, FieldValue]]:
    """A state's fields by their own names: a named tuple's or dataclass's fields, a plain
    tuple's positions, else the whole state as one field."""
    if hasattr(state, "_asdict"):
        return [(k, _text(v)) for k, v in state._asdict().items()]
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return [(f.name, _text(getattr(state, f.name))) for f in dataclasses.fields(state)]
    if isinstance(state, tuple):
        return [(f"field {i}", _text(v)) for i, v in enumerate(state)]
    return [("state", repr(state))]


class ProtocolModel(Generic[S, A]):
    """What the engines need from a model: four required methods, every other hook defaulted.

    Required: ``init_states``, ``actions`` (the enabled actions in a stable order — engines index
    into it), ``step`` (pure and deterministic: the same state and action give the same next
    state, so a trace of actions replays exactly) and ``properties`` (in the order the model
    wants them reported: the first violated one is the counterexample shown).

    ``name`` and ``params`` say what was built; the optional hooks below say how to show it.
    """

    name: str = ""
    params: Mapping[str, Any] = {}

    # -- the required core ----------------------------------------------------------------------

    def init_states(self) -> Iterable[S]:
        raise NotImplementedError

    def actions(self, state: S) -> Iterable[A]:
        raise NotImplementedError

    def step(self, state: S, action: A) -> S:
        raise NotImplementedError

    def properties(self) -> tuple[Property[S], ...]:
        raise NotImplementedError

    # -- what the engines ask -------------------------------------------------------------------

    def metrics(self, state: S) -> Mapping[str, int]:
        """Integer quantities whose worst case the explorer reports (e.g. ``live_turns``)."""
        return {}

    def live_turns(self, state: S) -> int:
        """``metrics(state)["live_turns"]``, which the SimPy runner reads after every action: a
        model whose state holds the count may return it without building the metrics."""
        return int(self.metrics(state)["live_turns"])

    def metric_columns(self) -> Mapping[str, Callable[[S], int]] | None:
        """:meth:`metrics` as one function per metric, or None (the default). Optional: with
        it the explorer takes each worst case over all states with one builtin ``map`` and
        ``max`` per metric instead of a mapping built per state (a sixth of the seed row's CPU).
        Invariant: ``metrics(s) == {k: f(s) for k, f in metric_columns().items()}`` for every
        state ``s`` — same names, same order, same values."""
        return None

    def canonical(self, state: S) -> S:
        """The representative of ``state``'s symmetry class (interchangeable writers, call ids);
        the state itself when the model has no symmetry."""
        return state

    def class_size(self, state: S) -> int | None:
        """How many of the model's own states the canonical ``state`` stands for (its symmetry
        class's size), or None when the model cannot say — then measuring the reduction takes a
        second search without symmetry. Exact only when the reachable states are closed under the
        symmetry (the initial states are, and the rules treat interchangeable writers alike) and
        :meth:`canonical` merges nothing else (no counting abstraction): the sum over the classes
        an exhaustive search visits is then the number of states a search without symmetry
        visits."""
        return None

    def successors_are_canonical(self) -> bool:
        """Whether :meth:`successors` of a canonical state are canonical already — the symmetry
        is structural (interchangeable writers kept as a multiset) — so the explorer calls
        :meth:`canonical` on the initial states alone. True only for a model without a
        ``canonical`` of its own, unless it says so."""
        return getattr(self.canonical, "__func__", None) is ProtocolModel.canonical

    def saturation(self) -> str | None:
        """What :meth:`canonical` also merges beyond a symmetry, in one sentence, or None.

        A model whose states grow for ever on some run (a counter that only climbs) may declare a
        *counting abstraction*: ``canonical`` maps every value past a threshold to one class, so
        the search ends. It must be exact — states it merges enable the same actions, lead to
        merged states and agree on every property — which is what lets a lasso found over the
        classes stand for an infinite run; the engines replay such a loop on the model's own
        states several times (each pass must end in the class it started from) and say so."""
        return None

    def is_enabled(self, state: S, action: A) -> bool:
        """``action in actions(state)``; a model may answer without building the list (the SimPy
        runner asks on every state change)."""
        return action in self.actions(state)

    def successors(self, state: S) -> list[tuple[A, S]]:
        """Each action of :meth:`actions`, in its order, with the state :meth:`step` makes of it:
        what the explorer asks once per state. A model may compute the part its actions share
        once (the trigger model: what any append does). Invariant:
        ``successors(s) == [(a, step(s, a)) for a in actions(s)]``."""
        step = self.step
        return [(a, step(state, a)) for a in self.actions(state)]

    def fair_actions(self) -> tuple[Hashable, ...]:
        """The actions, or action kinds (the first element of a tuple action), that are *weakly
        fair*: a fair run cannot keep one enabled for ever without taking it. What an
        ``eventually`` property assumes of the scheduler; none by default (any loop counts)."""
        return ()

    def strongly_fair_actions(self) -> tuple[Hashable, ...]:
        """Actions or kinds that are *strongly fair*: one enabled again and again (not
        necessarily without a break) is eventually taken. For an action another keeps
        switching off, which weak fairness would let starve; none by default."""
        return ()

    def duration(self, state: S, action: A) -> float:
        """How long ``action`` takes in simulated time from ``state`` (its effect lands at the
        end): what the SimPy engine's timed runs (:mod:`sim.timed_runs`) hold each step for. One
        unit by default; the model's ``step`` alone says what an action does, so a duration
        never changes which runs exist, only when each step of a run happens."""
        return 1.0

    def closed_forms(self) -> tuple[ClosedForm, ...]:
        """Metrics with a closed-form worst case, the headline one first (none by default)."""
        return ()

    # -- how a run reads ------------------------------------------------------------------------

    def format_action(self, state: S, action: A) -> str:
        """One step in the model's own words (default: the action's repr)."""
        return repr(action)

    def actor(self, state: S, action: A) -> str:
        """The lane a step belongs to (default: read off the start of its text, else ``step``)."""
        return lane_in_text(self.format_action(state, action), self.lane_order())

    def lane_order(self) -> tuple[str, ...]:
        """The roles of the model's lanes, in the order a transcript and a timeline show them."""
        return LANE_ROLES

    def order_lanes(self, lanes: Iterable[str]) -> tuple[str, ...]:
        """``lanes`` in the model's :meth:`lane_order` (numbered lanes of one role by number)."""
        return order_lanes(lanes, self.lane_order())

    def columns(self, state: S) -> Mapping[str, Any]:
        """The transcript's columns after a step (default: the metrics)."""
        return dict(self.metrics(state))

    def describe_window(self, state: S) -> str:
        """The window a reader would send in ``state``, in words ("" when the model has none)."""
        return ""

    def state_fields(self, state: S) -> list[tuple[str, FieldValue]]:
        """The state as (name, text) pairs for the viewers (default: its own fields)."""
        return plain_fields(state)

    def step_marks(self, before: S, action: A) -> tuple[str, ...]:
        """Marks the trace viewer puts on a step (e.g. ``uncounted gap turn``)."""
        return ()

    def window_panels(self, states: Sequence[S], actions: Sequence[A]) -> list[WindowPanel | None]:
        """What the reader would send after each state of a run (``states[k]`` after
        ``actions[k - 1]``), one panel or None per state; None throughout by default."""
        return [None] * len(states)

    def window_steps(self, states: Sequence[S], actions: Sequence[A]) -> tuple[set[int], str]:
        """The steps (1-based) whose writes the window sent at the end of the run holds, and a
        label for them — what a timeline shades (nothing by default)."""
        return set(), ""

    def limit(self) -> Limit | None:
        """The limit a timeline draws under the model's metrics (none by default)."""
        return None

    # -- faults ---------------------------------------------------------------------------------

    def crash_points(self, state: S) -> Sequence[CrashPoint[S]]:
        """The writers that may crash in ``state``, between two of their steps, each with the
        state the crash leaves (what was written stays, in-flight memory is lost): see
        :mod:`turncheck.models.crash_points`, whose wrapper turns them into actions for every
        engine. None by default."""
        return ()


class UserModel(ProtocolModel[Any, Any]):
    """A user's class that does not subclass :class:`ProtocolModel`, seen through the base.

    Every method of the base — the required core and each hook — is the user's own when the class
    defines one (as a callable attribute), else the base's default, which reaches the user's
    hooks through ``self`` (the default ``actor`` reads the user's ``format_action``); what a
    method returns is the user's, unconverted, as from a subclass. The user's object is never
    modified. ``name`` is the object's own string ``name`` if it has one, else ``ref``;
    ``params`` likewise.
    """

    def __init__(self, inner: Any, ref: str = "", params: Mapping[str, Any] | None = None) -> None:
        missing = [n for n in REQUIRED if not callable(getattr(inner, n, None))]
        if missing:
            shown = ref or type(inner).__name__
            raise UnknownName(
                f"{shown!r} does not follow the model interface: no {', '.join(missing)} (see models/protocol.py)"
            )
        self.inner = inner
        own_name = getattr(inner, "name", None)
        self.name = own_name if isinstance(own_name, str) else (ref or type(inner).__name__)
        own_params = getattr(inner, "params", None)
        self.params = own_params if isinstance(own_params, Mapping) else dict(params or {})
        for method in _METHODS:
            if callable(own := getattr(inner, method, None)):
                setattr(self, method, own)  # an instance attribute: found before the base's


# every method of the base a user's class may define: the required core and the hooks
_METHODS: tuple[str, ...] = tuple(n for n, v in vars(ProtocolModel).items() if callable(v) and n[0] != "_")


def as_model(model: Any, ref: str = "", params: Mapping[str, Any] | None = None) -> ProtocolModel[Any, Any]:
    """``model`` as a :class:`ProtocolModel`: itself when it subclasses the base, else wrapped in
    :class:`UserModel`. Raises :class:`UnknownName` when it lacks part of the required core
    (a subclass that does not define it, or a plain class without it). Idempotent, so every
    engine calls it at its entry. A model that declares crash points comes back wrapped so that
    they are actions (:func:`turncheck.models.crash_points.with_crashes`)."""
    from turncheck.models.crash_points import with_crashes  # it builds on this module

    return with_crashes(_as_protocol_model(model, ref, params))


def _as_protocol_model(model: Any, ref: str, params: Mapping[str, Any] | None) -> ProtocolModel[Any, Any]:
    if isinstance(model, ProtocolModel):
        missing = [
            n for n in REQUIRED if getattr(getattr(model, n), "__func__", None) is getattr(ProtocolModel, n)
        ]
        if missing:
            shown = ref or type(model).__name__
            raise UnknownName(
                f"{shown!r} does not follow the model interface: no {', '.join(missing)} (see models/protocol.py)"
            )
        return model
    return UserModel(model, ref, params)
