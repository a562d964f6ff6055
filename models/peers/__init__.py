"""Peer projectors: the trimmers people already use, behind our projector signature.

Each peer converts a history to the library's own message objects (tool calls with ids, tool
results), lets the library choose what to keep, and maps the result back to our events: a
suffix window with our structural report, or — when the library's choice is not a suffix — a
:class:`~models.peers.selection.PeerWindow` describing exactly what it sends.

| id | library call |
|----|--------------|
| ``peer:langchain`` | ``langchain_core.messages.trim_messages(strategy="last")`` |
| ``peer:langchain-human`` | the same with ``start_on="human"`` |
| ``peer:llamaindex`` | ``Memory.from_defaults(token_limit)``: ``aput`` each message, ``aget()`` |
| ``peer:litellm`` | ``litellm.utils.trim_messages(max_tokens=budget − frame)`` |
| ``peer:openai-agents`` | ``Runner.run(session=SQLiteSession, RunConfig(session_settings=SessionSettings(limit=N)))`` |
| ``peer:semantic-kernel`` | ``ChatHistoryTruncationReducer(target_count=N).reduce()`` |
| ``peer:semantic-kernel-summary`` | ``ChatHistorySummarizationReducer(service=stub, target_count=N).reduce()`` |
| ``peer:autogen-buffered`` | ``BufferedChatCompletionContext(buffer_size=N).get_messages()`` |
| ``peer:autogen-token-limited`` | ``TokenLimitedChatCompletionContext(client, token_limit).get_messages()`` |
| ``peer:autogen-head-tail`` | ``HeadAndTailChatCompletionContext(head_size=1, tail_size=N).get_messages()`` |
| ``peer:langgraph`` | ``create_react_agent(pre_model_hook=trim_messages …)`` |
| ``peer:pydantic-ai`` | ``Agent(capabilities=[ProcessHistory(keep_recent)])`` |

The libraries are optional (extras ``peers`` and ``frameworks``) and imported only when a peer first runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from turncheck.models.errors import UnknownName

PEERS: dict[str, tuple[str, str, str]] = {
    "peer:langchain": ("langchain_trim", "trim_last", "trim_messages(strategy='last')"),
    "peer:langchain-human": (
        "langchain_trim",
        "trim_last_human",
        "trim_messages(strategy='last', start_on='human')",
    ),
    "peer:llamaindex": ("llamaindex_memory", "memory", "Memory(token_limit): aput each message, aget()"),
    "peer:litellm": ("litellm_trim", "trim_messages", "litellm.utils.trim_messages(max_tokens)"),
    "peer:openai-agents": (
        "agents_session",
        "session_limit",
        "Runner.run(session, RunConfig(session_settings=SessionSettings(limit=N)))",
    ),
    "peer:semantic-kernel": (
        "semantic_kernel_reducer",
        "truncation",
        "ChatHistoryTruncationReducer(target_count=N)",
    ),
    "peer:semantic-kernel-summary": (
        "semantic_kernel_reducer",
        "summarization",
        "ChatHistorySummarizationReducer(target_count=N, service=stub)",
    ),
    "peer:autogen-buffered": ("autogen_context", "buffered", "BufferedChatCompletionContext(buffer_size=N)"),
    "peer:autogen-token-limited": (
        "autogen_context",
        "token_limited",
        "TokenLimitedChatCompletionContext(token_limit)",
    ),
    "peer:autogen-head-tail": (
        "autogen_context",
        "head_and_tail",
        "HeadAndTailChatCompletionContext(head_size=1, tail_size=N)",
    ),
    "peer:langgraph": (
        "langgraph_hook",
        "pre_model_hook",
        "create_react_agent(pre_model_hook=trim_messages)",
    ),
    "peer:pydantic-ai": ("pydantic_ai_processor", "keep_recent", "ProcessHistory(keep_recent) (keep last N)"),
}
"""id → (module in this package, projector function, what it runs)."""


def peer_projector(spec: str) -> Callable[..., Any]:
    """The projector function of a peer id (its module is imported now, its library later)."""
    if spec not in PEERS:
        raise UnknownName(f"unknown peer {spec!r} (known: {', '.join(PEERS)})")
    module_name, function, _ = PEERS[spec]
    module = importlib.import_module(f"turncheck.models.peers.{module_name}")
    return getattr(module, function)  # type: ignore[no-any-return]
