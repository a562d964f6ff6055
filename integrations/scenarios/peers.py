"""Scenario ``peers``: the trimmers people build agents with, next to M0–M5, per request.

Seed 004's three manifolds (``p_result`` 1.00 / 0.97 / 0.90) at a reduced scale, plus a
manifold with parallel tool calls (``p_parallel``) and one where every turn alone exceeds the
budget, dressed with real text (:mod:`scenarios.real_text`), every strategy under one cost model
(default ``bpe:o200k_base``, real tokens). Each peer runs the library itself
(:mod:`integrations.peers`) **per request**: at every point a running agent calls its model
(:func:`models.requests.request_points`), on exactly the history it had then. A peer
whose answer is not a suffix of the history is judged on exactly what it sends.

Tables:

* ``peers`` — the league table: per strategy and case, over every request: orphan results and
  the requests that send one, unmatched calls and the requests that send one, ``pairSplit``,
  requests over budget, the overrun (mean and largest keptCost / budget), empty requests,
  requests refused by the library, requests sent untrimmed, and the non-suffix answers by kind:
  ``dropped`` (messages left out inside the window), ``reordered``, ``invented`` (messages the
  library made up: summaries, placeholders, synthesized tool results), ``coverage`` (the
  coverage errors of the SUMMARY events a peer sends, :func:`models.summarising.coverage_errors`),
  ``shortened``.
* ``libraries`` — per peer: the distribution and version that ran, what it calls, and whose
  token counting it trims by.
* ``oversized`` — one request per session, at its end, with the budget set to half its newest
  turn's cost: what each strategy sends, classed (empty, part of the newest turn, …).
* ``reproductions`` — per peer that sends an orphan result or an unmatched call on clean data
  (every call answered), the shortest history that makes it do so, found by exhaustive search
  (:mod:`integrations.scenarios.peer_repro`); ``python -m turncheck.integrations.scenarios.peer_repro DIR`` saves them as
  JSONL logs that ``turncheck project`` replays.
* ``traces`` — per peer and property of ``reproductions``, the shortest counterexample of the
  ``projector`` model with the peer as its strategy (:mod:`integrations.scenarios.peer_trace`), written beside
  the result as ``peers.traces/PEER-PROPERTY.trace.json``: ``turncheck replay FILE --html`` and the
  report's viewer step through it.

Per-request time at ``timing_sizes`` events (10²–10⁴ at full scale) is measured, not computed:
it goes to ``peers.timing.json`` beside the result (:mod:`scenarios.peer_timing`), never into
``peers.json``, which stays byte-reproducible.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from turncheck.integrations.peers.requests import replay
from turncheck.integrations.scenarios.peer_repro import PROPERTIES, REPRO_COLUMNS, reproductions
from turncheck.integrations.scenarios.peer_timing import TIMING_FILE, timing_result
from turncheck.integrations.scenarios.peer_trace import TRACE_COLUMNS, trace_rows
from turncheck.models.cost import COST_MODELS, CostModel, make_cost
from turncheck.models.events import Event
from turncheck.models.extras import install_hint
from turncheck.models.history import History
from turncheck.models.peer import PEERS
from turncheck.models.projector import Window, check_strategy, compared_strategies, project
from turncheck.models.requests import request_points
from turncheck.models.selection import PeerWindow
from turncheck.models.summarising import coverage_errors
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


def default_strategies() -> tuple[str, ...]:
    """Ours (every compared strategy) first, then each peer."""
    return (*compared_strategies(), *PEERS)


MANIFOLDS = (1.0, 0.97, 0.90)
PEER_COLUMNS = (
    "strategy", "case", "p_result", "p_parallel", "requests", "orphanRes", "orphanResRequests", "orphanCall",
    "orphanCallRequests", "pairSplit", "overBudget", "overrun", "maxOverrun", "maxCost", "empty", "refused",
    "untrimmed", "dropped", "reordered", "invented", "coverage", "shortened",
)  # fmt: skip
LIBRARY_COLUMNS = ("strategy", "library", "version", "call", "counting")
OVERSIZED_COLUMNS = (
    "strategy", "windows", "empty", "partOfNewestTurn", "wholeNewestTurn", "moreThanNewestTurn",
    "overBudget", "orphanRes", "orphanResWindows", "orphanCall", "shortened", "untrimmed", "behaviour",
)  # fmt: skip


@dataclass(frozen=True)
class PeersParams:
    """``sessions`` per case and ``turns`` per session (reduced from 60 000 × 50: every request
    of a session is one library call, and litellm re-tokenizes its kept messages for every
    older message). ``parallel`` is the ``p_parallel`` of the parallel-calls case (0 leaves the
    case out); ``oversized`` adds the case where each session's newest turn is replayed request
    by request under half its own cost; ``repro_events`` bounds the search for shortest
    reproductions (0 leaves it out) and ``traces`` turns each into a viewer trace.
    ``timing_sizes`` are the history lengths of the measured per-request time (empty leaves it
    out), ``timing_cap`` the seconds past which a size is not tried (see
    :mod:`scenarios.peer_timing`)."""

    sessions: int = 10
    turns: int = 10
    budget: int = 4000
    cost: str = "bpe:o200k_base"
    manifolds: tuple[float, ...] = MANIFOLDS
    strategies: tuple[str, ...] = field(default_factory=default_strategies)
    p_parallel: float = 0.0
    parallel: float = 0.3
    oversized: bool = True
    repro_events: int = 6
    traces: bool = True
    timing_sizes: tuple[int, ...] = (100, 1000, 10000)
    timing_cap: float = 10.0
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
        for name in ("p_parallel", "parallel"):
            value = getattr(self, name)
            require(0.0 <= value <= 1.0, f"parameter {name} must be in [0, 1], got {value}")
        require(
            0 <= self.repro_events <= 9, f"parameter repro_events must be in 0..9, got {self.repro_events}"
        )
        require(
            all(n >= 1 for n in self.timing_sizes),
            f"parameter timing_sizes must be >= 1, got {self.timing_sizes}",
        )
        require(self.timing_cap > 0, f"parameter timing_cap must be > 0, got {self.timing_cap}")
        costs = (*COST_MODELS, *(f"bpe:{e}" for e in ENCODINGS))
        require(self.cost in costs, f"parameter cost must be one of {', '.join(costs)}, got {self.cost!r}")


def check(p: PeersParams) -> None:
    """Before anything runs: the optional libraries this run needs are installed."""
    make_cost(p.cost)  # a BPE cost model without tiktoken is refused here, naming the extra
    if importlib.util.find_spec("faker") is None:
        raise MissingExtra(f"faker needs faker, which is not installed: {install_hint(EXTRA)}")
    for s in p.strategies:
        reason = PEERS[s].missing() if s in PEERS else None
        if reason is not None:
            raise MissingExtra(reason)


def manifold_histories(p: PeersParams, p_result: float, cost: CostModel, book: Phrasebook,
                       p_parallel: float | None = None) -> list[History]:  # fmt: skip
    """The manifold's sessions, dressed with real text, indexed under ``cost``."""
    workload = WorkloadParams(
        sessions=p.sessions, turns=p.turns, seed=p.seed, p_result=p_result,
        p_parallel=p.p_parallel if p_parallel is None else p_parallel,
    )  # fmt: skip
    return [
        History(events, costs=(cost,))
        for events in dressed_sessions(generate_columns(workload), book, p.seed)
    ]


@dataclass(frozen=True)
class Case:
    """One row group of the league table: which sessions, and the budget of each request."""

    name: str
    p_result: float
    p_parallel: float
    oversized: bool = False


@dataclass
class PeerTally:
    """A strategy's counters over the requests of one case."""

    requests: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    overrun_sum: float = 0.0
    max_overrun: float = 0.0
    max_cost: int = 0

    def bump(self, name: str, value: int) -> None:
        if value:
            self.counts[name] = self.counts.get(name, 0) + value

    def add(self, w: Window) -> None:
        r = w.report
        self.requests += 1
        for name in ("orphanRes", "orphanCall", "pairSplit", "overBudget", "empty"):
            self.bump(name, getattr(r, name))
        self.bump("orphanResRequests", int(r.orphanRes > 0))
        self.bump("orphanCallRequests", int(r.orphanCall > 0))
        ratio = r.keptCost / w.budget
        self.overrun_sum += ratio
        self.max_overrun = max(self.max_overrun, ratio)
        self.max_cost = max(self.max_cost, r.keptCost)
        if isinstance(w, PeerWindow):
            self.bump("refused", int(w.refused))
            self.bump("untrimmed", int(w.untrimmed_on_error))
            self.bump("dropped", int(bool(w.dropped_inside)))
            self.bump("reordered", int(w.reordered))
            self.bump("invented", w.invented)
            if w.invented:
                self.bump("coverage", coverage_errors(w))
            self.bump("shortened", len(w.shortened))

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)


def newest_turn_start(h: History) -> int:
    return h.seg_starts[-1] if h.seg_starts else 0


def newest_turn_budget(h: History, cost: CostModel) -> int:
    """Half the cost of the newest turn with the frame: a budget the newest turn alone exceeds."""
    p = h.prefix(cost)
    return max(1, (cost.frame + p[-1] - p[newest_turn_start(h)]) // 2)


def case_windows(h: History, case: Case, budget: int, name: str, cost: CostModel) -> list[Window]:
    """The windows of every request of one session (of its newest turn only, oversized)."""
    events: list[Event] = h.events
    points = request_points(events)
    if case.oversized:
        t0 = newest_turn_start(h)
        points = [q for q in points if q > t0]
        budget = newest_turn_budget(h, cost)
    return replay(events, budget, name, cost, points)


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
        w = project(h, newest_turn_budget(h, cost), name, cost)
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


def peers_row(name: str, case: Case, tally: PeerTally) -> tuple[Cell, ...]:
    t = tally
    mean = round(t.overrun_sum / t.requests, 6) if t.requests else 0.0
    return (name, case.name, case.p_result, case.p_parallel, t.requests, t["orphanRes"], t["orphanResRequests"],
            t["orphanCall"], t["orphanCallRequests"], t["pairSplit"], t["overBudget"], mean,
            round(t.max_overrun, 6), t.max_cost, t["empty"], t["refused"], t["untrimmed"], t["dropped"],
            t["reordered"], t["invented"], t["coverage"], t["shortened"])  # fmt: skip


def library_rows(strategies: tuple[str, ...]) -> list[tuple[Cell, ...]]:
    """Per peer: the distribution and version that ran, the call, whose counting."""
    rows: list[tuple[Cell, ...]] = []
    for name in strategies:
        peer = PEERS.lookup(name)
        if peer is None:
            continue
        rows.append((name, peer.library, peer.version(), peer.call, peer.counting))
    return rows


def _judgements(rows: list[dict[str, Any]]) -> list[Judgement]:
    def total(strategy: str, column: str, case: str | None = None) -> int | None:
        values = [
            r[column] for r in rows if r["strategy"] == strategy and (case is None or r["case"] == case)
        ]
        return sum(values) if values else None

    out: list[Judgement] = []
    checks: list[tuple[str, str, Callable[[int], bool], str]] = [
        ("M5", "orphanRes", lambda v: v == 0, "M5 never sends an orphan result"),
        ("M1", "orphanRes", lambda v: v == 0, "M1 never sends an orphan result (seq order)"),
        ("peer:langchain", "overBudget", lambda v: v == 0,
         "LangChain trims by our costs and never exceeds the budget"),
        ("peer:openai-agents", "orphanRes", lambda v: v == 0, "the Agents SDK's pruning leaves no orphan result"),
        ("peer:openai-agents", "orphanCall", lambda v: v == 0, "the Agents SDK's pruning leaves no unmatched call"),
        ("peer:pydantic-ai", "orphanRes", lambda v: v == 0, "Pydantic AI's repair leaves no orphan result"),
    ]  # fmt: skip
    for strategy, column, ok, text in checks:
        v = total(strategy, column)
        if v is not None:
            out.append(Judgement(text, ok(v), f"{strategy} {column} = {v}"))
    return out


def cases(p: PeersParams) -> list[Case]:
    out = [Case(f"p_result {m:.2f}", m, p.p_parallel) for m in p.manifolds]
    if p.parallel > 0:
        out.append(Case(f"parallel {p.parallel:.2f}", 1.0, p.parallel))
    if p.oversized:
        out.append(Case("oversized turn", 1.0, p.p_parallel, oversized=True))
    return out


Rows = list[tuple[Cell, ...]]


def _tables(
    p: PeersParams, cost_name: str, rows: Rows, oversized: Rows, repro_rows: Rows, traces: Rows
) -> tuple[Table, ...]:
    """The scenario's five tables, each with the note that says how its rows were made."""
    tables: tuple[Table, ...] = (
        Table(
            "peers",
            f"Peers and M0–M5 per request under {cost_name}, budget {p.budget}: "
            f"{p.sessions} sessions × {p.turns} turns per case",
            PEER_COLUMNS,
            tuple(rows),
            "One row per strategy and case; every request of every session (the history before each model "
            "call). Counters are totals over requests; *Requests columns, overBudget, empty, refused, untrimmed, "
            "dropped and reordered count requests; invented and shortened count messages; coverage counts the "
            "coverage errors of the summaries a peer sends (an event sent beside or covered twice, a call "
            "summarised before its result). overrun = mean "
            "keptCost / budget, maxOverrun its largest value. oversized turn: each session's newest turn "
            "replayed under half its own cost.",
        ),
        Table(
            "libraries",
            "The libraries that ran, their versions, and whose token counting they trim by",
            LIBRARY_COLUMNS,
            tuple(library_rows(p.strategies)),
            "N: the number of newest items or messages that fit the budget under our cost model, set per "
            "request (the best a count setting can do).",
        ),  # fmt: skip
        Table(
            "oversized",
            "When the newest turn alone exceeds the budget (budget = half its cost, one request per session)",
            OVERSIZED_COLUMNS,
            tuple(oversized),
            "Each session of the p_result manifolds projected once more, as a whole, with the budget set to "
            "half its newest turn's cost.",
        ),
        Table(
            "reproductions",
            f"Shortest clean histories (every call answered, ≤ {p.repro_events} events) that make a peer send an "
            "orphan result or an unmatched call",
            REPRO_COLUMNS,
            tuple(repro_rows),
            "Exhaustive search, shortest first, over histories of USER, CALL, RESULT and TERM events of two sizes, "
            "at a few budgets, cost model estimate; the window is that of the request at the end of the history. "
            # the note is part of the result file (its hash is in docs/peers.md): it keeps the
            # module's name from before the move to integrations/ until the result is regenerated
            "python -m turncheck.integrations.scenarios.peer_repro DIR saves each as a JSONL log; "
            "turncheck project -H FILE -b BUDGET -s PEER --cost estimate replays it.",
        ),
    )
    tables += (
        Table(
            "traces",
            "Each reproduction as a counterexample trace of the projector model with the peer as strategy",
            TRACE_COLUMNS,
            tuple(traces),
            "Breadth-first over the projector model's histories (fresh call ids; USER, CALL and TERM 1 token, a "
            "RESULT 1 or 3), shortest first; no-orphan-calls: a CALL sent without its RESULT while the history "
            "holds it. turncheck replay FILE --html steps through one; the report shows them under peers.",
        ),
    )
    return tables


def run(p: PeersParams, progress: Progress) -> ScenarioResult:
    cost = make_cost(p.cost)
    plan = cases(p)
    repro_peers = [s for s in p.strategies if s in PEERS] if p.repro_events else []
    total = len(plan) * len(p.strategies) + len(p.strategies) + len(repro_peers)
    done = 0
    rows: list[tuple[Cell, ...]] = []
    end_histories: list[History] = []
    book = phrasebook(p.seed)
    for case in plan:
        histories = manifold_histories(p, case.p_result, cost, book, case.p_parallel)
        if not case.oversized and case.p_parallel == p.p_parallel:
            end_histories.extend(histories)
        for name in p.strategies:
            tally = PeerTally()
            for h in histories:
                for w in case_windows(h, case, p.budget, name, cost):
                    tally.add(w)
            rows.append(peers_row(name, case, tally))
            done += 1
            progress(done, total)
    oversized: list[tuple[Cell, ...]] = []
    for name in p.strategies:
        oversized.append(oversized_row(name, end_histories, cost))
        done += 1
        progress(done, total)
    repro_rows: list[tuple[Cell, ...]] = []
    trace_table: list[tuple[Cell, ...]] = []
    attachments: dict[str, ScenarioResult | str] = {}
    for name in repro_peers:
        found = reproductions(name, p.repro_events)
        repro_rows.extend(r.row() for r in found)
        if p.traces and found:
            trace_table.extend(trace_rows(name, [r.broken for r in found], attachments))
        missing = [prop for prop in PROPERTIES if prop not in {r.broken for r in found}]
        repro_rows.extend(
            (name, prop, 0, 0, f"none within {p.repro_events} events", "", "") for prop in missing
        )
        done += 1
        progress(done, total)
    records = [dict(zip(PEER_COLUMNS, r, strict=True)) for r in rows]
    tables = _tables(p, cost.name, rows, oversized, repro_rows, trace_table)
    if p.timing_sizes:
        strategies = [s for s in p.strategies if s not in PEERS or PEERS[s].missing() is None]
        attachments[TIMING_FILE] = timing_result(
            strategies, p.timing_sizes, p.budget, cost, p.timing_cap, book, p.seed, params_dict(p)
        )
    return ScenarioResult("peers", params_dict(p), p.seed, tables, tuple(_judgements(records)), attachments)


SCENARIO = register(
    Scenario(
        name="peers",
        params_type=PeersParams,
        run=run,
        check=check,
        summary="LangChain, LlamaIndex, litellm, the Agents SDK, Semantic Kernel, AutoGen, LangGraph, "
        "Pydantic AI, Google ADK and the TypeScript peers (LangChain.js, the Vercel AI SDK, Mastra, "
        "openai-agents-js) next to M0–M5, per request.",
        presets={
            "quick": {
                "sessions": "3",
                "turns": "6",
                "repro_events": "4",
                "timing_sizes": "100,1000",
                "timing_cap": "1",
            },
            "tiny": {
                "sessions": "2",
                "turns": "4",
                "repro_events": "3",
                "timing_sizes": "100",
                "timing_cap": "1",
            },
        },
        demo_skip={"tiny": "its nine libraries take ~40 s to import; it runs at --scale quick"},
        order=40,
    )
)
