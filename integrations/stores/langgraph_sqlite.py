"""The ``langgraph-sqlite`` store: one LangGraph thread checkpointed by LangGraph's ``SqliteSaver``.

This is how a LangGraph agent keeps its conversation: a graph over ``MessagesState`` compiled
with ``checkpointer=SqliteSaver(sqlite3.connect(PATH))``; every change to the thread is a new
checkpoint (and its writes) in the ``checkpoints``/``writes`` tables of that file. The adapter
uses only the public graph API a user would: ``update_state(config, {"messages": [...]})`` to
append a whole turn (four messages — user, AI message with a tool call, tool message, AI reply —
whose ids carry the turn, ``tc:TURN:KIND``), ``update_state`` with ``RemoveMessage`` for every
message of the oldest ``n`` turns to delete them, and ``get_state(config)`` to read the thread.

The saver has no transaction spanning calls, no count and no version a writer could compare
(two processes that read the same checkpoint and both write fork the thread: the newer child
wins, the other's messages are gone). So, as for ``agents-sqlite``, the trigger's header, the
lock and the journal live in a side-car SQLite file beside the checkpoints
(:mod:`turncheck.integrations.stores.sidecar`, which says what that costs).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from turncheck.integrations.stores.sidecar import SidecarStore
from turncheck.sim.stress.sqlite import BUSY_TIMEOUT_S
from turncheck.sim.stress.stores import Store, register_store

THREAD_ID = "turncheck-stress"
_PREFIX = "tc:"
_NODE = "agent"


def turn_messages(turn: int) -> list[Any]:
    """One whole turn as LangChain messages, each with the id ``tc:TURN:KIND``."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    call = f"call_{turn}"
    return [
        HumanMessage(f"question {turn}", id=f"{_PREFIX}{turn}:U"),
        AIMessage(
            "", id=f"{_PREFIX}{turn}:C", tool_calls=[{"id": call, "name": "lookup", "args": {"turn": turn}}]
        ),
        ToolMessage(f"result {turn}", tool_call_id=call, id=f"{_PREFIX}{turn}:R"),
        AIMessage(f"answer {turn}", id=f"{_PREFIX}{turn}:A"),
    ]


def message_tag(message: Any) -> tuple[int, str]:
    """(turn, kind) of a message written by :func:`turn_messages` ((-1, "?") for any other)."""
    mid = getattr(message, "id", None)
    if isinstance(mid, str) and mid.startswith(_PREFIX):
        turn, kind = mid[len(_PREFIX) :].split(":")
        return int(turn), kind
    return -1, "?"


def message_graph(checkpointer: Any) -> Any:
    """The smallest agent graph over ``MessagesState`` (one node that answers nothing), compiled
    with ``checkpointer``: its thread's state is the conversation."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node(_NODE, lambda state: {})
    builder.add_edge(START, _NODE)
    builder.add_edge(_NODE, END)
    return builder.compile(checkpointer=checkpointer)


class LanggraphSqliteStore(SidecarStore):
    """LangGraph's ``SqliteSaver`` on ``PATH`` (thread ``THREAD_ID``) plus the side-car ``PATH.turncheck``."""

    name = "langgraph-sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._conn: sqlite3.Connection | None = None
        self._graph: Any = None
        self._config: dict[str, Any] = {"configurable": {"thread_id": THREAD_ID}}

    @property
    def graph(self) -> Any:
        if self._graph is None:
            from langgraph.checkpoint.sqlite import SqliteSaver

            # check_same_thread=False as the saver's docs say (it serialises with its own lock)
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            self._graph = message_graph(SqliteSaver(self._conn))
        return self._graph

    def update(self, messages: list[Any]) -> None:
        """One change to the thread: a new checkpoint through the ``add_messages`` reducer."""
        self.graph.update_state(self._config, {"messages": messages}, as_node=_NODE)

    def items(self) -> list[Any]:
        """The thread's messages in order, from its latest checkpoint."""
        return list(self.graph.get_state(self._config).values.get("messages", []))

    def tag(self, item: Any) -> tuple[int, str]:
        return message_tag(item)

    def add_turn(self, turn: int) -> None:
        self.update(turn_messages(turn))

    def remove(self, items: list[Any], turns: set[int]) -> None:
        from langchain_core.messages import RemoveMessage

        removals = [RemoveMessage(id=m.id) for m in items if message_tag(m)[0] in turns]
        if removals:
            self.update(removals)

    def clear(self) -> None:
        self.graph.checkpointer.delete_thread(THREAD_ID)

    def release(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._graph = None


register_store(Store("langgraph-sqlite", LanggraphSqliteStore, "langgraph", "#9467bd",
                     "a LangGraph thread checkpointed by SqliteSaver, lock and journal in a side-car"))  # fmt: skip
