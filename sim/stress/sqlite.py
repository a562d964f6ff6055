"""The ``sqlite`` session store: one database file in WAL mode, shared by several OS processes.

SQLite has one writer at a time per database: ``BEGIN IMMEDIATE`` takes the write lock before
anything is read, which is how a transaction makes its read-then-write atomic (and how ``mutex``
and ``append-sync`` hold the store). A deferred ``BEGIN`` takes it at the first write, which is
what ``cas`` uses: its first statement is the versioned ``UPDATE … WHERE version = ?``. Readers
never block in WAL mode and see the last committed snapshot. Waiting for the lock is SQLite's
own busy handler (``timeout``); a ``database is locked`` after it is surfaced as
:class:`StoreBusy` so the runner can count it and retry.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from turncheck.models.session_store import TURN_KINDS, JournalEntry, SessionHeader, StoreBusy, Window
from turncheck.sim.stress.stores import Store, register_store

BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (id INTEGER PRIMARY KEY AUTOINCREMENT, writer INTEGER, n INTEGER);
CREATE TABLE IF NOT EXISTS events (pos INTEGER PRIMARY KEY AUTOINCREMENT, turn INTEGER, kind TEXT);
CREATE INDEX IF NOT EXISTS events_turn ON events(turn);
CREATE TABLE IF NOT EXISTS header (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER,
    pending INTEGER, count_read INTEGER, read_version INTEGER, read_at REAL);
CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, op TEXT, kind TEXT, added TEXT,
    removed TEXT, count_read INTEGER);
"""


def ids_text(ids: tuple[int, ...]) -> str:
    return ",".join(map(str, ids))


def ids_of(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",")) if text else ()


class SqliteWriteTx:
    """An open SQLite write transaction (see :class:`turncheck.models.session_store.WriteTx`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self.added: list[int] = []
        self.removed: list[int] = []
        self.seq: int | None = None

    def header(self) -> SessionHeader:
        row = self._db.execute(
            "SELECT version, pending, count_read, read_version, read_at FROM header WHERE id = 1"
        ).fetchone()
        return SessionHeader(row[0], bool(row[1]), row[2], row[3], row[4])

    def append(self, writer: int, n: int) -> int:
        cur = self._db.execute("INSERT INTO turns (writer, n) VALUES (?, ?)", (writer, n))
        turn = int(cur.lastrowid or 0)
        self._db.executemany("INSERT INTO events (turn, kind) VALUES (?, ?)", [(turn, k) for k in TURN_KINDS])
        self.added.append(turn)
        return turn

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM turns").fetchone()[0])

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        ids = tuple(r[0] for r in self._db.execute("SELECT id FROM turns ORDER BY id LIMIT ?", (n,)))
        if ids:
            last = ids[-1]
            self._db.execute("DELETE FROM events WHERE turn <= ?", (last,))
            self._db.execute("DELETE FROM turns WHERE id <= ?", (last,))
        self.removed.extend(ids)
        return ids

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        values = (int(header.pending), header.count_read, header.read_version, header.read_at)
        if expect_version is None:
            self._db.execute(
                "UPDATE header SET version = version + 1, pending = ?, count_read = ?, read_version = ?,"
                " read_at = ? WHERE id = 1",
                values,
            )
        else:
            cur = self._db.execute(
                "UPDATE header SET version = version + 1, pending = ?, count_read = ?, read_version = ?,"
                " read_at = ? WHERE id = 1 AND version = ?",
                (*values, expect_version),
            )
            if cur.rowcount != 1:
                return None
        self.seq = int(self._db.execute("SELECT version FROM header WHERE id = 1").fetchone()[0])
        return self.seq


def enable_wal(db: sqlite3.Connection, timeout_s: float = BUSY_TIMEOUT_S) -> None:
    """Switch ``db`` to WAL, retrying ``database is locked`` for up to ``timeout_s``: SQLite runs
    no busy handler for a journal-mode change, so concurrent first opens of a fresh file fail
    there before any timeout (``turncheck stress --first-opens`` met a ``database is locked``
    among this store's concurrent first opens before this retry; openai-agents PR #4987 fixed
    ``AsyncSQLiteSession`` the same way)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL").fetchall()  # the cursor consumed and closed
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


class SqliteStore:
    """Session store on one SQLite file in WAL mode (``synchronous=NORMAL``: durable across a
    process kill, which is the fault ``stress --kill`` injects; not across power loss)."""

    name = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).absolute()  # a path, never a URI: "file:x" would open x (SQLITE_USE_URI)
        self._db: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        enable_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def setup(self) -> None:
        db = self._open()
        try:
            db.executescript(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            for table in ("turns", "events", "header", "journal"):
                db.execute(f"DELETE FROM {table}")  # noqa: S608  (fixed table names)
            db.execute("INSERT INTO header VALUES (1, 0, 0, 0, 0, 0.0)")
            db.execute("COMMIT")
        finally:
            db.close()

    def connect(self) -> None:
        self._db = self._open()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.connect()
        assert self._db is not None
        return self._db

    @contextmanager
    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> Iterator[SqliteWriteTx]:
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE" if lock else "BEGIN")
        except sqlite3.OperationalError as exc:
            raise StoreBusy(str(exc)) from None
        tx = SqliteWriteTx(db)
        try:
            yield tx
            if tx.seq is None:
                db.execute("ROLLBACK")
                return
            db.execute(
                "INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?)",
                (tx.seq, op, kind, ids_text(tuple(tx.added)), ids_text(tuple(tx.removed)), count_read),
            )
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(str(exc)) from None
            raise
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def header(self) -> SessionHeader:
        row = self.db.execute(
            "SELECT version, pending, count_read, read_version, read_at FROM header WHERE id = 1"
        ).fetchone()
        return SessionHeader(row[0], bool(row[1]), row[2], row[3], row[4])

    def read_window(self) -> Window:
        db = self.db
        db.execute("BEGIN")
        try:
            version = int(db.execute("SELECT version FROM header WHERE id = 1").fetchone()[0])
            rows = db.execute("SELECT turn, kind FROM events ORDER BY pos").fetchall()
        finally:
            db.execute("COMMIT")
        return Window(version, tuple(r[0] for r in rows), "".join(r[1] for r in rows))

    def journal(self) -> tuple[JournalEntry, ...]:
        rows = self.db.execute("SELECT seq, op, kind, added, removed, count_read FROM journal ORDER BY seq")
        return tuple(JournalEntry(r[0], r[1], r[2], ids_of(r[3]), ids_of(r[4]), r[5]) for r in rows)

    def live_ids(self) -> tuple[int, ...]:
        return tuple(r[0] for r in self.db.execute("SELECT id FROM turns ORDER BY id"))


register_store(Store("sqlite", SqliteStore, "sqlite3 (Python's standard library)", "#1f77b4",
                     "one database file in WAL mode, BEGIN IMMEDIATE as the write lock"))  # fmt: skip
