"""The ``postgres`` session store: a real PostgreSQL server through the ``psycopg`` driver.

Transactions run at READ COMMITTED. The session's write lock is the header row: a locking
transaction starts with ``SELECT … FROM header WHERE id = 1 FOR UPDATE`` (appends always do, so
appends are serialized and ``bigserial`` ids grow in commit order; ``mutex``'s compactor holds it
through the gap). ``cas`` starts with ``UPDATE header … WHERE version = %s``, which waits for a
concurrent holder and then re-checks the version on the row it finds, so it fails exactly when
the version moved. Reads run REPEATABLE READ, one snapshot per window. A broken connection is
:class:`ConnectionLost` (the caller reconnects); a serialization or deadlock failure is
:class:`StoreBusy`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import Any

from turncheck.models.errors import BadParameter
from turncheck.models.extras import install_hint
from turncheck.models.session_store import (
    TURN_KINDS,
    ConnectionLost,
    JournalEntry,
    SessionHeader,
    StoreBusy,
    Window,
)
from turncheck.sim.stress.sqlite import ids_of, ids_text
from turncheck.sim.stress.stores import Store, register_store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tc_turns (id BIGSERIAL PRIMARY KEY, writer INTEGER, n BIGINT);
CREATE TABLE IF NOT EXISTS tc_events (pos BIGSERIAL PRIMARY KEY, turn BIGINT, kind TEXT);
CREATE INDEX IF NOT EXISTS tc_events_turn ON tc_events(turn);
CREATE TABLE IF NOT EXISTS tc_header (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT,
    pending BOOLEAN, count_read INTEGER, read_version BIGINT, read_at DOUBLE PRECISION);
CREATE TABLE IF NOT EXISTS tc_journal (seq BIGINT PRIMARY KEY, op TEXT, kind TEXT, added TEXT,
    removed TEXT, count_read INTEGER);
"""
MARK = "turncheck stress session store"
"""The comment ``setup`` puts on each ``tc_*`` table: what tells our tables from a user's."""

_SHAPES = {
    "tc_turns": "id bigint, writer integer, n bigint",
    "tc_events": "pos bigint, turn bigint, kind text",
    "tc_header": "id integer, version bigint, pending boolean, count_read integer, read_version bigint,"
    " read_at double precision",
    "tc_journal": "seq bigint, op text, kind text, added text, removed text, count_read integer",
}
"""Our tables' columns: an unmarked table of this shape is an earlier version's run."""

_RELATIONS = """
SELECT n.nspname, c.relname, n.nspname = current_schema(), coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
ORDER BY 1, 2
"""
_COLUMNS = """
SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = %s
"""

_HEADER = "SELECT version, pending, count_read, read_version, read_at FROM tc_header WHERE id = 1"


def _head(row: Any) -> SessionHeader:
    return SessionHeader(int(row[0]), bool(row[1]), int(row[2]), int(row[3]), float(row[4]))


class PostgresWriteTx:
    """An open PostgreSQL write transaction (see :class:`turncheck.models.session_store.WriteTx`)."""

    def __init__(self, cur: Any, lock: bool) -> None:
        self._cur = cur
        self._lock = lock
        self.added: list[int] = []
        self.removed: list[int] = []
        self.seq: int | None = None

    def header(self) -> SessionHeader:
        self._cur.execute(_HEADER + (" FOR UPDATE" if self._lock else ""))
        return _head(self._cur.fetchone())

    def append(self, writer: int, n: int) -> int:
        self._cur.execute("INSERT INTO tc_turns (writer, n) VALUES (%s, %s) RETURNING id", (writer, n))
        turn = int(self._cur.fetchone()[0])
        self._cur.executemany(
            "INSERT INTO tc_events (turn, kind) VALUES (%s, %s)", [(turn, k) for k in TURN_KINDS]
        )
        self.added.append(turn)
        return turn

    def count(self) -> int:
        self._cur.execute("SELECT count(*) FROM tc_turns")
        return int(self._cur.fetchone()[0])

    def delete_oldest(self, n: int) -> tuple[int, ...]:
        if n <= 0:
            return ()
        self._cur.execute("SELECT id FROM tc_turns ORDER BY id LIMIT %s", (n,))
        ids = tuple(int(r[0]) for r in self._cur.fetchall())
        if ids:
            self._cur.execute("DELETE FROM tc_events WHERE turn <= %s", (ids[-1],))
            self._cur.execute("DELETE FROM tc_turns WHERE id <= %s", (ids[-1],))
        self.removed.extend(ids)
        return ids

    def commit_header(self, header: SessionHeader, expect_version: int | None = None) -> int | None:
        values: tuple[Any, ...] = (header.pending, header.count_read, header.read_version, header.read_at)
        sql = (
            "UPDATE tc_header SET version = version + 1, pending = %s, count_read = %s, read_version = %s,"
            " read_at = %s WHERE id = 1"
        )
        if expect_version is not None:
            sql += " AND version = %s"
            values += (expect_version,)
        self._cur.execute(sql + " RETURNING version", values)
        row = self._cur.fetchone()
        if row is None:
            return None
        self.seq = int(row[0])
        return self.seq


class PostgresStore:
    """Session store in PostgreSQL tables ``tc_*`` of the database the DSN names."""

    name = "postgres"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._conn: Any = None

    def _open(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise BadParameter(
                f"--store postgres needs the PostgreSQL driver: {install_hint('stores')}"
            ) from None
        try:
            return psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
            raise ConnectionLost(f"cannot connect to {self.dsn!r}: {str(exc).strip()}") from None

    def setup(self) -> None:
        conn = self._open()
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(7204013)")  # concurrent setups queue
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        conn.execute(statement)
                for table in _SHAPES:
                    conn.execute(f"COMMENT ON TABLE {table} IS '{MARK}'")
                conn.execute("TRUNCATE tc_turns, tc_events, tc_header, tc_journal RESTART IDENTITY")
                conn.execute("INSERT INTO tc_header VALUES (1, 0, false, 0, 0, 0)")
        finally:
            conn.close()

    def connect(self) -> None:
        self._conn = self._open()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def conn(self) -> Any:
        if self._conn is None or self._conn.closed:
            self.connect()
        return self._conn

    @contextmanager
    def write(self, op: str, kind: str, lock: bool, count_read: int = 0) -> Iterator[PostgresWriteTx]:
        import psycopg
        from psycopg import errors

        conn = self.conn
        try:
            with conn.transaction() as txn, conn.cursor() as cur:
                tx = PostgresWriteTx(cur, lock)
                if lock:
                    tx.header()  # take the session's write lock before anything else
                yield tx
                if tx.seq is None:
                    raise psycopg.Rollback(txn)
                cur.execute(
                    "INSERT INTO tc_journal VALUES (%s, %s, %s, %s, %s, %s)",
                    (tx.seq, op, kind, ids_text(tuple(tx.added)), ids_text(tuple(tx.removed)), count_read),
                )
        except (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable) as exc:
            raise StoreBusy(str(exc).strip()) from None
        except psycopg.OperationalError as exc:
            self._drop()
            raise ConnectionLost(str(exc).strip()) from None

    def _drop(self) -> None:
        try:
            if self._conn is not None:
                self._conn.close()
        finally:
            self._conn = None

    def header(self) -> SessionHeader:
        import psycopg

        try:
            return _head(self.conn.execute(_HEADER).fetchone())
        except psycopg.OperationalError as exc:
            self._drop()
            raise ConnectionLost(str(exc).strip()) from None

    def read_window(self) -> Window:
        import psycopg

        conn = self.conn
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                version = int(conn.execute("SELECT version FROM tc_header WHERE id = 1").fetchone()[0])
                rows = conn.execute("SELECT turn, kind FROM tc_events ORDER BY pos").fetchall()
            finally:
                conn.execute("COMMIT")
        except psycopg.OperationalError as exc:
            self._drop()
            raise ConnectionLost(str(exc).strip()) from None
        return Window(version, tuple(int(r[0]) for r in rows), "".join(r[1] for r in rows))

    def journal(self) -> tuple[JournalEntry, ...]:
        rows = self.conn.execute(
            "SELECT seq, op, kind, added, removed, count_read FROM tc_journal ORDER BY seq"
        )
        return tuple(JournalEntry(int(r[0]), r[1], r[2], ids_of(r[3]), ids_of(r[4]), int(r[5])) for r in rows)

    def live_ids(self) -> tuple[int, ...]:
        return tuple(int(r[0]) for r in self.conn.execute("SELECT id FROM tc_turns ORDER BY id"))


def foreign_tables(dsn: str, also_ours: Callable[[Any, str], bool] | None = None) -> list[str]:
    """The tables (and views) of the database ``dsn`` names that turncheck did not write, as
    ``schema.name``: every one but our ``tc_*`` tables in the schema the run writes to (marked
    with :data:`MARK`, or of our columns: an earlier version's run), and those ``also_ours(conn,
    name)`` accepts (a library store's own tables holding only turncheck's rows). A ``tc_turns``
    of a user's is foreign: ``setup`` would empty it."""
    foreign: list[str] = []
    with closing(PostgresStore(dsn)._open()) as conn:
        for schema, name, current, comment in conn.execute(_RELATIONS).fetchall():
            if current and name in _SHAPES:
                shape = conn.execute(_COLUMNS, (name,)).fetchone()[0]
                if comment == MARK or shape == _SHAPES[name]:
                    continue
            elif current and also_ours is not None and also_ours(conn, name):
                continue
            foreign.append(f"{schema}.{name}")
    return foreign


register_store(Store("postgres", PostgresStore, "psycopg", "#d62728",
                     "a PostgreSQL server; the header row FOR UPDATE as the write lock", needs_dsn=True))  # fmt: skip
