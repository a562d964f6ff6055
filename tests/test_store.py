"""The durable log's interface, on both formats: commit, ids, limits, ownership, bad input."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import struct
import threading
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import turncheck.models.store as store_mod
from benchmarks.store_lines import LineTurnLog
from turncheck.models.cost import Utf8JsonCost
from turncheck.models.events import Event, Kind, dumps_event
from turncheck.models.log_format import FRAME_MAGIC, encode_frame_header
from turncheck.models.projector import MandatoryInputExceedsBudget, project
from turncheck.models.store import (
    DEFAULT_MAX_BYTES,
    BadTurn,
    LogBusy,
    LogClosed,
    LogCorrupt,
    LogFull,
    LogNotFound,
    LogPermission,
    NewerFormat,
    NotALog,
    StoreError,
    TurnConflict,
    TurnLog,
    events_json,
)

STORES = [TurnLog, LineTurnLog]
TEXTS = [
    "plain English",
    "中文的问题：用什么版本？",
    'quotes "inside" and \\ back',
    "new\nline\ttab",
    "emoji 😀🎉",
    "",
]


def make_turn(session: str, turn: int, seq: int, calls: int = 1, text: str | None = None) -> list[Event]:
    """USER, ``calls`` CALL/RESULT pairs, TERM; texts cycle through tricky characters.

    Events are given as the log reads them back (``chars`` equal to the text's length), so a
    rebuilt turn compares equal to a stored one.
    """
    t = text if text is not None else TEXTS[(seq + turn) % len(TEXTS)]
    out = [Event(seq, session, turn, Kind.USER, ts=float(seq), text=t, chars=len(t))]
    for c in range(calls):
        cid = f"c{turn}.{c}"
        out.append(Event(seq + 1 + 2 * c, session, turn, Kind.CALL, call_id=cid, ts=seq + 0.5, chars=7 + c))
        out.append(
            Event(seq + 2 + 2 * c, session, turn, Kind.RESULT, call_id=cid, chars=300, cjk=bool(c % 2))
        )
    reply = TEXTS[turn % len(TEXTS)] + " ✓"
    out.append(Event(seq + 1 + 2 * calls, session, turn, Kind.TERM, text=reply, chars=len(reply)))
    return out


def fill(
    log: store_mod.TurnStore, turns: int, session: str = "s", calls: int = 1
) -> list[store_mod.StoredTurn]:
    out = []
    for t in range(turns):
        out.append(log.commit(make_turn(session, t, log.next_seq, calls=calls % 3 if calls else t % 3)))
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text
    return text


@pytest.mark.parametrize("cls", STORES)
def test_commit_close_reopen_returns_the_same_turns(tmp_path: Path, cls: type[TurnLog]) -> None:
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        assert log.recovery.header_missing and len(log) == 0
        written = fill(log, 12, calls=0)
        written += fill_other(log)
        assert log.turns() == tuple(written)
    with cls.open(path) as log:
        assert log.recovery.clean
        assert log.turns() == tuple(written)
        assert log.turn_ids() == tuple(t.turn_id for t in written)
        assert log.last_seq == written[-1].events[-1].seq
        assert log.sessions() == ("s", "other")
        assert [e.seq for e in log.events("s")] == [e.seq for t in written[:12] for e in t.events]
        assert log.get("s/3") == written[3] and "s/3" in log and "s/99" not in log


def fill_other(log: store_mod.TurnStore) -> list[store_mod.StoredTurn]:
    """A turn whose events read back differently than given: text wins over chars, source=session."""
    seq = log.next_seq
    turn = [
        Event(seq, "other", 0, Kind.USER, text="abc", chars=99, source="other"),
        Event(seq + 1, "other", 0, Kind.TERM, text="𝄞 surrogate pair", ts=1.25),
    ]
    stored = log.commit(turn, turn_id="other-0")
    assert stored.events[0].chars == 3 and stored.events[0].source is None
    return [stored]


@pytest.mark.parametrize("cls", STORES)
def test_same_id_same_content_is_a_no_op_other_content_is_refused(tmp_path: Path, cls: type[TurnLog]) -> None:
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        first = log.commit(make_turn("s", 0, 0))
        before = digest(path)
        assert log.commit(make_turn("s", 0, 0)) == first
        assert digest(path) == before and len(log) == 1
        with pytest.raises(TurnConflict) as err:
            log.commit(make_turn("s", 0, 0, text="different"))
        assert "s/0" in one_line(err) and digest(path) == before
    with cls.open(path) as log:  # the id index is rebuilt from the file
        assert log.commit(make_turn("s", 0, 0)) == first
        with pytest.raises(TurnConflict):
            log.commit(make_turn("s", 0, 0, calls=2))
    assert digest(path) == before


@pytest.mark.parametrize("cls", STORES)
@pytest.mark.parametrize(
    "turn, turn_id, problem",
    [
        ([], None, "at least"),
        (make_turn("s", 1, 10)[:-1], None, "end with TERM"),
        (make_turn("s", 1, 10)[1:], None, "start with USER"),
        (
            [*make_turn("s", 1, 10)[:2], Event(12, "s", 1, Kind.USER), *make_turn("s", 1, 13)[-1:]],
            None,
            "inside",
        ),
        ([Event(10, "s", 1, Kind.USER), Event(11, "t", 1, Kind.TERM)], None, "holds an event"),
        ([Event(10, "s", 1, Kind.USER), Event(10, "s", 1, Kind.TERM)], None, "does not follow"),
        ([Event(3, "s", 1, Kind.USER), Event(4, "s", 1, Kind.TERM)], None, "does not follow 5"),
        (
            [
                Event(10, "s", 1, Kind.USER),
                Event(11, "s", 1, Kind.RESULT, call_id="x"),
                Event(12, "s", 1, Kind.TERM),
            ],
            None,
            "no CALL",
        ),
        (make_turn("s", 1, 10), "", "non-empty"),
        (make_turn("s", 1, 10), "a\nb", "control"),
        (make_turn("s", 1, 10), "é" * 128, "limit is 255"),
    ],
)
def test_bad_turns_are_refused_and_nothing_is_written(
    tmp_path: Path, cls: type[TurnLog], turn: list[Event], turn_id: str | None, problem: str
) -> None:
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        log.commit(make_turn("s", 0, 0, calls=2))
        before = digest(path)
        with pytest.raises(BadTurn) as err:
            log.commit(turn, turn_id=turn_id)
        assert problem in one_line(err)
        assert digest(path) == before and len(log) == 1


@pytest.mark.parametrize("cls", STORES)
def test_size_limit_refuses_the_append_and_keeps_the_file_byte_identical(
    tmp_path: Path, cls: type[TurnLog]
) -> None:
    assert DEFAULT_MAX_BYTES == 4 * 1024 * 1024
    path = tmp_path / "log"
    with cls.open(path, create=True, max_bytes=1200) as log:
        fill(log, 2, calls=0)
        before = digest(path)
        with pytest.raises(LogFull) as err:
            for t in range(2, 50):
                log.commit(make_turn("s", t, log.next_seq))
        assert "past its limit of 1200 B" in one_line(err)
        assert log.size <= 1200 and path.stat().st_size == log.size
        n = len(log)
        committed = digest(path)
        with pytest.raises(LogFull):
            log.commit(make_turn("s", 60, log.next_seq, text="x" * 2000))
        assert digest(path) == committed and len(log) == n
        assert committed != before or n == 2
    with cls.open(path, max_bytes=10) as log:  # a log over a smaller limit still opens and reads
        assert len(log) == n
        with pytest.raises(LogFull):
            log.commit(make_turn("s", 70, log.next_seq))
    assert digest(path) == committed


@pytest.mark.parametrize("cls", STORES)
def test_one_owner_at_a_time_and_readers_share(tmp_path: Path, cls: type[TurnLog]) -> None:
    path = tmp_path / "log"
    owner = cls.open(path, create=True)
    fill(owner, 1)
    with pytest.raises(LogBusy) as err:
        cls.open(path)
    assert "already open by another owner" in one_line(err)
    with pytest.raises(LogBusy):
        cls.open(path, readonly=True)
    with pytest.raises(LogBusy) as err:
        cls.open(path, wait=0.02)
    assert "after waiting 0.02 s" in one_line(err)
    owner.close()
    r1, r2 = cls.open(path, readonly=True), cls.open(path, readonly=True)
    assert len(r1) == len(r2) == 1
    with pytest.raises(LogBusy):
        cls.open(path)
    with pytest.raises(LogClosed):
        r1.commit(make_turn("s", 1, r1.next_seq))
    r1.close()
    r2.close()
    with cls.open(path) as again:
        assert len(again) == 1


def test_a_waiting_opener_gets_the_log_when_the_owner_closes(tmp_path: Path) -> None:
    path = tmp_path / "log"
    owner = TurnLog.open(path, create=True)
    timer = threading.Timer(0.1, owner.close)
    timer.start()
    with TurnLog.open(path, wait=5) as second:
        assert owner.closed and len(second) == 0
    timer.join()


@pytest.mark.parametrize(
    "policy, batch, commits, syncs",
    [("always", 256, 5, 5), ("batch", 2, 5, 2 + 1), ("batch", 256, 5, 1), ("never", 256, 5, 0)],
)
def test_fsync_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str, batch: int, commits: int, syncs: int
) -> None:
    path = tmp_path / "log"
    TurnLog.open(path, create=True).close()
    calls: list[int] = []
    monkeypatch.setattr(store_mod, "sync_file", lambda fd: calls.append(fd))
    with TurnLog.open(path, fsync=policy, batch=batch) as log:
        fill(log, commits)
    assert len(calls) == syncs  # batch: every `batch` commits plus the rest on close


def test_sync_makes_pending_commits_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log"
    calls: list[int] = []
    with TurnLog.open(path, create=True, fsync="never") as log:
        monkeypatch.setattr(store_mod, "sync_file", lambda fd: calls.append(fd))
        fill(log, 3)
        assert calls == []
        log.sync()
        assert len(calls) == 1


@pytest.mark.parametrize("cls", STORES)
def test_a_failed_write_leaves_the_file_byte_identical(
    tmp_path: Path, cls: type[TurnLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        fill(log, 2)
        before = digest(path)
        real = os.pwrite

        def half_then_full(fd: int, data: bytes, offset: int) -> int:
            if len(data) > 8:
                real(fd, data[: len(data) // 2], offset)
                return len(data) // 2
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "pwrite", half_then_full)
        with pytest.raises(StoreError) as err:
            log.commit(make_turn("s", 2, log.next_seq))
        assert "No space left" in one_line(err)
        monkeypatch.setattr(os, "pwrite", real)
        assert digest(path) == before and len(log) == 2
        log.commit(make_turn("s", 2, log.next_seq))
    with cls.open(path) as log:
        assert log.recovery.clean and len(log) == 3


@pytest.mark.parametrize("cls", STORES)
def test_missing_path_and_directories_are_one_line_errors_that_create_nothing(
    tmp_path: Path, cls: type[TurnLog]
) -> None:
    with pytest.raises(LogNotFound) as err:
        cls.open(tmp_path / "absent")
    assert "no such log" in one_line(err) and not (tmp_path / "absent").exists()
    with pytest.raises(LogNotFound) as err:
        cls.open(tmp_path / "nodir" / "log", create=True)
    assert "does not exist" in one_line(err)
    with pytest.raises(LogNotFound) as err:
        cls.open(tmp_path, create=True)
    assert "is a directory" in one_line(err)
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("cls", STORES)
@pytest.mark.parametrize(
    "content, error, text",
    [
        (b"hello, this is a text file\n", NotALog, "not a turncheck"),
        (b'{"id":"x","events":[]}\n', NotALog, "not a turncheck"),
        (b"\x00\x01", NotALog, "not a turncheck"),
    ],
)
def test_files_that_are_not_logs_are_refused_unchanged(
    tmp_path: Path, cls: type[TurnLog], content: bytes, error: type[Exception], text: str
) -> None:
    path = tmp_path / "log"
    path.write_bytes(content)
    for readonly in (False, True):
        with pytest.raises(error) as err:
            cls.open(path, readonly=readonly, create=True)
        assert text in one_line(err)
    assert path.read_bytes() == content


def test_each_format_refuses_the_other(tmp_path: Path) -> None:
    frames, lines = tmp_path / "f", tmp_path / "l"
    with TurnLog.open(frames, create=True) as log:
        fill(log, 2)
    with LineTurnLog.open(lines, create=True) as log:
        fill(log, 2)
    before = digest(frames), digest(lines)
    with pytest.raises(NotALog):
        LineTurnLog.open(frames)
    with pytest.raises(NotALog):
        TurnLog.open(lines)
    assert (digest(frames), digest(lines)) == before


def test_newer_format_versions_and_damaged_headers(tmp_path: Path) -> None:
    path = tmp_path / "log"
    head = struct.pack("<8sHH", FRAME_MAGIC, 2, 0)
    path.write_bytes(head + struct.pack("<I", zlib.crc32(head)))
    with pytest.raises(NewerFormat) as err:
        TurnLog.open(path)
    assert "version 2 is newer" in one_line(err)
    damaged = bytearray(encode_frame_header())
    damaged[9] ^= 0x40
    path.write_bytes(bytes(damaged))
    with pytest.raises(LogCorrupt) as err:
        TurnLog.open(path)
    assert "header is damaged" in one_line(err)
    lines = tmp_path / "lines"
    lines.write_bytes(b'{"format":"turncheck-lines","version":7}\n')
    with pytest.raises(NewerFormat) as err:
        LineTurnLog.open(lines)
    assert "version 7 is newer" in one_line(err)
    assert lines.read_bytes() == b'{"format":"turncheck-lines","version":7}\n'


@pytest.mark.parametrize("cls", STORES)
def test_permission_denied_is_a_one_line_error(
    tmp_path: Path, cls: type[TurnLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Simulated denial (works as root, where mode bits do not stop us): the OS refuses the open."""
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        fill(log, 1)
    before = digest(path)

    def deny(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(LogPermission) as err:
        cls.open(path)
    assert "needs read and write access" in one_line(err)
    with pytest.raises(LogPermission) as err:
        cls.open(path, readonly=True)
    assert "needs read access" in one_line(err)
    monkeypatch.undo()
    assert digest(path) == before


def test_real_permission_denied_as_an_unprivileged_process(tmp_path: Path) -> None:
    """A real EACCES, even as root: a forked child drops to user 65534 (nobody) and opens a 0600
    root-owned file. Without root, the test process itself is refused a 0000 file."""
    path = tmp_path / "log"
    with TurnLog.open(path, create=True) as log:
        fill(log, 1)
    before = digest(path)
    if os.geteuid() != 0:
        path.chmod(0o000)
        try:
            with pytest.raises(LogPermission) as err:
                TurnLog.open(path)
            assert "permission denied" in one_line(err)
        finally:
            path.chmod(0o600)
        assert digest(path) == before
        return
    path.chmod(0o600)  # refused by the file's mode bits or by root's private test directory
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            try:
                TurnLog.open(path)
                message = "opened"
            except LogPermission as exc:
                message = str(exc)
            except Exception as exc:  # noqa: BLE001 — reported to the parent, which fails the test
                message = f"other: {type(exc).__name__}: {exc}"
            os.write(write_end, message.encode("utf-8"))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        message = fh.read().decode("utf-8")
    _, status = os.waitpid(pid, 0)
    if message.startswith("other:") and "no such log" in message:
        pytest.skip(f"the unprivileged child cannot reach {tmp_path}: {message}")
    assert status == 0, message
    assert "permission denied" in message and "\n" not in message, message
    assert digest(path) == before


@pytest.mark.parametrize("cls", STORES)
def test_closed_or_forked_use_is_refused(tmp_path: Path, cls: type[TurnLog]) -> None:
    log = cls.open(tmp_path / "log", create=True)
    log.close()
    log.close()
    with pytest.raises(LogClosed):
        log.commit(make_turn("s", 0, 0))
    with pytest.raises(LogClosed):
        log.turns()


@pytest.mark.parametrize("cls", STORES)
@pytest.mark.parametrize("strategy", ["M0", "M1", "M2", "M3", "M4", "M5", "REQ"])
def test_projection_over_the_store_never_writes(tmp_path: Path, cls: type[TurnLog], strategy: str) -> None:
    path = tmp_path / "log"
    with cls.open(path, create=True) as log:
        fill(log, 6)
        before = digest(path)
        cost = Utf8JsonCost(profile="java", system="You are terse.", current="现在几点？")
        h = log.history("s", costs=(cost,))
        assert len(h) == len(log.events())
        for budget in (cost.frame, cost.frame + 300, 10**6):
            w = project(h, budget, strategy, cost)
            assert w.end == len(h)
            assert len(w.payload(cost).encode("utf-8")) == w.cost
        if strategy == "REQ":
            with pytest.raises(MandatoryInputExceedsBudget):
                project(h, cost.frame - 1, strategy, cost)
        assert digest(path) == before and len(log) == 6
    assert digest(path) == before


event_text = st.text(max_size=40)  # any Unicode but lone surrogates: quotes, controls, emoji, CJK


@st.composite
def whole_turns(draw: st.DrawFn) -> list[Event]:
    calls = draw(st.integers(0, 3))
    ts = draw(st.floats(allow_nan=False, allow_infinity=False, width=64))
    session = draw(st.text(min_size=1, max_size=8))
    out = [
        Event(0, session, 0, Kind.USER, ts=ts, text=draw(event_text), source=draw(st.none() | st.just("src")))
    ]
    for c in range(calls):
        out.append(Event(0, session, 0, Kind.CALL, call_id=f"c{c}", chars=draw(st.integers(0, 10**6))))
        if draw(st.booleans()):
            out.append(
                Event(
                    0,
                    session,
                    0,
                    Kind.RESULT,
                    call_id=f"c{c}",
                    text=draw(event_text),
                    cjk=draw(st.booleans()),
                )
            )
    out.append(Event(0, session, 0, Kind.TERM, text=draw(event_text), chars=draw(st.integers(0, 5))))
    return [dataclasses.replace(e, seq=i) for i, e in enumerate(out)]


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turn=whole_turns())
def test_one_serialization_and_a_faithful_round_trip(tmp_path: Path, turn: list[Event]) -> None:
    """The record's events are the dumps_event lines joined; reading back gives what commit returned."""
    assert events_json(turn) == ("[" + ",".join(dumps_event(e) for e in turn) + "]").encode("utf-8")
    path = tmp_path / "roundtrip.log"
    path.unlink(missing_ok=True)
    with TurnLog.open(path, create=True, fsync="never") as log:
        stored = log.commit(turn, turn_id="t")
    with TurnLog.open(path, readonly=True) as log:
        assert log.turns() == (stored,)
