"""``--from goose``: Goose sessions written as Goose writes them (examples/formats/goose_session.py
follows ``session_manager.rs``'s schema and ``insert_message`` / ``save_compacted_conversation``,
and ``storage.rs``'s older JSONL, field for field: Goose is a Rust binary that needs a model account,
so no test can run it). The database is read from a private copy: nothing beside it is written,
a symlink is refused, what goose committed into the ``-wal`` is read."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.importers import FORMATS, formats_reading, import_events

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "formats"
sys.path.insert(0, str(EXAMPLES))
try:
    import goose_session as gs
finally:
    sys.path.remove(str(EXAMPLES))


def shape(events: list[Event]) -> str:
    words = []
    for e in events:
        word = f"S{e.covers[0]}-{e.covers[1]}" if e.kind is Kind.SUMMARY and e.covers else e.kind.name[0]
        words.append(word + (e.call_id or "") + (f">{e.tied_to}" if e.tied_to else ""))
    return " ".join(words)


def lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_goose_is_registered() -> None:
    assert "goose" in FORMATS.names()
    assert FORMATS["goose"].provider is None  # goose sends to many providers


def test_a_database_and_an_older_session_file_read_alike(tmp_path: Path) -> None:
    db = gs.write_database(tmp_path / "sessions.db", gs.conversation())
    jsonl = gs.write_jsonl(tmp_path / "20260101_000000.jsonl", gs.conversation(legacy=True))
    expected = "U Ctoolu_01 Ctoolu_02 Rtoolu_01 Rtoolu_02 T"
    assert shape(import_events("goose", db)) == expected
    assert shape(import_events("goose", jsonl)) == expected
    assert {e.session for e in import_events("goose", db)} == {"20260101_1"}
    assert formats_reading(db) == ["goose"]


def test_the_committed_example_is_what_the_writer_writes(tmp_path: Path) -> None:
    written = gs.write_jsonl(tmp_path / "goose-session.jsonl", gs.conversation(legacy=True))
    assert written.read_bytes() == (EXAMPLES / "goose-session.jsonl").read_bytes()


def test_every_session_of_the_database_is_read_in_its_order(tmp_path: Path) -> None:
    db = gs.SessionsDb(tmp_path / "sessions.db")
    db.create_session("20260102_1", "2026-01-02 00:00:00")
    db.create_session("20260101_1", "2026-01-01 00:00:00")
    for m in gs.conversation():
        db.add_message("20260102_1", m)
    db.add_message("20260101_1", gs.message("user", gs.CREATED, [gs.text("hi")]))
    db.add_message("20260101_1", gs.message("assistant", gs.CREATED, [gs.text("hello")]))
    db.close()
    events = import_events("goose", tmp_path / "sessions.db")
    assert [e.session for e in events][:2] == ["20260101_1", "20260101_1"]
    assert shape(events) == "U T U Ctoolu_01 Ctoolu_02 Rtoolu_01 Rtoolu_02 T"


def compacted(tmp_path: Path, mid_call: bool) -> Path:
    """A manual compaction (``compact_messages`` + ``save_compacted_conversation``) after the
    first call was issued — before its result (mid_call) or after the whole turn."""
    db = gs.SessionsDb(tmp_path / "sessions.db")
    db.create_session("s", "2026-01-01 00:00:00")
    turn = gs.conversation()
    for m in turn[:2] if mid_call else turn:
        db.add_message("s", m)
    db.compact("s", "<summary>Listed the files.</summary>", gs.CREATED + 5)
    if mid_call:
        db.add_message("s", turn[2])
        db.add_message("s", turn[3])
    db.add_message("s", gs.message("user", gs.CREATED + 9, [gs.text("Thanks.")]))
    db.add_message("s", gs.message("assistant", gs.CREATED + 9, [gs.text("You're welcome.")]))
    db.close()
    return tmp_path / "sessions.db"


def test_a_compaction_is_a_summary_of_the_messages_it_hid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = compacted(tmp_path, mid_call=False)
    assert shape(import_events("goose", path)) == "U Ctoolu_01 Ctoolu_02 Rtoolu_01 Rtoolu_02 T S0-5 T U T"
    code, out, _ = lint(capsys, "--from", "goose", str(path))
    assert code == 0, out


def test_a_compaction_while_calls_run_covers_an_open_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = compacted(tmp_path, mid_call=True)
    assert shape(import_events("goose", path)).startswith("U Ctoolu_01 Ctoolu_02 S0-2 T Rtoolu_01")
    code, out, _ = lint(capsys, "--from", "goose", str(path))
    assert code == 1 and "summary-covers-open-call" in out, out


def goose_6336(tmp_path: Path) -> Path:
    """aaif-goose/goose#6336 (Anthropic through Databricks: "messages.2: tool_use ids were found
    without tool_result blocks immediately after"): a toolRequest whose response was never
    stored, and the next prompt sent after it."""
    messages = gs.conversation()
    messages[1]["content"] = messages[1]["content"][:2]  # one call
    messages[2:] = [gs.message("user", gs.CREATED + 60, [gs.text("Hello again.")])]
    return gs.write_database(tmp_path / "sessions.db", messages)


def test_goose_6336_is_refused_under_anthropic_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = goose_6336(tmp_path)
    assert shape(import_events("goose", path)) == "U Ctoolu_01 U"
    code, out, _ = lint(capsys, "--from", "goose", "--provider", "anthropic", str(path))
    assert code == 1 and "call-not-answered-next" in out, out
    assert "messages row 2" in out  # the record of the call
    gs.write_database(tmp_path / "clean.db", gs.conversation())
    assert lint(capsys, "--from", "goose", "--provider", "anthropic", str(tmp_path / "clean.db"))[0] == 0


def test_what_goose_only_shows_its_user_is_no_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    confirm = {"type": "actionRequired", "data": {"actionType": "toolConfirmation", "id": "toolu_01",
               "toolName": "developer__shell", "arguments": {"command": "ls"}, "prompt": None}}  # fmt: skip
    notice = {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Compacting…"}
    messages = gs.conversation()
    messages.insert(2, gs.message("assistant", gs.CREATED + 1, [confirm]))
    messages.insert(4, gs.message("assistant", gs.CREATED + 2, [notice], agent=False))
    messages[3]["content"].insert(0, {"type": "toolResponse", "id": "toolu_00",
                                      "toolResult": {"status": "error", "error": "-32603: denied"}})  # fmt: skip
    messages[1]["content"].insert(0, {"type": "thinking", "thinking": "hm", "signature": "s"})
    messages[1]["content"].insert(1, {"type": "toolRequest", "id": "toolu_00",
                                      "toolCall": {"status": "success", "value": {"name": "x", "arguments": {}}}})  # fmt: skip
    messages[0]["content"].append({"type": "audioClip", "data": "AAAA"})
    path = gs.write_database(tmp_path / "sessions.db", messages)
    assert shape(import_events("goose", path)) == (
        "U Ctoolu_00 Ctoolu_01>toolu_00 Ctoolu_02>toolu_00 Rtoolu_00 Rtoolu_01 Rtoolu_02 T"
    )
    code, out, err = lint(capsys, "--from", "goose", str(path))
    assert code == 0, out
    assert "1 part of type audioClip was kept as opaque content" in err


def test_what_goose_committed_to_the_wal_is_read_and_nothing_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = gs.SessionsDb(folder / "sessions.db")  # goose running: its connection open, rows in the -wal
    db.create_session("s", "2026-01-01 00:00:00")
    for m in gs.conversation():
        db.add_message("s", m)
    assert (folder / "sessions.db-wal").stat().st_size > 0
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert (
        shape(import_events("goose", folder / "sessions.db")) == "U Ctoolu_01 Ctoolu_02 Rtoolu_01 Rtoolu_02 T"
    )
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before
    db.close()


def test_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = gs.write_database(tmp_path / "sessions.db", gs.conversation())
    link = tmp_path / "link.db"
    link.symlink_to(db)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    bad_role = tmp_path / "bad.jsonl"
    bad_role.write_text(json.dumps({"role": "system", "created": 1, "content": []}) + "\n")
    not_metadata = tmp_path / "not_metadata.jsonl"  # only goose's SessionMetadata line is skipped
    not_metadata.write_text(json.dumps({"x": 1}) + "\n")
    no_type = tmp_path / "no_type.jsonl"
    no_type.write_text(json.dumps({"role": "user", "created": 1, "content": [{"text": "x"}]}) + "\n")
    for path, words in ((link, "symlink"), (other, "not a goose sessions database"),
                        (bad_role, "unknown message role 'system'"), (not_metadata, "unknown message role None"), (no_type, "without a 'type'")):  # fmt: skip
        code, out, err = lint(capsys, "--from", "goose", str(path))
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_the_wal_may_not_be_a_symlink_either(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gs.write_database(tmp_path / "sessions.db", gs.conversation())
    secret = tmp_path / "secret"
    secret.write_bytes(b"x" * 10)
    os.symlink(secret, tmp_path / "sessions.db-wal")
    code, _, err = lint(capsys, "--from", "goose", str(tmp_path / "sessions.db"))
    assert code == 2 and "symlink" in err


def test_a_hostile_database_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from turncheck.integrations.formats import goose

    monkeypatch.setattr(goose, "READ_SECONDS", 0.5)
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as con:  # a ``messages`` view that never ends
        con.execute("CREATE TABLE sessions (id TEXT, created_at TEXT)")
        con.execute(
            "CREATE VIEW messages AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT n AS id, 's' AS session_id, 'user' AS role, '[]' AS content_json, n AS created_timestamp, "
            "NULL AS metadata_json FROM r ORDER BY n DESC"
        )
    code, _, err = lint(capsys, "--from", "goose", str(path))
    assert code == 2 and "took over" in err


def message_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_example_lints_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert message_lines(EXAMPLES / "goose-session.jsonl")[0]["description"] == "List files"
    assert lint(capsys, "--from", "goose", str(EXAMPLES / "goose-session.jsonl"))[0] == 0


@pytest.mark.parametrize(("provider", "held"), [("anthropic", True), ("openai", False), ("ollama", False)])
def test_the_sessions_provider_name_chooses_the_rules(
    provider: str, held: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out database (issue 51): every Goose session records its
    ``provider_name``, yet no rules applied unless ``--provider`` named them; a parallel call
    answered in two messages, which Anthropic refuses (aaif-goose/goose#6336), passed without
    ``results-not-first``. A database whose sessions name one mapped provider is held to it."""
    db = gs.SessionsDb(tmp_path / "sessions.db")
    db.create_session("20260101_1", "2026-01-01 00:00:00", provider=provider)
    calls = [gs.tool_request("t1", "shell", {}), gs.tool_request("t2", "shell", {})]
    for m in (gs.message("user", gs.CREATED, [gs.text("go")]), gs.message("assistant", gs.CREATED, calls),
              gs.message("user", gs.CREATED, [gs.text("wait"), gs.tool_response("t1", "a")]),
              gs.message("user", gs.CREATED, [gs.tool_response("t2", "b")]),
              gs.message("assistant", gs.CREATED, [gs.text("done")])):  # fmt: skip
        db.add_message("20260101_1", m)
    db.close()
    assert main(["lint", "--from", "goose", str(tmp_path / "sessions.db")]) in (0, 1)
    out = capsys.readouterr().out
    assert ("results-not-first" in out) == held, out
