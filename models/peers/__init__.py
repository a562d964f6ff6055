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

A peer is one module: its projector function(s) and one :func:`register_peer` of a :class:`Peer`
each (``turncheck.register_peer`` for an extension). This package is the registry's home: it
imports each built-in module, which registers its peers, in the order of the table above.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turncheck.models.registry import Registry

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.history import History
    from turncheck.models.projector import Window


@dataclass(frozen=True)
class Peer:
    """A registered peer: the projector that runs the library, and what the ``peers`` scenario
    reports about it.

    ``library`` is the distribution whose version is reported and ``module`` the import that must
    succeed for the peer to run (installed by the extra ``extra``); ``call`` says what it runs,
    ``counting`` whose token counting it trims by. ``colour``, ``marker``, ``linestyle`` and
    ``hollow`` draw it in every plot; a peer without a colour takes the next free one.
    """

    name: str
    project: Callable[[History, int, CostModel], Window]
    library: str
    module: str
    call: str
    counting: str
    extra: str = "peers"
    colour: str | None = None
    marker: str | None = None
    linestyle: str = "--"
    hollow: bool = False


PEERS: Registry[Peer] = Registry("peer", home=__name__)
"""Every peer by id (``peer:NAME``): the built-ins, then what extensions registered."""


def register_peer(peer: Peer) -> Peer:
    """Register ``peer`` under its id; refused if the id or the colour is taken."""
    return PEERS.register(peer.name, peer)


for _module in ("langchain_trim", "llamaindex_memory", "litellm_trim", "agents_session",
                "semantic_kernel_reducer", "autogen_context", "langgraph_hook", "pydantic_ai_processor"):  # fmt: skip
    importlib.import_module(f"{__name__}.{_module}")
