"""Peers ``semantic-kernel`` / ``semantic-kernel-summary``: Semantic Kernel's chat-history reducers.

Our events become Semantic Kernel ``ChatMessageContent`` objects — USER as a user message, TERM
as an assistant message, a run of CALLs as one assistant message whose items are
``FunctionCallContent`` (one per call id), RESULT as a tool message holding one
``FunctionResultContent`` — in a reducer, and ``await reducer.reduce()`` decides what is kept:

* ``ChatHistoryTruncationReducer(target_count=N, threshold_count=0)`` — documented as keeping
  about ``N`` messages while "avoiding orphaning" function calls and results: it moves its cut
  back over call/result messages and forward to a user message inside the threshold window;
* ``ChatHistorySummarizationReducer(service=…, target_count=N, threshold_count=0)`` — the same
  cut, with everything before it summarised by the service into one new message sent first.
  The service is :class:`RecordingSummarizer`, a chat-completion service that answers with a
  fixed-form summary and records what it was asked (no network, no key).

Counting. Both reducers trim by message count, not tokens. ``N`` is the number of newest
messages that fit the budget under our cost model (:func:`fitting_messages`, at least 1, the
reducers' minimum) — the best a per-request setting could do; a fixed count is
:func:`select` ``(target=…)``. The summary is an invented message: the window is then a
:class:`PeerWindow` with ``invented = 1``, priced by our cost model like any other message.
"""

from __future__ import annotations

from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.message_spans import TOOL_NAME, USER_ROLE, Span, fitting_messages, spans
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, invented_event, selection_of_objects, window_of

SUMMARY_PREFIX = "Summary of the earlier conversation"


def sk_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """Semantic Kernel ``ChatMessageContent`` objects for the spans."""
    c = require("semantic_kernel.contents", "peer:semantic-kernel")
    role = require("semantic_kernel.contents.utils.author_role", "peer:semantic-kernel").AuthorRole
    events = history.events
    out: list[Any] = []
    for span in message_spans:
        first = events[span.start]
        if span.kind in USER_ROLE:
            out.append(c.ChatMessageContent(role=role.USER, content=content_of(first)))
        elif span.kind is Kind.TERM:
            out.append(c.ChatMessageContent(role=role.ASSISTANT, content=content_of(first)))
        elif span.kind is Kind.RESULT:
            item = c.FunctionResultContent(
                id=first.call_id, function_name=TOOL_NAME, result=content_of(first)
            )
            out.append(c.ChatMessageContent(role=role.TOOL, items=[item]))
        else:
            calls = [
                c.FunctionCallContent(id=e.call_id, function_name=TOOL_NAME, arguments=content_of(e))
                for e in events[span.start : span.end]
            ]
            out.append(c.ChatMessageContent(role=role.ASSISTANT, items=calls))
    return out


def recording_summarizer() -> Any:
    """A Semantic Kernel chat-completion service that summarises without a model: it answers
    ``"Summary of the earlier conversation (K messages): <first words of each>"`` and records
    every chat history it was sent (``.requests``)."""
    base = require("semantic_kernel.connectors.ai.chat_completion_client_base", "peer:semantic-kernel")
    c = require("semantic_kernel.contents", "peer:semantic-kernel")
    role = require("semantic_kernel.contents.utils.author_role", "peer:semantic-kernel").AuthorRole

    class RecordingSummarizer(base.ChatCompletionClientBase):  # type: ignore[misc, name-defined]
        requests: list[list[str]] = []

        async def _inner_get_chat_message_contents(self, chat_history: Any, settings: Any) -> list[Any]:
            asked = [str(m.content) for m in chat_history.messages]
            self.requests.append(asked)
            heads = "; ".join(text[:12] for text in asked[1:])
            text = f"{SUMMARY_PREFIX} ({len(asked) - 1} messages): {heads}"
            return [c.ChatMessageContent(role=role.ASSISTANT, content=text)]

    return RecordingSummarizer(ai_model_id="turncheck-recording-summarizer", service_id="summarizer")


async def _reduce(reducer: Any) -> list[Any]:
    await reducer.reduce()
    return list(reducer.messages)


def select(history: History, budget: int, cost: CostModel, summarize: bool = False,
           target: int | None = None) -> Selection:  # fmt: skip
    """What the reducer keeps of ``history`` (and the summary it writes), as a selection."""
    reducers = require("semantic_kernel.contents", "peer:semantic-kernel")
    message_spans = spans(history)
    messages = sk_messages(history, message_spans)
    if target is None:
        target = max(1, fitting_messages(history, cost, budget, message_spans))
    if summarize:
        reducer = reducers.ChatHistorySummarizationReducer(
            service=recording_summarizer(), target_count=target, threshold_count=0, messages=messages
        )
    else:
        reducer = reducers.ChatHistoryTruncationReducer(
            target_count=target, threshold_count=0, messages=messages
        )
    import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

    kept = asyncio.run(_reduce(reducer))
    return selection_of_objects(message_spans, messages, kept, lambda obj, k: invented_event(history, obj, k))


def truncation(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:semantic-kernel``: ``ChatHistoryTruncationReducer(target_count=N).reduce()``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:semantic-kernel")


def summarization(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:semantic-kernel-summary``: ``ChatHistorySummarizationReducer(target_count=N).reduce()``."""
    return window_of(history, budget, cost, select(history, budget, cost, summarize=True),
                     "peer:semantic-kernel-summary")  # fmt: skip


register_peer(Peer("peer:semantic-kernel", truncation, "semantic-kernel", "semantic_kernel",
                   "ChatHistoryTruncationReducer(target_count=N)", "message count N (N chosen by ours)",
                   extra="frameworks"))  # fmt: skip
register_peer(Peer("peer:semantic-kernel-summary", summarization, "semantic-kernel", "semantic_kernel",
                   "ChatHistorySummarizationReducer(target_count=N, service=stub)",
                   "message count N (N chosen by ours)", extra="frameworks"))  # fmt: skip
