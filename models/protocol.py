"""The one interface every concurrency protocol is written against (Stateright's shape).

A protocol model is defined once, here in ``models``: immutable hashable states, the actions
enabled in a state, a pure ``step``, and named properties. The SimPy runner, the Hypothesis
state machine factory and the exhaustive explorer in ``sim`` all consume this interface; none
of them re-implements a protocol. A user's own protocol, named ``package.module:Class``, only
has to follow it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

S = TypeVar("S", bound=Hashable)
A = TypeVar("A", bound=Hashable)


@dataclass(frozen=True)
class Property(Generic[S]):
    """A named property of states.

    ``always``: must hold in every reachable state (an invariant; a violation is a
    counterexample). ``sometimes``: must hold in at least one reachable state (a goal; never
    reaching it makes a run inconclusive, never green).
    """

    name: str
    expectation: Literal["always", "sometimes"]
    holds: Callable[[S], bool]
    doc: str = ""


@runtime_checkable
class ProtocolModel(Protocol[S, A]):
    """What the engines need from a model.

    ``step`` must be pure and deterministic: the same state and action give the same next
    state, so a trace of actions replays exactly. ``actions`` lists the enabled actions in a
    stable order (engines index into it). ``metrics`` names integer quantities whose worst case
    the explorer reports (e.g. ``live_turns``). ``canonical`` maps a state to the
    representative of its symmetry class (interchangeable writers, call ids); return the state
    itself when the model has no symmetry.
    """

    name: str
    params: Mapping[str, Any]

    def init_states(self) -> Iterable[S]: ...

    def actions(self, state: S) -> Iterable[A]: ...

    def step(self, state: S, action: A) -> S: ...

    def properties(self) -> tuple[Property[S], ...]: ...

    def metrics(self, state: S) -> Mapping[str, int]: ...

    def canonical(self, state: S) -> S: ...

    def format_action(self, state: S, action: A) -> str: ...
