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
from pathlib import Path
from zlib import crc32

from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.bench.store_garbage import _crafted, _frames, _marker_dense
from turncheck.models.crc_range import STEP, RangeCrc
from turncheck.models.events import Event, Kind
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
