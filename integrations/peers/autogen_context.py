"""Peers ``autogen-buffered`` / ``autogen-token-limited`` / ``autogen-head-tail``: AutoGen's
model contexts (``autogen_core.model_context``), the object an AutoGen agent asks for the
messages of each model call (``await context.get_messages()``).

Our events become ``autogen_core.models`` messages — USER as ``UserMessage``, TERM as an
``AssistantMessage`` with text, a run of CALLs as one ``AssistantMessage`` whose content is a
list of ``FunctionCall`` (one per call id), a run of RESULTs as one
``FunctionExecutionResultMessage`` (AutoGen writes one per batch of calls) — added to the
context with ``await context.add_message(m)``:

* ``BufferedChatCompletionContext(buffer_size=N)`` — the newest ``N`` messages, minus a leading
  function-result message;
* ``TokenLimitedChatCompletionContext(model_client, token_limit=budget − frame)`` — while the
  messages count more than the limit, it removes the *middle* message (``pop(len // 2)``), then
  drops a leading function-result message: its answer is not a suffix;
* ``HeadAndTailChatCompletionContext(head_size=1, tail_size=N)`` — the first message (minus a
  trailing function-call message), a made-up ``UserMessage("Skipped K messages.")``, and the
  newest ``N`` messages (minus a leading function-result message).

Counting. ``TokenLimited`` asks its model client's ``count_tokens``; autogen-core ships no
client, so :func:`counting_client` is a ``ChatCompletionClient`` whose ``count_tokens`` is our
cost model's cost of the messages (and whose ``create`` records its input and answers with a
fixed text; no network, no key). The two count-based contexts get ``N`` = the number of newest
messages that fit the budget under our cost model (at least 1); HeadAndTail's tail gets what
fits after the head.
"""

from __future__ import annotations

from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.message_spans import (
    TOOL_NAME,
    USER_ROLE,
    Span,
    fitting_messages,
    span_costs,
    spans,
    text_counter,
)
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, invented_event, selection_of_objects, window_of

SOURCE = "turncheck"


def autogen_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """``autogen_core.models`` messages for the spans (RESULT runs grouped)."""
    models = require("autogen_core.models", "peer:autogen-buffered")
    core = require("autogen_core", "peer:autogen-buffered")
    events = history.events
    out: list[Any] = []
    for span in message_spans:
        first = events[span.start]
        if span.kind in USER_ROLE:
            out.append(models.UserMessage(content=content_of(first), source=SOURCE))
        elif span.kind is Kind.TERM:
            out.append(models.AssistantMessage(content=content_of(first), source=SOURCE))
        elif span.kind is Kind.RESULT:
            results = [
                models.FunctionExecutionResult(content=content_of(e), call_id=e.call_id or "", name=TOOL_NAME)
                for e in events[span.start : span.end]
            ]
            out.append(models.FunctionExecutionResultMessage(content=results))
        else:
            calls = [
                core.FunctionCall(id=e.call_id or "", arguments=content_of(e), name=TOOL_NAME)
                for e in events[span.start : span.end]
            ]
            out.append(models.AssistantMessage(content=calls, source=SOURCE))
    return out


def counting_client(messages: list[Any], costs: list[int], cost: CostModel) -> Any:
    """A ``ChatCompletionClient`` that counts with our cost model and records what it is sent."""
    models = require("autogen_core.models", "peer:autogen-buffered")
    known = {id(m): c for m, c in zip(messages, costs, strict=True)}
    count_text = text_counter(cost)

    class CountingClient(models.ChatCompletionClient):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.requests: list[list[Any]] = []

        def count_tokens(self, messages: Any, *, tools: Any = ()) -> int:
            return sum(known[id(m)] if id(m) in known else count_text(str(m.content)) for m in messages)

        def remaining_tokens(self, messages: Any, *, tools: Any = ()) -> int:
            return 0

        async def create(self, messages: Any, **kwargs: Any) -> Any:
            self.requests.append(list(messages))
            usage = models.RequestUsage(prompt_tokens=self.count_tokens(messages), completion_tokens=1)
            return models.CreateResult(finish_reason="stop", content="ok", usage=usage, cached=False)

        def create_stream(self, messages: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the counting client does not stream")

        async def close(self) -> None:
            return None

        def actual_usage(self) -> Any:
            return models.RequestUsage(prompt_tokens=0, completion_tokens=0)

        def total_usage(self) -> Any:
            return models.RequestUsage(prompt_tokens=0, completion_tokens=0)

        @property
        def capabilities(self) -> Any:
            return self.model_info

        @property
        def model_info(self) -> Any:
            return {"vision": False, "function_calling": True, "json_output": False,
                    "family": "unknown", "structured_output": False}  # fmt: skip

    return CountingClient()


async def _messages_of(context: Any, messages: list[Any]) -> list[Any]:
    for m in messages:
        await context.add_message(m)
    return list(await context.get_messages())


def select(history: History, budget: int, cost: CostModel, context: str) -> Selection:
    """What the model context ``context`` (``buffered``, ``token-limited``, ``head-tail``)
    returns of ``history``, as a selection."""
    contexts = require("autogen_core.model_context", "peer:autogen-buffered")
    message_spans = spans(history, group_results=True)
    messages = autogen_messages(history, message_spans)
    fits = max(1, fitting_messages(history, cost, budget, message_spans))
    if context == "buffered":
        ctx = contexts.BufferedChatCompletionContext(buffer_size=fits)
    elif context == "token-limited":
        costs = span_costs(history, cost, message_spans)
        client = counting_client(messages, costs, cost)
        ctx = contexts.TokenLimitedChatCompletionContext(client, token_limit=max(1, budget - cost.frame))
    else:
        head_cost = span_costs(history, cost, message_spans[:1])
        tail = fitting_messages(history, cost, budget - sum(head_cost), message_spans[1:])
        ctx = contexts.HeadAndTailChatCompletionContext(head_size=1, tail_size=max(1, tail))
    import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

    returned = asyncio.run(_messages_of(ctx, messages))
    return selection_of_objects(message_spans, messages, returned,
                                lambda obj, k: invented_event(history, obj, k, Kind.USER))  # fmt: skip


def buffered(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:autogen-buffered``: ``BufferedChatCompletionContext(buffer_size=N)``."""
    return window_of(
        history, budget, cost, select(history, budget, cost, "buffered"), "peer:autogen-buffered"
    )


def token_limited(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:autogen-token-limited``: ``TokenLimitedChatCompletionContext(token_limit=budget − frame)``."""
    return window_of(history, budget, cost, select(history, budget, cost, "token-limited"),
                     "peer:autogen-token-limited")  # fmt: skip


def head_and_tail(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:autogen-head-tail``: ``HeadAndTailChatCompletionContext(head_size=1, tail_size=N)``."""
    return window_of(
        history, budget, cost, select(history, budget, cost, "head-tail"), "peer:autogen-head-tail"
    )


register_peer(Peer("peer:autogen-buffered", buffered, "autogen-core", "autogen_core",
                   "BufferedChatCompletionContext(buffer_size=N)", "message count N (N chosen by ours)",
                   extra="frameworks"))  # fmt: skip
register_peer(Peer("peer:autogen-token-limited", token_limited, "autogen-core", "autogen_core",
                   "TokenLimitedChatCompletionContext(token_limit)", "ours (model client count_tokens)",
                   extra="frameworks"))  # fmt: skip
register_peer(Peer("peer:autogen-head-tail", head_and_tail, "autogen-core", "autogen_core",
                   "HeadAndTailChatCompletionContext(head_size=1, tail_size=N)",
                   "message count (tail chosen by ours)", extra="frameworks"))  # fmt: skip
