"""The durable log: append and recovery against the bytes-only ceilings and SQLite in WAL mode.

Append, ``fsync='batch'`` (one fdatasync per 256 commits and at close): turncheck's
``TurnLog.commit`` per turn (validation, serialization, framing, write), and ``commit_many`` of
256 turns a call (one write per call, as SQLite's one transaction per 256 rows), against the ceiling —
the very frame bytes, precomputed, written through a buffered file with the same fdatasync
cadence — and SQLite in WAL mode (``synchronous=FULL``, one transaction per 256 turns, the same
events JSON precomputed as a BLOB per row). A second ceiling writes the same bytes with one
``os.pwrite`` per turn, as a log must for every commit to be in the OS's hands when it returns:
the gap between the two ceilings is all that coalescing writes could gain (the commit's own
encoder is msgspec, so a row of msgspec encoding alone would time part of the commit against
itself). Recovery: a read-only ``TurnLog.open`` (every frame's length and CRC, the index, the last turn decoded)
against reading the file and one ``zlib.crc32`` over its bytes, and against reading it and one
``zlib.crc32`` per frame body at offsets known in advance — the least any check of every
frame's own CRC does in Python.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import zlib
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from benchmarks.compare import Comparison, Contender, interleave
from benchmarks.store import sample_turns
from turncheck.models.events import Event
from turncheck.models.log_format import (
    check_turn_id,
    default_turn_id,
    encode_frame,
    encode_frame_header,
    events_json,
)
from turncheck.models.store import DEFAULT_BATCH, TurnLog

_NO_LIMIT = 1 << 40


def _turncheck_append(path: Path, turns: list[list[Event]]) -> Callable[[], object]:
    def run() -> object:
        path.unlink(missing_ok=True)
        with TurnLog.open(path, create=True, fsync="batch", max_bytes=_NO_LIMIT) as log:
            commit = log.commit
            for turn in turns:
                commit(turn)
        return None

    return run


def _turncheck_append_many(path: Path, turns: list[list[Event]]) -> Callable[[], object]:
    def run() -> object:
        path.unlink(missing_ok=True)
        with TurnLog.open(path, create=True, fsync="batch", max_bytes=_NO_LIMIT) as log:
            for lo in range(0, len(turns), DEFAULT_BATCH):
                log.commit_many(turns[lo : lo + DEFAULT_BATCH])
        return None

    return run


def _buffered_append(path: Path, header: bytes, frames: list[bytes]) -> Callable[[], object]:
    def run() -> object:
        path.unlink(missing_ok=True)
        with open(path, "wb") as f:
            f.write(header)
            f.flush()
            fd = f.fileno()
            for i, frame in enumerate(frames, 1):
                f.write(frame)
                if i % DEFAULT_BATCH == 0:
                    f.flush()
                    os.fdatasync(fd)
            f.flush()
            os.fdatasync(fd)
        return None

    return run


def _pwrite_append(path: Path, header: bytes, frames: list[bytes]) -> Callable[[], object]:
    def run() -> object:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            pwrite, size = os.pwrite, os.pwrite(fd, header, 0)
            for i, frame in enumerate(frames, 1):
                size += pwrite(fd, frame, size)
                if i % DEFAULT_BATCH == 0:
                    os.fdatasync(fd)
            os.fdatasync(fd)
        finally:
            os.close(fd)
        return None

    return run


def _sqlite_append(path: Path, rows: list[tuple[str, bytes]]) -> Callable[[], object]:
    def run() -> object:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        db = sqlite3.connect(path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("CREATE TABLE turns (id TEXT PRIMARY KEY, events BLOB NOT NULL)")
            for lo in range(0, len(rows), DEFAULT_BATCH):
                db.execute("BEGIN")
                db.executemany("INSERT INTO turns VALUES (?, ?)", rows[lo : lo + DEFAULT_BATCH])
                db.execute("COMMIT")
        finally:
            db.close()
        return None

    return run


def _turncheck_recover(path: Path) -> Callable[[], object]:
    def run() -> object:
        with TurnLog.open(path, readonly=True, max_bytes=_NO_LIMIT) as log:
            return len(log)

    return run


def _crc_recover(path: Path) -> Callable[[], object]:
    def run() -> object:
        with open(path, "rb") as f:
            return zlib.crc32(f.read())

    return run


def _crc_per_frame(path: Path, spans: list[tuple[int, int]]) -> Callable[[], object]:
    starts = [start + 8 for start, _ in spans]  # each body: after its length and CRC
    ends = [end for _, end in spans]

    def run() -> object:
        with open(path, "rb") as f:
            view = memoryview(f.read())
        return sum(map(zlib.crc32, map(view.__getitem__, map(slice, starts, ends))))

    return run


def compare(scale: str) -> list[Comparison]:
    full = scale == "full"
    n = 100_000 if full else 5_000
    turns = sample_turns(n)
    events = sum(len(t) for t in turns)
    jsons = [events_json(t) for t in turns]
    ids = [default_turn_id(t) for t in turns]
    frames = [
        encode_frame(i, check_turn_id(tid), js) for i, (tid, js) in enumerate(zip(ids, jsons, strict=True))
    ]
    rounds = 5 if full else 3
    with tempfile.TemporaryDirectory(prefix="turncheck-compare-store-") as tmp:
        d = Path(tmp)
        appended = interleave(
            [
                Contender(
                    "TurnLog.commit, fsync=batch", "turncheck", _turncheck_append(d / "tc.log", turns), events
                ),
                Contender(
                    "TurnLog.commit_many, 256 turns a call",
                    "turncheck",
                    _turncheck_append_many(d / "many.log", turns),
                    events,
                ),
                Contender(
                    "same frame bytes, buffered write + fdatasync/256",
                    "ceiling",
                    _buffered_append(d / "raw.log", encode_frame_header(), frames),
                    events,
                ),
                Contender(
                    "same frame bytes, one os.pwrite per turn + fdatasync/256",
                    "ceiling",
                    _pwrite_append(d / "pwrite.log", encode_frame_header(), frames),
                    events,
                ),
                Contender(
                    "SQLite WAL, synchronous=FULL, 256 rows/txn",
                    "peer",
                    _sqlite_append(d / "peer.db", list(zip(ids, jsons, strict=True))),
                    events,
                ),
            ],
            rounds,
        )
        size = (d / "tc.log").stat().st_size
        same = size == (d / "raw.log").stat().st_size == (d / "pwrite.log").stat().st_size
        same = same and (d / "many.log").read_bytes() == (d / "tc.log").read_bytes()
        megabytes = size / 1e6
        ends = list(accumulate(map(len, frames), initial=len(encode_frame_header())))
        spans = list(zip(ends[:-1], ends[1:], strict=True))  # each frame where the writer put it
        recovered = interleave(
            [
                Contender(
                    "TurnLog.open(readonly=True)", "turncheck", _turncheck_recover(d / "tc.log"), megabytes
                ),
                Contender(
                    "read + zlib.crc32 over the bytes", "ceiling", _crc_recover(d / "tc.log"), megabytes
                ),
                Contender(
                    "read + zlib.crc32 of each frame body (offsets known)",
                    "ceiling",
                    _crc_per_frame(d / "tc.log", spans),
                    megabytes,
                ),
            ],
            rounds + 2,
        )
    note = "" if same else "a ceiling's file size differs from the log's"
    return [
        Comparison(
            f"log append, {n:,} turns ({events:,} events, {megabytes:.1f} MB)",
            "µs per event",
            1e6,
            appended,
            target="≥ 50 % of the buffered-write ceiling",
            note=note,
        ),
        Comparison(
            f"log recovery, {megabytes:.1f} MB, {n:,} frames",
            "ms per MB",
            1e3,
            recovered,
            target="≥ 70 % of the read + crc32 ceiling",
        ),
    ]
