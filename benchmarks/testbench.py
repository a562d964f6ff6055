"""Benchmark: seed 004's testbench at scale — one configuration, the whole scenario, memory.

``run("full")`` prints, on this machine:

1. one full-scale configuration — one manifold (p_result 1.00, 60 000 × 50, ~16.8 M events),
   all six strategies at one budget, generation included — on two worker processes
   (target ≤ 15 s), with events/s and windows/s;
2. where one block's time goes, in this process: generate, index the block, project all its
   sessions (ms per strategy);
3. the whole ``testbench`` scenario with ``jobs=2`` (target ≤ 5 min) and its judgement lines;
4. peak memory, ``ru_maxrss`` of this process and of the largest worker (target ≤ 8 GiB in all).

Any other scale runs the same at the quick scale. ``run`` returns the lines and ``turncheck
bench testbench`` prints them; timings are never written into result files.
"""

from __future__ import annotations

import gc
import resource
import time

from turncheck.models.block_projection import BlockProjector
from turncheck.models.cost import EstimateCost
from turncheck.models.projector import compared_strategies
from turncheck.models.report import Aggregate
from turncheck.models.workload import generate_block
from turncheck.scenarios.base import no_progress
from turncheck.scenarios.testbench import (
    ManifoldPlan,
    TestbenchParams,
    plan_manifolds,
    run_manifolds,
    self_check_plan,
)
from turncheck.sim.executor import LocalExecutor

JOBS = 2


def _peak_mib() -> tuple[float, float]:
    """Peak resident set of this process and of the largest finished child, in MiB (Linux KiB)."""
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, child


def _block_breakdown(params: TestbenchParams) -> list[str]:
    """Generate, index and project one block in this process, each timed on its own."""
    workload = params.workload(1.0)
    cost = EstimateCost(params.ratio)
    t0 = time.perf_counter()
    cols = generate_block(workload, 0)
    t1 = time.perf_counter()
    enabled = gc.isenabled()
    gc.disable()
    try:
        projector = BlockProjector(cols)
        projector.cost_sums(cost)
        t2 = time.perf_counter()
        per: dict[str, float] = {}
        for s in compared_strategies():
            started = time.perf_counter()
            projector.aggregate(s, params.budget, cost, Aggregate(params.budget))
            per[s] = (time.perf_counter() - started) * 1e3
    finally:
        if enabled:
            gc.enable()
    n = cols.sessions
    return [
        f"  one block in one process ({n} sessions, {len(cols):,} events): generate {(t1 - t0) * 1e3:.0f} ms "
        f"({len(cols) / (t1 - t0):,.0f} events/s), index the block (pairs, turns, safe cuts, costs) "
        f"{(t2 - t1) * 1e3:.0f} ms",
        "  project + aggregate all its sessions, ms per strategy: "
        + ", ".join(f"{s} {v:.1f}" for s, v in per.items()),
    ]


def run(scale: str = "full") -> list[str]:
    """Run the benchmark; returns the lines to print."""
    from turncheck.scenarios.testbench import run as run_testbench

    params = TestbenchParams(scale="full" if scale == "full" else "quick", jobs=JOBS)
    lines: list[str] = []

    def say(text: str) -> None:
        lines.append(text)

    plan = ManifoldPlan(1.0, params.workload(1.0), ((params.ratio, params.budget),))
    t0 = time.perf_counter()
    (one,) = run_manifolds([plan], LocalExecutor(JOBS), no_progress)
    wall = time.perf_counter() - t0
    events = int(one.generator_figures()["events"])
    windows = sum(a.windows for a in one.aggregates.values())
    say(f"testbench, one configuration ({params.n_sessions:,} sessions × {params.turns} turns, p_result 1.00, "
        f"budget {params.budget}, M0–M5, generation included), --jobs {JOBS}: {wall:.2f} s "
        f"(target ≤ 15 s at full scale)")  # fmt: skip
    say(
        f"  {events:,} events = {events / wall:,.0f} events/s; {windows:,} windows = {windows / wall:,.0f} windows/s"
    )
    for line in _block_breakdown(params):
        say(line)

    t0 = time.perf_counter()
    result = run_testbench(params, no_progress)
    wall = time.perf_counter() - t0
    plans = plan_manifolds(params)
    n = params.n_sessions
    windows = n * (sum(len(p.keys()) for p in plans) + len(self_check_plan(plans).keys()))
    events = sum(int(str(e)) for e in result.table("manifolds").column("events"))
    checked = int(str(result.table("selfcheck").column("events")[0]))
    generated = events + 2 * checked  # the recheck and the generation-only self-check run
    say(f"testbench, whole scenario ({params.scale}, {len(result.tables)} tables), --jobs {JOBS}: {wall:.1f} s "
        f"(target ≤ 300 s at full scale)")  # fmt: skip
    say(f"  {generated:,} events generated = {generated / wall:,.0f} events/s; {windows:,} windows projected "
        f"= {windows / wall:,.0f} windows/s")  # fmt: skip
    for j in result.judgements:
        say(f"  {j.line()}")
    me, child = _peak_mib()
    say(f"peak memory (ru_maxrss): this process {me:,.0f} MiB, largest worker {child:,.0f} MiB; "
        f"bound for --jobs {JOBS}: {me + JOBS * child:,.0f} MiB (target ≤ 8192 MiB)")  # fmt: skip
    return lines
