"""Scenario ``locking``: what each locking strategy guarantees, and what it costs.

Every strategy × (writers A, gap G) runs in the SimPy runner (:mod:`sim.simulation`) on the
trigger model: turns arrive (uniform ``0..A`` per slot, or Poisson at ``rate`` turns per writer
per slot), writers append when the model lets them, the compactor acts when due. Per run: the
observed peak against the strategy's declared bound and the closed-form worst case; append
latency (slots from arrival to append) p50/p99/max; throughput (appended / arrived turns); the
compactor's acts, failed commits (``cas`` retries) and longest run of consecutive failures —
``starved`` when it failed :data:`STARVED_STREAK` times in a row, i.e. went that many gaps without
progress while live turns kept growing. Both peak readings are reported: ``peak`` (instantaneous,
the headline) against ``worst_case``, and ``post_peak`` (live turns right after a compaction, the
seed's reading) against ``post_worst``; ``bound`` says whether the declared bound ``holds``, is
``broken``, or whether the strategy is ``unbounded`` (declares none). Next to the peaks, the two
waits the liveness properties are about, in slots (:class:`sim.simulation.SimulationResult`):
``compaction_wait``, the longest a due compaction waited for its delete, and ``writer_wait``, the
longest a writer was kept from a waiting turn. After every turn the live turns are projected with the
projector core (``budget``, ``strategy``) and the windows over budget counted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from turncheck.models.locking import (
    ALWAYS_BOUNDED,
    LOCKING_NAMES,
    LOCKINGS,
    post_compaction_peak,
    worst_case_peak,
)
from turncheck.models.projector import check_strategy
from turncheck.models.trigger import TriggerModel
from turncheck.scenarios.base import (
    Cell,
    Judgement,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    params_dict,
    register,
    require,
)
from turncheck.sim.simulation import ARRIVALS, RunSpec, simulate

STARVED_STREAK = 10

COLUMNS = (
    "locking", "writers", "gap", "max_turns", "peak", "declared_bound", "worst_case", "within_bound",
    "latency_p50", "latency_p99", "latency_max", "throughput", "compactions", "retries",
    "max_retry_streak", "starved", "final_live", "requests", "over_budget", "post_peak", "post_worst",
    "bound", "compaction_wait", "writer_wait",
)  # fmt: skip


@dataclass(frozen=True)
class LockingParams:
    locking: tuple[str, ...] = LOCKING_NAMES
    writers: tuple[int, ...] = (1, 4, 8)
    gap: tuple[int, ...] = (0, 2, 5)
    max_turns: int = 8
    slots: int = 2000
    arrivals: Literal["slots", "poisson"] = "slots"
    rate: float = 0.25
    budget: int = 4000
    strategy: str = "M1"
    seed: int = 20261037

    def __post_init__(self) -> None:
        require(len(self.locking) > 0, "parameter locking must name at least one strategy")
        for s in self.locking:
            require(
                s in LOCKINGS, f"parameter locking: unknown strategy {s!r} (known: {', '.join(LOCKINGS)})"
            )
        require(
            len(self.writers) > 0 and all(w >= 1 for w in self.writers),
            "parameter writers: each must be >= 1",
        )
        require(bool(self.gap) and min(self.gap) >= 0, "parameter gap: each must be >= 0")
        require(self.max_turns >= 1, f"parameter max_turns must be >= 1, got {self.max_turns}")
        require(self.slots >= 1, f"parameter slots must be >= 1, got {self.slots}")
        require(self.arrivals in ARRIVALS, f"parameter arrivals must be one of {', '.join(ARRIVALS)}")
        require(self.rate >= 0, f"parameter rate must be >= 0, got {self.rate}")
        require(self.budget >= 0, f"parameter budget must be >= 0 (0: no projection), got {self.budget}")
        check_strategy(self.strategy)


def run_seed(seed: int, writers: int, gap: int) -> int:
    """One (A, G)'s arrival stream, shared by every strategy so they face the same load."""
    return int.from_bytes(hashlib.sha256(json.dumps([seed, writers, gap]).encode()).digest()[:7], "big")


def run_cell(p: LockingParams, strategy: str, writers: int, gap: int) -> tuple[Cell, ...]:
    model = TriggerModel(writers, gap, p.max_turns, strategy, turns=0)
    spec = RunSpec(
        slots=p.slots, arrivals=p.arrivals, rate=p.rate * writers, seed=run_seed(p.seed, writers, gap),
        budget=p.budget, strategy=p.strategy,
    )  # fmt: skip
    r = simulate(model, spec)
    declared = LOCKINGS[strategy].declared_bound(writers, gap, p.max_turns)
    worst = worst_case_peak(writers, gap, p.max_turns, strategy)
    proj = r.projection
    return (
        strategy, writers, gap, p.max_turns, r.peak, declared, worst,
        None if declared is None else r.peak <= declared,
        r.latency_p50, r.latency_p99, r.latency_max, round(r.throughput, 4), r.compactions, r.retries,
        r.max_retry_streak, r.max_retry_streak >= STARVED_STREAK, r.final_live,
        int(proj.get("windows", 0)), int(proj.get("overBudget", 0)),
        r.post_compaction_peak, post_compaction_peak(writers, gap, p.max_turns, strategy),
        bound_verdict(declared, r.peak), r.compaction_wait_max, r.writer_wait_max,
    )  # fmt: skip


def bound_verdict(declared: int | None, peak: int) -> str:
    """``holds`` / ``broken`` against the declared bound, ``unbounded`` when there is none — a
    strategy that promises nothing is never reported as meeting its promise."""
    if declared is None:
        return "unbounded"
    return "holds" if peak <= declared else "broken"


READING = (
    "Declared bound: mutex M+1, append-sync M, trim-to M+A·G (bounded arrivals only), none and cas none. "
    "Latency in slots from arrival to append; throughput = appended / arrived turns. A trigger that "
    "compacts back to exactly maxTurns fires again on the next append, so once the log is full every "
    "append under mutex or append-sync waits behind a G-slot compaction: the bound is bought with "
    "throughput (one turn per G slots). cas keeps appends free but its commit fails whenever a turn "
    "lands in the gap; under contention it starves and live turns grow without bound. Waits in slots: "
    "compaction_wait from the compactor's being due to its delete (a starving one waits to the end of "
    "the run), writer_wait from a writer's finding a turn it may not take to its next append."
)


def run(params: LockingParams, progress: Progress) -> ScenarioResult:
    cells = [(s, a, g) for s in params.locking for a in params.writers for g in params.gap]
    rows = []
    progress(0, len(cells))
    for i, (s, a, g) in enumerate(cells):
        rows.append(run_cell(params, s, a, g))
        progress(i + 1, len(cells))
    table = Table("locking", "Locking strategies: guaranteed bound and cost", COLUMNS, tuple(rows), READING)
    rec = table.records()
    bounded = [r for r in rec if r["declared_bound"] is not None]
    judgements = (
        Judgement(
            "declared bounds hold",
            all(r["within_bound"] for r in bounded),
            ", ".join(
                f"{r['locking']}(A={r['writers']},G={r['gap']}) {r['peak']}≤{r['declared_bound']}"
                for r in bounded
                if r["locking"] in ALWAYS_BOUNDED
            )
            or "no bounded strategy run",
        )
        if not [r for r in rec if r["bound"] == "unbounded"]
        else Judgement(
            "declared bounds hold",
            all(r["within_bound"] for r in bounded),
            f"{len(bounded)} runs with a declared bound hold it; unbounded (declare no bound, never "
            f"counted as met): {', '.join(sorted({str(r['locking']) for r in rec if r['bound'] == 'unbounded'}))}",
        ),  # fmt: skip
        Judgement(
            "peaks within the closed-form worst case",
            all(r["peak"] <= r["worst_case"] for r in rec if r["worst_case"] is not None),  # type: ignore[operator]
            f"{sum(r['worst_case'] is not None for r in rec)} bounded runs; unbounded (not counted as met): "
            + (
                ", ".join(
                    f"{r['locking']}(A={r['writers']},G={r['gap']})" for r in rec if r["worst_case"] is None
                )
                or "none"
            ),
        ),  # fmt: skip
        Judgement(
            "post-compaction peaks within their closed form",
            all(r["post_peak"] <= r["post_worst"] for r in rec),  # type: ignore[operator]
            f"{len(rec)} runs",
        ),
    )
    return ScenarioResult("locking", params_dict(params), params.seed, (table,), judgements)


SCENARIO = register(
    Scenario(
        name="locking",
        params_type=LockingParams,
        run=run,
        summary="Each locking strategy × (writers, gap): peak vs bound, latency, throughput, retries.",
        presets={"quick": {"slots": "300"}, "tiny": {"slots": "40", "writers": "1,4", "gap": "0,2"}},
        order=20,
    )
)
