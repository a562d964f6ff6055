"""An orphaned tool call that disables compaction for ever — a liveness bug, checked by turncheck.

An agent session: a user asks, the agent may call a tool and waits for its result, then answers;
every question leaves the log over its budget, and the compactor then cuts the *safe prefix* —
the events before the oldest call still waiting for its result, so a call and its result are
never split. If the tool crashes, its result never comes: the call is an *orphan*, and the agent
answers without it (it timed out). With ``fixed=False`` the compactor still waits for the
orphan's result: the safe prefix is empty for ever and compaction never runs again, while the
session goes on — nothing crashes, nothing is ever wrong in any one state (Google ADK's
adk-python #7236). With ``fixed=True`` the compactor first closes an orphan with a synthetic
"cancelled" result, then compacts.

The property is liveness — whenever the log is over budget, a compaction eventually runs —
which holds only on *fair* runs: the compactor is strongly fair (enabled again and again, it is
eventually taken; a call in flight disables it, so weak fairness would let every tool call
starve it). Run it with::

    turncheck check examples/orphan_compaction.py:OrphanCompaction --engine explore
    turncheck check examples/orphan_compaction.py:OrphanCompaction --param fixed=true --engine explore

The first fails with a lasso — the steps to a loop the session goes round for ever with the
log over budget — the second passes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any, NamedTuple

from turncheck.models.protocol import Property, ProtocolModel

Action = tuple[str]


class Session(NamedTuple):
    """``asked``: a question waits for its answer; ``over``: the log is over budget (a compaction
    is due); ``call``: the oldest call without its result — ``none``, ``open`` (its result may
    still come) or ``orphan`` (its tool crashed: it never will)."""

    asked: bool
    over: bool
    call: str


class OrphanCompaction(ProtocolModel[Session, Action]):
    """A session whose compactor cuts before the oldest unanswered call; ``fixed`` closes orphans."""

    name = "orphan-compaction"

    def __init__(self, fixed: bool = False) -> None:
        self.fixed = fixed
        self.params: Mapping[str, Any] = {"fixed": fixed}

    def init_states(self) -> Iterator[Session]:
        yield Session(asked=False, over=False, call="none")

    def actions(self, state: Session) -> list[Action]:
        out: list[Action] = []
        if not state.asked:
            out.append(("ask",))
        elif state.call == "none":
            out.append(("call",))
        if state.call == "open":
            out += [("result",), ("crash",)]
        elif state.asked:
            out.append(("answer",))
        if state.over and (state.call == "none" or (self.fixed and state.call == "orphan")):
            out.append(("compact",))
        return out

    def step(self, state: Session, action: Action) -> Session:
        verb = action[0]
        if verb == "ask":
            return state._replace(asked=True, over=True)
        if verb == "call":
            return state._replace(call="open")
        if verb == "result":
            return state._replace(call="none")
        if verb == "crash":
            return state._replace(call="orphan")
        if verb == "answer":
            return state._replace(asked=False)
        return state._replace(over=False, call="none")  # compact (closing an orphan first, when fixed)

    def properties(self) -> tuple[Property[Session], ...]:
        return (
            Property.leads_to(
                "due-compaction-runs",
                lambda s: s.over,
                lambda s: not s.over,
                "whenever the log is over budget, a compaction eventually runs",
            ),
        )

    def strongly_fair_actions(self) -> tuple[Hashable, ...]:
        return ("compact",)

    def format_action(self, state: Session, action: Action) -> str:
        verb = action[0]
        if verb == "ask":
            return "user asks; the log is over budget"
        if verb == "call":
            return "agent calls the tool and waits for its result"
        if verb == "result":
            return "tool returns its result"
        if verb == "crash":
            return "tool crashes: its call never gets a result (an orphan)"
        if verb == "answer":
            return "agent answers" + (" without the crashed call's result" if state.call == "orphan" else "")
        if state.call == "orphan":
            return "compactor closes the orphan with a cancelled result and compacts"
        return "compactor compacts the safe prefix"

    def actor(self, state: Session, action: Action) -> str:
        return {"ask": "user", "answer": "agent", "call": "agent", "compact": "compactor"}.get(
            action[0], "tool"
        )

    def lane_order(self) -> tuple[str, ...]:
        return ("user", "agent", "tool", "compactor")
