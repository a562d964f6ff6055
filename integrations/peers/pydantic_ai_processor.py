"""Peer ``pydantic-ai``: Pydantic AI's history processor, the keep-last-N function its docs show,
run by a real ``Agent`` whose model is a ``FunctionModel`` that records what it is sent.

Our events become Pydantic AI messages — USER as ``ModelRequest([UserPromptPart])``, a run of
CALLs as ``ModelResponse([ToolCallPart …])``, a run of RESULTs as
``ModelRequest([ToolReturnPart …])``, TERM as ``ModelResponse([TextPart])`` — passed as
``message_history``; the agent runs with ``capabilities=[ProcessHistory(keep_recent)]`` where
``keep_recent`` is the docs' processor::

    async def keep_recent(messages):
        return messages[-N:] if len(messages) > N else messages

Before each model request Pydantic AI also *repairs* the history: a tool call without a result
gets a synthesized ``ToolReturnPart`` (an invented message), a tool result without its call is
dropped, consecutive requests are merged. The recording model sees the result; each part it
received is mapped back to an event (calls and results by call id, text by content), and a
synthesized return becomes an invented RESULT.

A history that *ends* on a tool call without a result (the agent calls its model before the
result exists: a dangling call) is refused with a new prompt ("Cannot provide a new user
prompt when the message history contains unprocessed tool calls"): the request is ``refused``.

Counting: none in the library; ``N`` is one more than the number of newest messages that fit
the budget under our cost model: the processor sees the current request as its last message.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event, Kind, detect_cjk
from turncheck.models.history import History
from turncheck.models.message_spans import TOOL_NAME, USER_ROLE, Span, fitting_messages, spans
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, window_of

SYNTHESIZED = "pydantic_ai_synthesized_tool_return"
UNPROCESSED = "unprocessed tool calls"


def pydantic_messages(history: History, message_spans: list[Span]) -> list[Any]:
    """Pydantic AI ``ModelRequest``/``ModelResponse`` objects for the spans (RESULT runs grouped)."""
    m = require("pydantic_ai.messages", "peer:pydantic-ai")
    events = history.events
    out: list[Any] = []
    for span in message_spans:
        group = events[span.start : span.end]
        if span.kind in USER_ROLE:
            out.append(m.ModelRequest(parts=[m.UserPromptPart(content_of(group[0]))]))
        elif span.kind is Kind.TERM:
            out.append(m.ModelResponse(parts=[m.TextPart(content_of(group[0]))]))
        elif span.kind is Kind.RESULT:
            out.append(
                m.ModelRequest(
                    parts=[m.ToolReturnPart(TOOL_NAME, content_of(e), e.call_id or "") for e in group]
                )
            )
        else:
            out.append(
                m.ModelResponse(
                    parts=[m.ToolCallPart(TOOL_NAME, content_of(e), e.call_id or "") for e in group]
                )
            )
    return out


def _key(kind: Kind, event_or_part: Any) -> tuple[Any, ...]:
    if kind in (Kind.CALL, Kind.RESULT):
        return (kind, getattr(event_or_part, "call_id", None) or getattr(event_or_part, "tool_call_id", None))
    text = event_or_part.text if isinstance(event_or_part, Event) else event_or_part.content
    return (kind, text)


def part_kind(part: Any) -> Kind | None:
    """The event kind a received part stands for (``None`` for parts we never send)."""
    name = type(part).__name__
    return {"UserPromptPart": Kind.USER, "TextPart": Kind.TERM, "ToolCallPart": Kind.CALL,
            "ToolReturnPart": Kind.RESULT}.get(name)  # fmt: skip


def select(history: History, budget: int, cost: CostModel, keep: int | None = None) -> Selection:
    """What the agent's model is sent of ``history`` (the current question, last, left out)."""
    pai = require("pydantic_ai", "peer:pydantic-ai")
    capabilities = require("pydantic_ai.capabilities", "peer:pydantic-ai")
    function = require("pydantic_ai.models.function", "peer:pydantic-ai")
    m = require("pydantic_ai.messages", "peer:pydantic-ai")
    message_spans = spans(history, group_results=True)
    messages = pydantic_messages(history, message_spans)
    n_keep = keep if keep is not None else fitting_messages(history, cost, budget, message_spans) + 1

    async def keep_recent(msgs: list[Any]) -> list[Any]:
        return msgs[-n_keep:] if len(msgs) > n_keep else msgs

    received: list[list[Any]] = []

    def model(msgs: list[Any], info: Any) -> Any:
        received.append(list(msgs))
        return m.ModelResponse(parts=[m.TextPart("ok")])

    current = getattr(cost, "current", "") or ""
    agent = pai.Agent(function.FunctionModel(model), capabilities=[capabilities.ProcessHistory(keep_recent)])
    try:
        agent.run_sync(current, message_history=messages)
    except require("pydantic_ai.exceptions", "peer:pydantic-ai").UserError as exc:
        if UNPROCESSED not in str(exc):
            raise
        return Selection((), refused=True)
    parts = [p for msg in received[-1] for p in msg.parts]
    if not parts or part_kind(parts[-1]) is not Kind.USER or parts[-1].content != current:
        raise TurncheckError("peer:pydantic-ai did not end its request with the current question")
    free: dict[tuple[Any, ...], deque[int]] = defaultdict(deque)
    for pos, e in enumerate(history.events):
        free[_key(Kind.USER if e.kind in USER_ROLE else e.kind, e)].append(
            pos
        )  # a summary comes back as a user part
    positions: list[int] = []
    invented: list[tuple[int, Event]] = []
    for part in parts[:-1]:
        kind = part_kind(part)
        if kind is None:
            raise TurncheckError(f"peer:pydantic-ai sent a part it was not given: {type(part).__name__}")
        queue = free.get(_key(kind, part))
        if (part.metadata or {}).get(SYNTHESIZED) if kind is Kind.RESULT else False:
            text = str(part.content)
            session = history.events[0].session if len(history) else ""
            invented.append((len(positions), Event(-1 - len(invented), session, 0, Kind.RESULT, call_id=part.tool_call_id,
                                                   text=text, chars=len(text), cjk=detect_cjk(text))))  # fmt: skip
            continue
        if not queue:
            raise TurncheckError(f"peer:pydantic-ai sent a part that is not in its history: {str(part)[:80]}")
        positions.append(queue.popleft())
    return Selection(tuple(positions), invented=tuple(invented))


def keep_recent(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:pydantic-ai``: ``ProcessHistory(keep_recent)`` with the docs' keep-last-N processor."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:pydantic-ai")


register_peer(Peer("peer:pydantic-ai", keep_recent, "pydantic-ai-slim", "pydantic_ai",
                   "ProcessHistory(keep_recent) (keep last N)", "message count N (N chosen by ours)",
                   extra="frameworks"))  # fmt: skip
