"""Peer ``llamaindex``: ``llama_index.core.memory.Memory`` (and the deprecated ``ChatMemoryBuffer``).

``peer:llamaindex`` runs ``Memory.from_defaults(token_limit=budget − frame)`` — LlamaIndex's
current memory, the class ``ChatMemoryBuffer``'s deprecation notice points to — as an agent
uses it: every message is ``await memory.aput(m)`` in order (``Memory`` trims on put: while the
active queue counts more than ``token_limit × chat_history_token_ratio`` (0.7 by default) it
archives the oldest messages in chunks of ``token_flush_size``, then keeps archiving until the
queue starts on a user message, and if that would leave no user message it puts back the
newest whole turn), then ``await memory.aget()`` is what the model is sent. It counts with its
own default tokenizer (tiktoken ``cl100k_base``) over each message's text blocks and
``str(additional_kwargs)`` — tool-call blocks are not counted at all.

The deprecated buffer, kept as :func:`chat_memory_buffer` (not a registered peer any more):

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

from collections.abc import Sequence
from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.message_spans import (
    TOOL_NAME,
    USER_ROLE,
    Span,
    arguments,
    span_costs,
    spans,
    text_counter,
)
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import MandatoryInputExceedsBudget, Window
from turncheck.models.selection import Selection, window_of


def llamaindex_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """LlamaIndex ``ChatMessage`` objects for the spans."""
    types = require("llama_index.core.base.llms.types", "peer:llamaindex")
    events = history.events
    out: list[Any] = []
    for span in message_spans:
        first = events[span.start]
        if span.kind in USER_ROLE:
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
    memory = require("llama_index.core.memory", "peer:llamaindex")
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


async def _memory_window(messages: list[Any], token_limit: int) -> list[Any]:
    return (await _memory_windows(messages, [len(messages)], token_limit))[0]


def select_memory(history: History, budget: int, cost: CostModel) -> Selection:
    """What ``Memory.aget()`` returns after every message was put, as history positions."""
    message_spans = spans(history)
    messages = llamaindex_messages(history, message_spans)
    if budget - cost.frame < 1:
        raise MandatoryInputExceedsBudget(cost.frame, budget)
    import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

    kept = asyncio.run(_memory_window(messages, budget - cost.frame))
    first = len(messages) - len(kept)
    if first < 0 or any(
        str(a.content) != str(b.content) for a, b in zip(kept, messages[first:], strict=True)
    ):
        raise TurncheckError("peer:llamaindex returned messages that are not a suffix of its history")
    return Selection(tuple(p for s in message_spans[first:] for p in s.positions))


async def _memory_windows(messages: list[Any], ends: list[int], token_limit: int) -> list[list[Any]]:
    """``Memory`` on its default store (in-memory SQLite through SQLAlchemy), on an engine we
    create so we can dispose of it before the event loop closes (the default engine's
    connection thread would outlive ``asyncio.run`` and report a closed loop)."""
    memory = require("llama_index.core.memory", "peer:llamaindex")
    engine = require("sqlalchemy.ext.asyncio", "peer:llamaindex").create_async_engine(
        "sqlite+aiosqlite:///:memory:"
    )
    try:
        store = memory.Memory.from_defaults(
            session_id="turncheck", token_limit=token_limit, async_engine=engine
        )
        out: list[list[Any]] = []
        put = 0
        for end in ends:
            for m in messages[put:end]:
                await store.aput(m)
            put = end
            out.append(list(await store.aget()))
        return out
    finally:
        await engine.dispose()


def memory_requests(
    events: Sequence[Event], points: Sequence[int], budget: int, cost: CostModel
) -> list[Window]:
    """The windows of the requests at ``points``, as one ``Memory`` sees them while an agent
    runs: each message put once, in order, ``aget()`` at every request — the same windows as
    :func:`memory` on each prefix (``Memory`` trims on put, so its state is the prefix's)."""
    if budget - cost.frame < 1:
        raise MandatoryInputExceedsBudget(cost.frame, budget)
    whole = History(events, costs=(cost,))
    message_spans = spans(whole)
    messages = llamaindex_messages(whole, message_spans)
    ends = [
        next((i for i, s in enumerate(message_spans) if s.start >= p), len(message_spans)) for p in points
    ]
    import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

    kept_per_request = asyncio.run(_memory_windows(messages, ends, budget - cost.frame))
    out: list[Window] = []
    for p, end, kept in zip(points, ends, kept_per_request, strict=True):
        first = end - len(kept)
        if first < 0 or any(
            str(a.content) != str(b.content) for a, b in zip(kept, messages[first:end], strict=True)
        ):
            raise TurncheckError("peer:llamaindex returned messages that are not a suffix of its history")
        prefix = History(events[:p], costs=(cost,))
        positions = tuple(q for s in message_spans[first:end] for q in s.positions)
        out.append(window_of(prefix, budget, cost, Selection(positions), "peer:llamaindex"))
    return out


def memory(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:llamaindex``: ``Memory.from_defaults(token_limit)``, ``aput`` each message, ``aget()``."""
    return window_of(history, budget, cost, select_memory(history, budget, cost), "peer:llamaindex")


def chat_memory_buffer(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:llamaindex``: ``ChatMemoryBuffer(token_limit=budget).get()``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:llamaindex")


register_peer(Peer("peer:llamaindex", memory, "llama-index-core", "llama_index",
                   "Memory(token_limit): aput each message, aget()",
                   "its own (default tokenizer, tiktoken cl100k_base)", colour="#17becf", marker="h",
                   hollow=True))  # fmt: skip
