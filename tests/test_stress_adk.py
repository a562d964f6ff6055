"""``turncheck stress --store adk-database``: Google ADK's ``DatabaseSessionService`` as the session store.

Real writer processes and a real compactor process share one ADK session, in a SQLite file and
(when the binaries exist) on a throw-away PostgreSQL server; every locking strategy runs, and
``mutex`` and ``append-sync`` under ``--kill``. ``none`` breaks the bound, ``mutex`` and
``append-sync`` hold theirs and lose nothing; afterwards a fresh ``DatabaseSessionService`` must
show exactly the live turns the journal leaves. A kill between ADK's appends and the side-car's
journal commit is rolled back by whoever takes the lock next (sidecar.py), so under ``--kill``
both are ``ok`` too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.session_store import TURN_KINDS
from turncheck.sim.stress.pg_server import throwaway_server, unavailable_reason


def _stress(capsys: pytest.CaptureFixture[str], target: list[str], *args: str) -> tuple[int, dict]:
    code = main(["stress", "--store", "adk-database", *target, "--writers", "3", "--max-turns", "8",
                 "--format", "json", "--quiet", *args])  # fmt: skip
    captured = capsys.readouterr()
    assert captured.out, captured.err
    return code, json.loads(captured.out)


def _live_turns(url: str) -> list[tuple[int, str]]:
    """The session's turns as a fresh ADK reader sees them (compacted events hidden, as ADK's
    request builder hides them)."""
    from google.adk.flows.llm_flows.context._compaction import _process_compaction_events
    from google.adk.sessions import DatabaseSessionService

    from turncheck.integrations.stores.adk_database import APP, SESSION_ID, USER, event_tag

    async def read() -> list[tuple[int, str]]:
        service = DatabaseSessionService(db_url=url)
        try:
            session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION_ID)
            return [
                event_tag(e) for e in _process_compaction_events(session.events) if not e.actions.compaction
            ]
        finally:
            await service.close()

    return asyncio.run(read())


@pytest.fixture(scope="module")
def adk() -> None:
    pytest.importorskip("google.adk", reason="google-adk (the adk extra) is not installed")


@pytest.fixture(scope="module")
def pg_url(adk: None) -> Iterator[str]:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server can be started here: {reason}")
    with throwaway_server() as dsn:
        sock = dsn.split("host=", 1)[1].split()[0]
        yield f"postgresql+psycopg://postgres@/postgres?host={sock}"


Target = Callable[[str], tuple[list[str], str]]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path, adk: None) -> Target:
    """Per run: the CLI arguments naming the database (a new SQLite file each run, since a run
    refuses a non-empty one; the server's database, which each run empties), and ADK's URL."""
    if request.param == "sqlite":

        def new_file(name: str) -> tuple[list[str], str]:
            db = tmp_path / f"{name}.db"
            return ["--db", str(db)], f"sqlite+aiosqlite:///{db.resolve()}"

        return new_file
    url = request.getfixturevalue("pg_url")
    return lambda name: (["--dsn", url], url)


def test_none_breaks_the_bound_and_the_locks_hold_theirs(
    capsys: pytest.CaptureFixture[str], target: Target
) -> None:
    for attempt, gap in enumerate(("300", "1200")):  # a loaded machine lands fewer appends in a gap
        args, url = target(f"none-{attempt}")
        code, none = _stress(capsys, args, "--locking", "none", "--gap-ms", gap, "--seconds", "4")
        if code == 1 or not url.startswith("sqlite"):
            break
    assert none["store"] == "adk-database" and none["lost"] == 0 and none["appends"] > 0
    if url.startswith("sqlite"):  # a server's appends are slower: fewer land in a gap (real-stores.md)
        assert code == 1 and none["peak"] > 9
    assert {v["invariant"] for v in none["violations"]} == ({"bounded-peak-turns"} if code else set())
    for locking, bound in (("mutex", 9), ("append-sync", 8)):
        args, url = target(locking)
        code, out = _stress(capsys, args, "--locking", locking, "--seconds", "2")
        if out["stuck"]:  # killed at the hard deadline on a loaded machine: a kill like --kill's
            assert out["verdict"] == "ok", out["violations"]
            continue
        assert code == 0 and out["verdict"] == "ok", out["violations"]
        assert out["peak"] <= bound and out["lost"] == 0 and out["over_deleted"] == 0 and out["appends"] > 0
        tags = _live_turns(url)
        turns = list(dict.fromkeys(t for t, _ in tags))
        assert len(turns) <= bound and "".join(k for _, k in tags) == TURN_KINDS * len(turns)


@pytest.mark.parametrize("locking", ["cas", "trim-to"])
def test_the_other_strategies_run_and_lose_nothing(
    capsys: pytest.CaptureFixture[str], target: Target, locking: str
) -> None:
    # 3 s, not 1.5: beside the suite and the slow tier (load about 8 on 2 cores) one 1.5 s cas run
    # committed no append at all, and a check over no appends shows nothing
    code, out = _stress(capsys, target(locking)[0], "--locking", locking, "--seconds", "3")
    assert code in (0, 1) and out["appends"] > 0 and out["lost"] == 0 and out["over_deleted"] == 0
    assert {v["invariant"] for v in out["violations"]} <= {"bounded-peak-turns"}, out["violations"]


@pytest.mark.parametrize("locking", ["mutex", "append-sync"])
def test_kill_is_rolled_back_and_the_run_is_ok(
    capsys: pytest.CaptureFixture[str], target: Target, locking: str
) -> None:
    args, url = target(f"kill-{locking}")
    code, out = _stress(capsys, args, "--locking", locking, "--seconds", "3", "--kill", "--kills", "3",
                        "--seed", "1")  # fmt: skip
    assert len(out["kills"]) == 3 and out["appends"] > 0 and out["lost"] == 0
    assert code == 0 and out["verdict"] == "ok", out["violations"]
    tags = _live_turns(url)
    turns = list(dict.fromkeys(t for t, _ in tags))
    assert "".join(k for _, k in tags) == TURN_KINDS * len(turns) and len(turns) <= 9


def test_turn_events_carry_their_turn_and_urls(adk: None) -> None:
    from turncheck.integrations.stores.adk_database import database_url, event_tag, sidecar_dsn, turn_events

    events = turn_events(7)
    assert [event_tag(e) for e in events] == [(7, k) for k in TURN_KINDS]
    assert [e.content.role for e in events] == ["user", "model", "user", "model"]
    assert events[1].content.parts[0].function_call.id == events[2].content.parts[0].function_response.id
    assert database_url("/tmp/x.db") == "sqlite+aiosqlite:////tmp/x.db"
    assert sidecar_dsn("postgresql+psycopg://postgres@/db?host=/s") == "postgresql://postgres@/db?host=/s"


@pytest.mark.parametrize("missing", ["google.adk.sessions", "sqlalchemy.engine"])
def test_without_google_adk_it_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, missing: str
) -> None:
    """Without ADK, or without the SQLAlchemy it brings (the lowest-versions run installs
    neither: the path was quoted by SQLAlchemy before ADK was imported, a bare ModuleNotFoundError
    line), the store is refused in one line naming the extra."""
    monkeypatch.setitem(sys.modules, missing, None)
    code = main(
        ["stress", "--store", "adk-database", "--db", str(tmp_path / "a.db"), "--seconds", "0.2", "-q"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "needs google-adk" in err and "pip install 'google-adk" in err and err.count("\n") == 1


@pytest.mark.parametrize("name", ["user.db?mode=rwc", "us%65r.db", "a#b.db"])
def test_a_path_with_url_characters_opens_that_very_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, adk: None, name: str
) -> None:
    """Pasted raw into ``sqlite+aiosqlite:///PATH``, ``user.db?mode=rwc`` opened ``user.db`` (a
    query) and ``us%65r.db`` too (an escape): past the fresh-database check, which looked at the
    file named so, ADK added its tables to the user's database."""
    user = tmp_path / "user.db"
    with contextlib.closing(sqlite3.connect(user)) as db:
        db.execute("CREATE TABLE turns(x)")
        db.executemany("INSERT INTO turns VALUES (?)", [(i,) for i in range(50)])
        db.commit()
    before = user.read_bytes()
    code = main(["stress", "--store", "adk-database", "--db", str(tmp_path / name), "--seconds", "0.3",
                 "--writers", "2", "-q", "--format", "json"])  # fmt: skip
    capsys.readouterr()
    assert code in (0, 1) and user.read_bytes() == before
    assert (tmp_path / name).stat().st_size > 0
