"""Peer projectors: the trimmers people already use, behind our projector signature.

Each peer converts a history to the library's own message objects (tool calls with ids, tool
results), lets the library choose what to keep, and maps the result back to our events: a
suffix window with our structural report, or — when the library's choice is not a suffix — a
:class:`~models.peers.selection.PeerWindow` describing exactly what it sends.

| id | library call |
|----|--------------|
| ``peer:langchain`` | ``langchain_core.messages.trim_messages(strategy="last")`` |
| ``peer:langchain-human`` | the same with ``start_on="human"`` |
| ``peer:llamaindex`` | ``ChatMemoryBuffer(token_limit=budget).get()`` |
| ``peer:litellm`` | ``litellm.utils.trim_messages(max_tokens=budget − frame)`` |
| ``peer:openai-agents`` | ``session.get_items(limit=N)`` + the SDK's orphan pruning |

The libraries are optional (extra ``peers``) and imported only when a peer first runs.
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
    "peer:llamaindex": ("llamaindex_memory", "chat_memory_buffer", "ChatMemoryBuffer(token_limit).get()"),
    "peer:litellm": ("litellm_trim", "trim_messages", "litellm.utils.trim_messages(max_tokens)"),
    "peer:openai-agents": (
        "agents_session",
        "session_limit",
        "get_items(limit=N) + drop_orphan_function_calls",
    ),
}
"""id → (module in this package, projector function, what it runs)."""


def peer_projector(spec: str) -> Callable[..., Any]:
    """The projector function of a peer id (its module is imported now, its library later)."""
    if spec not in PEERS:
        raise UnknownName(f"unknown peer {spec!r} (known: {', '.join(PEERS)})")
    module_name, function, _ = PEERS[spec]
    module = importlib.import_module(f"turncheck.models.peers.{module_name}")
    return getattr(module, function)  # type: ignore[no-any-return]
