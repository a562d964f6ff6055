"""The testbench: one configuration end to end against generating its events alone.

turncheck: :func:`scenarios.testbench.run_blocks` over every block of the clean manifold
(p_result 1.00) — generate, index each block, project M0–M5 for all its sessions at one budget
and aggregate.
Ceiling: the same blocks generated and self-checked, nothing projected (``project=False``) —
the events must exist before anything can be projected. One process, interleaved rounds.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.models.workload import blocks
from turncheck.scenarios.testbench import BlockTask, ManifoldPlan, TestbenchParams, run_blocks


def _blocks(plan: ManifoldPlan, project: bool) -> Callable[[], object]:
    n = len(blocks(plan.workload))

    def run() -> object:
        return run_blocks(BlockTask(plan, 0, n, project))

    return run


def compare(scale: str) -> list[Comparison]:
    params = TestbenchParams(scale="full" if scale == "full" else "quick")
    plan = ManifoldPlan(1.0, params.workload(1.0), ((params.ratio, params.budget),))
    n = len(blocks(plan.workload))
    events = sum(f.events for f in run_blocks(BlockTask(plan, 0, n, False)).figures)
    measured = interleave(
        [
            Contender(
                "one configuration (generate, index, M0–M5, aggregate)",
                "turncheck",
                _blocks(plan, True),
                events,
            ),
            Contender("generation only, same blocks", "ceiling", _blocks(plan, False), events),
        ],  # fmt: skip
        3,
    )
    return [
        Comparison(
            f"testbench, one configuration: {params.n_sessions:,} sessions × {params.turns} turns, "
            f"budget {params.budget}, one process",
            "µs per event",
            1e6,
            measured,
            target="≤ 2.5× the generation-only time",
        )
    ]
