"""The ``agents-sqlite`` store: the OpenAI Agents SDK's own ``SQLiteSession``, through its public API.

The SDK's session offers ``add_items``, ``get_items``, ``pop_item`` and ``clear_session`` — no
transaction, no count, no "delete the oldest n", no version. So this adapter is what a user
running that class would write: a turn is four items (user message, function call, function
call output, assistant message) added in one ``add_items``; counting reads every item; deleting
the oldest turns reads every item, clears the session and adds the rest back. The trigger's
header, the lock and the journal live in a side-car SQLite file beside the session
(``PATH.turncheck``) — every change to the session happens while holding its write lock, and
reads take it too, so the checker sees one order. What the side-car cannot make atomic is the
SDK's own write and the journal's commit: a process killed between them leaves a turn in the
session that no commit explains (or a journaled delete the session never saw), and the checker
reports exactly that — the measured cost of a store without transactions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turncheck.models.session_store import JournalEntry, SessionHeader, Window
from turncheck.sim.stress.sqlite import SqliteStore, SqliteWriteTx

SESSION_ID = "turncheck-stress"
_PREFIX = "tc:"


def turn_items(turn: int) -> list[Any]:
    """One whole turn as the SDK's input items, each tagged ``tc:TURN:KIND``."""
    call = f"call_{turn}"
    return [
        {"role": "user", "content": f"{_PREFIX}{turn}:U"},
        {"type": "function_call", "call_id": call, "name": "lookup", "arguments": f"{_PREFIX}{turn}:C"},
        {"type": "function_call_output", "call_id": call, "output": f"{_PREFIX}{turn}:R"},
        {"role": "assistant", "content": f"{_PREFIX}{turn}:A"},
    ]


def item_tag(item: Any) -> tuple[int, str]:
    """(turn, kind) of an item written by :func:`turn_items`."""
    for key in ("content", "arguments", "output"):
        text = item.get(key) if isinstance(item, dict) else None
        if isinstance(text, str) and text.startswith(_PREFIX):
            turn, kind = text[len(_PREFIX) :].split(":")
            return int(turn), kind
    return -1, "?"


class AgentsWriteTx:
    """The side-car's write transaction, with the session's changes made through the SDK."""

    def __init__(self, store: AgentsSqliteStore, sidecar: SqliteWriteTx) -> None:
        self._store = store
        self._sidecar = sidecar

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def append(self, writer: int, n: int) -> int:
        turn = self._sidecar.header().version + 1  # unique: appends hold the side-car's write lock
        self._store.call(self._store.session.add_items(turn_items(turn)))
        self._sidecar.added.append(turn)
        return turn

    def count(self) -> int:
        return len(self._store.turn_ids())

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        session = self._store.session
        items = self._store.call(session.get_items())
        order = list(dict.fromkeys(item_tag(i)[0] for i in items))
        gone = set(order[:n])
        keep = [i for i in items if item_tag(i)[0] not in gone]
        self._store.call(session.clear_session())
        if keep:
            self._store.call(session.add_items(keep))
        self._sidecar.removed.extend(order[:n])
        return tuple(order[:n])

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        return self._sidecar.commit_header(header, expect_version)


class AgentsSqliteStore:
    """``SQLiteSession(SESSION_ID, PATH)`` plus the side-car ``PATH.turncheck``."""

    name = "agents-sqlite"
    journaled = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._sidecar = SqliteStore(Path(f"{path}.turncheck"))
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def call(self, coroutine: Any) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    @property
    def session(self) -> Any:
        if self._session is None:
            from agents import SQLiteSession

            self._session = SQLiteSession(SESSION_ID, self.path)
        return self._session

    def setup(self) -> None:
        self._sidecar.setup()
        self.call(self.session.clear_session())
        self.close()

    def connect(self) -> None:
        self._sidecar.connect()

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        self._sidecar.close()

    def turn_ids(self) -> list[int]:
        return list(dict.fromkeys(item_tag(i)[0] for i in self.call(self.session.get_items())))

    @contextmanager
    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> Iterator[AgentsWriteTx]:
        with self._sidecar.write(op, kind, lock, count_read) as sidecar:
            yield AgentsWriteTx(self, sidecar)

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def read_window(self) -> Window:
        db = self._sidecar.db
        db.execute("BEGIN IMMEDIATE")  # the session has no snapshot reads: hold the writers off
        try:
            version = int(db.execute("SELECT version FROM header WHERE id = 1").fetchone()[0])
            tags = [item_tag(i) for i in self.call(self.session.get_items())]
        finally:
            db.execute("COMMIT")
        return Window(version, tuple(t for t, _ in tags), "".join(k for _, k in tags))

    def journal(self) -> tuple[JournalEntry, ...]:
        return self._sidecar.journal()

    def live_ids(self) -> tuple[int, ...]:
        return tuple(self.turn_ids())
