"""Scenario ``peers``: the trimmers people already use, next to M0–M5, on the seed's manifolds.

Seed 004's three manifolds (``p_result`` 1.00 / 0.97 / 0.90) at a reduced scale, dressed with
real text (:mod:`scenarios.real_text`), one window per session at its end (as the seed does),
every strategy under one cost model (default ``bpe:o200k_base``, real tokens). Each peer runs
the library itself (:mod:`models.peers`); a peer whose choice is not a suffix is judged on
exactly what it sends.

Tables:

* ``peers`` — per strategy and manifold (``p_result``): the structural counters summed over windows
  (``orphanRes`` and the windows that have one, ``orphanCall``, ``pairSplit``), windows over budget and empty, the overrun
  ratio Σ keptCost / (budget × windows), the largest window, and the peers' own departures
  from a suffix: windows with messages dropped inside (``nonSuffix``), shortened messages
  (``shortened``), and windows returned untrimmed after a swallowed error (``untrimmed``).
* ``oversized`` — what each strategy does when the newest turn alone exceeds the budget: every
  session is projected again with the budget set to half its newest turn's cost, and each
  window is classed as empty, part of the newest turn, the whole newest turn, or more.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turncheck.models.cost import COST_MODELS, CostModel, make_cost
from turncheck.models.history import History
from turncheck.models.peers import PEERS
from turncheck.models.peers.selection import PeerWindow
from turncheck.models.projector import PROJECTORS, Window, check_strategy, project
from turncheck.models.report import Aggregate
from turncheck.models.tokenizer import ENCODINGS, EXTRA, MissingExtra
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
from turncheck.scenarios.real_text import Phrasebook, dressed_sessions, phrasebook

STRATEGIES = (*PROJECTORS, *PEERS)
LIBRARY = {
    "peer:langchain": "langchain_core",
    "peer:langchain-human": "langchain_core",
    "peer:llamaindex": "llama_index",
    "peer:litellm": "litellm",
    "peer:openai-agents": "agents",
}
MANIFOLDS = (1.0, 0.97, 0.90)
PEER_COLUMNS = (
    "strategy", "p_result", "windows", "orphanRes", "orphanResWindows", "orphanCall", "pairSplit", "overBudget", "empty",
    "overrun", "maxCost", "nonSuffix", "shortened", "untrimmed",
)  # fmt: skip
OVERSIZED_COLUMNS = (
    "strategy", "windows", "empty", "partOfNewestTurn", "wholeNewestTurn", "moreThanNewestTurn",
    "overBudget", "orphanRes", "orphanResWindows", "orphanCall", "shortened", "untrimmed", "behaviour",
)  # fmt: skip


@dataclass(frozen=True)
class PeersParams:
    """``sessions`` per manifold and ``turns`` per session (reduced from 60 000 × 50: litellm
    re-tokenizes its kept messages for every older message, ~0.5 s per 20-turn window)."""

    sessions: int = 20
    turns: int = 20
    budget: int = 4000
    cost: str = "bpe:o200k_base"
    manifolds: tuple[float, ...] = MANIFOLDS
    strategies: tuple[str, ...] = STRATEGIES
    p_parallel: float = 0.0
    seed: int = SEED

    def __post_init__(self) -> None:
        require(self.sessions >= 1, f"parameter sessions must be >= 1, got {self.sessions}")
        require(self.turns >= 1, f"parameter turns must be >= 1, got {self.turns}")
        require(self.budget >= 1, f"parameter budget must be >= 1, got {self.budget}")
        require(bool(self.manifolds), "parameter manifolds must name at least one p_result")
        require(
            all(0.0 <= m <= 1.0 for m in self.manifolds),
            f"parameter manifolds must be probabilities in [0, 1], got {self.manifolds}",
        )
        require(bool(self.strategies), "parameter strategies must name at least one strategy")
        for s in self.strategies:  # ours, a peer, or the user's own (models.user_code)
            check_strategy(s, "strategies")
        require(
            0.0 <= self.p_parallel <= 1.0, f"parameter p_parallel must be in [0, 1], got {self.p_parallel}"
        )
        costs = (*COST_MODELS, *(f"bpe:{e}" for e in ENCODINGS))
        require(self.cost in costs, f"parameter cost must be one of {', '.join(costs)}, got {self.cost!r}")


def check(p: PeersParams) -> None:
    """Before anything runs: the optional libraries this run needs are installed."""
    make_cost(p.cost)  # a BPE cost model without tiktoken is refused here, naming the extra
    needed = {"faker": "faker"} | {LIBRARY[s]: s for s in p.strategies if s in LIBRARY}
    for module, user in needed.items():
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(
                f"{user} needs {module}, which is not installed: pip install 'turncheck[{EXTRA}]'"
            )


def manifold_histories(p: PeersParams, p_result: float, cost: CostModel, book: Phrasebook) -> list[History]:
    """The manifold's sessions, dressed with real text, indexed under ``cost``."""
    workload = WorkloadParams(
        sessions=p.sessions, turns=p.turns, seed=p.seed, p_result=p_result, p_parallel=p.p_parallel
    )
    return [
        History(events, costs=(cost,))
        for events in dressed_sessions(generate_columns(workload), book, p.seed)
    ]


@dataclass
class PeerTally:
    """A strategy's aggregate plus the peers' departures from a suffix."""

    agg: Aggregate
    non_suffix: int = 0
    shortened: int = 0
    untrimmed: int = 0

    def add(self, w: Window) -> None:
        self.agg.add(w.report)
        if isinstance(w, PeerWindow):
            self.non_suffix += int(bool(w.dropped_inside))
            self.shortened += len(w.shortened)
            self.untrimmed += int(w.untrimmed_on_error)


def newest_turn_start(h: History) -> int:
    return h.seg_starts[-1] if h.seg_starts else 0


def outcome(h: History, w: Window) -> str:
    """Class of a window relative to the newest turn ``[t0, n)``."""
    t0, n = newest_turn_start(h), len(h)
    if w.empty:
        return "empty"
    if w.start < t0:
        return "moreThanNewestTurn"
    sent = len(w.events) - len(w.placeholders)
    return "wholeNewestTurn" if w.start == t0 and sent == n - t0 else "partOfNewestTurn"


def behaviour(counts: dict[str, int], windows: int) -> str:
    """The classes seen, most frequent first, as ``class k/N``."""
    names = {"empty": "empty", "partOfNewestTurn": "part of newest turn",
             "wholeNewestTurn": "whole newest turn", "moreThanNewestTurn": "more than newest turn"}  # fmt: skip
    seen = sorted((c for c in names if counts[c]), key=lambda c: (-counts[c], c))
    return "; ".join(f"{names[c]} {counts[c]}/{windows}" for c in seen)


def oversized_row(name: str, histories: list[History], cost: CostModel) -> tuple[Cell, ...]:
    counts = dict.fromkeys(("empty", "partOfNewestTurn", "wholeNewestTurn", "moreThanNewestTurn"), 0)
    over = orphan_res = orphan_windows = orphan_call = shortened = untrimmed = windows = 0
    for h in histories:
        if not len(h):
            continue
        p = h.prefix(cost)
        newest = cost.frame + p[-1] - p[newest_turn_start(h)]
        budget = max(1, newest // 2)
        w = project(h, budget, name, cost)
        windows += 1
        counts[outcome(h, w)] += 1
        over += w.report.overBudget
        orphan_res += w.report.orphanRes
        orphan_windows += int(w.report.orphanRes > 0)
        orphan_call += w.report.orphanCall
        if isinstance(w, PeerWindow):
            shortened += len(w.shortened)
            untrimmed += int(w.untrimmed_on_error)
    return (name, windows, *counts.values(), over, orphan_res, orphan_windows, orphan_call, shortened, untrimmed,
            behaviour(counts, windows))  # fmt: skip


def peers_row(name: str, p_result: float, tally: PeerTally) -> tuple[Cell, ...]:
    a = tally.agg
    return (name, p_result, a.windows, a["orphanRes"], a.hits["orphanRes"], a["orphanCall"], a["pairSplit"],
            a["overBudget"], a["empty"], round(a.overrun, 6), a.maxCost, tally.non_suffix, tally.shortened,
            tally.untrimmed)  # fmt: skip


def _judgements(rows: list[dict[str, Any]]) -> list[Judgement]:
    def total(strategy: str, column: str) -> int | None:
        values = [r[column] for r in rows if r["strategy"] == strategy]
        return sum(values) if values else None

    out: list[Judgement] = []
    checks: list[tuple[str, str, Callable[[int], bool], str]] = [
        ("M5", "orphanRes", lambda v: v == 0, "M5 never sends an orphan result"),
        ("M1", "orphanRes", lambda v: v == 0, "M1 never sends an orphan result (seq order)"),
        (
            "peer:langchain",
            "overBudget",
            lambda v: v == 0,
            "LangChain trims by our costs and never exceeds the budget",
        ),
        (
            "peer:openai-agents",
            "orphanRes",
            lambda v: v == 0,
            "the Agents SDK's pruning leaves no orphan result",
        ),
        (
            "peer:openai-agents",
            "orphanCall",
            lambda v: v == 0,
            "the Agents SDK's pruning leaves no unmatched call",
        ),
    ]
    for strategy, column, ok, text in checks:
        v = total(strategy, column)
        if v is not None:
            out.append(Judgement(text, ok(v), f"{strategy} {column} = {v}"))
    return out


def run(p: PeersParams, progress: Progress) -> ScenarioResult:
    cost = make_cost(p.cost)
    total = len(p.manifolds) * len(p.strategies) + len(p.strategies)
    done = 0
    rows: list[tuple[Cell, ...]] = []
    all_histories: list[History] = []
    book = phrasebook(p.seed)
    for p_result in p.manifolds:
        histories = manifold_histories(p, p_result, cost, book)
        all_histories.extend(histories)
        for name in p.strategies:
            tally = PeerTally(Aggregate(p.budget))
            for h in histories:
                tally.add(project(h, p.budget, name, cost))
            rows.append(peers_row(name, p_result, tally))
            done += 1
            progress(done, total)
    oversized: list[tuple[Cell, ...]] = []
    for name in p.strategies:
        oversized.append(oversized_row(name, all_histories, cost))
        done += 1
        progress(done, total)
    records = [dict(zip(PEER_COLUMNS, r, strict=True)) for r in rows]
    tables = (
        Table(
            "peers",
            f"Peers and M0–M5 under {cost.name}, budget {p.budget}: {p.sessions} sessions × {p.turns} turns per manifold",
            PEER_COLUMNS,
            tuple(rows),
            "Counters are totals over windows (orphanResWindows, overBudget, empty, nonSuffix, untrimmed "
            "count windows). "
            "overrun = Σ keptCost / (budget × windows). nonSuffix: the peer dropped messages inside its "
            "window (litellm skips, the Agents SDK prunes unmatched calls); shortened: messages whose "
            "content litellm cut; untrimmed: litellm swallowed an error and returned the history whole.",
        ),
        Table(
            "oversized",
            "When the newest turn alone exceeds the budget (budget = half its cost, every manifold)",
            OVERSIZED_COLUMNS,
            tuple(oversized),
            "Each session projected once more with the budget set to half its newest turn's cost.",
        ),
    )
    return ScenarioResult("peers", params_dict(p), p.seed, tables, tuple(_judgements(records)))


SCENARIO = register(
    Scenario(
        name="peers",
        params_type=PeersParams,
        run=run,
        check=check,
        summary="LangChain, LlamaIndex, litellm and the OpenAI Agents SDK next to M0–M5 on the seed's manifolds.",
    )
)
