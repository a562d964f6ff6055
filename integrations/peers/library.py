"""Importing a peer library lazily: absent libraries are a one-line error naming the extra.

The peer libraries are optional (the ``peers`` extra). Nothing in ``models`` imports them at
module level, so the package imports without them; an adapter asks for its library here the
first time it runs.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from turncheck.models.extras import install_hint
from turncheck.models.peer import PEERS
from turncheck.models.tokenizer import MissingExtra


def require(module: str, peer: str) -> ModuleType:
    """Import ``module`` for peer ``peer`` (its id) or raise :class:`MissingExtra` naming the
    peer's distribution and extra (its :class:`~turncheck.integrations.peers.Peer` value's).

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
        p = PEERS[peer]
        raise MissingExtra(
            f"{peer} needs {p.library} ({exc.name or module} is not installed): {install_hint(p.extra)}"
        ) from None
