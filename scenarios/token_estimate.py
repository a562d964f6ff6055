"""Scenario ``token-estimate``: seed 004 §10 with real tokens.

The seed estimated tokens from characters (CJK 1.5 chars/token, else 4) and showed that the
overrun ratio and the empty-window rate move when the CJK ratio becomes 2.5, warning that a
real tokenizer "must be re-measured". This scenario re-measures: the p_result 1.00 manifold at
a reduced scale, dressed with real text (English and Chinese prose, JSON tool calls and tool
output, :mod:`scenarios.real_text`), every event also counted with real BPE
(``cl100k_base``, ``o200k_base``, offline, :mod:`models.tokenizer`).

Tables:

* ``strategies`` — each strategy's windows selected under each cost model (the estimator at
  each CJK ratio, each BPE), then measured in real tokens of each encoding: windows over the
  budget as the selector saw them and as they really are, empty windows, orphan results, and
  both overrun ratios. A window the estimator thinks fits but BPE does not is the seed's
  caveat made concrete.
* ``estimator-error`` — per text kind and encoding: events, characters, how many the CJK
  detector flags, real tokens, the estimate at each ratio, and the estimator's relative error
  Σ(estimate − real) / Σ real, plus the mean absolute error per event.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from turncheck.models.cost import CostModel, EstimateCost, placeholder_event
from turncheck.models.events import Event
from turncheck.models.extras import install_hint
from turncheck.models.history import History
from turncheck.models.projector import Window, check_strategy, compared_strategies, project
from turncheck.models.report import Aggregate
from turncheck.models.tokenizer import ENCODINGS, EXTRA, BpeCost, MissingExtra
from turncheck.models.workload import SEED, WorkloadParams, generate_columns
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
from turncheck.scenarios.real_text import TEXT_KINDS, dressed_sessions, kind_of_text, phrasebook

STRATEGY_COLUMNS = (
    "strategy", "selectedBy", "measuredBy", "windows", "overBudget", "overBudgetReal", "empty",
    "orphanRes", "overrun", "overrunReal",
)  # fmt: skip


@dataclass(frozen=True)
class TokenEstimateParams:
    """``sessions`` × ``turns`` of the manifold (seed: 60 000 × 50; default 1/1000 of that)."""

    sessions: int = 60
    turns: int = 50
    budget: int = 4000
    p_result: float = 1.0
    cjk_ratios: tuple[float, ...] = (1.5, 2.5)
    encodings: tuple[str, ...] = ENCODINGS
    strategies: tuple[str, ...] = field(default_factory=compared_strategies)
    seed: int = SEED

    def __post_init__(self) -> None:
        require(self.sessions >= 1, f"parameter sessions must be >= 1, got {self.sessions}")
        require(self.turns >= 1, f"parameter turns must be >= 1, got {self.turns}")
        require(self.budget >= 1, f"parameter budget must be >= 1, got {self.budget}")
        require(0.0 <= self.p_result <= 1.0, f"parameter p_result must be in [0, 1], got {self.p_result}")
        require(
            bool(self.cjk_ratios) and all(r > 0 for r in self.cjk_ratios),
            f"parameter cjk_ratios must be positive ratios, got {self.cjk_ratios}",
        )
        unknown = [e for e in self.encodings if e not in ENCODINGS]
        require(
            bool(self.encodings) and not unknown,
            f"parameter encodings must be among {', '.join(ENCODINGS)}, got {self.encodings}",
        )
        require(bool(self.strategies), "parameter strategies must name at least one strategy")
        for s in self.strategies:
            check_strategy(s, "strategies")


def check(p: TokenEstimateParams) -> None:
    """Before anything runs: tiktoken and Faker are installed (one line naming the extra)."""
    for e in p.encodings:
        BpeCost(e)
    if importlib.util.find_spec("faker") is None:
        raise MissingExtra(
            f"token-estimate needs faker, which is not installed: {install_hint(EXTRA)}"
        )


def selector_name(cost: CostModel) -> str:
    return f"estimate@{cost.cjk_ratio:g}" if isinstance(cost, EstimateCost) else cost.name


def real_cost(h: History, w: Window, bpe: BpeCost) -> int:
    """The window's cost in real tokens: its events (and M2's placeholders) under ``bpe``."""
    p = h.prefix(bpe)
    extra = sum(bpe.event_cost(placeholder_event(h.events[pos])) for pos in w.placeholders)
    return bpe.frame + p[w.end] - p[w.start] + extra


def strategy_rows(
    histories: list[History], p: TokenEstimateParams, selectors: list[CostModel], bpes: list[BpeCost]
) -> list[tuple[Cell, ...]]:
    rows: list[tuple[Cell, ...]] = []
    for name in p.strategies:
        for selector in selectors:
            measures: list[BpeCost] = [selector] if isinstance(selector, BpeCost) else bpes
            windows = [(h, project(h, p.budget, name, selector)) for h in histories]
            agg = Aggregate(p.budget)
            agg.extend(w.report for _, w in windows)
            for bpe in measures:
                real = [real_cost(h, w, bpe) for h, w in windows]
                n = len(real)
                rows.append(
                    (name, selector_name(selector), bpe.name, n, agg["overBudget"],
                     sum(1 for c in real if c > p.budget), agg["empty"], agg["orphanRes"],
                     round(agg.overrun, 6), round(sum(real) / (p.budget * n), 6) if n else 0.0)
                )  # fmt: skip
    return rows


def column_max(rows: list[tuple[Cell, ...]], strategy: str, column: int) -> int | None:
    values = [v for r in rows if r[0] == strategy and isinstance(v := r[column], int)]
    return max(values) if values else None


def error_rows(events: list[Event], ratios: tuple[float, ...], bpes: list[BpeCost]) -> list[tuple[Cell, ...]]:
    estimators = [EstimateCost(cjk_ratio=r) for r in ratios]
    rows: list[tuple[Cell, ...]] = []
    kinds = [kind_of_text(e) for e in events]
    for bpe in bpes:
        for kind in (*TEXT_KINDS, "all"):
            group = [e for e, k in zip(events, kinds, strict=True) if kind == "all" or k == kind]
            real = [bpe.event_cost(e) for e in group]
            total = sum(real)
            chars = sum(e.size for e in group)
            row: list[Cell] = [kind, bpe.name, len(group), chars, sum(e.cjk for e in group), total,
                               round(chars / total, 4) if total else None]  # fmt: skip
            for est in estimators:
                guess = [est.event_cost(e) for e in group]
                row.append(sum(guess))
                row.append(round(100 * (sum(guess) - total) / total, 2) if total else None)
                abs_err = [abs(g - r) / r for g, r in zip(guess, real, strict=True) if r]
                row.append(round(100 * sum(abs_err) / len(abs_err), 2) if abs_err else None)
            rows.append(tuple(row))
    return rows


def error_columns(ratios: tuple[float, ...]) -> tuple[str, ...]:
    cols = ["textKind", "encoding", "events", "chars", "cjkFlagged", "tokens", "charsPerToken"]
    for r in ratios:
        cols += [f"estimate@{r:g}", f"error@{r:g} %", f"meanAbsError@{r:g} %"]
    return tuple(cols)


def run(p: TokenEstimateParams, progress: Progress) -> ScenarioResult:
    bpes = [BpeCost(e) for e in p.encodings]
    selectors: list[CostModel] = [EstimateCost(cjk_ratio=r) for r in p.cjk_ratios] + list(bpes)
    workload = WorkloadParams(sessions=p.sessions, turns=p.turns, seed=p.seed, p_result=p.p_result)
    book = phrasebook(p.seed)
    sessions = list(dressed_sessions(generate_columns(workload), book, p.seed))
    progress(1, 3)
    histories = [History(events, costs=selectors) for events in sessions]
    progress(2, 3)
    rows = strategy_rows(histories, p, selectors, bpes)
    errors = error_rows([e for s in sessions for e in s], p.cjk_ratios, bpes)
    progress(3, 3)
    judgements = [
        Judgement(text, worst == 0, f"max {STRATEGY_COLUMNS[column]} {worst}")
        for strategy, column, text in (
            ("M1", 7, "M1 sends no orphan result under any cost model"),
            ("M5", 4, "M5 stays within the budget as its selector counts it"),
        )
        if (worst := column_max(rows, strategy, column)) is not None
    ]
    tables = (
        Table(
            "strategies",
            f"Selected by an estimate or real tokens, measured in real tokens (budget {p.budget}, "
            f"{p.sessions} sessions × {p.turns} turns, p_result {p.p_result:.2f})",
            STRATEGY_COLUMNS,
            tuple(rows),
            "overBudget/overrun: as the selecting cost model counts; overBudgetReal/overrunReal: the same "
            "windows in real tokens of measuredBy. empty and orphanRes do not depend on the measure.",
        ),
        Table(
            "estimator-error",
            "The estimator against real BPE, per text kind",
            error_columns(p.cjk_ratios),
            tuple(errors),
            "error = Σ(estimate − real) / Σ real (negative: the estimator undercounts); meanAbsError: mean "
            "of |estimate − real| / real per event. cjkFlagged: events the estimator treats as CJK.",
        ),
    )
    return ScenarioResult("token-estimate", params_dict(p), p.seed, tables, tuple(judgements))


SCENARIO = register(
    Scenario(
        name="token-estimate",
        params_type=TokenEstimateParams,
        run=run,
        check=check,
        summary="Seed 004 §10 with real BPE: the estimator at CJK 1.5 and 2.5 against cl100k/o200k counts.",
        presets={"quick": {"sessions": "10", "turns": "20"}, "tiny": {"sessions": "2", "turns": "4"}},
        order=50,
    )
)
