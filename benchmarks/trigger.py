"""Benchmark: the seed's eight-row trigger table, and simulated events per second in SimPy.

``run("full")`` computes the ``trigger-gap`` table at 200 000 slots per row with two worker
processes (target: ≤ 60 s) and reports the slots and model steps per second of the tight loop;
then drives the trigger model through the SimPy runner (writers, clock, compactor) and
reports simulated SimPy events per second (target: ≥ 300 k/s), best of three runs, per wall-clock
second and per CPU second of this process (other processes on the machine slow the first, hardly
the second). Any other scale runs a tenth of the slots. ``run`` returns its lines and prints
nothing (``turncheck bench trigger`` prints them); timings never go into result files.
"""

from __future__ import annotations

import time
from typing import cast

from benchmarks.check import load_note
from turncheck.models.trigger import TriggerModel
from turncheck.scenarios.trigger_gap import SEED_ROWS, TriggerGapParams, run_row
from turncheck.sim.executor import LocalExecutor
from turncheck.sim.simulation import RunSpec, simulate


def _row(args: tuple[int, int, int, int, int]) -> dict[str, object]:
    m, a, g, iterations, seed = args
    return run_row(m, a, g, "none", iterations, seed)


def run(scale: str = "full") -> list[str]:
    """Run the benchmark and return its lines (printing nothing)."""
    full = scale == "full"
    iterations = 200_000 if full else 20_000
    seed = TriggerGapParams().seed
    lines: list[str] = []
    say = lines.append

    tasks = [(m, a, g, iterations, seed) for (m, a, g) in SEED_ROWS]
    t0 = time.perf_counter()
    rows = LocalExecutor(2).map(_row, tasks)
    wall = time.perf_counter() - t0
    say(f"trigger-gap: {len(rows)} rows × {iterations:,} slots, --jobs 2: {wall:.2f} s (target ≤ 60 s)")
    say("  maxTurns  A  G   peak  peak/M  closed form  seed")
    for r in rows:
        say(f"  {r['max_turns']:>8} {r['writers']:>2} {r['gap']:>2} {r['peak']:>6} {r['peak_ratio']:>7} "
            f"{r['worst_case']!s:>12} {r['seed_peak']!s:>5}")  # fmt: skip
    slots = len(rows) * iterations
    steps = sum(cast(int, r["appends"]) for r in rows) + slots  # appends + slot ends (+ acts, not counted)
    say(f"  fast path: {slots / wall:,.0f} slots/s, {steps / wall:,.0f} model steps/s on 2 processes")

    sim_slots = 50_000 if full else 5_000
    for strategy in ("none", "mutex"):
        walls, cpus = [], []
        for _ in range(3):
            model = TriggerModel(8, 5, 8, strategy, turns=0)
            t0, c0 = time.perf_counter(), time.process_time()
            result = simulate(model, RunSpec(slots=sim_slots, seed=seed))
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        wall, cpu = min(walls), max(min(cpus), 1e-9)
        steps = result.appends + (sim_slots - 1) + result.compactions + result.retries
        say(f"SimPy runner, trigger model A=8 G=5 maxTurns=8 {strategy}: {sim_slots:,} slots, "
            f"{result.events:,} events in {wall:.2f} s (best of 3) = {result.events / wall:,.0f} events/s, "
            f"{result.events / cpu:,.0f} per CPU second (target ≥ 300 000/s), {steps / wall:,.0f} model steps/s, "
            f"{sim_slots / wall:,.0f} slots/s; peak {result.peak}")  # fmt: skip
    say(f"  ({load_note()})")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
