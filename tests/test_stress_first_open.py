"""``turncheck stress --first-opens``: concurrent first opens of a fresh store, every failure
counted, none retried (openai-agents PR #4987).

Real processes open real, fresh SQLite files at once. Refused: a store with no busy timeout
whose schema writer holds the write lock a moment (the shape PR #4987 met: a competing schema
writer, and a WAL switch no busy handler covers) fails first opens with SQLite's own ``database
is locked``, exit 1. Accepted: the same schema writer under a busy timeout with the WAL switch
retried (PR #4987's fix, and the built-in ``sqlite`` store's) opens every time, exit 0. A store
named by a DSN, or one opener, is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "stores" / "first_open.py"


@pytest.fixture
def stores() -> Path:
    """The two stores of the corpus case (models/corpus/stress_opens.py), as the example ships them."""
    return EXAMPLE


def _first_opens(cli: Any, store: str, *extra: str) -> tuple[int, str, str]:
    code, out, err = cli("stress", "--store", store, "--first-opens", "2", "--writers", "4", *extra)
    return code, out, err


def test_a_store_without_a_busy_timeout_fails_concurrent_first_opens(cli: Any, stores: Path) -> None:
    code, out, err = _first_opens(cli, f"{stores}:NoBusyTimeout")
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"first opens {stores}:NoBusyTimeout · 4 processes × 2 fresh databases: ")
    assert lines[0].endswith(" of 8 failed (each tried once, not retried)")
    assert int(lines[0].split(": ")[1].split()[0]) >= 1
    assert any(line.startswith("  OperationalError: database is locked ×") for line in lines)
    assert lines[-1] == "FAIL: a concurrent first open failed"


def test_a_busy_timeout_and_a_retried_wal_switch_open_every_time(cli: Any, stores: Path) -> None:
    code, out, _ = _first_opens(cli, f"{stores}:Patient", "--format", "json")
    obj = json.loads(out)
    assert obj.pop("format").startswith("turncheck/")
    assert code == 0 and obj == {
        "store": f"{stores}:Patient", "openers": 4, "rounds": 2, "opens": 8, "failed": 0, "errors": {}, "ok": True,
    }  # fmt: skip


def test_the_built_in_sqlite_store_reports_its_first_opens(cli: Any) -> None:
    code, out, _ = _first_opens(cli, "sqlite")
    head = out.splitlines()[0]
    assert head.startswith("first opens sqlite · 4 processes × 2 fresh databases: ")
    assert code == (0 if " 0 of 8 failed" in head else 1)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("--store", "postgres", "--first-opens", "1"), "first opens need a file store"),
        (("--store", "sqlite", "--first-opens", "1", "--writers", "1"), "needs 2..64 processes"),
    ],
)
def test_what_has_no_fresh_database_or_no_contention_is_one_line(
    cli: Any, argv: tuple[str, ...], words: str
) -> None:
    code, out, err = cli("stress", *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and words in err


def test_a_failed_first_open_is_one_line_of_text() -> None:
    """SQLAlchemy's error (ADK's ``DatabaseSessionService``) goes on over many lines — the
    statement, a link — and the report printed them all between its counted lines."""
    import sqlite3

    sqlalchemy = pytest.importorskip("sqlalchemy")
    from turncheck.sim.stress.first_open import error_text

    exc = sqlalchemy.exc.OperationalError(
        "\nCREATE TABLE adk_internal_metadata (\n\t\"key\" VARCHAR(128) NOT NULL\n)\n", {},
        sqlite3.OperationalError("table adk_internal_metadata already exists"),
    )
    assert "\n" in str(exc)
    assert error_text(exc) == (
        "OperationalError: (sqlite3.OperationalError) table adk_internal_metadata already exists"
    )
    assert error_text(sqlite3.OperationalError("database is locked")) == "OperationalError: database is locked"
