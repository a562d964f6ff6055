"""The durable log: append and recovery against the bytes-only ceilings and SQLite in WAL mode.

Append, ``fsync='batch'`` (one fdatasync per 256 commits and at close): turncheck's
``TurnLog.commit`` per turn (validation, serialization, framing, write) against the ceiling —
the very frame bytes, precomputed, written through a buffered file with the same fdatasync
cadence — and SQLite in WAL mode (``synchronous=FULL``, one transaction per 256 turns, the same
events JSON precomputed as a BLOB per row). Recovery: a read-only ``TurnLog.open`` (every frame's
length and CRC, the index, the last turn decoded) against reading the file and one
``zlib.crc32`` over its bytes.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

from turncheck.bench.compare import Comparison, Contender, interleave
from turncheck.bench.store import sample_turns
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
                    "same frame bytes, buffered write + fdatasync/256",
                    "ceiling",
                    _buffered_append(d / "raw.log", encode_frame_header(), frames),
                    events,
                ),
                Contender(
                    "SQLite WAL, synchronous=FULL, 256 rows/txn",
                    "peer",
                    _sqlite_append(d / "peer.db", list(zip(ids, jsons, strict=True))),
                    events,
                ),
            ],  # fmt: skip
            rounds,
        )
        size = (d / "tc.log").stat().st_size
        same = size == (d / "raw.log").stat().st_size
        megabytes = size / 1e6
        recovered = interleave(
            [
                Contender(
                    "TurnLog.open(readonly=True)", "turncheck", _turncheck_recover(d / "tc.log"), megabytes
                ),
                Contender(
                    "read + zlib.crc32 over the bytes", "ceiling", _crc_recover(d / "tc.log"), megabytes
                ),
            ],
            rounds + 2,
        )
    return [
        Comparison(
            f"log append, {n:,} turns ({events:,} events, {megabytes:.1f} MB)",
            "µs per event",
            1e6,
            appended,
            target="≥ 50 % of the buffered-write ceiling",
            note="" if same else "the ceiling's file size differs from the log's",
        ),
        Comparison(
            f"log recovery, {megabytes:.1f} MB, {n:,} frames",
            "ms per MB",
            1e3,
            recovered,
            target="≥ 70 % of the read + crc32 ceiling",
        ),
    ]
