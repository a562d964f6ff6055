"""The built-in peers: the trimmers people already use, one module per library, each registering
its :class:`~turncheck.models.peer.Peer` values with :func:`~turncheck.models.peer.register_peer`.

This package is the home of :data:`turncheck.models.peer.PEERS`: the registry imports it by name
on its first lookup, and it imports each built-in module below, in the order ``turncheck list
peers`` lists them. Adding a peer is one module here and one name in that list.
"""

from __future__ import annotations

import importlib

for _module in ("langchain_trim", "llamaindex_memory", "litellm_trim", "agents_session",
                "semantic_kernel_reducer", "autogen_context", "langgraph_hook", "pydantic_ai_processor",
                "adk_compaction", "node_peers", "jvm"):  # fmt: skip
    importlib.import_module(f"{__name__}.{_module}")
