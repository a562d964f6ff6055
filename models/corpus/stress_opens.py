"""Cases whose input is a pair of session stores opened at once by several processes in fresh
databases (``turncheck stress --first-opens``): the store as the report has it red, the fix
green. The stores are examples of the repository (``examples/stores``), shipped with the wheel too."""

from __future__ import annotations

from turncheck.models.cases import Case, StressInput, register_case

for _case in (
    Case("sqlite-first-open-contention", "openai/openai-agents-python#4987", "2026-09-13", "merged",
         "store contention",
         StressInput("examples/stores/first_open.py:NoBusyTimeout", "examples/stores/first_open.py:Patient"),
         ("first-open",),
         "concurrent first opens of one fresh SQLite database fail with database is locked (20 of 160 in the "
         "PR): WAL initialization raises before the busy timeout, and a competing schema writer holds the lock",
         "real SQLite and real processes, the store's open in the two shapes (the PR measured AsyncSQLiteSession "
         "on v0.22.2; the 0.24.0 constraints.txt pins opens 8 x 20 cleanly under stress --store agents-sqlite, "
         "which runs the synchronous SQLiteSession)"),
):  # fmt: skip
    register_case(_case)
