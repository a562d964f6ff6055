"""Scenario ``cost-trigger``: how far the real cost runs past the window when the trigger's count is off.

The ``cost-trigger`` model (:mod:`models.cost_trigger`) explored exhaustively for every estimate
ratio × frame of the grid, costs in percent of the window (window 100, threshold 80 — cherry-studio's
``CONTEXT_COMPACT_TRIGGER_RATIO = 0.8`` — appends of 1 to 10, a summary of 20). Each row reads two
explorations of the same model: with the window (does every request fit, does the summarizer's, is
the context compacted, does the trigger loop — and the shortest run that breaks the first
invariant), and with a provider that refuses nothing (``window × 100``): the largest real cost of
any request the agent sends there is ``reach``, the real cost the trigger lets the context grow to
before it fires. An exact count with no frame keeps ``reach`` at the threshold; an undercount
``r`` lets it reach about ``threshold / r``; a frame adds itself on top.

The second table lists the undercounts the threads measured, as each thread states them, as ranges
of the estimate ratio (estimate ÷ provider count); the plot marks them. The sweep is exhaustive and
uses no randomness: the same parameters give byte-identical result files (the seed is recorded as 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from turncheck.models.cost_trigger import (
    NO_COMPACTION_LOOP,
    OVER_THRESHOLD_COMPACTED,
    REQUEST_FITS,
    SUMMARIZER_FITS,
    CostTriggerModel,
)
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
from turncheck.sim.exploration import Exploration
from turncheck.sim.explorer import explore

UNREFUSED = 100
"""The provider that refuses nothing: its window is this many times the real one."""


@dataclass(frozen=True)
class Undercount:
    """A thread's measured ratio of the trigger's count to the provider's, as a range."""

    source: str
    low: float
    high: float
    measured: str


MEASURED: tuple[Undercount, ...] = (
    Undercount("openclaw #111886", 1 / 7, 1 / 3, "transcript estimate undershoots real context 3-7x"),
    # the reporter's correction: the first "~4x" compared tokenx with a total that counts prompt-cache
    # reads; against the freshly sent (uncached) input, tokenx's 63,792 over the provider's 54,441
    Undercount("cherry-studio #18351", 63792 / 54441, 63792 / 54441,
               "corrected: tokenx 63,792 vs fresh noCache 54,441, ~+17% off (over)"),  # fmt: skip
    Undercount("pi-observational-memory PR #40", 0.54, 0.81, "19-46% undercount vs. actual provider usage"),
    Undercount("openclaw #136248", 2.6, 3.0, "estimate ~2.6-3x the backend-reported usage.input (over)"),
)


@dataclass(frozen=True)
class CostTriggerParams:
    estimates: tuple[float, ...] = (
        0.1, 0.14, 0.2, 0.25, 0.3, 0.33, 0.4, 0.5, 0.54, 0.6, 0.7, 0.75, 0.81, 0.9, 0.95, 1.0, 1.5, 2.0, 3.0,
    )  # fmt: skip
    frames: tuple[int, ...] = (0, 10, 25)
    window: int = 100
    threshold: int = 80
    turn: int = 10
    summary: int = 20
    summarizer: int = 0

    def __post_init__(self) -> None:
        require(bool(self.estimates), "parameter estimates: give at least one ratio")
        require(
            all(0 < e <= 100 for e in self.estimates),
            f"parameter estimates must be in (0, 100], got {self.estimates}",
        )
        require(
            bool(self.frames) and all(f >= 0 for f in self.frames),
            f"parameter frames must be >= 0, got {self.frames}",
        )
        require(1 <= self.window <= 1000, f"parameter window must be in [1, 1000], got {self.window}")
        require(0 <= self.threshold, f"parameter threshold must be >= 0, got {self.threshold}")
        require(1 <= self.turn <= self.window, f"parameter turn must be in [1, window], got {self.turn}")
        require(self.summary >= 0 and self.summarizer >= 0, "parameters summary and summarizer must be >= 0")

    def model(self, estimate: float, frame: int, window: int | None = None) -> CostTriggerModel:
        return CostTriggerModel(
            estimate,
            frame,
            False,
            window or self.window,
            self.threshold,
            self.turn,
            self.summary,
            self.summarizer,
        )


COLUMNS = (
    "estimate", "frame", "reach", "reach_ratio", "peak_sent", "request_fits", "summarizer_fits",
    "compacted", "no_loop", "shortest_break", "states",
)  # fmt: skip

READING = (
    "reach: the largest real cost of a request the agent sends when the "
    "provider refuses nothing — where the trigger lets the context grow before it fires (reach_ratio = "
    "reach / window). With the window: peak_sent, the largest request sent (refused or not); request_fits, "
    "summarizer_fits (always), compacted (over the threshold ⇒ eventually under it) and no_loop (after a "
    "compaction a request goes through), each checked over every run; shortest_break, the steps of the "
    "shortest run that breaks request-fits-window or summarizer-request-fits (- when neither breaks)."
)


def reading(window: int) -> str:
    """The sweep table's note: the costs are the model's units, percent of the window only when it is 100."""
    unit = "percent of the window" if window == 100 else f"the model's units (window {window})"
    return f"Costs in {unit}. " + READING


def _holds(result: Exploration, name: str) -> bool:
    return result.outcome(name).status == "holds"


def run_row(params: CostTriggerParams, estimate: float, frame: int) -> tuple[Cell, ...]:
    """One row: the model with the window, then with a provider that refuses nothing."""
    checked = explore(params.model(estimate, frame), max_states=None)
    free = explore(params.model(estimate, frame, params.window * UNREFUSED), max_states=None)
    if not (checked.exhausted and free.exhausted and _holds(free, REQUEST_FITS)):
        raise AssertionError(
            f"cost-trigger: the exploration at estimate {estimate}, frame {frame} is not exhaustive"
        )
    reach = max(w.value for w in free.worst if w.metric == "request_cost")
    peak = max(w.value for w in checked.worst if w.metric == "request_cost")
    breaks = [checked.outcome(n).depth for n in (REQUEST_FITS, SUMMARIZER_FITS) if not _holds(checked, n)]
    return (
        estimate, frame, reach, round(reach / params.window, 3), peak, _holds(checked, REQUEST_FITS),
        _holds(checked, SUMMARIZER_FITS), _holds(checked, OVER_THRESHOLD_COMPACTED),
        _holds(checked, NO_COMPACTION_LOOP), min(d for d in breaks if d is not None) if breaks else None,
        checked.distinct,
    )  # fmt: skip


def run(params: CostTriggerParams, progress: Progress) -> ScenarioResult:
    cells = [(e, f) for f in params.frames for e in params.estimates]
    rows = []
    progress(0, len(cells))
    for i, (e, f) in enumerate(cells):
        rows.append(run_row(params, e, f))
        progress(i + 1, len(cells))
    table = Table(
        "sweep", "Real cost against the window, per estimate ratio and frame", COLUMNS, tuple(rows), reading(params.window)
    )
    measured = Table(
        "measured",
        "Undercounts the threads measured (estimate ratio = the trigger's count ÷ the provider's)",
        ("source", "low", "high", "measured"),
        tuple((u.source, round(u.low, 3), round(u.high, 3), u.measured) for u in MEASURED),
        "As each thread states it; a ratio above 1 is an overcount (the trigger fires early).",
    )
    return ScenarioResult("cost-trigger", params_dict(params), 0, (table, measured), _judgements(table))


def _judgements(table: Table) -> tuple[Judgement, ...]:
    records = table.records()
    out = []
    exact = [r for r in records if r["estimate"] == 1.0 and r["frame"] == 0]
    if exact:
        r = exact[0]
        ok = all(r[c] is True for c in ("request_fits", "summarizer_fits", "compacted", "no_loop"))
        out.append(Judgement("an exact count and no frame keep every request in the window", ok,
                             f"reach {r['reach']}, every property held over {r['states']} states"))  # fmt: skip
    inside = [r for r in records if r["frame"] == 0 and any(u.low <= float(r["estimate"]) <= u.high  # type: ignore[arg-type]
                                                             for u in MEASURED if u.high < 1)]  # fmt: skip
    if inside:
        broken = [r for r in inside if not (r["request_fits"] and r["summarizer_fits"])]
        out.append(Judgement(
            "every measured undercount, with no frame, lets a request or the summarizer's past the window",
            len(broken) == len(inside),
            ", ".join(f"{r['estimate']}→reach {r['reach']}" for r in inside),
        ))  # fmt: skip
    return tuple(out)


def measured_undercounts(result: ScenarioResult) -> list[dict[str, Any]]:
    """The ``measured`` table's rows (what the plot marks)."""
    return result.table("measured").records()


SCENARIO = register(
    Scenario(
        name="cost-trigger",
        params_type=CostTriggerParams,
        run=run,
        summary="Real cost against the window when the trigger counts an estimate (issue 52): ratio × frame.",
        presets={"quick": {}, "tiny": {"estimates": "0.25,0.5,0.75,1.0,2.0", "frames": "0,25"}},
        order=55,  # after token-estimate: estimated tokens against real ones, then what the trigger does with them
    )
)
