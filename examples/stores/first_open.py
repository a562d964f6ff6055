"""Two SQLite session stores that differ only in how they open a fresh database — the shapes of
openai-agents-python PR #4987 ("fix: handle concurrent async SQLite startup").

Both have a schema writer that holds the write lock for a moment on first open (PR #4987 names
"a real competing schema writer"). ``NoBusyTimeout`` opens with no busy timeout and switches to
WAL once: concurrent first opens fail with SQLite's own ``database is locked``. ``Patient``
waits on the lock (a busy timeout) and retries the WAL switch, which SQLite runs no busy
handler for — the fix's shape::

    turncheck stress --store examples/stores/first_open.py:NoBusyTimeout --first-opens 2 --writers 4
    turncheck stress --store examples/stores/first_open.py:Patient --first-opens 2 --writers 4

Both are the built-in ``sqlite`` store otherwise (``turncheck.sim.stress.sqlite``).
"""

from __future__ import annotations

import sqlite3
import time

from turncheck.sim.stress.sqlite import SqliteStore, enable_wal

HOLD_S = 0.2


class NoBusyTimeout(SqliteStore):
    """No busy timeout; WAL switched on once; the schema writer holds the lock ``HOLD_S``."""

    timeout = 0.0

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def setup(self) -> None:
        db = self._open()
        try:
            db.execute("BEGIN IMMEDIATE")
            time.sleep(HOLD_S)
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (v INTEGER)")
            db.execute("COMMIT")
        finally:
            db.close()
        super().setup()


class Patient(NoBusyTimeout):
    """The same schema writer; a busy timeout, and the WAL switch retried (PR #4987's fix)."""

    timeout = 30.0

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        enable_wal(db)
        return db
