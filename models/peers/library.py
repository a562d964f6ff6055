"""Importing a peer library lazily: absent libraries are a one-line error naming the extra.

The peer libraries are optional (the ``peers`` extra). Nothing in ``models`` imports them at
module level, so the package imports without them; an adapter asks for its library here the
first time it runs.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from turncheck.models.tokenizer import EXTRA, MissingExtra

DISTRIBUTIONS = {
    "langchain": "langchain-core",
    "llamaindex": "llama-index-core",
    "litellm": "litellm",
    "openai-agents": "openai-agents",
    "semantic-kernel": "semantic-kernel",
    "autogen-core": "autogen-core",
    "langgraph": "langgraph",
    "pydantic-ai": "pydantic-ai-slim",
}
EXTRA_OF = {"semantic-kernel": "frameworks", "autogen-core": "frameworks", "langgraph": "frameworks",
            "pydantic-ai": "frameworks"}  # fmt: skip


def require(module: str, peer: str) -> ModuleType:
    """Import ``module`` for peer ``peer`` or raise :class:`MissingExtra` naming the extra.

    litellm is imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true``
    (unless the user chose values), so its import reads the cost map shipped in the wheel instead
    of fetching it, and it fetches no tokenizer or catalog on its own.
    """
    if module.split(".")[0] == "litellm":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        dist = DISTRIBUTIONS.get(peer, peer)
        extra = EXTRA_OF.get(peer, EXTRA)
        raise MissingExtra(
            f"peer:{peer} needs {dist} ({exc.name or module} is not installed): pip install 'turncheck[{extra}]'"
        ) from None
