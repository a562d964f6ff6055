"""Recovery time on damaged logs of the same size as a clean one: resync must stay linear.

Four files of one size, each opened read-only with policy ``resync`` (best of 3):

* ``clean`` — the benchmark's own log;
* ``random garbage`` — its first and last frames with random bytes between them;
* ``crafted garbage`` — the same, the bytes between chosen so that a frame length fits at
  every second offset (the attack that made the old byte-by-byte scan quadratic: 1 MiB took
  37 s);
* ``marker-dense`` — crafted against the current scanner: a frame head with the events marker
  every 22 bytes, each declaring a body running to the middle of the file, so every one costs a
  range CRC (bounded per candidate, not per byte).

Timings are printed only, never asserted.
"""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path

from turncheck.models.log_format import HEADER_SIZE
from turncheck.models.resync import EVENTS_MARK
from turncheck.models.store import TurnLog

_NO_LIMIT = 1 << 40


def _frames(data: bytes) -> tuple[bytes, bytes, bytes]:
    """Header, first frame and last frame of a clean framed log."""
    first_len = struct.unpack_from("<I", data, HEADER_SIZE)[0]
    first = data[HEADER_SIZE : HEADER_SIZE + 8 + first_len]
    pos, last = HEADER_SIZE, b""
    while pos < len(data):
        end = pos + 8 + struct.unpack_from("<I", data, pos)[0]
        last, pos = data[pos:end], end
    return data[:HEADER_SIZE], first, last


def _crafted(size: int) -> bytes:
    unit = bytes([0x01, 0x00, 0x40, 0x00])  # lengths 0x400001 and 0x10040 fit at alternate offsets
    return (unit * (size // 4 + 1))[:size]


def _marker_dense(size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        claim = max(size // 2 - len(out), 40)
        out += struct.pack("<IIIB", claim, 0, 1, 1) + b"x" + EVENTS_MARK + b"]"
    return bytes(out[:size])


def _best_open(path: Path, repeats: int = 3) -> tuple[float, str]:
    best, summary = float("inf"), ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        with TurnLog.open(path, readonly=True, policy="resync", max_bytes=_NO_LIMIT) as log:
            summary = log.recovery.summary()
        best = min(best, time.perf_counter() - t0)
    return best, summary


def recovery_lines(clean: Path, seed: int = 20261030) -> list[str]:
    """Printed lines: recovery seconds of each file and its ratio to the clean one."""
    data = clean.read_bytes()
    header, first, last = _frames(data)
    middle = len(data) - len(header) - len(first) - len(last)
    rng = random.Random(seed)
    files = {
        "clean": data,
        "random garbage": header + first + rng.randbytes(middle) + last,
        "crafted garbage": header + first + _crafted(middle) + last,
        "marker-dense": header + first + _marker_dense(middle) + last,
    }
    lines: list[str] = []
    base = 0.0
    for name, content in files.items():
        path = clean.with_name(f"garbage-{name.replace(' ', '-')}.log")
        path.write_bytes(content)
        secs, summary = _best_open(path)
        base = base or secs
        lines.append(
            f"recovery {name} ({len(content) / 2**20:.1f} MiB, resync): {secs:.3f} s = {secs / base:.2f}× clean "
            f"[target ≤ 3×] — {summary[:90]}"
        )
        path.unlink()
    return lines


def run(scale: str) -> list[str]:
    """``turncheck bench store_garbage``: the recovery lines alone, on a log of ``bench store``'s
    turns at ``scale`` (200 000 turns at full, 20 000 otherwise)."""
    import tempfile

    from benchmarks.store import sample_turns  # benchmarks.store prints these lines too

    turns = sample_turns(200_000 if scale == "full" else 20_000)
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-garbage-") as tmp:
        clean = Path(tmp) / "clean.log"
        with TurnLog.open(clean, create=True, fsync="never", max_bytes=_NO_LIMIT) as log:
            for turn in turns:
                log.commit(turn)
        return recovery_lines(clean)
