"""Peer ``openai-agents``: ``Runner.run`` with a session limit, what its model is sent.

Our events become Responses-API input items, one per event as the SDK stores them:
``{"role": "user", "content": …}`` (USER), ``{"type": "function_call", "call_id", "name",
"arguments"}`` (CALL — parallel calls are separate items), ``{"type": "function_call_output",
"call_id", "output"}`` (RESULT), ``{"role": "assistant", "content": …}`` (TERM). They are
added to an in-memory ``SQLiteSession``, and the agent runs through the public route::

    Runner.run(agent, current, session=session,
               run_config=RunConfig(session_settings=SessionSettings(limit=N), tracing_disabled=True))

with a :func:`recording_model` as the agent's model: what it records is the window. Inside,
the SDK reads ``session.get_items(limit=N)``, drops calls without an output in the window
(and, because a limit is set, outputs whose call is not in the window too), normalises and
de-duplicates by call id, and appends the current question.

Counting. The SDK trims by item count, not tokens. ``N`` is the largest item count whose
newest items fit the budget under our cost model (what M0 keeps) — the best a per-request
``limit`` could do; a fixed ``limit`` is available as :func:`select` ``(limit=…)``.

Because unmatched calls inside the window are dropped, the selection is not a suffix when the
window holds a dangling call: the window is then a :class:`PeerWindow` whose report describes
exactly the items sent.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.message_spans import TOOL_NAME, USER_ROLE
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window, fit_start
from turncheck.models.selection import Selection, window_of


def agent_items(history: History) -> list[dict[str, Any]]:
    """The Responses-API input items of every event, one item per event."""
    out: list[dict[str, Any]] = []
    for e in history.events:
        text = content_of(e)
        if e.kind in USER_ROLE:
            out.append({"role": "user", "content": text})
        elif e.kind is Kind.TERM:
            out.append({"role": "assistant", "content": text})
        elif e.kind is Kind.CALL:
            out.append({"type": "function_call", "call_id": e.call_id, "name": TOOL_NAME, "arguments": text})
        else:
            out.append({"type": "function_call_output", "call_id": e.call_id, "output": text})
    return out


def item_key(item: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies an item after the SDK has copied and normalised it."""
    if item.get("type") in ("function_call", "function_call_output"):
        return (item["type"], item.get("call_id"), item.get("arguments", item.get("output")))
    return ("message", item.get("role"), item.get("content"))


def recording_model() -> Any:
    """An Agents SDK ``Model`` that records the input of every request (``.inputs``) and answers
    with one assistant message: the stand-in for an LLM behind ``Runner.run`` (no network)."""
    interface = require("agents.models.interface", "peer:openai-agents")
    items = require("agents.items", "peer:openai-agents")
    usage = require("agents.usage", "peer:openai-agents")
    responses = require("openai.types.responses", "peer:openai-agents")

    class RecordingModel(interface.Model):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.inputs: list[list[Any]] = []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append([input] if isinstance(input, str) else list(input))
            text = responses.ResponseOutputText(type="output_text", text="ok", annotations=[])
            message = responses.ResponseOutputMessage(
                id="turncheck", type="message", role="assistant", status="completed", content=[text]
            )
            return items.ModelResponse(output=[message], usage=usage.Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the recording model does not stream")

    return RecordingModel()


async def _prepare(items: list[dict[str, Any]], limit: int, current: str) -> list[Any]:
    """``Runner.run(agent, current, session=SQLiteSession(...), run_config=RunConfig(
    session_settings=SessionSettings(limit=N)))`` and the input its model was sent."""
    agents = require("agents", "peer:openai-agents")
    session = agents.SQLiteSession("turncheck")
    model = recording_model()
    try:
        if items:
            await session.add_items(items)
        config = agents.RunConfig(session_settings=agents.SessionSettings(limit=limit), tracing_disabled=True)
        await agents.Runner.run(agents.Agent(name="turncheck", model=model), current, session=session,
                                run_config=config)  # fmt: skip
    finally:
        session.close()
    return [dict(item) if isinstance(item, dict) else item for item in model.inputs[-1]]


def select(history: History, budget: int, cost: CostModel, limit: int | None = None) -> Selection:
    """What the SDK sends of ``history`` (the current question, last, is left out)."""
    n = len(history)
    if limit is None:
        limit = n - fit_start(history, budget, cost)
    items = agent_items(history)
    current = getattr(cost, "current", "") or ""
    import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

    prepared = asyncio.run(_prepare(items, limit, current))
    if not prepared or item_key(prepared[-1]) != ("message", "user", current):
        raise TurncheckError("peer:openai-agents did not end its input with the current question")
    free: dict[tuple[Any, ...], deque[int]] = defaultdict(deque)
    for pos in range(max(n - limit, 0), n):
        free[item_key(items[pos])].append(pos)
    positions: list[int] = []
    for item in prepared[:-1]:
        queue = free.get(item_key(item))
        if not queue:
            raise TurncheckError(
                f"peer:openai-agents sent an item that is not in its window: {str(item)[:80]}"
            )
        positions.append(queue.popleft())
    return Selection(tuple(positions))


def session_limit(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:openai-agents``: ``get_items(limit=N)`` + the SDK's orphan pruning."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:openai-agents")


register_peer(Peer("peer:openai-agents", session_limit, "openai-agents", "agents",
                   "Runner.run(session, RunConfig(session_settings=SessionSettings(limit=N)))",
                   "item count N (N chosen by ours)", colour="#637939", marker="X", hollow=True))  # fmt: skip
