"""Recovery read chunk by chunk decides exactly as recovery over the whole file.

:func:`models.recovery.scan_frame_file` checks an undamaged log through a small buffer and
hands anything else to :func:`models.recovery.scan_frames`; here the chunk is shrunk to a few
dozen bytes so frames straddle chunks (and outgrow them), and every damage a test can make must
give the same refs, the same report, or the same error as the whole-file scan.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_store import make_turn

import turncheck.models.recovery as recovery_mod
from turncheck.models.log_format import HEADER_SIZE, StoreError
from turncheck.models.recovery import scan_frame_file, scan_frames
from turncheck.models.store import TurnLog


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recovery_mod, "SCAN_CHUNK", 64)


def framed_log(path: Path, turns: int = 12, big: int = 3) -> bytes:
    """A clean framed log; turn ``big`` carries a text longer than several chunks."""
    with TurnLog.open(path, create=True, fsync="never") as log:
        for t in range(turns):
            events = make_turn("s", t, log.next_seq, calls=t % 3, text="x" * 500 if t == big else None)
            log.commit(events)
    return path.read_bytes()


def outcome(scan: object) -> object:
    try:
        return scan()  # type: ignore[operator]
    except StoreError as exc:
        return (type(exc), str(exc), getattr(exc, "offset", None))


def same_as_whole_file(data: bytes, policy: str, short: int | None = None) -> None:
    """``short``: the file shrinks under the reader (reads stop at that byte)."""
    end = len(data) if short is None else short

    def read(offset: int, length: int) -> bytes:
        return data[offset : min(offset + length, end)]

    got = outcome(lambda: scan_frame_file(read, len(data), policy, "log"))
    expected = outcome(lambda: scan_frames(read(0, len(data)), policy, "log"))
    assert got == expected


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return framed_log(tmp_path_factory.mktemp("scan") / "log")


@pytest.mark.parametrize("policy", ["stop", "resync"])
def test_a_clean_log_and_every_torn_tail(clean: bytes, policy: str) -> None:
    refs, report = scan_frame_file(lambda o, n: clean[o : o + n], len(clean), policy)
    assert (refs, report) == scan_frames(clean, policy) and report.clean and len(refs) == 12
    for cut in range(0, len(clean), 7):
        same_as_whole_file(clean[:cut], policy)


@pytest.mark.parametrize("policy", ["stop", "resync"])
def test_duplicates_repeats_and_short_reads(clean: bytes, policy: str) -> None:
    refs, _ = scan_frames(clean)
    _, _, s, e = refs[5]
    same_as_whole_file(clean + clean[s:e], policy)  # a byte-identical duplicate frame at the end
    same_as_whole_file(clean[:e] + clean[s:], policy)  # a duplicate in the middle
    same_as_whole_file(clean[:HEADER_SIZE] + clean[refs[2][2] :], policy)  # frames 0, 1 missing
    same_as_whole_file(clean[: refs[3][2]] + clean[refs[4][2] :], policy)  # a frame number skipped
    same_as_whole_file(b"not a log at all" * 10, policy)
    for short in (10, HEADER_SIZE + 3, s + 1, len(clean) - 1):
        same_as_whole_file(clean, policy, short=short)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), policy=st.sampled_from(["stop", "resync"]))
def test_any_damage_gives_what_the_whole_file_scan_gives(
    clean: bytes, data: st.DataObject, policy: str
) -> None:
    damaged = bytearray(clean)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        op = data.draw(st.sampled_from(["flip", "cut", "drop", "copy"]))
        if op == "flip":
            damaged[at] ^= data.draw(st.integers(1, 255))
        elif op == "cut":
            del damaged[at:]
        elif op == "drop":
            del damaged[at : at + data.draw(st.integers(1, 40))]
        else:
            damaged[at:at] = damaged[data.draw(st.integers(0, at)) : at]
        if not damaged:
            break
    same_as_whole_file(bytes(damaged), policy)


def test_opening_a_log_through_small_chunks(tmp_path: Path) -> None:
    path = tmp_path / "log"
    data = framed_log(path)
    with TurnLog.open(path) as log:
        assert log.recovery.clean and len(log) == 12 and log.size == len(data)
        log.commit(make_turn("s", 12, log.next_seq))
    path.write_bytes(path.read_bytes()[:-5])
    with TurnLog.open(path) as log:
        assert log.recovery.torn_bytes > 0 and len(log) == 12 and path.stat().st_size == len(data)
