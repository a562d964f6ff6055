"""Peer ``langgraph``: LangGraph's documented trimming pattern — ``trim_messages`` in the
``pre_model_hook`` of the prebuilt ReAct agent (``langgraph.prebuilt.create_react_agent``).

The hook is the one LangGraph's memory guide shows::

    def pre_model_hook(state):
        trimmed = trim_messages(state["messages"], strategy="last",
                                token_counter=count_tokens_approximately,
                                max_tokens=budget − frame, start_on="human", end_on=("human", "tool"))
        return {"llm_input_messages": trimmed}

Our events become LangChain messages (as for ``peer:langchain``) and are the agent's input
``{"messages": [...]}``; the agent's chat model is :func:`recording_model`, a LangChain chat model
that records the messages it is sent and answers with a fixed text (no tool calls, so the
graph ends after one model call). What the model received is the window.

Counting: LangChain's own ``count_tokens_approximately`` (about 4 characters a token plus a
few per message), as the guide does — not our cost model, so the window can be over budget
in our units.

Two behaviours of the prebuilt agent show here, not in ``trim_messages`` alone: an empty
``llm_input_messages`` is falsy, so the agent falls back to the *whole untrimmed* history
(``untrimmed``); and before calling the model it refuses a history with a tool call that has
no tool message (``ValueError``, "INVALID_CHAT_HISTORY"): the request is ``refused`` and the
model is not called.

``create_react_agent`` is deprecated since LangGraph 1.0 in favour of
``langchain.agents.create_agent`` (the ``langchain`` package, whose middleware replaces the
hook); it is still the prebuilt agent LangGraph ships and documents the hook for, so it is
what runs here (its deprecation warning is silenced).
"""

from __future__ import annotations

import warnings
from typing import Any

from turncheck.integrations.peers.langchain_trim import langchain_messages
from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel
from turncheck.models.history import History
from turncheck.models.message_spans import spans
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, window_of

REFUSAL = "INVALID_CHAT_HISTORY"


def recording_model() -> Any:
    """A LangChain chat model that records each request's messages (``.requests``)."""
    chat_models = require("langchain_core.language_models.chat_models", "peer:langgraph")
    outputs = require("langchain_core.outputs", "peer:langgraph")
    lc = require("langchain_core.messages", "peer:langgraph")

    class RecordingChatModel(chat_models.BaseChatModel):  # type: ignore[misc, name-defined]
        requests: list[list[Any]] = []

        @property
        def _llm_type(self) -> str:
            return "turncheck-recording"

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            self.requests.append(list(messages))
            return outputs.ChatResult(
                generations=[outputs.ChatGeneration(message=lc.AIMessage(content="ok"))]
            )

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return RecordingChatModel(requests=[])


def select(history: History, budget: int, cost: CostModel) -> Selection:
    """What the ReAct agent's model is sent of ``history``, as history positions."""
    lc = require("langchain_core.messages", "peer:langgraph")
    prebuilt = require("langgraph.prebuilt", "peer:langgraph")
    message_spans = spans(history)
    messages = langchain_messages(history, message_spans)
    room = budget - cost.frame

    def pre_model_hook(state: dict[str, Any]) -> dict[str, Any]:
        trimmed = lc.trim_messages(
            state["messages"],
            strategy="last",
            token_counter=lc.utils.count_tokens_approximately,
            max_tokens=room,
            start_on="human",
            end_on=("human", "tool"),
        )
        return {"llm_input_messages": trimmed}

    model = recording_model()
    with warnings.catch_warnings():  # deprecated in LangGraph 1.0 for langchain.agents.create_agent
        warnings.simplefilter("ignore")
        agent = prebuilt.create_react_agent(model, tools=[], pre_model_hook=pre_model_hook)
    try:
        agent.invoke({"messages": messages})
    except ValueError as exc:
        if REFUSAL not in str(exc):
            raise
        return Selection((), refused=True)
    sent = model.requests[-1]
    position = {m.id: i for i, m in enumerate(messages)}
    kept = [position[m.id] for m in sent if m.id in position]
    positions = tuple(p for i in kept for p in message_spans[i].positions)
    whole = len(kept) == len(messages) and len(messages) > 0
    fits = sum(lc.utils.count_tokens_approximately([m]) for m in messages) <= room
    return Selection(positions, untrimmed_on_error=whole and not fits)


def pre_model_hook(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:langgraph``: ``create_react_agent(pre_model_hook=trim_messages …)``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:langgraph")


register_peer(Peer("peer:langgraph", pre_model_hook, "langgraph", "langgraph",
                   "create_react_agent(pre_model_hook=trim_messages)",
                   "its own (count_tokens_approximately)", extra="frameworks"))  # fmt: skip
