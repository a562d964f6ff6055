"""``turncheck log create PATH``: an empty durable log that ``turncheck.TurnLog`` commits to (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck import Event, Kind, TurnLog
from turncheck.cli.app import main


def test_a_created_log_takes_turns_and_verifies_and_no_file_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "conversation.log"
    assert main(["log", "create", str(path)]) == 0
    assert capsys.readouterr().out == f"created {path}\n"
    with TurnLog.open(path) as log:
        log.commit([Event(0, "s", 0, Kind.USER, chars=3), Event(1, "s", 0, Kind.TERM, chars=3)])
    assert main(["log", "verify", str(path), "-q"]) == 0
    capsys.readouterr()
    before = path.read_bytes()
    (tmp_path / "target.log").write_bytes(b"mine")
    (tmp_path / "link.log").symlink_to(tmp_path / "target.log")
    for taken in (path, tmp_path / "link.log", tmp_path / "target.log"):
        assert main(["log", "create", str(taken)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("exists" in err or "symlink" in err), err
    assert path.read_bytes() == before and (tmp_path / "target.log").read_bytes() == b"mine"
