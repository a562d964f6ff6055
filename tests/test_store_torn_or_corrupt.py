"""A torn write and corruption are told apart (issue 17, class 4).

A torn write leaves a last frame shorter than its declared length (or zeros); a writable open
cuts it. A *complete* last frame that fails its check — a flipped bit in its body, its CRC, its
id length or its length field — may be an acknowledged turn: no open cuts it. ``stop`` refuses
and changes nothing, ``resync`` keeps and skips it (appends go after it), and only
``turncheck log repair`` moves it to a side file.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.store_lines import LineTurnLog
from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.store import LogCorrupt, TurnLog, TurnStore


def turn(n: int) -> list[Event]:
    return [Event(2 * n, "s", n, Kind.USER, chars=5), Event(2 * n + 1, "s", n, Kind.TERM, chars=7)]


def three_turns(path: Path, cls: type[TurnStore] = TurnLog) -> int:
    """Commit three turns; the offset where the last record starts."""
    with cls.open(path, create=True) as log:
        for n in range(3):
            last = log.commit(turn(n))
    return last.offset


def flip(path: Path, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


# byte of the last frame to flip: length, CRC, frame number, id length, the events JSON
WHERE = {"length": (0, 4), "crc": (5, 2), "number": (9, 1), "id length": (12, 0), "body": (40, 3)}


@pytest.mark.parametrize("where", sorted(WHERE))
def test_a_bit_flip_in_the_last_complete_frame_is_corruption_not_a_torn_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    path = tmp_path / "log"
    start = three_turns(path)
    at, bit = WHERE[where]
    flip(path, start + at, bit)
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(LogCorrupt, match="not a torn write") as info:
            TurnLog.open(path, readonly=readonly)
        assert info.value.offset == start
        assert path.read_bytes() == before  # a refused open changes nothing
    with TurnLog.open(path, policy="resync") as log:  # keeps the bytes, skips them, appends after
        assert len(log) == 2 and log.recovery.skipped[0].offset == start
        assert log.size == len(before)
        log.commit(turn(3))
    with TurnLog.open(path, readonly=True, policy="resync") as log:
        assert [t.turn for t in log.turns()] == [0, 1, 3]
    assert path.read_bytes().startswith(before)


def test_only_log_repair_moves_a_corrupt_tail_and_keeps_its_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log"
    start = three_turns(path)
    flip(path, start + 40)
    before = path.read_bytes()
    assert main(["log", "verify", str(path)]) == 1  # damage: the help's exit 1 (issue 57), not 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("damaged:") and "log repair" in out
    assert main(["log", "repair", str(path)]) == 0
    out = capsys.readouterr().out
    side = tmp_path / f"log.damaged-{start}"
    assert str(side) in out and side.read_bytes() == before[start:]
    assert path.read_bytes() == before[:start]
    assert main(["log", "verify", str(path)]) == 0
    capsys.readouterr()
    assert main(["log", "repair", str(path)]) == 0
    assert "nothing to repair" in capsys.readouterr().out


def test_a_torn_last_frame_is_still_cut_by_a_writable_open(tmp_path: Path) -> None:
    path = tmp_path / "log"
    start = three_turns(path)
    data = path.read_bytes()
    for cut in (start + 3, start + 20, len(data) - 1):
        path.write_bytes(data[:cut])
        with TurnLog.open(path, readonly=True) as log:
            assert log.recovery.torn_offset == start
        with TurnLog.open(path) as log:
            assert len(log) == 2 and log.recovery.cut
        assert path.read_bytes() == data[:start]
    path.write_bytes(data + b"\0" * 300)  # a zero-filled tail: torn
    with TurnLog.open(path) as log:
        assert len(log) == 3 and log.recovery.torn_bytes == 300


def test_a_complete_bad_last_line_is_corruption_an_unterminated_one_torn(tmp_path: Path) -> None:
    path = tmp_path / "log"
    three_turns(path, LineTurnLog)
    data = path.read_bytes()
    path.write_bytes(data + b"{not a record}\n")
    with pytest.raises(LogCorrupt, match="not a torn write"):
        LineTurnLog.open(path)
    assert path.read_bytes() == data + b"{not a record}\n"
    path.write_bytes(data + b'{"id":"s/3","ev')
    with LineTurnLog.open(path) as log:
        assert len(log) == 3 and log.recovery.cut
    assert path.read_bytes() == data


def test_a_refused_open_does_not_cut_the_torn_tail_first(tmp_path: Path) -> None:
    """The last turn that does not decode is found before the torn tail behind it is cut."""
    path = tmp_path / "log"
    with TurnLog.open(path, create=True) as log:
        log.commit(turn(0))
    from turncheck.models.log_format import encode_frame

    with path.open("ab") as fh:
        fh.write(encode_frame(1, b"x", b'[{"seq":2}]') + b"\x40\0\0\0torn")
    before = path.read_bytes()
    with pytest.raises(LogCorrupt):
        TurnLog.open(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("at", "bit", "reason"),
    [(40, 3, "checksum mismatch"), (5, 2, "checksum mismatch"), (2, 7, "torn frame: a valid frame starts")],
    ids=["body", "crc", "length"],
)
def test_a_damaged_middle_frame_is_skipped_with_the_reason_it_failed(
    tmp_path: Path, at: int, bit: int, reason: str
) -> None:
    path = tmp_path / "log"
    with TurnLog.open(path, create=True) as log:
        middle = [log.commit(turn(n)) for n in range(3)][1].offset
    flip(path, middle + at, bit)
    with TurnLog.open(path, readonly=True, policy="resync") as log:
        (skipped,) = log.recovery.skipped
        assert skipped.offset == middle and skipped.reason.startswith(reason)
        assert [t.turn for t in log.turns()] == [0, 2]


def _under_a_file_size_limit(limit: int, code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with RLIMIT_FSIZE at ``limit`` bytes: every write past it is cut short.

    ``-B``: a module the child compiles would have its bytecode cut short too, and CPython writes
    the cut ``.pyc`` in place of a whole one ("marshal data too short" for every later import)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-B", "-c", code], capture_output=True, text=True, preexec_fn=cap, timeout=120
    )


def test_log_repair_under_a_file_size_limit_keeps_the_damaged_tail(tmp_path: Path) -> None:
    path = tmp_path / "log"
    with TurnLog.open(path, create=True) as log:
        log.commit(turn(0))
        last = log.commit([Event(2, "s", 1, Kind.USER, text="x" * 3000), Event(3, "s", 1, Kind.TERM)])
    flip(path, last.offset + 40, 3)
    before = path.read_bytes()
    done = _under_a_file_size_limit(
        1000, f"from turncheck.cli.app import main; raise SystemExit(main(['log', 'repair', {str(path)!r}]))"
    )
    assert done.returncode == 2 and "cannot copy the damaged tail" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["log"]


def test_a_short_header_write_is_an_error_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "log"
    code = (
        "from turncheck.models.store import TurnLog, StoreError\n"
        f"try:\n    TurnLog.open({str(path)!r}, create=True)\n"
        "except StoreError as e:\n    print('refused:', e)"
    )
    done = _under_a_file_size_limit(10, code)
    assert done.returncode == 0 and done.stdout.startswith("refused:"), (done.stdout, done.stderr)
    with TurnLog.open(path, create=True) as log:  # the torn header is cut and written whole
        log.commit(turn(0))
    with TurnLog.open(path, readonly=True) as log:
        assert [t.turn for t in log.turns()] == [0]
