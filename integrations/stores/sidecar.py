"""A library's conversation store made checkable by a side-car: the shared half of the adapters.

Libraries that keep an agent's conversation (the Agents SDK's ``SQLiteSession``, LangGraph's
``SqliteSaver``, ADK's ``DatabaseSessionService``) offer no transaction spanning calls, no count and
no version a writer could compare. An adapter therefore keeps the trigger's header, the lock, the
journal and the journaled live turns in a side-car beside the library's own store (``PATH.turncheck``,
a :class:`SqliteStore`; a library on a PostgreSQL server keeps them in ``tc_*`` tables of that
database, a :class:`PostgresStore`) and changes the conversation only while holding the side-car's
write lock; reads take the lock too, so the checker sees one order. A turn's id is the side-car's
own turn row, taken in the transaction that journals it.

What the side-car cannot make atomic is the library's write and the journal's commit: a process
killed between them leaves a change in the library that the journal never committed (a turn added,
in part or whole; turns removed). The journal is the truth: whoever next takes the lock — writer,
reader or the final state — first rolls the library back to the journaled live turns
(:meth:`SidecarStore.reconcile`: a killed append's events are removed, a killed delete's turns
rewritten in order), so no window and no final state shows the unjournaled change and no later
turn meets a killed one's events under its id (an id a killed writer took was never committed:
PostgreSQL's sequence never hands it out again, SQLite's only after its events are gone). A kill
during the roll-back leaves a change the next one rolls back. Until then the change is visible to
a reader that bypasses the side-car (the library's own API), and a library that never deletes
(ADK) keeps the rolled-back events, hidden as its compacted ones are. The rewrite regenerates a
turn from its id, which the stress turns are a function of.

A subclass says only how its library holds a conversation: the items in order
(:meth:`SidecarStore.items`), which turn and kind an item is (:meth:`SidecarStore.tag`), how a
whole turn is added, how the items of some turns are removed, and how the library is opened,
emptied and closed.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turncheck.models.session_store import TURN_KINDS, JournalEntry, SessionHeader, Window
from turncheck.sim.stress.postgres import PostgresStore, PostgresWriteTx
from turncheck.sim.stress.sqlite import SqliteStore, SqliteWriteTx


class SidecarWriteTx:
    """The side-car's write transaction, with the conversation's changes made through the library.

    The library is reconciled with the journal at the first use of it, which is after the lock is
    taken (``cas`` takes it with its versioned header update, before it deletes)."""

    def __init__(self, store: SidecarStore, sidecar: SqliteWriteTx | PostgresWriteTx) -> None:
        self._store = store
        self._sidecar = sidecar
        self._reconciled = False

    def _library(self) -> SidecarStore:
        if not self._reconciled:
            self._store.reconcile()
            self._reconciled = True
        return self._store

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def append(self, writer: int, n: int) -> int:
        library = self._library()
        turn = self._sidecar.append(writer, n)
        library.add_turn(turn)
        return turn

    def count(self) -> int:
        return len(self._library().turn_ids())

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        items = self._library().items()
        gone = self._sidecar.delete_oldest(n)
        self._store.remove(items, set(gone))
        return gone

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        return self._sidecar.commit_header(header, expect_version)


class SidecarStore(ABC):
    """A library's store on ``PATH`` plus the side-car ``PATH.turncheck``, or the side-car given
    (see the module docstring)."""

    name: str

    def __init__(self, path: str | Path, sidecar: SqliteStore | PostgresStore | None = None) -> None:
        self.path = Path(path)
        self._sidecar = sidecar if sidecar is not None else SqliteStore(Path(f"{path}.turncheck"))
        self._loop: asyncio.AbstractEventLoop | None = None

    def call(self, coroutine: Any) -> Any:
        """Run one of an async library's coroutines to its end, on this process's own loop."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    @abstractmethod
    def items(self) -> list[Any]:
        """The conversation's items in order, as the library returns them."""

    @abstractmethod
    def tag(self, item: Any) -> tuple[int, str]:
        """The turn an item belongs to and its kind letter (``TURN_KINDS``)."""

    @abstractmethod
    def add_turn(self, turn: int) -> None:
        """Add turn ``turn``'s items in one library call."""

    @abstractmethod
    def remove(self, items: list[Any], turns: set[int]) -> None:
        """Remove every item of ``turns`` (``items`` is the conversation as just read)."""

    @abstractmethod
    def clear(self) -> None:
        """Empty the conversation (a fresh run)."""

    @abstractmethod
    def release(self) -> None:
        """Close the library's handles (the side-car is closed by :meth:`close`)."""

    def turn_ids(self) -> list[int]:
        return list(dict.fromkeys(self.tag(i)[0] for i in self.items()))

    def reconcile(self) -> None:
        """Roll the library back to the side-car's live turns, whole and in order (the lock is held)."""
        live = self._sidecar.live_ids()
        expected = [(t, k) for t in live for k in TURN_KINDS]
        items = self.items()
        tags = [self.tag(i) for i in items]
        if tags[: len(expected)] != expected:  # a killed delete removed journaled turns
            self.remove(items, {t for t, _ in tags})
            for turn in live:
                self.add_turn(turn)
        elif len(tags) > len(expected):  # a killed append's events, whole or in part
            self.remove(items, {t for t, _ in tags[len(expected) :]})

    def setup(self) -> None:
        self._sidecar.setup()
        self.clear()
        self.close()

    def connect(self) -> None:
        self._sidecar.connect()

    def close(self) -> None:
        self.release()
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        self._sidecar.close()

    @contextmanager
    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> Iterator[SidecarWriteTx]:
        with self._sidecar.write(op, kind, lock, count_read) as sidecar:
            yield SidecarWriteTx(self, sidecar)

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def read_window(self) -> Window:
        # the library has no snapshot reads: hold the writers off with the side-car's write lock,
        # in a transaction that commits no header, so it journals nothing and rolls back
        with self._sidecar.write("read", "read", lock=True) as sidecar:
            version = sidecar.header().version
            self.reconcile()
            tags = [self.tag(i) for i in self.items()]
        return Window(version, tuple(t for t, _ in tags), "".join(k for _, k in tags))

    def journal(self) -> tuple[JournalEntry, ...]:
        return self._sidecar.journal()

    def live_ids(self) -> tuple[int, ...]:
        """The library's turns at the end, once reconciled with the journal under the lock."""
        with self._sidecar.write("live", "read", lock=True):
            self.reconcile()
            return tuple(self.turn_ids())
