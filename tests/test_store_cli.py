"""``turncheck log verify|export``: read-only checks, JSONL export, one-line errors, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from test_store import fill

from turncheck.cli import log as cli_log
from turncheck.models.errors import TurncheckError
from turncheck.models.events import parse_events
from turncheck.models.store import TurnLog


def _runner() -> Callable[[list[str]], int]:
    """``sim.cli.main`` when the whole CLI imports; else the log commands on their own app with
    the same error contract (one line on stderr, exit 2)."""
    try:
        from turncheck.cli.app import main

        return main
    except ImportError:
        app = typer.Typer()
        cli_log.register(app)

        @app.command("version")
        def _version() -> None:  # a second command keeps "log" a sub-command group
            return None

        def main(argv: list[str]) -> int:
            try:
                app(args=argv, standalone_mode=False)
            except TurncheckError as exc:
                print(f"turncheck: error: {exc}", file=sys.stderr)
                return 2
            except typer.Exit as exc:
                return int(exc.exit_code or 0)
            except SystemExit as exc:
                return int(exc.code or 0)
            return 0

        return main


RUN = _runner()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    path = tmp_path / "conversation.log"
    with TurnLog.open(path, create=True) as log:
        fill(log, 4)
    return path


def test_verify_clean_log(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = digest(log_path)
    assert RUN(["log", "verify", str(log_path)]) == 0
    out = capsys.readouterr().out
    assert "4 turn(s)" in out and "clean" in out and "sessions: 1 (s)" in out
    assert digest(log_path) == before


def test_verify_torn_tail_reports_without_cutting(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = log_path.read_bytes()
    log_path.write_bytes(data[:-7])
    assert RUN(["log", "verify", str(log_path)]) == 1
    assert "torn tail" in capsys.readouterr().out and log_path.read_bytes() == data[:-7]


def test_verify_mid_file_damage_stop_vs_resync(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with TurnLog.open(log_path, readonly=True) as log:
        start = log.turns()[1].offset
    damaged = bytearray(log_path.read_bytes())
    damaged[start + 25] ^= 0x7F
    log_path.write_bytes(bytes(damaged))
    assert RUN(["log", "verify", str(log_path)]) == 1  # damage is the verdict (the help's exit 1)
    out = capsys.readouterr().out
    assert f"at byte {start}" in out and out.count("\n") == 1 and "damaged" in out
    assert RUN(["log", "verify", str(log_path), "--policy", "resync"]) == 1
    assert "skipped" in capsys.readouterr().out
    assert log_path.read_bytes() == bytes(damaged)


def test_export_jsonl_round_trips(log_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert RUN(["log", "export", str(log_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    events = list(parse_events(lines))
    with TurnLog.open(log_path, readonly=True) as log:
        assert events == log.events()
    out = tmp_path / "events.jsonl"
    assert RUN(["log", "export", str(log_path), "--out", str(out), "--session", "s"]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == lines
    assert all(json.loads(x)["session"] == "s" for x in lines)
    mask = os.umask(0o022)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask  # the user's umask, not mkstemp's 0600


@pytest.mark.parametrize(
    "args, problem",
    [
        (["log", "verify", "{missing}"], "no such log"),
        (["log", "verify", "{text}"], "not a turncheck log"),
        (["log", "verify", "{log}", "--policy", "maybe"], "policy"),
        (["log", "verify", "{log}", "--format", "xml"], "--format"),
        (["log", "verify", "{lines}"], "not a turncheck log"),  # the line format is the benchmarks' only
        (["log", "export", "{log}", "--out", "{tmp}/nodir/x.jsonl"], "does not exist"),
        (["log", "export", "{text}", "--out", "{tmp}/x.jsonl"], "not a turncheck log"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    log_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], problem: str
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    (tmp_path / "lines.log").write_bytes(b'{"format":"turncheck-lines","version":1}\n')
    names = {
        "missing": str(tmp_path / "absent.log"),
        "text": str(text),
        "log": str(log_path),
        "lines": str(tmp_path / "lines.log"),
        "tmp": str(tmp_path),
    }
    before = sorted(p.name for p in tmp_path.iterdir())
    assert RUN([a.format(**names) for a in args]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_log_owned_by_a_writer_is_busy(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with TurnLog.open(log_path):
        assert RUN(["log", "verify", str(log_path)]) == 2
    assert "already open by another owner" in capsys.readouterr().err
