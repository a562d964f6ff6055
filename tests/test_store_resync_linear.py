"""Resynchronisation finds the next frame in bounded work per candidate (issue 17, class 5).

The old scan tried every offset and checksummed up to the declared length wherever one fit, so
a few MiB of crafted bytes took minutes. Now candidates are found by the events marker each
frame carries (a ``bytes.find``), and each candidate's CRC costs bounded time through prefix
checksums (:class:`models.crc_range.RangeCrc`). Speed is shown by ``turncheck bench store``;
these tests pin correctness: the range CRC equals zlib's, and the same frames are found after
every kind of garbage.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from zlib import crc32

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.store_garbage import _crafted, _frames, _marker_dense
from turncheck.models.crc_range import STEP, RangeCrc
from turncheck.models.events import Event, Kind
from turncheck.models.log_format import encode_frame, events_json
from turncheck.models.resync import EVENTS_MARK, next_frame
from turncheck.models.store import TurnLog

DATA = random.Random(7).randbytes(10 * STEP + 123)


@settings(deadline=None, max_examples=200)
@given(a=st.integers(0, len(DATA)), b=st.integers(0, len(DATA)))
def test_range_crc_is_zlibs(a: int, b: int) -> None:
    a, b = min(a, b), max(a, b)
    assert RangeCrc(DATA).crc(a, b) == crc32(DATA[a:b])


def _log(path: Path, turns: int) -> bytes:
    with TurnLog.open(path, create=True) as log:
        for n in range(turns):
            log.commit(
                [Event(2 * n, "s", n, Kind.USER, chars=n), Event(2 * n + 1, "s", n, Kind.TERM, chars=1)]
            )
    return path.read_bytes()


def test_resync_finds_the_last_frame_after_any_garbage(tmp_path: Path) -> None:
    clean = _log(tmp_path / "clean", 3)
    header, first, last = _frames(clean)
    middle = 64 * 1024
    for garbage in (
        random.Random(1).randbytes(middle),
        _crafted(middle),
        _marker_dense(middle),
        b"\0" * middle,
    ):
        path = tmp_path / "damaged"
        path.write_bytes(header + first + garbage + last)
        with TurnLog.open(path, readonly=True, policy="resync") as log:
            assert log.turn_ids() == ("s/0", "s/2")
            (skip,) = log.recovery.skipped
            assert skip.offset == len(header) + len(first) and skip.length == middle


def _one_at_a_time(data: bytes, start: int, n: int) -> int | None:
    """The scan before bulk checks (one marker, one candidate at a time): the oracle."""
    unpack = struct.Struct("<IIIB").unpack_from
    best: int | None = None
    m = data.find(EVENTS_MARK, start + 14)
    while m >= 0 and m + len(EVENTS_MARK) <= n and (best is None or m - 13 - 255 < best):
        for q in range(m - 14, max(start, m - 13 - 255) - 1, -1):
            k = m - 13 - q
            if data[q + 12] != k or (best is not None and q >= best):
                continue
            length, check, _number, _k = unpack(data, q)
            end = q + 8 + length
            if (
                length >= 5 + k + 8
                and end <= n
                and data[end - 1] == 0x5D
                and crc32(data[q + 8 : end]) == check
            ):
                best = q
        m = data.find(EVENTS_MARK, m + 1)
    return best


def _descending(size: int) -> bytes:
    """Before each marker, the bytes 255 … 1: every offset names that marker (255 candidates each)."""
    unit = bytes(range(255, -1, -1)) + EVENTS_MARK + b"]"
    return (unit * (size // len(unit) + 1))[:size]


@settings(deadline=None, max_examples=150)
@given(
    pieces=st.lists(
        st.sampled_from(["frame", "random", "crafted", "dense", "descending", "zeros"]), max_size=8
    ),
    cuts=st.lists(st.integers(0, 400), min_size=8, max_size=8),
    start=st.integers(0, 3000),
)
def test_bulk_resync_finds_the_frame_the_one_at_a_time_scan_finds(
    pieces: list[str], cuts: list[int], start: int
) -> None:
    frames = [
        encode_frame(
            i,
            f"s/{i}".encode(),
            events_json([Event(2 * i, "s", i, Kind.USER, chars=i), Event(2 * i + 1, "s", i, Kind.TERM)]),
        )
        for i in range(8)
    ]
    rng = random.Random(len(pieces) * 1000 + sum(cuts))
    make = {
        "random": lambda c: rng.randbytes(c),
        "crafted": _crafted,
        "dense": _marker_dense,
        "descending": _descending,
        "zeros": lambda c: b"\0" * c,
    }
    data = b"".join(frames[i] if p == "frame" else make[p](cuts[i] + 1) for i, p in enumerate(pieces))
    n = len(data)
    start = min(start, n)
    assert next_frame(data, start, n) == _one_at_a_time(data, start, n)


def test_bulk_resync_windows_meet_a_frame_far_in(tmp_path: Path) -> None:
    """A valid frame behind several windows of marker-dense and descending garbage is found."""
    frame = encode_frame(0, b"s/0", events_json([Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.TERM)]))
    for garbage in (_marker_dense(3 << 20), _descending(3 << 20), random.Random(3).randbytes(3 << 20)):
        data = garbage + frame + garbage[:1000]
        assert next_frame(data, 0, len(data)) == len(garbage)
