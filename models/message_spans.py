"""Our events as chat messages, the shape every peer library starts from.

A chat API has no "CALL event": a model's tool calls arrive in one assistant message, with
one entry per call. So a run of consecutive CALL events (parallel calls, ``CALL a, CALL b``)
becomes one assistant message carrying every call, and any other event is one message:
USER → user, TERM → assistant, RESULT → tool (with its ``tool_call_id``). A :class:`Span` keeps
the history positions each message came from, which is how a peer's output maps back to a
selection of our events. A peer can therefore never cut between two parallel CALLs.

The OpenAI Agents SDK is the exception: its Responses-API items carry one ``function_call``
item per call, so its adapter uses one item per event (``spans(history, group_calls=False)``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.cost import CostModel, content_of
from turncheck.models.events import Event, Kind, detect_cjk
from turncheck.models.history import History

TOOL_NAME = "tool"

USER_ROLE = (Kind.USER, Kind.SUMMARY)
"""The kinds a library receives as a user message: a summary is one, as in our requests."""


@dataclass(frozen=True)
class Span:
    """One chat message: the events ``[start, end)`` of the history it was made from."""

    kind: Kind
    start: int
    end: int

    @property
    def positions(self) -> range:
        return range(self.start, self.end)


def spans(history: History, group_calls: bool = True, group_results: bool = False) -> list[Span]:
    """The messages of ``history`` in order; consecutive CALLs form one span when grouped, and
    consecutive RESULTs too when ``group_results`` (AutoGen's one result message per batch)."""
    return extend_spans(history, [], 0, group_calls, group_results)


def extend_spans(
    history: History, out: list[Span], start: int, group_calls: bool = True, group_results: bool = False
) -> list[Span]:
    """``out`` (the spans of positions ``[0, start)``, ending at ``start``) extended in place
    with the spans of ``[start, n)``, and returned: how a per-request replay grows its messages.

    Invariant: when ``out`` is ``spans(h[:start])`` minus any last span that a later event
    could still extend (a run of grouped kinds), the result is ``spans(history)``; callers
    growing a list drop its last span and restart at that span's start."""
    kinds = history.kind
    grouped = {int(Kind.CALL)} if group_calls else set()
    if group_results:
        grouped.add(int(Kind.RESULT))
    for pos in range(start, len(kinds)):
        k = kinds[pos]
        if k in grouped and out and out[-1].kind == k and out[-1].end == pos:
            out[-1] = Span(Kind(k), out[-1].start, pos + 1)
        else:
            out.append(Span(Kind(k), pos, pos + 1))
    return out


def span_costs(history: History, cost: CostModel, message_spans: Sequence[Span]) -> list[int]:
    """Each message's cost under ``cost``: the sum of its events' costs (prefix-sum differences)."""
    p = history.prefix(cost)
    return [p[s.end] - p[s.start] for s in message_spans]


def arguments(text: str) -> dict[str, Any]:
    """A CALL's text as the argument object a tool call carries: the text itself when it is a
    JSON object, else ``{"input": text}``."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"input": text}
    return value if isinstance(value, dict) else {"input": text}


def openai_message(history: History, span: Span) -> dict[str, Any]:
    """The Chat Completions message of one span (the shape litellm and most SDKs take)."""
    events = history.events
    first = events[span.start]
    if span.kind is Kind.CALL:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": e.call_id,
                    "type": "function",
                    "function": {"name": TOOL_NAME, "arguments": content_of(e)},
                }
                for e in events[span.start : span.end]
            ],
        }
    if span.kind is Kind.RESULT:
        return {"role": "tool", "tool_call_id": first.call_id, "content": content_of(first)}
    role = "user" if span.kind in USER_ROLE else "assistant"
    return {"role": role, "content": content_of(first)}


def text_counter(cost: CostModel) -> Callable[[str], int]:
    """Our cost model applied to a bare string, for peers whose hook takes text, not messages:
    the cost of a USER event with that text (CJK detected as the JSONL reader does)."""

    def count(text: str) -> int:
        return cost.event_cost(Event(0, "", 0, Kind.USER, text=text, cjk=detect_cjk(text)))

    return count


def fitting_messages(history: History, cost: CostModel, budget: int, message_spans: Sequence[Span]) -> int:
    """How many of the newest messages fit ``budget`` with the frame, under ``cost``: the count a
    peer that trims by message count (not tokens) would need to be told to stay within budget.

    Invariant: the newest ``k`` messages cost at most ``budget − frame`` and the newest ``k + 1``
    do not (``k`` may be 0).
    """
    room = budget - cost.frame
    costs = span_costs(history, cost, message_spans)
    k = 0
    for c in reversed(costs):
        if c > room:
            break
        room -= c
        k += 1
    return k
