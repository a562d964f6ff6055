"""The operation-history format (version 1): a real run re-checked from its files gives the same
report; a history another client wrote (plain JSON lines, no turncheck code) is checked; a line
that is not the format is refused in one line naming it; the committed JSON Schema is the one the
decoder validates against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.sim.stress.history_format import schema

SCHEMA = Path(__file__).parent.parent / "docs" / "schemas" / "turncheck-history-1.schema.json"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


def test_a_real_run_rechecked_from_its_history_gives_the_same_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, live, _ = _run(capsys, "stress", "--locking", "none", "--seconds", "1", "--writers", "3",
                         "--quiet", "--format", "json", "--out", str(tmp_path))  # fmt: skip
    again, checked, _ = _run(capsys, "stress", "--check", str(tmp_path), "--format", "json")
    assert (again, checked) == (code, live)
    report = json.loads(checked)
    assert report["appends"] > 0 and report["journaled"] is True
    lines = [
        json.loads(x) for p in (tmp_path / "history").glob("*.jsonl") for x in p.read_text().splitlines()
    ]
    assert {x["op"] for x in lines} >= {"history", "commit", "final", "append", "read"}
    assert {x["type"] for x in lines if x["op"] == "append"} <= {"ok", "fail", "info"}


def _client_history(folder: Path, final: list[int]) -> None:
    """What a second client writes: two threads' appends, no store journal, the final state."""
    lines = {
        "store.jsonl": [
            {"op": "history", "format": "turncheck-history", "version": 1, "store": "my-jdbc", "locking": "none",
             "max_turns": 100, "writers": 2, "journal": False},
            {"op": "final", "live": final},
        ],
        "t0.jsonl": [{"op": "append", "p": "t0", "type": "invoke", "id": "t0-0"},
                     {"op": "append", "p": "t0", "type": "ok", "id": "t0-0", "turn": 1, "t0": 1.0, "t1": 1.5}],
        "t1.jsonl": [{"op": "append", "p": "t1", "type": "ok", "id": "t1-0", "turn": 2, "t0": 1.1, "t1": 1.4},
                     {"op": "read", "p": "t1", "type": "ok", "w": [[1, 2]]}],
    }  # fmt: skip
    folder.mkdir()
    for name, objs in lines.items():
        (folder / name).write_text("".join(json.dumps(o) + "\n" for o in objs))


def test_a_history_another_client_wrote_is_checked_against_its_final_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _client_history(tmp_path / "ok", [1, 2])
    code, out, _ = _run(capsys, "stress", "--check", str(tmp_path / "ok"))
    assert code == 0 and "OK: every invariant holds" in out and "keeps no journal" in out
    # its header says nothing of how long it ran: no rate (it read "appends 2 (2e+09/s)")
    assert "\nappends 2 · p50 300 ms" in out and "/s)" not in out and "maxTurns 100\n" in out
    _client_history(tmp_path / "lost", [2, 2])
    code, out, _ = _run(capsys, "stress", "--check", str(tmp_path / "lost"), "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["lost"] == 1 and report["appends"] == 2 and report["throughput"] == 0
    assert {v["invariant"] for v in report["violations"]} == {"lost", "duplicated"}


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (
            '{"op": "append", "p": "t0", "type": "ok", "id": "a"}',
            "t0.jsonl:3: not a history line: an acknowledged",
        ),
        ('{"op": "append", "p": "t0", "type": "done", "id": "a"}', "t0.jsonl:3: not a history line"),
        ('{"op": "teleport", "p": "t0"}', "t0.jsonl:3: not a history line"),
        ("not json", "t0.jsonl:3: not a history line: JSON is malformed"),
    ],
)
def test_a_malformed_line_is_one_line_exit_2_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, line: str, needle: str
) -> None:
    _client_history(tmp_path / "h", [1, 2])
    with (tmp_path / "h" / "t0.jsonl").open("a") as f:
        f.write(line + "\n")
    code, out, err = _run(capsys, "stress", "--check", str(tmp_path / "h"))
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1


def test_a_kill_cut_last_line_is_skipped_and_another_version_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _client_history(tmp_path / "h", [1, 2])
    with (tmp_path / "h" / "t0.jsonl").open("a") as f:
        f.write('{"op": "append", "p": "t0", "ty')  # no newline: a write cut by SIGKILL
    assert _run(capsys, "stress", "--check", str(tmp_path / "h"))[0] == 0
    store = tmp_path / "h" / "store.jsonl"
    store.write_text(store.read_text().replace('"version": 1', '"version": 2'))
    code, _, err = _run(capsys, "stress", "--check", str(tmp_path / "h"))
    assert code == 2 and "store.jsonl:1: history format version 2; this turncheck reads version 1" in err
    code, _, err = _run(capsys, "stress", "--check", str(tmp_path / "nowhere"))
    assert code == 2 and "not a folder of history files" in err


def test_the_committed_schema_is_the_decoders() -> None:
    assert json.loads(SCHEMA.read_text()) == schema()
