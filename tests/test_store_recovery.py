"""Recovery of damaged logs: torn tails at every byte, torn-then-append, mid-file damage, fuzz."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_store import digest, fill, make_turn, one_line

import turncheck.models.store as store_mod
from benchmarks.store_lines import LineTurnLog
from turncheck.models.log_format import HEADER_SIZE, LINE_HEADER
from turncheck.models.recovery import scan_frames, scan_lines
from turncheck.models.store import LogCorrupt, StoredTurn, StoreError, TurnLog, TurnStore

STORES = [TurnLog, LineTurnLog]


def content(turns: tuple[StoredTurn, ...] | list[StoredTurn]) -> list[tuple[str, tuple]]:
    """Turns as (id, events): what must survive; offsets move when damage shifts the bytes."""
    return [(t.turn_id, t.events) for t in turns]


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery logic is under test here, not the disk: skip the (slow) fsyncs of repairs."""
    monkeypatch.setattr(store_mod, "sync_file", lambda fd: None)


def build(cls: type[TurnStore], path: Path, turns: int) -> tuple[bytes, list[StoredTurn], list[int]]:
    """A log of ``turns`` turns: its bytes, the stored turns, and each record's end offset."""
    with cls.open(path, create=True, fsync="never") as log:
        written = [log.commit(make_turn("s", t, log.next_seq, calls=t % 2)) for t in range(turns)]
        size = log.size
    ends = [t.offset for t in written[1:]] + [size]
    return path.read_bytes(), written, ends


@pytest.mark.parametrize("cls", STORES)
def test_crash_at_every_byte_offset_recovers_exactly_the_complete_turns(
    tmp_path: Path, cls: type[TurnStore]
) -> None:
    # 20 turns, about 7 kB: some 7,000 crashes, every record shape cut at each of its bytes
    source, written, ends = build(cls, tmp_path / "source", 20)
    header = HEADER_SIZE if cls is TurnLog else len(LINE_HEADER)
    path = tmp_path / "crashed"
    ids = [t.turn_id for t in written]
    path.write_bytes(b"")
    for cut in range(len(source) + 1):
        with path.open("r+b") as fh:  # rewrite in place: ext4 flushes files truncated to zero on close
            fh.write(source[:cut])
            fh.truncate(cut)
        complete = sum(1 for e in ends if e <= cut)
        with cls.open(path, create=True, fsync="never") as log:
            assert log.turn_ids() == tuple(ids[:complete]), cut
            valid_end = ends[complete - 1] if complete else header
            assert log.size == valid_end == path.stat().st_size, cut
            assert log.recovery.torn_bytes == (cut - valid_end if cut >= header else cut), cut
            if cut % 97 == 0 or cut == len(source):  # full decode, then keep appending after the cut
                assert log.turns() == tuple(written[:complete]), cut
                log.commit(make_turn("s", 1000, log.next_seq))
        if cut % 97 == 0:
            with cls.open(path) as again:
                assert again.recovery.clean and again.turn_ids() == (*ids[:complete], "s/1000")


@pytest.mark.parametrize("cls", STORES)
def test_torn_half_record_followed_by_more_appends(tmp_path: Path, cls: type[TurnStore]) -> None:
    """The seed's untested worst case: a writer that kept appending after a torn record."""
    source, written, ends = build(cls, tmp_path / "source", 10)
    starts = [t.offset for t in written]
    torn = starts[4] + (ends[4] - starts[4]) // 2  # half of turn 4, then turns 5.. as written
    damaged = source[:torn] + source[ends[4] :]
    path = tmp_path / "log"
    path.write_bytes(damaged)
    with pytest.raises(LogCorrupt) as err:
        cls.open(path)
    message = one_line(err)
    assert f"byte {starts[4]}" in message and "resync" in message
    assert path.read_bytes() == damaged
    with cls.open(path, policy="resync") as log:
        assert log.turn_ids() == tuple(t.turn_id for t in written if t.turn_id != "s/4")
        assert content(log.turns()) == content([t for t in written if t.turn_id != "s/4"])
        (skip,) = log.recovery.skipped
        assert (skip.offset, skip.length) == (starts[4], torn - starts[4])
        if cls is TurnLog:
            assert skip.lost == 1 and "torn frame" in skip.reason
        else:
            assert "torn half-line" in skip.reason
        log.commit(make_turn("s", 10, log.next_seq))
    with cls.open(path, policy="resync") as log:  # resync never rewrites the middle of the file
        assert len(log) == 10 and len(log.recovery.skipped) == 1


@pytest.mark.parametrize("cls", STORES)
def test_mid_file_damage_stop_names_the_offset_resync_skips_it(tmp_path: Path, cls: type[TurnStore]) -> None:
    source, written, ends = build(cls, tmp_path / "source", 20)
    start = written[7].offset
    damaged = bytearray(source)
    damaged[start + 20 : start + 24] = b"\x00\xff\x00\xff"  # not valid JSON, wrong CRC
    path = tmp_path / "log"
    path.write_bytes(bytes(damaged))
    for readonly in (True, False):
        with pytest.raises(LogCorrupt) as err:
            cls.open(path, readonly=readonly)
        assert f"corrupt {'frame' if cls is TurnLog else 'line'} at byte {start}" in one_line(err)
    assert path.read_bytes() == bytes(damaged)
    with cls.open(path, policy="resync") as log:
        assert content(log.turns()) == content(written[:7] + written[8:])
        (skip,) = log.recovery.skipped
        assert (skip.offset, skip.length) == (start, ends[7] - start)
        assert skip.lost == (1 if cls is TurnLog else None)
        assert "skipped" in log.recovery.summary()


def test_zero_filled_hole_from_reordered_page_writes(tmp_path: Path) -> None:
    """fsync 'never' + power loss can persist later pages and not earlier ones: a hole of zeros."""
    source, written, ends = build(TurnLog, tmp_path / "source", 12)
    a, b = written[3].offset, ends[5]
    path = tmp_path / "log"
    path.write_bytes(source[:a] + bytes(b - a) + source[b:])
    with TurnLog.open(path, policy="resync") as log:
        assert content(log.turns()) == content(written[:3] + written[6:])
        (skip,) = log.recovery.skipped
        assert (skip.offset, skip.length, skip.lost) == (a, b - a, 3)


@pytest.mark.parametrize("cls", STORES)
def test_duplicated_records_are_read_once(tmp_path: Path, cls: type[TurnStore]) -> None:
    source, written, ends = build(cls, tmp_path / "source", 6)
    frame = source[written[2].offset : ends[2]]
    path = tmp_path / "log"
    path.write_bytes(source[: ends[4]] + frame + source[ends[4] :] + frame)
    for policy in ("stop", "resync"):
        with cls.open(path, policy=policy, readonly=True) as log:
            assert content(log.turns()) == content(written)
            assert log.recovery.duplicates == 2 and not log.recovery.skipped


def test_spliced_frames_with_missing_numbers(tmp_path: Path) -> None:
    source, written, ends = build(TurnLog, tmp_path / "source", 8)
    path = tmp_path / "log"
    path.write_bytes(source[: written[3].offset] + source[ends[4] :])  # frames 3 and 4 cut out cleanly
    with pytest.raises(LogCorrupt) as err:
        TurnLog.open(path)
    assert "frame numbers jump from 2 to 5" in one_line(err)
    with TurnLog.open(path, policy="resync") as log:
        assert content(log.turns()) == content(written[:3] + written[5:])
        assert log.recovery.skipped[0].lost == 2


@pytest.mark.parametrize("cls", STORES)
def test_readonly_open_reports_the_torn_tail_without_cutting(tmp_path: Path, cls: type[TurnStore]) -> None:
    source, written, ends = build(cls, tmp_path / "source", 5)
    path = tmp_path / "log"
    path.write_bytes(source[:-3])
    with cls.open(path, readonly=True) as log:
        assert len(log) == 4 and log.recovery.torn_bytes == ends[4] - 3 - ends[3] and not log.recovery.cut
        assert "to cut" in log.recovery.summary()
    assert path.read_bytes() == source[:-3]
    with cls.open(path) as log:
        assert log.recovery.cut and "cut" in log.recovery.summary()
    assert path.read_bytes() == source[: ends[3]]


def test_lines_commit_mark_is_the_newline(tmp_path: Path) -> None:
    """A complete record without its newline was not committed: it is cut like any torn tail."""
    source, written, ends = build(LineTurnLog, tmp_path / "source", 3)
    path = tmp_path / "log"
    path.write_bytes(source[:-1])
    with LineTurnLog.open(path) as log:
        assert len(log) == 2 and log.recovery.torn_bytes == ends[2] - ends[1] - 1


def test_lines_cannot_see_a_flipped_digit_frames_can(tmp_path: Path) -> None:
    """Why the framed store exists: without a checksum a flipped digit reads back as a valid turn."""
    results = {}
    for cls in STORES:
        source, written, _ = build(cls, tmp_path / f"{cls.__name__}.src", 4)
        at = source.index(b'"chars":300', written[1].offset) + len('"chars":')
        damaged = source[:at] + b"9" + source[at + 1 :]
        path = tmp_path / cls.__name__
        path.write_bytes(damaged)
        try:
            with cls.open(path, policy="resync") as log:
                results[cls] = log.turns()
        except StoreError as exc:  # pragma: no cover - reported for diagnosis
            results[cls] = exc
    phantom = results[LineTurnLog][1]
    assert phantom.turn_id == "s/1" and any(e.chars == 900 for e in phantom.events)  # never written
    assert [t.turn_id for t in results[TurnLog]] == ["s/0", "s/2", "s/3"]  # CRC caught it


# -- corruption fuzz --------------------------------------------------------------------------

_BASE: dict[type[TurnStore], tuple[bytes, list[StoredTurn]]] = {}


def _base(cls: type[TurnStore], tmp: Path) -> tuple[bytes, list[StoredTurn]]:
    if cls not in _BASE:
        with cls.open(tmp / f"base-{cls.__name__}", create=True, fsync="never") as log:
            written = fill(log, 8)
        _BASE[cls] = ((tmp / f"base-{cls.__name__}").read_bytes(), written)
    return _BASE[cls]


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=40)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6)),
    st.tuples(st.just("duplicate"), st.integers(0, 7), st.integers(0, 10**6)),
)


def mutate(data: bytes, written: list[StoredTurn], ops: list[tuple]) -> bytes:
    buf = bytearray(data)
    starts = [t.offset for t in written] + [len(data)]
    for op in ops:
        if not buf:
            break
        if op[0] == "flip":
            buf[op[1] % len(buf)] ^= 1 << op[2]
        elif op[0] == "insert":
            at = op[1] % (len(buf) + 1)
            buf[at:at] = op[2]
        elif op[0] == "truncate":
            del buf[op[1] % (len(buf) + 1) :]
        else:
            frame = data[starts[op[1]] : starts[op[1] + 1]]
            at = op[2] % (len(buf) + 1)
            buf[at:at] = frame
    return bytes(buf)


def check_opened(log: TurnStore, written: list[StoredTurn]) -> None:
    by_id = {t.turn_id: (i, t.events) for i, t in enumerate(written)}
    order = []
    for t in log.turns():
        assert t.turn_id in by_id, f"turn {t.turn_id!r} was never written"
        i, events = by_id[t.turn_id]
        assert t.events == events, f"turn {t.turn_id!r} differs from what was written"
        order.append(i)
    assert order == sorted(set(order)), "turns merged, repeated or reordered"


@settings(deadline=None, max_examples=250, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(mutation, min_size=1, max_size=4), policy=st.sampled_from(["stop", "resync"]))
def test_fuzzed_framed_log_opens_with_written_turns_or_fails_with_a_store_error(
    tmp_path: Path, ops: list[tuple], policy: str
) -> None:
    data, written = _base(TurnLog, tmp_path)
    damaged = mutate(data, written, ops)
    path = tmp_path / "fuzzed"
    for readonly in (True, False):
        path.write_bytes(damaged)
        try:
            with TurnLog.open(path, policy=policy, readonly=readonly) as log:
                check_opened(log, written)
                if not readonly:
                    log.commit(make_turn("s", 99, log.next_seq))
                    n = len(log)
        except StoreError as exc:
            assert "\n" not in str(exc)
            assert path.read_bytes() == damaged  # a refused open changes nothing
            continue
        if not readonly:
            with TurnLog.open(path, policy=policy) as again:
                assert len(again) == n and again.recovery.torn_bytes == 0
                check_opened_prefix = [t for t in again.turns() if t.turn_id != "s/99"]
                assert len(check_opened_prefix) == n - 1


@settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(mutation, min_size=1, max_size=4), policy=st.sampled_from(["stop", "resync"]))
def test_fuzzed_line_log_never_crashes_open(tmp_path: Path, ops: list[tuple], policy: str) -> None:
    """No checksum, so no promise about content — only that damage is a store error, never a crash."""
    data, written = _base(LineTurnLog, tmp_path)
    path = tmp_path / "fuzzed"
    path.write_bytes(mutate(data, written, ops))
    try:
        with LineTurnLog.open(path, policy=policy, readonly=True) as log:
            ids = log.turn_ids()
            assert len(ids) == len(set(ids))
            log.turns()
    except StoreError as exc:
        assert "\n" not in str(exc)


def test_scanners_accept_their_own_output_only() -> None:
    with pytest.raises(StoreError):
        scan_frames(LINE_HEADER)
    with pytest.raises(StoreError):
        scan_lines(b"\x89TCL\r\n\x1a\n" + bytes(8))
    assert scan_frames(b"")[1].header_missing and scan_lines(b"")[1].header_missing


def test_digest_helper_is_stable(tmp_path: Path) -> None:
    p = tmp_path / "x"
    p.write_bytes(os.urandom(16))
    assert digest(p) == digest(p)
