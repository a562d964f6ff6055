"""A SQLite chat store appended to from a thread pool: select, add, write back (issue 53).

``append`` opens a connection, selects the session's messages (a JSON list in one row), adds
the message and writes the row back with ``insert or replace``, then commits. The select runs
outside any transaction (Python's ``sqlite3`` begins one only before the write), so two appends
can both read the old list; the later commit drops the other's message. The test calls the
store's unchanged ``append`` from a ``ThreadPoolExecutor``::

    python examples/races/sqlite_store_sync.py                                          # plain threads
    turncheck race examples/races/sqlite_store_sync.py:test_no_lost_append             # exit 1
    turncheck race examples/races/sqlite_store_sync.py:test_no_lost_append_locked      # exit 0
    turncheck race examples/races/sqlite_store_sync.py:test_no_lost_append_immediate   # exit 0

Two ways out: one ``threading.Lock`` around the append (``LockedSqliteStore``), or SQLite's own
lock — ``BEGIN IMMEDIATE`` before the select (``ImmediateSqliteStore``), so the second append
waits for the first one's commit (under ``turncheck race`` it waits without stalling the run).
"""

import json
import os
import sqlite3
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing


class SqliteStore:
    """Sessions in one table, each one's messages a JSON list in one row."""

    def __init__(self, path: str) -> None:
        self.path = path
        with closing(sqlite3.connect(path)) as db:
            db.execute("create table if not exists sessions (id text primary key, messages text)")
            db.commit()

    def messages(self, session: str) -> list[str]:
        with closing(sqlite3.connect(self.path)) as db:
            row = db.execute("select messages from sessions where id = ?", (session,)).fetchone()
        return list(json.loads(row[0])) if row else []

    def append(self, session: str, message: str) -> None:
        with closing(sqlite3.connect(self.path)) as db:
            self._append(db, session, message)

    def _append(self, db: sqlite3.Connection, session: str, message: str) -> None:
        row = db.execute("select messages from sessions where id = ?", (session,)).fetchone()
        messages = json.loads(row[0]) if row else []
        messages.append(message)
        db.execute(
            "insert or replace into sessions (id, messages) values (?, ?)", (session, json.dumps(messages))
        )
        db.commit()


class LockedSqliteStore(SqliteStore):
    """The same store, every append under one ``threading.Lock``."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.lock = threading.Lock()

    def append(self, session: str, message: str) -> None:
        with self.lock:
            super().append(session, message)


class ImmediateSqliteStore(SqliteStore):
    """The same store, the select inside a ``BEGIN IMMEDIATE`` transaction: SQLite's write lock
    is taken before the read, so a second append waits for the first one's commit."""

    def append(self, session: str, message: str) -> None:
        with closing(sqlite3.connect(self.path, timeout=5.0)) as db:
            db.execute("begin immediate")
            self._append(db, session, message)


def check_both_kept(store_type: type[SqliteStore]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = store_type(os.path.join(folder, "chat.db"))
        with ThreadPoolExecutor(max_workers=2) as pool:
            done = [pool.submit(store.append, "s1", m) for m in ("user: weather?", "tool: 21°C")]
            for future in done:
                future.result()
        kept = store.messages("s1")
    assert len(kept) == 2, f"an append was lost: the session holds {kept}"


def test_no_lost_append() -> None:
    check_both_kept(SqliteStore)


def test_no_lost_append_locked() -> None:
    check_both_kept(LockedSqliteStore)


def test_no_lost_append_immediate() -> None:
    check_both_kept(ImmediateSqliteStore)


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    lost = 0
    for _ in range(runs):
        try:
            test_no_lost_append()
        except AssertionError:
            lost += 1
    print(f"plain threads: an append was lost in {lost} of {runs} runs")
    sys.exit(1 if lost else 0)
