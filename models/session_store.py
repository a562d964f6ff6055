"""The session-store contract: what a real database must offer for the locking strategies to run.

The trigger model (:mod:`models.trigger`) reasons about *live turns* of one session log, a
count read by the trigger, and a compactor that deletes the oldest turns a gap later. To run the
same strategies against SQLite, PostgreSQL or a user's own store, a store exposes exactly those
moves and nothing else: append a whole turn, count live turns, delete the oldest ``n``, read the
live window in order — inside a transaction that may take the session's write lock up front —
and a small *session header* (:class:`SessionHeader`) carrying the trigger's state and a version.

Why a header with a version, and why every write commits through :meth:`WriteTx.commit_header`:
the header's ``version`` is bumped by every committed write, so it is at once the ``cas``
strategy's version column and a total order of commits. A store also journals each commit (its
sequence number, the operation id, the turns it added and removed) *in the same transaction*,
so the committed history can be replayed exactly afterwards — Jepsen-style checking needs the
store's own order of commits, not client clocks, and a process killed between commit and
acknowledgement must not make a commit invisible.

Invariants a store keeps (the ``test_contract_*`` tests of ``tests/test_stress.py`` check them
for every built-in backend, SQLite and PostgreSQL): turn ids grow with commit order; ``delete_oldest(n)`` removes exactly the
``n`` smallest live ids (fewer only when fewer are live); a transaction either commits all its
changes and one journal entry, or none; :meth:`SessionStore.read_window` sees one committed
snapshot, named by its header version.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from turncheck.models.errors import TurncheckError


class StoreBusy(TurncheckError):
    """The store's write lock could not be had in time, or the transaction was refused for a
    conflict the store reports (SQLite ``database is locked``, PostgreSQL serialization failure):
    nothing was written; the caller counts it and tries again."""


class ConnectionLost(TurncheckError):
    """The connection to the store broke (a server restart): the transaction's outcome is
    unknown to the client — only the store's journal says whether it committed. The caller
    reconnects and tries again, and the run reports it."""


TURN_KINDS = "UCRA"
"""The events of one whole turn, in order: user message, tool call, tool result, assistant reply."""


@dataclass(frozen=True)
class SessionHeader:
    """The trigger's state, stored beside the turns so every process sees the same one.

    ``version`` counts committed writes (the commit sequence number of the last one);
    ``pending`` says a compaction was triggered and has not acted; ``count_read`` is the live count
    the trigger read, ``read_version`` the version right after that read committed (what ``cas``
    compares) and ``read_at`` its wall-clock time in seconds (when the gap started).
    """

    version: int = 0
    pending: bool = False
    count_read: int = 0
    read_version: int = 0
    read_at: float = 0.0


@dataclass(frozen=True)
class JournalEntry:
    """One committed write: its sequence number (the header version it committed), the operation
    that wrote it, what kind of write it was, the turn ids it added and removed, and the count the
    trigger read when the write was a compaction acting on a read (0 otherwise)."""

    seq: int
    op: str
    kind: str
    added: tuple[int, ...]
    removed: tuple[int, ...]
    count_read: int = 0


@dataclass(frozen=True)
class Window:
    """The live turns as one reader saw them: the header version of its snapshot, and per stored
    event in order the turn it belongs to and its kind (``TURN_KINDS``)."""

    version: int
    turns: tuple[int, ...]
    kinds: str


class WriteTx(Protocol):
    """One open write transaction on the session. Changes become visible only if
    :meth:`commit_header` succeeded and the context manager exits without an exception."""

    def header(self) -> SessionHeader:
        """The header as this transaction sees it."""
        ...

    def append(self, writer: int, n: int) -> int:
        """Append writer ``writer``'s ``n``-th turn (all its events) and return its turn id."""
        ...

    def count(self) -> int:
        """Live turns, including this transaction's own changes."""
        ...

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        """Delete the ``n`` oldest live turns (all their events); return their ids."""
        ...

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        """Write ``header`` with ``version`` set to the next commit sequence number and return it;
        with ``expect_version``, only if the stored version still equals it (an ``UPDATE … WHERE
        version = ?``), else return None and change nothing (the caller rolls back)."""
        ...


@runtime_checkable
class SessionStore(Protocol):
    """A store holding one session's turns, shared by several OS processes.

    The runner calls :meth:`setup` once (in the parent), then every process builds its own
    instance from the same constructor arguments and calls :meth:`connect`. ``name`` is what
    reports show.
    """

    name: str

    def setup(self) -> None:
        """Create the schema and start from an empty session (idempotent)."""
        ...

    def connect(self) -> None:
        """Open this process's connection."""
        ...

    def close(self) -> None:
        """Close this process's connection."""
        ...

    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> AbstractContextManager[WriteTx]:
        """A write transaction journaled as operation ``op`` of ``kind``; ``lock`` takes the
        session's write lock before anything is read (``BEGIN IMMEDIATE`` / ``FOR UPDATE``)."""
        ...

    def header(self) -> SessionHeader:
        """The committed header (a cheap read; the compactor polls it)."""
        ...

    def read_window(self) -> Window:
        """The live turns in order, from one committed snapshot."""
        ...

    def journal(self) -> tuple[JournalEntry, ...]:
        """Every committed write in sequence order."""
        ...

    def live_ids(self) -> tuple[int, ...]:
        """The ids of the live turns, oldest first."""
        ...
