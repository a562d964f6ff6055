"""The last named cases of issue 17: a BOM, a JSON-valid bit flip in a line log, the chars limit.

* A UTF-8 byte-order mark at the start of a JSONL file is accepted (editors on Windows write
  one): the commands that read events answer exactly as without it.
* One JSON-valid bit flip in a line-framed log (``"seq"`` → ``"req"``: still JSON, no longer an
  event) costs that record only: refused under ``stop`` naming ``resync``, skipped under
  ``resync`` with every other turn read back, the file unchanged.
* A JSONL file of at most 1 KB holding many events at the ``chars`` limit (2²⁴ each) is answered
  by every event reader within 10 s under a 1 GiB address-space limit (sizes are numbers, never
  allocations).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.store_lines import LineTurnLog
from turncheck.cli.app import main
from turncheck.models.events import MAX_CHARS, Event, Kind, dumps_event
from turncheck.models.store import RecordUndecodable

BOM = b"\xef\xbb\xbf"


def _history() -> str:
    events = [
        Event(0, "s", 0, Kind.USER, chars=40),
        Event(1, "s", 0, Kind.CALL, call_id="c1", chars=10),
        Event(2, "s", 0, Kind.RESULT, call_id="c1", chars=300),
        Event(3, "s", 0, Kind.TERM, chars=30),
    ]
    return "".join(dumps_event(e) + "\n" for e in events)


@pytest.mark.parametrize(
    "args",
    [["lint", "{f}"], ["project", "-H", "{f}", "-b", "200", "-s", "M1", "--format", "json", "-q"]],
    ids=["lint", "project"],
)
def test_a_utf8_bom_at_the_start_of_a_jsonl_file_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "bom.jsonl"
    plain.write_text(_history(), encoding="utf-8")
    marked.write_bytes(BOM + _history().encode("utf-8"))
    answers = []
    for f in (plain, marked):
        code = main([a.replace("{f}", str(f)) for a in args])
        out, err = capsys.readouterr()
        answers.append((code, out.replace(str(f), "FILE"), err))
    assert answers[0][0] == 0 and answers[1] == answers[0]


def _turn(seq: int, turn: int) -> list[Event]:
    return [Event(seq, "s", turn, Kind.USER, chars=5), Event(seq + 1, "s", turn, Kind.TERM, chars=5)]


def test_a_json_valid_bit_flip_in_a_line_log_costs_only_that_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lines.log"
    with LineTurnLog.open(path, create=True) as log:
        for t in range(3):
            log.commit(_turn(2 * t, t))
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert lines[2].count(b'"seq"') == 2  # header, turn 0, turn 1: the middle turn's line
    lines[2] = lines[2].replace(b'"seq"', b'"req"', 1)  # one bit: 0x73 -> 0x72
    flipped = b"\n".join(lines)
    assert sum(bin(a ^ b).count("1") for a, b in zip(data, flipped, strict=True)) == 1
    json.loads(lines[2])  # still JSON: only the reader's rules can catch it
    path.write_bytes(flipped)
    with LineTurnLog.open(path, readonly=True) as log, pytest.raises(RecordUndecodable, match="resync"):
        log.turns()
    for readonly in (True, False):
        with LineTurnLog.open(path, readonly=readonly, policy="resync") as log:
            assert [t.turn_id for t in log.turns()] == ["s/0", "s/2"]
            assert not log.recovery.clean
    assert path.read_bytes() == flipped  # skipping never rewrites the file
    assert main(["log", "export", str(path), "--policy", "resync", "-q"]) == 2  # framed logs only
    assert "not a turncheck log" in capsys.readouterr().err


def _at_the_limit() -> str:
    """As many whole turns as fit in 1 KB, every event at ``chars`` = 2²⁴."""
    lines: list[str] = []
    seq = turn = 0
    while True:
        pair = [
            dumps_event(Event(seq, "s", turn, Kind.USER, chars=MAX_CHARS)),
            dumps_event(Event(seq + 1, "s", turn, Kind.TERM, chars=MAX_CHARS)),
        ]
        if len("\n".join(lines + pair)) + 1 > 1024:
            return "\n".join(lines) + "\n"
        lines += pair
        seq, turn = seq + 2, turn + 1


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux only")
def test_a_kilobyte_of_events_at_the_chars_limit_is_answered_in_10_s_and_1_gib(
    tmp_path: Path, run_limited: Any
) -> None:
    text = _at_the_limit()
    f = tmp_path / "limit.jsonl"
    f.write_text(text, encoding="utf-8")
    assert f.stat().st_size <= 1024 and text.count("\n") >= 10
    assert main(["lint", str(f)]) == 0  # valid input: this is about size, not about refusing
    runs = [
        ["lint", str(f)],
        ["project", "-H", str(f), "-b", "100", "-s", "REQ", "-q"],
        ["project", "-H", str(f), "-b", "100", "-s", "M1", "--cost", "utf8-json", "-q"],
        ["project", "-H", str(f), "-b", "100", "-s", "M3", "--per-request", "-q"],
    ]
    answers = run_limited(runs, cwd=tmp_path)
    for args, (code, secs, err) in zip(runs, answers, strict=True):
        assert code in (0, 1, 2) and secs < 10, (args, code, secs, err)
        assert "Traceback" not in err and "MemoryError" not in err, (args, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["limit.jsonl"]


def test_a_hostile_agents_sqlite_file_ends_fast_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 4 KB database is a program: a recursive VIEW never ends, zeroblob(9e8) asks for 900 MB.
    SQLite's length limit and a progress-handler deadline stop both (issue 31)."""
    import sqlite3

    import turncheck.integrations.formats.agents_sqlite as agents_sqlite

    monkeypatch.setattr(agents_sqlite, "READ_SECONDS", 0.5)
    views = {
        "recursive.db": "WITH RECURSIVE r(session_id, id, message_data) AS (SELECT 's', 1, '{}' "
        "UNION ALL SELECT 's', id + 1, '{}' FROM r) SELECT * FROM r",
        "zeroblob.db": "SELECT 's' AS session_id, 1 AS id, zeroblob(900000000) AS message_data",
    }
    for name, view in views.items():
        con = sqlite3.connect(tmp_path / name)
        con.execute(f"CREATE VIEW agent_messages AS {view}")
        con.commit()
        con.close()
        assert (tmp_path / name).stat().st_size <= 8192
        assert main(["lint", "--from", "agents-sqlite", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("recursive view" in err or "too big" in err), err
