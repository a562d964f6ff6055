"""Benchmark: what ``turncheck stress`` costs the run it measures, and how fast it checks one.

1. **Recording overhead.** The same SQLite run (``trim-to``, 4 writers, gap 50 ms, maxTurns 8)
   with and without recording: mean and p50 append latency, appends/s. On a shared machine two
   live runs differ by more than the recording costs, so it also times the recording itself —
   encoding and ``os.write`` of one append line and one read-window line, per append — and gives
   it as a share of the p50 append latency (target < 10 %).
2. **Analysis time.** A SQLite run with 8 writers (10 s at ``full``, 3 s at ``quick``), then the
   time ``stress --check`` takes for its whole history — reading and validating the files
   (:func:`read_history`), then :func:`check_run` (target < 5 s for the 10 s run).

Figures are printed, never asserted.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from turncheck.models.session_store import TURN_KINDS, Window
from turncheck.sim.stress.history import check_run
from turncheck.sim.stress.history_format import read_history
from turncheck.sim.stress.runner import Recorder, StressParams, encode_window, run_of, run_stress
from turncheck.sim.stress.stores import StoreSpec

OVERHEAD_TARGET = 0.10
ANALYSIS_TARGET_S = 5.0


def _latencies(raw_records: tuple[dict, ...], summaries: tuple[dict, ...]) -> list[float]:
    lat = [r["t1"] - r["t0"] for r in raw_records if r.get("op") == "append" and r.get("type") == "ok"]
    for s in summaries:
        lat.extend(s.get("latencies", ()))
    return lat


def _record_cost_us(window_turns: int, n: int = 20000, reads: bool = True) -> float:
    """Microseconds to encode and write one append line (plus, with ``reads``, one read line of
    a ``window_turns``-turn window)."""
    turns = tuple(t for t in range(1, window_turns + 1) for _ in TURN_KINDS)
    window = Window(123, turns, TURN_KINDS * window_turns)
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-") as tmp:
        rec = Recorder(Path(tmp) / "w.jsonl", record=True, name="w0.0")
        started = time.perf_counter()
        for i in range(n):
            t = time.time()
            if reads:  # the lines as the runner's writer records them
                rec.line({"op": "read", "p": "w0.0", "type": "ok", "t0": t, "t1": t, "v": window.version,
                          "w": encode_window(window)})  # fmt: skip
            rec.line({"op": "append", "p": "w0.0", "type": "ok", "id": f"w0.0-{i}", "t0": t, "t1": t, "seq": i,
                      "turn": i, "trig": False, "waits": 0, "busy": 0, "lost_conn": 0})  # fmt: skip
        took = time.perf_counter() - started
        rec.close()
        return took / n * 1e6


def run(scale: str) -> list[str]:
    seconds, run_s = {"tiny": (0.5, 1.0), "quick": (1.5, 3.0)}.get(scale, (3.0, 10.0))
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-stress-") as tmp:
        root = Path(tmp)
        figures = {}
        for record in (True, False):
            p = StressParams(StoreSpec("sqlite", str(root / f"r{record}.db")), "trim-to", writers=4, gap_ms=50,
                             max_turns=8, seconds=seconds, record=record)  # fmt: skip
            raw = run_stress(p, root / f"h{record}")
            lat = sorted(_latencies(raw.records, raw.summaries))
            figures[record] = (statistics.fmean(lat), lat[len(lat) // 2], len(lat) / seconds)
        (on_mean, on_p50, on_rate), (off_mean, off_p50, off_rate) = figures[True], figures[False]
        lines.append(f"sqlite trim-to, 4 writers, gap 50 ms, {seconds:g} s per run:")
        lines.append(f"  recording on : append mean {on_mean * 1e3:.3f} ms, p50 {on_p50 * 1e3:.3f} ms, "
                     f"{on_rate:,.0f} appends/s")  # fmt: skip
        lines.append(f"  recording off: append mean {off_mean * 1e3:.3f} ms, p50 {off_p50 * 1e3:.3f} ms, "
                     f"{off_rate:,.0f} appends/s")  # fmt: skip
        alone = _record_cost_us(window_turns=60, reads=False)
        both = _record_cost_us(window_turns=60)
        for what, cost, base, label in (
            ("one append line", alone, on_p50, "p50"),
            ("one append line", alone, on_mean, "mean"),
            ("one append + one 60-turn read window", both, on_mean, "mean"),
        ):
            share = cost / (base * 1e6)
            verdict = "ok" if share < OVERHEAD_TARGET else "ABOVE TARGET"
            lines.append(f"  recording {what}: {cost:.1f} µs = {share:.1%} of the {label} append latency "
                         f"(target < {OVERHEAD_TARGET:.0%}: {verdict})")  # fmt: skip
        p = StressParams(StoreSpec("sqlite", str(root / "big.db")), "none", writers=8, gap_ms=50, max_turns=8,
                         seconds=run_s)  # fmt: skip
        raw = run_stress(p, root / "big")
        started = time.perf_counter()  # what stress --check does: read and validate the files, check
        report = check_run(run_of(read_history(root / "big")))
        took = time.perf_counter() - started
        verdict = "ok" if took < ANALYSIS_TARGET_S else "ABOVE TARGET"
        lines.append(f"sqlite none, 8 writers, {run_s:g} s: {len(raw.records):,} records, {len(raw.journal):,} commits, "
                     f"peak {report.peak}; analysis {took:.2f} s (target < {ANALYSIS_TARGET_S:g} s for 10 s: {verdict})")  # fmt: skip
    return lines
