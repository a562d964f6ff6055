"""Scenario ``real-locking``: the trigger model against real databases, strategy by strategy.

For every strategy and every (writers, gap) cell, ``turncheck stress`` runs for ``seconds``
against each store (SQLite always; PostgreSQL through ``dsn``, or a throw-away server started
here when the binaries exist — otherwise a judgement line says it was skipped and why). Next to
each measured peak stand the model's figures for the same run: one model slot is one gap, and
``A`` — turns that can land in a gap — is what the run measured (one more than the most appends
committed between a read and its act). ``worst_case`` is the closed form
(:func:`worst_case_peak`) at that ``A``, ``model_peak`` the trigger model driven at saturation
(every writer appending in every slot, :func:`fast_slots`) for ``slots`` slots.

A measured peak above ``worst_case`` is a FAIL line naming the run: either the model or the
store code is wrong. Unlike every other scenario, the measured columns are **not reproducible**
— they are what the operating system's scheduling gave on this run; the model columns are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

from turncheck.models.locking import ALWAYS_BOUNDED, LOCKING_NAMES, LOCKINGS, worst_case_peak
from turncheck.models.trigger import TriggerParams
from turncheck.models.trigger_slots import fast_slots
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
from turncheck.sim.stress.history import StressReport, check_run
from turncheck.sim.stress.pg_server import PostgresUnavailable, throwaway_server
from turncheck.sim.stress.runner import StressParams, run_stress
from turncheck.sim.stress.stores import StoreSpec

STORES = ("sqlite", "postgres")
COLUMNS = (
    "locking", "store", "writers", "gap_ms", "max_turns", "turns_per_gap", "worst_case", "model_peak",
    "measured_peak", "within_worst_case", "lost", "appends", "throughput", "p99_ms", "retries", "verdict",
)  # fmt: skip


@dataclass(frozen=True)
class RealLockingParams:
    locking: tuple[str, ...] = LOCKING_NAMES
    stores: tuple[str, ...] = STORES
    writers: tuple[int, ...] = (4,)
    gap_ms: tuple[int, ...] = (50,)
    max_turns: int = 8
    seconds: float = 1.5
    slots: int = 200
    dsn: str = ""
    seed: int = 20261313

    def __post_init__(self) -> None:
        for s in self.locking:
            require(
                s in LOCKINGS, f"parameter locking: unknown strategy {s!r} (known: {', '.join(LOCKINGS)})"
            )
        require(bool(self.stores) and all(s in STORES for s in self.stores),
                f"parameter stores: each must be one of {', '.join(STORES)}")  # fmt: skip
        require(bool(self.writers) and min(self.writers) >= 1, "parameter writers: each must be >= 1")
        require(bool(self.gap_ms) and min(self.gap_ms) >= 0, "parameter gap_ms: each must be >= 0")
        require(self.max_turns >= 1, f"parameter max_turns must be >= 1, got {self.max_turns}")
        require(0 < self.seconds <= 600, f"parameter seconds must be in (0, 600], got {self.seconds}")
        require(self.slots >= 10, f"parameter slots must be >= 10, got {self.slots}")


def model_peak(turns_per_gap: int, max_turns: int, strategy: str, slots: int) -> int:
    """The trigger model at saturation with one slot per gap and ``turns_per_gap`` writers."""
    config = TriggerParams(writers=turns_per_gap, gap=1, max_turns=max_turns, locking=strategy, turns=0)
    return fast_slots(config, [turns_per_gap] * slots).peak


def row(p: RealLockingParams, report: StressReport) -> tuple[Cell, ...]:
    tpg = report.turns_per_gap
    worst = worst_case_peak(tpg, 1 if report.gap_ms > 0 else 0, p.max_turns, report.locking)
    return (
        report.locking, report.store, report.writers, report.gap_ms, p.max_turns, tpg, worst,
        model_peak(tpg, p.max_turns, report.locking, p.slots), report.peak,
        worst is None or report.peak <= worst, report.lost, report.appends, report.throughput, report.p99_ms,
        report.retries, "ok" if report.ok else "violated",
    )  # fmt: skip


@contextmanager
def _targets(p: RealLockingParams, scratch: Path, skipped: list[str]) -> Iterator[dict[str, str]]:
    with ExitStack() as stack:
        targets = {}
        if "sqlite" in p.stores:
            targets["sqlite"] = str(scratch / "session.db")
        if "postgres" in p.stores:
            if p.dsn:
                targets["postgres"] = p.dsn
            else:
                try:
                    targets["postgres"] = stack.enter_context(throwaway_server())
                except PostgresUnavailable as exc:
                    skipped.append(f"postgres: {exc}")
        yield targets


READING = (
    "One model slot = one gap; turns_per_gap = A, measured (1 + the most appends committed between a read "
    "and its act). worst_case = the closed form at that A (none M+2A−1, trim-to M+A, mutex M+1, append-sync "
    "M, cas unbounded when A ≥ 2); model_peak = the trigger model at saturation. measured_peak is exact, "
    "replayed from the store's journal, and varies from run to run; verdict is the stress checker's "
    "(none and cas are held to maxTurns and break it)."
)


def judge(rec: list[dict[str, Cell]], skipped: list[str]) -> tuple[Judgement, ...]:
    """The scenario's judgement lines over its table's records, each saying what it can catch.

    For ``mutex`` and ``append-sync`` the bound (M+1, M) is fixed before the run: a measured peak
    above it is a real failure of the store or of the strategy. For ``none`` and ``trim-to`` the
    closed form is computed from ``turns_per_gap``, measured in the same journal, so "peak ≤ closed
    form" only checks the replay's consistency; what *can* fail for them is the model's
    prediction that without a lock the log overshoots maxTurns once appends land in a gap."""
    above = [r for r in rec if r["worst_case"] is not None and r["measured_peak"] > r["worst_case"]]  # type: ignore[operator]
    fixed = [r for r in rec if r["locking"] in ALWAYS_BOUNDED]
    racy = [r for r in rec if r["locking"] in ("none", "trim-to") and r["turns_per_gap"] >= 2]  # type: ignore[operator]
    judgements = [
        Judgement(
            "measured peaks within the model's worst case (for none and trim-to the worst case is "
            "computed from the measured turns per gap: a consistency check, not a prediction)",
            not above,
            "; ".join(
                f"{r['store']} {r['locking']} W={r['writers']} gap={r['gap_ms']} ms: measured "
                f"{r['measured_peak']} > worst case {r['worst_case']}"
                for r in above
            )
            or f"{len(rec)} runs, every measured peak ≤ the closed form",
        ),  # fmt: skip
        Judgement(
            "nothing acknowledged lost",
            all(r["lost"] == 0 for r in rec),
            ", ".join(f"{r['store']} {r['locking']}: {r['lost']} lost" for r in rec if r["lost"])
            or f"{len(rec)} runs",
        ),
        Judgement(
            "bounded strategies hold their bound on real stores (fixed before the run: M+1, M)",
            all(r["verdict"] == "ok" and r not in above for r in fixed),
            ", ".join(f"{r['store']} {r['locking']} peak {r['measured_peak']}" for r in fixed)
            or "no bounded strategy run",
        ),
        Judgement(
            "none and trim-to overshoot maxTurns once turns land in a gap (the model's prediction)",
            all(r["measured_peak"] > r["max_turns"] for r in racy),  # type: ignore[operator]
            ", ".join(
                f"{r['store']} {r['locking']} peak {r['measured_peak']} "
                f"{'>' if r['measured_peak'] > r['max_turns'] else '≤'} {r['max_turns']}"  # type: ignore[operator]
                for r in racy
            )
            or "no none or trim-to run with two or more turns per gap",
        ),
    ]
    for reason in skipped:
        judgements.append(Judgement("store skipped", True, reason))
    return tuple(judgements)


def run(params: RealLockingParams, progress: Progress) -> ScenarioResult:
    cells = [(s, w, g) for s in params.locking for w in params.writers for g in params.gap_ms]
    rows: list[tuple[Cell, ...]] = []
    skipped: list[str] = []
    with (
        TemporaryDirectory(prefix="turncheck-real-locking-") as tmp,
        _targets(params, Path(tmp), skipped) as targets,
    ):
        total = len(cells) * max(1, len(targets))
        progress(0, total)
        k = 0
        for store, target in targets.items():
            for s, w, g in cells:
                sp = StressParams(StoreSpec(store, target), s, writers=w, gap_ms=float(g),
                                  max_turns=params.max_turns, seconds=params.seconds, seed=params.seed)  # fmt: skip
                report = check_run(run_stress(sp, Path(tmp) / f"h-{store}-{s}-{w}-{g}"))
                rows.append(row(params, report))
                k += 1
                progress(k, total)
    rows.sort(key=lambda r: (LOCKING_NAMES.index(str(r[0])), str(r[1]), r[2], r[3]))
    table = Table("real-locking", "Model against real stores: worst case, model peak, measured peak",
                  COLUMNS, tuple(rows), READING)  # fmt: skip
    judgements = judge(table.records(), skipped)
    return ScenarioResult("real-locking", params_dict(params), params.seed, (table,), judgements)


SCENARIO = register(
    Scenario(
        name="real-locking",
        params_type=RealLockingParams,
        run=run,
        summary="Each locking strategy on SQLite and PostgreSQL: measured peak vs the model's worst case.",
        presets={
            "quick": {"stores": "sqlite", "seconds": "1.2"},
            "tiny": {"stores": "sqlite", "seconds": "0.6"},
        },
        order=100,
    )
)
