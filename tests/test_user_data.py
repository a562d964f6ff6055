"""Issue 31, user data: turncheck never deletes, truncates or overwrites a file it did not create
in this run, and never writes through a symlink. Each reproducer hashes the user's folder before
and after, and checks the one-line refusal (exit 2) or that the command wrote beside the file."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.importers import import_events


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a link's target, a file's SHA-256, or ``dir``."""
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        if p.is_symlink():
            out[key] = "-> " + os.readlink(p)
        elif p.is_file():
            out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[key] = "dir"
    return out


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("turncheck: error:") and err.count("\n") == 1 and needle in err, err


def users_db(path: Path, rows: int = 100) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE turns (id INTEGER PRIMARY KEY, note TEXT)")
    db.executemany("INSERT INTO turns (note) VALUES (?)", [(f"row {i}",) for i in range(rows)])
    db.commit()
    db.close()


def _db_with_rows(d: Path) -> Path:
    users_db(d / "mine.db")
    return d / "mine.db"


def _db_symlink(d: Path) -> Path:
    (d / "empty.db").touch()
    (d / "link.db").symlink_to("empty.db")
    return d / "link.db"


def _db_sidecar(d: Path) -> Path:
    (d / "mine.db").touch()
    users_db(d / "mine.db.turncheck")
    return d / "mine.db"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_db_with_rows, "exists and is not empty"),
        (_db_symlink, "is a symlink"),
        (_db_sidecar, "is not empty"),
    ],
)
def test_stress_refuses_a_database_it_did_not_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path], says: str
) -> None:
    db = make(tmp_path)
    before = snapshot(tmp_path)
    refused(capsys, ["stress", "--db", str(db), "--seconds", "0.2", "--quiet"], says)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("store", ["sqlite", "langgraph-sqlite", "agents-sqlite"])
@pytest.mark.parametrize(
    "uri", ["file:mine.db", "file:mine.db?mode=rwc", "file:{d}/mine.db", "file://{d}/mine.db"]
)
def test_stress_db_is_a_path_never_a_sqlite_uri(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, store: str, uri: str
) -> None:
    """Issue 57: Debian's SQLite (SQLITE_USE_URI) opened ``file:mine.db`` as ``mine.db``, past the
    fresh-database check, and replaced the user's ``turns`` table."""
    users_db(tmp_path / "mine.db")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    argv = ["stress", "--store", store, "--db", uri.format(d=tmp_path), "--seconds", "0.2", "--quiet"]
    refused(capsys, argv, "not a SQLite URI")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("store", "dsn"),
    [
        ("sqlite", "mine.db"),
        ("sqlite", "{d}/mine.db"),
        ("langgraph-sqlite", "mine.db"),
        ("agents-sqlite", "file:mine.db"),
        ("adk-database", "sqlite+aiosqlite:///{d}/mine.db"),
    ],
)
def test_stress_takes_a_sqlite_database_from_db_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, store: str, dsn: str
) -> None:
    """``--dsn PATH`` for a file store went past the fresh-database check: the user's rows went."""
    users_db(tmp_path / "mine.db")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    argv = ["stress", "--store", store, "--dsn", dsn.format(d=tmp_path), "--seconds", "0.2", "--quiet"]
    refused(capsys, argv, "never --dsn")
    assert snapshot(tmp_path) == before


def test_a_sqlite_store_opens_a_file_uri_name_as_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turncheck.sim.stress.sqlite import SqliteStore

    users_db(tmp_path / "mine.db")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    SqliteStore("file:mine.db?mode=rwc").setup()
    assert set(snapshot(tmp_path)) - set(before) >= {"file:mine.db?mode=rwc"}
    assert {k: v for k, v in snapshot(tmp_path).items() if k in before} == before


def test_stress_empties_a_users_database_only_when_told_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "mine.db"
    users_db(db, rows=1000)
    argv = [
        "stress",
        "--db",
        str(db),
        "--locking",
        "mutex",
        "--seconds",
        "0.3",
        "--quiet",
        "--format",
        "json",
    ]
    refused(capsys, argv, "--overwrite-db")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM turns").fetchone()[0] == 1000
    link = tmp_path / "link.db"
    link.symlink_to(db)
    refused(capsys, ["stress", "--db", str(link), "--overwrite-db", "--seconds", "0.2", "--quiet"], "symlink")
    main([*argv, "--overwrite-db"])  # the user's own schema: refused by the store, or replaced
    capsys.readouterr()
    assert sqlite3.connect(db).execute("SELECT count(*) FROM turns").fetchone()[0] != 1000


def test_stress_takes_an_empty_file_as_its_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new.db"
    db.touch()
    main(["stress", "--db", str(db), "--locking", "mutex", "--seconds", "0.3", "--quiet", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["verdict"] == "ok"
    assert sqlite3.connect(db).execute("SELECT count(*) FROM turns").fetchone()[0] > 0


def _history_with_a_user_file(d: Path) -> None:
    (d / "history").mkdir()
    (d / "history" / "notes.txt").write_text("mine\n")


def _history_is_a_link(d: Path) -> None:
    (d / "mine").mkdir()
    (d / "mine" / "w0.0.jsonl").write_text("mine\n")
    (d / "history").symlink_to("mine")


def _history_file_is_a_link(d: Path) -> None:
    (d / "history").mkdir()
    (d / "notes.txt").write_text("mine\n")
    (d / "history" / "w0.0.jsonl").symlink_to("../notes.txt")


def _history_is_a_file(d: Path) -> None:
    (d / "history").write_text("mine\n")


@pytest.mark.parametrize(
    "make", [_history_with_a_user_file, _history_is_a_link, _history_file_is_a_link, _history_is_a_file]
)
def test_stress_out_refuses_a_history_folder_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], None]
) -> None:
    make(tmp_path)
    before = snapshot(tmp_path)
    refused(capsys, ["stress", "--seconds", "0.2", "--quiet", "-o", str(tmp_path)], "did not write")
    assert snapshot(tmp_path) == before


def test_stress_out_replaces_its_own_earlier_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["stress", "--locking", "mutex", "--seconds", "0.3", "--quiet", "-o", str(tmp_path)]
    assert main([*argv, "--writers", "3"]) == 0
    assert main([*argv, "--writers", "1"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "history").iterdir()) == [
        "c.0.jsonl",
        "store.jsonl",
        "w0.0.jsonl",
    ]


def _trace(d: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    trace = d / "t.json"
    argv = ["check", "trigger", "-p", "locking=none", "-p", "gap=1", "--trace-out", str(trace)]
    assert main([*argv, "--database", str(d / "db")]) == 1
    capsys.readouterr()
    return trace


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{d}", "-o", "{link}"],
        ["replay", "{trace}", "--html", "{link}"],
        ["explore", "trigger", "-q", "--html", "{link}"],
        ["stress", "--seconds", "0.2", "--quiet", "--html", "{link}"],
        ["stress", "--seconds", "0.2", "--quiet", "-o", "{d}", "--db", "{d}/s.db"],
        ["explore", "trigger", "-q", "--dot", "{link}"],
        ["explore", "trigger", "-q", "--graphml", "{link}"],
        ["check", "trigger", "-p", "locking=none", "--trace-out", "{link}", "--database", "{d}/db"],
    ],
    ids=["report", "replay", "explore", "stress-html", "stress-out", "dot", "graphml", "trace-out"],
)
def test_no_command_writes_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    trace = _trace(tmp_path, capsys) if argv[0] == "replay" else tmp_path / "none.json"
    target = tmp_path / "target.txt"
    target.write_text("the user's file\n")
    link = tmp_path / ("stress.json" if "-o" in argv and argv[0] == "stress" else "link.html")
    link.symlink_to(target.name)
    before = snapshot(tmp_path)
    fill = {"d": str(tmp_path), "link": str(link), "trace": str(trace)}
    refused(capsys, [a.format(**fill) for a in argv], "symlink")
    assert snapshot(tmp_path) == before


def test_a_page_replaces_a_regular_file_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "states.html"
    page.write_text("old\n")
    assert main(["explore", "trigger", "-q", "--html", str(page)]) == 0
    capsys.readouterr()
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["states.html"]


def test_agents_sqlite_opens_the_named_file_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    users_db(tmp_path / "real.db")
    before = snapshot(tmp_path)
    refused(
        capsys, ["import", str(tmp_path / "real.db?mode=rwc&x="), "--from", "agents-sqlite"], "no such file"
    )
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["a?b.db", "a#b.db", "a%3Fb.db", "new.db?mode=rwc&x=", "a b&mode=rwc.db"])
def test_agents_sqlite_reads_a_path_with_uri_characters(tmp_path: Path, name: str) -> None:
    db = sqlite3.connect(tmp_path / name)
    db.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)")
    db.execute(
        "INSERT INTO agent_messages VALUES (1, 's', ?)", (json.dumps({"role": "user", "content": "hi"}),)
    )
    db.commit()
    db.close()
    users_db(tmp_path / "a")  # what a URI pasted from the path opened for "a?b.db" or "a#b.db"
    before = snapshot(tmp_path)
    events = import_events("agents-sqlite", tmp_path / name)
    assert [e.session for e in events] == ["s"]
    assert snapshot(tmp_path) == before


def test_stress_on_a_postgres_database_holding_a_users_tables_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ``--dsn`` database is the ``--db`` file's case on a server: our own tables (this run's,
    an earlier run's, an older version's unmarked ones) are reused; a user's table beside them,
    in another schema, or sharing our ``tc_turns`` name is refused, never emptied, unless
    ``--overwrite-db`` names the intent (the setup truncated every ``tc_*`` table, whoever's)."""
    from turncheck.sim.stress.pg_server import throwaway_server, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server can be started here: {reason}")
    import psycopg

    with throwaway_server() as dsn:

        def sql(*statements: str) -> list[tuple[object, ...]]:
            with psycopg.connect(dsn, autocommit=True) as conn:
                rows: list[tuple[object, ...]] = []
                for statement in statements:
                    cur = conn.execute(statement)
                    rows = cur.fetchall() if cur.description else []
                return rows

        argv = ["stress", "--store", "postgres", "--dsn", dsn, "--locking", "mutex", "--seconds", "0.3", "-q"]
        assert main(argv) == 0  # a fresh database
        assert main(argv) == 0  # the tables a run left
        capsys.readouterr()
        sql("CREATE TABLE customers (id int)", "INSERT INTO customers VALUES (1)")
        refused(capsys, argv, "public.customers")
        assert main([*argv, "--overwrite-db"]) == 0
        assert sql("SELECT count(*) FROM customers") == [(1,)]  # never touched, even then
        capsys.readouterr()
        sql("DROP TABLE customers", "DROP TABLE tc_turns", "CREATE TABLE tc_turns (id bigint, name text)",
            "INSERT INTO tc_turns VALUES (1, 'mine')")  # fmt: skip
        refused(capsys, argv, "public.tc_turns")
        assert sql("SELECT name FROM tc_turns") == [("mine",)]
        sql(
            "DROP TABLE tc_turns",
            "CREATE TABLE tc_turns (id BIGSERIAL PRIMARY KEY, writer INTEGER, n BIGINT)",
        )
        assert main(argv) == 0  # an older version's table of ours, unmarked
        capsys.readouterr()
        sql("CREATE SCHEMA app", "CREATE VIEW app.totals AS SELECT 1 AS one")
        refused(capsys, argv, "app.totals")


@pytest.mark.parametrize("store", ["sqlite", "agents-sqlite"])
@pytest.mark.parametrize(
    "beside", ["-shm", "-journal", ".turncheck-wal", ".turncheck-shm", ".turncheck-journal"]
)
def test_stress_refuses_a_users_file_where_sqlite_keeps_its_own_beside_the_db(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: str, beside: str
) -> None:
    """The fresh-database check looked at ``DB``, ``DB-wal`` and ``DB.turncheck`` only: a user's
    file named ``DB-shm``, ``DB-journal`` or one of the side-car's own was overwritten or deleted
    by SQLite (a held-out variant of the file beside the database). Each is refused, as a
    symlink is; a new database beside nothing runs."""
    db = tmp_path / "new.db"
    users = Path(f"{db}{beside}")
    users.write_bytes(b"the user's own bytes\n" * 100)
    before = snapshot(tmp_path)
    argv = ["stress", "--store", store, "--db", str(db), "--locking", "mutex", "--seconds", "0.2", "-q"]
    refused(capsys, argv, str(users))
    users.unlink()
    users.symlink_to(tmp_path / "elsewhere")
    refused(capsys, argv, "symlink")
    assert not (tmp_path / "elsewhere").exists()
    users.unlink()
    assert snapshot(tmp_path) == {k: v for k, v in before.items() if k != users.name}
    if store == "agents-sqlite" and importlib.util.find_spec("agents") is None:
        pytest.skip("the refusals hold; the run beside nothing needs openai-agents (the peers extra)")
    assert main(argv) == 0
