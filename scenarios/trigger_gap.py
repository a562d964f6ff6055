"""Scenario ``trigger-gap``: peak live turns of ``TurnCountTrigger(maxTurns)`` with a gap.

Seed 004 §9: arrivals of at most ``A`` turns per slot (uniform ``0..A``), the trigger reads the
count and deletes ``count_read − maxTurns`` a gap of ``G`` slots later; 200 000 slots per row.
Each row reports the observed peak, peak/maxTurns, the closed-form worst case derived in
:mod:`models.locking` and the seed's own figure. By default the seed's eight rows; giving any of
``writers``, ``gap``, ``max_turns`` runs that one row instead (the others default to the
seed's last row, A=8, G=5, maxTurns=8), which is what a sweep does per cell.

The run is the trigger model's own semantics (:func:`models.trigger.fast_slots`, kept equal to
stepping the model by a test) fed by the same per-slot arrival stream as the SimPy runner.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from turncheck.models.locking import LOCKINGS, worst_case_peak
from turncheck.models.trigger import TriggerParams, fast_slots
from turncheck.scenarios.base import (
    Judgement,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    params_dict,
    register,
    require,
)
from turncheck.sim.simulation import slot_arrivals

LockingName = Literal["none", "mutex", "cas", "append-sync", "trim-to"]

# (maxTurns, A, G) → the seed's measured peak
SEED_ROWS: dict[tuple[int, int, int], int] = {
    (8, 1, 0): 8, (8, 1, 2): 9, (8, 1, 5): 12, (8, 4, 5): 27,
    (8, 8, 0): 8, (8, 8, 2): 23, (8, 8, 5): 47, (16, 8, 5): 54,
}  # fmt: skip
DEFAULT_ROW = (8, 8, 5)


@dataclass(frozen=True)
class TriggerGapParams:
    writers: int | None = None
    gap: int | None = None
    max_turns: int | None = None
    locking: LockingName = "none"
    iterations: int = 200_000
    seed: int = 20261037

    def __post_init__(self) -> None:
        require(
            self.writers is None or self.writers >= 1, f"parameter writers must be >= 1, got {self.writers}"
        )
        require(self.gap is None or self.gap >= 0, f"parameter gap must be >= 0, got {self.gap}")
        require(
            self.max_turns is None or self.max_turns >= 1,
            f"parameter max_turns must be >= 1, got {self.max_turns}",
        )
        require(self.iterations >= 1, f"parameter iterations must be >= 1, got {self.iterations}")
        require(self.locking in LOCKINGS, f"parameter locking: unknown strategy {self.locking!r}")

    def rows(self) -> list[tuple[int, int, int]]:
        """``(maxTurns, A, G)`` of every row to run."""
        if self.writers is None and self.gap is None and self.max_turns is None:
            return list(SEED_ROWS)
        m, a, g = DEFAULT_ROW
        return [(self.max_turns or m, self.writers or a, g if self.gap is None else self.gap)]


def row_seed(seed: int, max_turns: int, writers: int, gap: int) -> int:
    """The arrival stream of one row: a hash of the run seed and the row, so a row's figures do
    not depend on which other rows run with it."""
    text = json.dumps([seed, max_turns, writers, gap])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "big")


def run_row(
    max_turns: int, writers: int, gap: int, locking: str, iterations: int, seed: int
) -> dict[str, object]:
    """One row: the peak over ``iterations`` slots and the closed-form worst case."""
    arrivals = slot_arrivals(writers, iterations, row_seed(seed, max_turns, writers, gap)).tolist()
    run = fast_slots(TriggerParams(writers, gap, max_turns, locking, 0), arrivals)
    worst = worst_case_peak(writers, gap, max_turns, locking)
    return {
        "max_turns": max_turns,
        "writers": writers,
        "gap": gap,
        "locking": locking,
        "iterations": iterations,
        "peak": run.peak,
        "peak_ratio": round(run.peak / max_turns, 3),
        "worst_case": worst,
        "worst_ratio": None if worst is None else round(worst / max_turns, 3),
        "declared_bound": LOCKINGS[locking].declared_bound(writers, gap, max_turns),
        "seed_peak": SEED_ROWS.get((max_turns, writers, gap)) if locking == "none" else None,
        "compactions": run.compactions,
        "retries": run.retries,
        "appends": run.appends,
    }


COLUMNS = (
    "max_turns", "writers", "gap", "locking", "iterations", "peak", "peak_ratio", "worst_case",
    "worst_ratio", "declared_bound", "seed_peak", "compactions", "retries", "appends",
)  # fmt: skip

READING = (
    "Peak live turns over the run vs the closed form of models.locking (none: M + 2·A·G − 1 for G ≥ 1, "
    "M for G = 0). The seed's figures equal M + A·G − 1 for every G > 0 row: its loop never carried one "
    "gap's uncounted turns into the next compaction. Under the SPEC's rule (delete count_read − maxTurns) "
    "that backlog survives until the next act, so peaks run higher; the shape — M at G = 0, growing with "
    "A and G, several times maxTurns at (8, 5) — is the seed's."
)


def run(params: TriggerGapParams, progress: Progress) -> ScenarioResult:
    rows = params.rows()
    records = []
    progress(0, len(rows))
    for i, (m, a, g) in enumerate(rows):
        records.append(run_row(m, a, g, params.locking, params.iterations, params.seed))
        progress(i + 1, len(rows))
    table = Table(
        "peaks",
        "Peak live turns with a check-then-act gap (seed 004 §9)",
        COLUMNS,
        tuple(tuple(r[c] for c in COLUMNS) for r in records),  # type: ignore[misc]
        READING,
    )
    judgements = [
        Judgement(
            "peak within the closed-form worst case",
            all(r["worst_case"] is None or r["peak"] <= r["worst_case"] for r in records),  # type: ignore[operator]
            ", ".join(f"({r['writers']},{r['gap']})→{r['peak']}≤{r['worst_case']}" for r in records),
        )
    ]
    zero_gap = [r for r in records if r["gap"] == 0]
    if zero_gap:
        judgements.append(
            Judgement(
                "no gap, no overshoot",
                all(r["peak"] <= r["max_turns"] for r in zero_gap),  # type: ignore[operator]
                ", ".join(f"(A={r['writers']}, G=0)→{r['peak']}" for r in zero_gap),
            )
        )
    return ScenarioResult("trigger-gap", params_dict(params), params.seed, (table,), tuple(judgements))


SCENARIO = register(
    Scenario(
        name="trigger-gap",
        params_type=TriggerGapParams,
        run=run,
        summary="Peak live turns of TurnCountTrigger(maxTurns) with a check-then-act gap (seed 004 §9).",
    )
)
