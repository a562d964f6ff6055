"""A library's conversation store made checkable by a side-car: the shared half of the adapters.

Libraries that keep an agent's conversation (the Agents SDK's ``SQLiteSession``, LangGraph's
``SqliteSaver``) offer no transaction spanning calls, no count and no version a writer could
compare. An adapter therefore keeps the trigger's header, the lock and the journal in a side-car
SQLite file beside the library's own (``PATH.turncheck``, a :class:`SqliteStore`; a library on a
PostgreSQL server keeps them in ``tc_*`` tables of that database, a :class:`PostgresStore`) and changes the
conversation only while holding the side-car's write lock; reads take the lock too, so the
checker sees one order. What the side-car cannot make atomic is the library's write and the
journal's commit: a process killed between them leaves a change no journal entry explains, and
the checker reports exactly that — the measured cost of a store without transactions.

A subclass says only how its library holds a conversation: the items in order
(:meth:`SidecarStore.items`), which turn and kind an item is (:meth:`SidecarStore.tag`), how a
whole turn is added, how the items of some turns are removed, and how the library is opened,
emptied and closed. Turn ids are unique because appends hold the side-car's write lock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turncheck.models.session_store import JournalEntry, SessionHeader, Window
from turncheck.sim.stress.postgres import PostgresStore, PostgresWriteTx
from turncheck.sim.stress.sqlite import SqliteStore, SqliteWriteTx


class SidecarWriteTx:
    """The side-car's write transaction, with the conversation's changes made through the library."""

    def __init__(self, store: SidecarStore, sidecar: SqliteWriteTx | PostgresWriteTx) -> None:
        self._store = store
        self._sidecar = sidecar

    def header(self) -> SessionHeader:
        return self._sidecar.header()

    def append(self, writer: int, n: int) -> int:
        turn = self._sidecar.header().version + 1  # unique: appends hold the side-car's write lock
        self._store.add_turn(turn)
        self._sidecar.added.append(turn)
        return turn

    def count(self) -> int:
        return len(self._store.turn_ids())

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        items = self._store.items()
        order = list(dict.fromkeys(self._store.tag(i)[0] for i in items))
        gone = tuple(order[:n])
        self._store.remove(items, set(gone))
        self._sidecar.removed.extend(gone)
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

    def setup(self) -> None:
        self._sidecar.setup()
        self.clear()
        self.close()

    def connect(self) -> None:
        self._sidecar.connect()

    def close(self) -> None:
        self.release()
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
            tags = [self.tag(i) for i in self.items()]
        return Window(version, tuple(t for t, _ in tags), "".join(k for _, k in tags))

    def journal(self) -> tuple[JournalEntry, ...]:
        return self._sidecar.journal()

    def live_ids(self) -> tuple[int, ...]:
        return tuple(self.turn_ids())
