"""Two owners of one path, and an export that could destroy a log (issue 17, class 3).

A fault test: the live log is rotated or deleted under its owner, and a second writer creates
a fresh log at the path. The first owner's later commits would land in an unlinked file; they
are refused instead, and the new log is untouched. ``log export --out`` never replaces its
source, a turncheck log, a locked file or a non-regular file.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks.store_lines import LineTurnLog
from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.store import LogReplaced, TurnLog


def turn(n: int) -> list[Event]:
    return [Event(2 * n, "s", n, Kind.USER, chars=3), Event(2 * n + 1, "s", n, Kind.TERM, chars=4)]


@pytest.mark.parametrize("cls", [TurnLog, LineTurnLog])
@pytest.mark.parametrize("fault", ["delete", "rotate", "replace"])
def test_an_owner_whose_file_is_rotated_or_deleted_refuses_to_commit(
    tmp_path: Path, cls: type[TurnLog], fault: str
) -> None:
    path = tmp_path / "live.log"
    a = cls.open(path, create=True)
    a.commit(turn(0))
    if fault == "delete":
        path.unlink()
    elif fault == "rotate":
        path.rename(tmp_path / "live.log.1")
    else:
        other = tmp_path / "new.log"
        with cls.open(other, create=True):
            pass
        os.replace(other, path)
    if fault != "replace":
        with cls.open(path, create=True) as b:  # writer B: a fresh log at the same path
            b.commit(turn(0))
    fresh = path.read_bytes()
    with pytest.raises(LogReplaced, match="deleted, rotated or replaced"):
        a.commit(turn(1))
    a.close()
    assert path.read_bytes() == fresh
    if fault == "rotate":  # the rotated file keeps what A committed, and nothing after
        with cls.open(tmp_path / "live.log.1", readonly=True) as old:
            assert len(old) == 1


def _log(path: Path) -> bytes:
    with TurnLog.open(path, create=True) as log:
        log.commit(turn(0))
    return path.read_bytes()


def test_export_never_overwrites_its_source_a_log_a_locked_file_or_a_device(
    cli: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "a.log"
    data = _log(src)
    other = tmp_path / "b.log"
    other_data = _log(other)
    lines = tmp_path / "c.log"
    with LineTurnLog.open(lines, create=True) as log:
        log.commit(turn(0))
    lines_data = lines.read_bytes()
    code, _, err = cli("log", "export", str(src), "--out", str(src))
    assert code == 2 and "being exported" in err and src.read_bytes() == data
    for target, before in ((other, other_data), (lines, lines_data)):
        code, _, err = cli("log", "export", str(src), "--out", str(target))
        assert code == 2 and "never overwrites a log" in err and target.read_bytes() == before
    locked = tmp_path / "locked.txt"
    locked.write_text("held\n")
    with locked.open("rb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child process
            os._exit(main(["log", "export", str(src), "--out", str(locked), "-q"]))
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2 and locked.read_text() == "held\n"
    capsys.readouterr()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = cli("log", "export", str(src), "--out", str(fifo))
    assert code == 2 and "not a regular file" in err
    plain = tmp_path / "plain.jsonl"
    plain.write_text("old\n")
    code, _, _ = cli("log", "export", str(src), "--out", str(plain), "-q")
    assert code == 0 and plain.read_text().startswith('{"seq":0')
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.log",
        "b.log",
        "c.log",
        "fifo",
        "locked.txt",
        "plain.jsonl",
    ]


def test_export_refuses_a_live_log_held_by_its_owner(
    cli: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "a.log"
    _log(src)
    live = tmp_path / "live.log"
    with TurnLog.open(live, create=True) as owner:
        owner.commit(turn(0))
        before = live.read_bytes()
        code, _, err = cli("log", "export", str(src), "--out", str(live))
        assert code == 2 and err.count("\n") == 1
        owner.commit(turn(1))
    assert live.read_bytes().startswith(before)


def test_a_fifo_is_refused_as_a_log_or_history_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    from turncheck.models.store import LogNotFound

    for readonly in (True, False):
        with pytest.raises(LogNotFound, match="not a regular file"):
            TurnLog.open(fifo, readonly=readonly)
    for args in (
        ["log", "verify", str(fifo)],
        ["log", "export", str(fifo)],
        ["project", "-H", str(fifo), "-b", "9"],
    ):
        assert main(args) == 2
        assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("wait", [float("nan"), float("inf"), -1.0, True])
def test_a_wait_that_would_poll_forever_is_refused(tmp_path: Path, wait: float) -> None:
    from turncheck.models.errors import BadParameter

    with pytest.raises(BadParameter, match="wait"):
        TurnLog.open(tmp_path / "log", create=True, wait=wait)
    assert not (tmp_path / "log").exists()


@pytest.mark.parametrize("cls", [TurnLog, LineTurnLog])
def test_a_batch_owner_notices_a_rotation_where_it_promises_durability(
    tmp_path: Path, cls: type[TurnLog]
) -> None:
    """Under ``fsync='batch'`` the identity check runs before each batch's closing commit and in
    ``sync()`` (commits inside a batch are not yet promised durable; see ``_check_identity``)."""
    path = tmp_path / "live.log"
    with cls.open(path, create=True, fsync="batch", batch=4) as a:
        a.commit(turn(0))
        path.rename(tmp_path / "live.log.1")
        with pytest.raises(LogReplaced):
            a.sync()
        a.commit(turn(1))
        a.commit(turn(2))  # still inside the batch: not yet promised durable
        with pytest.raises(LogReplaced, match="deleted, rotated or replaced"):
            a.commit(turn(3))  # the batch's closing commit: refused, nothing written
        size = (tmp_path / "live.log.1").stat().st_size
        with pytest.raises(LogReplaced):
            a.commit(turn(3))
        assert (tmp_path / "live.log.1").stat().st_size == size
    assert not path.exists()
