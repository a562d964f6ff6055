"""Benchmark: durable log append and recovery throughput, and each framing's bytes on disk.

``run("full")`` commits 200 000 turns (about 1 M events, sizes only — no text) to a framed log
with ``fsync='batch'`` (one fdatasync per 256 commits and at close) and prints events/s (target
≥ 200 000/s); then ``fsync='never'``, ``'always'`` (on fewer turns) and the line store for
comparison. It reopens the log read-only and prints recovered frames/s (target ≥ 500 000/s:
read, length + CRC32 check of every frame, id index, decode of the last turn), and the bytes on
disk of frames, lines and the plain events JSONL for the same turns, and (``benchmarks.store_garbage``)
resync recovery of random and crafted garbage files of the clean log's size. Any other scale uses
20 000 turns. Rates are per wall-clock second, with the rate per CPU-second of this process
beside them (on a shared machine the two differ). Timings are printed only, never asserted or
written to result files.
"""

from __future__ import annotations

import gc
import os
import random
import tempfile
import time
from pathlib import Path

from benchmarks.store_garbage import recovery_lines
from benchmarks.store_lines import LineTurnLog
from turncheck.models.events import Event, Kind, dumps_event
from turncheck.models.store import TurnLog, TurnStore

APPEND_TARGET = 200_000
RECOVERY_TARGET = 500_000
_NO_LIMIT = 1 << 40


def sample_turns(turns: int, seed: int = 20261030) -> list[list[Event]]:
    """Whole turns of the seed's shape (0–3 tool calls, result sizes 200–3000), 64 sessions."""
    rng = random.Random(seed)
    out: list[list[Event]] = []
    seq = 0
    for t in range(turns):
        session, turn = f"s{t % 64}", t // 64
        events = [Event(seq, session, turn, Kind.USER, ts=float(seq), chars=rng.randrange(20, 400))]
        for c in range(rng.choice((0, 1, 1, 2, 2, 3))):
            cid = f"c{t}.{c}"
            events.append(
                Event(seq + len(events), session, turn, Kind.CALL, call_id=cid, chars=rng.randrange(10, 60))
            )
            events.append(
                Event(
                    seq + len(events), session, turn, Kind.RESULT, call_id=cid, chars=rng.randrange(200, 3001)
                )
            )
        events.append(Event(seq + len(events), session, turn, Kind.TERM, chars=rng.randrange(50, 800)))
        seq += len(events)
        out.append(events)
    return out


def _append(cls: type[TurnStore], path: Path, turns: list[list[Event]], fsync: str) -> tuple[float, float]:
    """Wall and CPU seconds to open, commit every turn and close (the final sync included)."""
    path.unlink(missing_ok=True)
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        with cls.open(path, create=True, fsync=fsync, max_bytes=_NO_LIMIT) as log:
            for turn in turns:
                log.commit(turn)
        return time.perf_counter() - t0, time.process_time() - c0
    finally:
        if enabled:
            gc.enable()


def _recover(cls: type[TurnStore], path: Path, repeats: int = 3) -> tuple[float, float, int]:
    """Best of ``repeats`` read-only opens: wall and CPU seconds, and records recovered."""
    best, best_cpu, records = float("inf"), float("inf"), 0
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        with cls.open(path, readonly=True, max_bytes=_NO_LIMIT) as log:
            records = len(log)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return best, best_cpu, records


def _load() -> str:
    """The 1-minute load average: wall-clock rates only mean something next to it."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover - platforms without getloadavg
        return "?"


def _rate(count: float, seconds: float) -> str:
    return f"{count / seconds:,.0f}".replace(",", " ")


def run(scale: str) -> list[str]:
    """Printed lines of the store benchmark at ``scale`` ('full' or anything smaller)."""
    n = 200_000 if scale == "full" else 20_000
    turns = sample_turns(n)
    events = sum(len(t) for t in turns)
    lines: list[str] = []
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-store-") as tmp:
        frames_path, lines_path = Path(tmp) / "frames.log", Path(tmp) / "lines.log"
        secs, cpu = _append(TurnLog, frames_path, turns, "batch")
        lines.append(
            f"append frames, fsync=batch (256/sync): {n} turns, {events} events in {secs:.2f} s → "
            f"{_rate(events, secs)} events/s ({_rate(n, secs)} turns/s; {_rate(events, cpu)} events per "
            f"CPU-second) [target ≥ {_rate(APPEND_TARGET, 1)} events/s]"
        )
        secs, cpu = _append(TurnLog, Path(tmp) / "never.log", turns, "never")
        lines.append(
            f"append frames, fsync=never: {_rate(events, secs)} events/s ({_rate(events, cpu)} per CPU-s)"
        )
        few = turns[: min(n, 2000)]
        few_events = sum(len(t) for t in few)
        secs, cpu = _append(TurnLog, Path(tmp) / "always.log", few, "always")
        lines.append(
            f"append frames, fsync=always: {len(few)} turns → {_rate(len(few), secs)} turns/s "
            f"({_rate(few_events, secs)} events/s; one fdatasync per turn)"
        )
        secs, cpu = _append(LineTurnLog, lines_path, turns, "batch")
        lines.append(
            f"append lines, fsync=batch: {_rate(events, secs)} events/s ({_rate(events, cpu)} per CPU-s)"
        )
        secs, cpu, frames = _recover(TurnLog, frames_path)
        lines.append(
            f"recovery frames (open read-only, CRC every frame): {frames} frames in {secs:.3f} s → "
            f"{_rate(frames, secs)} frames/s ({_rate(frames, cpu)} per CPU-s) "
            f"[target ≥ {_rate(RECOVERY_TARGET, 1)}/s]"
        )
        secs, cpu, records = _recover(LineTurnLog, lines_path)
        lines.append(
            f"recovery lines (JSON parse every line): {records} lines → {_rate(records, secs)} lines/s "
            f"({_rate(records, cpu)} per CPU-s)"
        )
        lines += recovery_lines(frames_path)
        jsonl = sum(len(dumps_event(e).encode("utf-8")) + 1 for t in turns for e in t)
        for name, path in (("frames", frames_path), ("lines", lines_path)):
            size = path.stat().st_size
            extra = (size - jsonl) / n
            lines.append(
                f"bytes on disk, {name}: {_rate(size, 1)} B = the events as JSONL ({_rate(jsonl, 1)} B) "
                f"{extra:+.1f} B per turn ({100 * (size - jsonl) / jsonl:+.1f} %)"
            )
    lines.append(
        f"machine: load average {load_before} → {_load()} (1 min, start → end) on {os.cpu_count()} cores; "
        f"wall-clock rates drop when other jobs share the cores, per-CPU-second ones much less"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover
    import sys

    print("\n".join(run(sys.argv[1] if len(sys.argv) > 1 else "small")))
