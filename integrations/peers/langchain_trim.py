"""Peer ``langchain`` / ``langchain-human``: ``langchain_core.messages.trim_messages``.

Our events become LangChain's own messages — ``HumanMessage`` (USER), ``AIMessage`` with
``tool_calls`` (a run of CALLs, one entry per call id), ``ToolMessage`` with ``tool_call_id``
(RESULT), ``AIMessage`` (TERM) — and are trimmed with ``strategy="last"``, no partial messages,
``max_tokens = budget − frame`` (the system prompt and current question are ours, not in the
trimmed list). ``token_counter`` is a list counter that returns our cost model's cost of the
messages (each message's id names its span), so LangChain trims by exactly our costs.
``peer:langchain-human`` adds ``start_on="human"``, LangChain's documented way to keep a chat
history valid: after trimming, messages before the first ``HumanMessage`` are dropped.

LangChain keeps whole messages from the end while they fit, so its output is always a suffix:
when the newest message alone exceeds the budget it returns nothing.
"""

from __future__ import annotations

from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.message_spans import TOOL_NAME, USER_ROLE, Span, arguments, span_costs, spans
from turncheck.models.messages import FLAVOURS
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, window_of


def langchain_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """LangChain message objects for the spans; each message's ``id`` is its span index."""
    lc = require("langchain_core.messages", "peer:langchain")
    events = history.events
    out: list[Any] = []
    for i, span in enumerate(message_spans):
        first = events[span.start]
        mid = str(i)
        if span.kind in USER_ROLE:
            out.append(lc.HumanMessage(content=content_of(first), id=mid))
        elif span.kind is Kind.TERM:
            out.append(lc.AIMessage(content=content_of(first), id=mid))
        elif span.kind is Kind.RESULT:
            out.append(lc.ToolMessage(content=content_of(first), tool_call_id=first.call_id or "", id=mid))
        else:
            calls = [
                {"name": TOOL_NAME, "args": arguments(content_of(e)), "id": e.call_id, "type": "tool_call"}
                for e in events[span.start : span.end]
            ]
            out.append(lc.AIMessage(content="", tool_calls=calls, id=mid))
    return out


def select(history: History, budget: int, cost: CostModel, start_on_human: bool = False) -> Selection:
    """What ``trim_messages(strategy="last")`` keeps of ``history``, as history positions."""
    lc = require("langchain_core.messages", "peer:langchain")
    message_spans = spans(history)
    costs = span_costs(history, cost, message_spans)
    messages = langchain_messages(history, message_spans)

    def our_cost(msgs: list[Any]) -> int:
        return sum(costs[int(m.id)] for m in msgs)

    kept = lc.trim_messages(
        messages,
        max_tokens=budget - cost.frame,
        token_counter=our_cost,
        strategy="last",
        allow_partial=False,
        start_on="human" if start_on_human else None,
    )
    return Selection(tuple(p for m in kept for p in message_spans[int(m.id)].positions))


def trim_last(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:langchain``: ``trim_messages(strategy="last")``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:langchain")


def trim_last_human(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:langchain-human``: ``trim_messages(strategy="last", start_on="human")``."""
    return window_of(
        history, budget, cost, select(history, budget, cost, start_on_human=True), "peer:langchain-human"
    )


register_peer(Peer("peer:langchain", trim_last, "langchain-core", "langchain_core",
                   "trim_messages(strategy='last')", "ours (token_counter)", colour="#8c564b",
                   marker="<"))  # fmt: skip
register_peer(Peer("peer:langchain-human", trim_last_human, "langchain-core", "langchain_core",
                   "trim_messages(strategy='last', start_on='human')", "ours (token_counter)",
                   colour="#e377c2", marker=">"))  # fmt: skip

FLAVOURS.register("langchain", langchain_messages)
