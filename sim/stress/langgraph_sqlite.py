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
lock and the journal live in a side-car SQLite file beside the checkpoints (``PATH.turncheck``),
and every change to the thread happens while holding the side-car's write lock; reads take it
too, so the checker sees one order. What the side-car cannot make atomic is the saver's commit
and the journal's: a process killed between them leaves checkpointed messages that no journal
entry explains, and the checker reports exactly that.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turncheck.models.session_store import JournalEntry, SessionHeader, Window
from turncheck.sim.stress.sqlite import BUSY_TIMEOUT_S, SqliteStore, SqliteWriteTx

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


class LanggraphWriteTx:
    """The side-car's write transaction, with the thread's changes made through the graph."""

    def __init__(self, store: LanggraphSqliteStore, sidecar: SqliteWriteTx) -> None:
        self._store = store
        self._sidecar = sidecar

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def append(self, writer: int, n: int) -> int:
        turn = self._sidecar.header().version + 1  # unique: appends hold the side-car's write lock
        self._store.update(turn_messages(turn))
        self._sidecar.added.append(turn)
        return turn

    def count(self) -> int:
        return len(self._store.turn_ids())

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        from langchain_core.messages import RemoveMessage

        messages = self._store.messages()
        order = list(dict.fromkeys(message_tag(m)[0] for m in messages))
        gone = set(order[:n])
        removals = [RemoveMessage(id=m.id) for m in messages if message_tag(m)[0] in gone]
        if removals:
            self._store.update(removals)
        self._sidecar.removed.extend(order[:n])
        return tuple(order[:n])

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        return self._sidecar.commit_header(header, expect_version)


class LanggraphSqliteStore:
    """LangGraph's ``SqliteSaver`` on ``PATH`` (thread ``THREAD_ID``) plus the side-car ``PATH.turncheck``."""

    name = "langgraph-sqlite"
    journaled = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._sidecar = SqliteStore(Path(f"{path}.turncheck"))
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

    def messages(self) -> list[Any]:
        """The thread's messages in order, from its latest checkpoint."""
        return list(self.graph.get_state(self._config).values.get("messages", []))

    def turn_ids(self) -> list[int]:
        return list(dict.fromkeys(message_tag(m)[0] for m in self.messages()))

    def setup(self) -> None:
        self._sidecar.setup()
        self.graph.checkpointer.delete_thread(THREAD_ID)
        self.close()

    def connect(self) -> None:
        self._sidecar.connect()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._graph = None
        self._sidecar.close()

    @contextmanager
    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> Iterator[LanggraphWriteTx]:
        with self._sidecar.write(op, kind, lock, count_read) as sidecar:
            yield LanggraphWriteTx(self, sidecar)

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def read_window(self) -> Window:
        db = self._sidecar.db
        db.execute("BEGIN IMMEDIATE")  # the saver reads in several statements: hold the writers off
        try:
            version = int(db.execute("SELECT version FROM header WHERE id = 1").fetchone()[0])
            tags = [message_tag(m) for m in self.messages()]
        finally:
            db.execute("COMMIT")
        return Window(version, tuple(t for t, _ in tags), "".join(k for _, k in tags))

    def journal(self) -> tuple[JournalEntry, ...]:
        return self._sidecar.journal()

    def live_ids(self) -> tuple[int, ...]:
        return tuple(self.turn_ids())
