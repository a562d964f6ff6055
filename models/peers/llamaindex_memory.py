"""Peer ``llamaindex``: ``llama_index.core.memory.ChatMemoryBuffer`` with ``token_limit``.

Our events become LlamaIndex ``ChatMessage`` objects — USER as a user message, TERM as an
assistant message, a run of CALLs as one assistant message whose blocks are ``ToolCallBlock``
(one per call id), RESULT as a tool message with ``additional_kwargs["tool_call_id"]`` — stored
in a ``SimpleChatStore`` and read back with ``ChatMemoryBuffer.get(initial_token_count=frame)``
under ``token_limit = budget``.

Counting. The buffer's only hook is ``tokenizer_fn(text) -> list``, applied to the contents of
the candidate messages joined by spaces (``" ".join(str(m.content) …)``; a tool-call message's
content is ``None`` and counts as the text ``"None"``). Every string it is asked about is the
joined contents of a suffix of the history, so the adapter recognises the suffix by its length
and returns a list as long as our cost model's cost of those messages: the buffer trims by
exactly our costs. Any other string falls back to our cost of that text as one message.

The buffer drops messages from the front while over the limit, and after each drop keeps
dropping while the new first message is an assistant or tool message (a history must start on
a user message). When nothing but the newest message is left and it still does not fit, it
returns that newest message anyway ("so the LLM can raise an error"), over budget.
"""

from __future__ import annotations

from typing import Any

from turncheck.models.cost import CostModel, content_of
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.peers.library import require
from turncheck.models.peers.messages import TOOL_NAME, Span, arguments, span_costs, spans, text_counter
from turncheck.models.peers.selection import Selection, window_of
from turncheck.models.projector import MandatoryInputExceedsBudget, Window


def llamaindex_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """LlamaIndex ``ChatMessage`` objects for the spans."""
    types = require("llama_index.core.base.llms.types", "llamaindex")
    events = history.events
    out: list[Any] = []
    for span in message_spans:
        first = events[span.start]
        if span.kind is Kind.USER:
            out.append(types.ChatMessage(role="user", content=content_of(first)))
        elif span.kind is Kind.TERM:
            out.append(types.ChatMessage(role="assistant", content=content_of(first)))
        elif span.kind is Kind.RESULT:
            out.append(
                types.ChatMessage(
                    role="tool", content=content_of(first), additional_kwargs={"tool_call_id": first.call_id}
                )
            )
        else:
            blocks = [
                types.ToolCallBlock(
                    tool_call_id=e.call_id, tool_name=TOOL_NAME, tool_kwargs=arguments(content_of(e))
                )
                for e in events[span.start : span.end]
            ]
            out.append(types.ChatMessage(role="assistant", blocks=blocks))
    return out


class SuffixCounter:
    """``tokenizer_fn`` that prices the joined contents of a suffix of messages by our costs.

    ``len(" ".join(contents[k:]))`` strictly decreases with ``k``, so a string's length names
    the suffix; its first characters are checked against that suffix's first message.
    """

    def __init__(self, contents: list[str], costs: list[int], fallback: Any) -> None:
        self._contents = contents
        self._fallback = fallback
        self._suffix: dict[int, tuple[int, int]] = {}
        length = -1
        total = 0
        for k in range(len(contents) - 1, -1, -1):
            length += len(contents[k]) + 1
            total += costs[k]
            self._suffix[length] = (k, total)

    def __call__(self, text: str) -> range:
        hit = self._suffix.get(len(text))
        if hit is not None:
            k, total = hit
            head = self._contents[k][:64]
            if text.startswith(head):
                return range(total)
        return range(self._fallback(text))


def select(history: History, budget: int, cost: CostModel) -> Selection:
    """What ``ChatMemoryBuffer.get`` returns of ``history``, as history positions."""
    memory = require("llama_index.core.memory", "llamaindex")
    message_spans = spans(history)
    messages = llamaindex_messages(history, message_spans)
    counter = SuffixCounter(
        [str(m.content) for m in messages], span_costs(history, cost, message_spans), text_counter(cost)
    )
    buffer = memory.ChatMemoryBuffer.from_defaults(
        chat_history=messages, token_limit=budget, tokenizer_fn=counter
    )
    try:
        kept = buffer.get(initial_token_count=cost.frame)
    except ValueError as exc:
        if cost.frame > budget:  # "Initial token count exceeds token limit"
            raise MandatoryInputExceedsBudget(cost.frame, budget) from exc
        raise
    first = len(message_spans) - len(kept)
    if kept and str(kept[0].content) != str(messages[first].content):
        raise TurncheckError("peer:llamaindex returned messages that are not a suffix of its history")
    return Selection(tuple(p for s in message_spans[first:] for p in s.positions))


def chat_memory_buffer(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:llamaindex``: ``ChatMemoryBuffer(token_limit=budget).get()``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:llamaindex")
