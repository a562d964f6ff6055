"""Crash windows in protocol models: a writer that dies between two of its writes.

A whole class of reported data loss happens between two writes of one logical update — Spring
AI's ``MongoChatMemoryRepository.saveAll`` deletes the conversation, then inserts the new list
(spring-ai#6770); openai-agents' ``run_compaction`` clears the session, then adds the compacted
items (openai-agents-python#3116). ALICE and CrashMonkey find such bugs by enumerating the crash
points between writes; a model does the same by *declaring* them: its
:meth:`~turncheck.models.protocol.ProtocolModel.crash_points` hook lists, for a state, each
writer that may crash there as a :class:`CrashPoint` — where (in the real code's words) and the
state the crash leaves. That state is the model's to say, and the rule it keeps is the one a
crash keeps: what was already written stays, what the writer held only in memory (a snapshot, a
compacted list not yet written) is lost, and the writer restarts with nothing in memory or stays
down.

Nothing else of the model changes. :func:`~turncheck.models.protocol.as_model` — which every
engine calls at its entry — wraps a model that declares crash points in :class:`WithCrashes`,
which adds one action ``("crash", WRITER)`` per point after the model's own actions, steps it to
the declared state, tells it in words and marks it ``crash``. So the explorer's breadth-first
search finds the shortest crash window as it finds any counterexample, the Hypothesis machine
draws crashes among the other actions, and a trace replays them. A crash is never a fair action
(a fair run is not obliged to crash); a model bounds how many crashes a run may have in its
state, or its ``eventually`` properties would meet runs that crash for ever.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from turncheck.models.protocol import ProtocolModel, UserModel

S = TypeVar("S", bound=Hashable)

CRASH = "crash"


@dataclass(frozen=True)
class CrashPoint(Generic[S]):
    """``writer`` (a lane of the model) may crash here, ``window`` says where in the real code's
    words ("after deleteByConversationId, before insert"), ``after`` is the state the crash
    leaves (what was written stays, in-flight memory is lost) and ``restarts`` whether the
    writer comes back (with nothing in memory) or stays down."""

    writer: str
    window: str
    after: S
    restarts: bool = True


def is_crash(action: Any) -> bool:
    """Whether ``action`` is a crash action :class:`WithCrashes` added."""
    return isinstance(action, tuple) and len(action) == 2 and action[0] == CRASH


def declares_crashes(model: ProtocolModel[Any, Any]) -> bool:
    """Whether ``model`` (a subclass, or a user's class seen through :class:`UserModel`) has a
    ``crash_points`` of its own."""
    own = getattr(model.crash_points, "__func__", model.crash_points)
    return own is not ProtocolModel.crash_points


class WithCrashes(UserModel):
    """``inner`` with its declared crash points as actions; every other method is the inner
    model's own, and an attribute the protocol does not name (a vendor model's ``variant``) is
    read through. Invariant: on the inner model's actions it steps, tells and marks exactly as
    the inner model does."""

    def __init__(self, inner: ProtocolModel[Any, Any]) -> None:
        super().__init__(inner, inner.name, inner.params)
        # the hooks that meet a crash action are ours, not the inner model's (set after the
        # forwarding above, which made every method of the inner model an instance attribute)
        self.actions = self._actions  # type: ignore[method-assign]
        self.step = self._step  # type: ignore[method-assign]
        self.successors = self._successors  # type: ignore[method-assign]
        self.is_enabled = self._is_enabled  # type: ignore[method-assign]
        self.format_action = self._format_action  # type: ignore[method-assign]
        self.actor = self._actor  # type: ignore[method-assign]
        self.step_marks = self._step_marks  # type: ignore[method-assign]

    def __getattr__(self, name: str) -> Any:
        # only reached for what this object lacks: the inner model's own attributes
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _points(self, state: Any) -> Sequence[CrashPoint[Any]]:
        return tuple(self.inner.crash_points(state))

    def _point(self, state: Any, action: tuple[str, str]) -> CrashPoint[Any]:
        for point in self._points(state):
            if point.writer == action[1]:
                return point
        raise ValueError(f"{action[1]} cannot crash in this state")

    def _actions(self, state: Any) -> list[Any]:
        return [*self.inner.actions(state), *((CRASH, p.writer) for p in self._points(state))]

    def _step(self, state: Any, action: Any) -> Any:
        return self._point(state, action).after if is_crash(action) else self.inner.step(state, action)

    def _successors(self, state: Any) -> list[tuple[Any, Any]]:
        return [*self.inner.successors(state), *(((CRASH, p.writer), p.after) for p in self._points(state))]

    def _is_enabled(self, state: Any, action: Any) -> bool:
        if is_crash(action):
            return any(p.writer == action[1] for p in self._points(state))
        return bool(self.inner.is_enabled(state, action))

    def _format_action(self, state: Any, action: Any) -> str:
        if not is_crash(action):
            return str(self.inner.format_action(state, action))
        point = self._point(state, action)
        then = "restarts with nothing in memory" if point.restarts else "stays down"
        return f"{point.writer} crashes {point.window}: what was written stays, it {then}"

    def _actor(self, state: Any, action: Any) -> str:
        return str(action[1]) if is_crash(action) else str(self.inner.actor(state, action))

    def _step_marks(self, before: Any, action: Any) -> tuple[str, ...]:
        return (CRASH,) if is_crash(action) else tuple(self.inner.step_marks(before, action))


def with_crashes(model: ProtocolModel[Any, Any]) -> ProtocolModel[Any, Any]:
    """``model`` with its crash points as actions, or itself when it declares none (or is
    wrapped already)."""
    if isinstance(model, WithCrashes) or not declares_crashes(model):
        return model
    return WithCrashes(model)
