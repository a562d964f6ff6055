"""Scenario ``projection`` (seed 000): the log keeps everything, a request sends a view of it.

"Sending less is not storing less." Two turns are committed to a durable log (the first gives
the code name ORCHID-17, the second says the project is on Java 8); the request budget is
narrowed to one turn; a third turn is committed with a fixed local answer; the log is closed
and reopened and the budget widened. The narrowed request must carry one turn and no ORCHID-17,
the file all three turns, the widened request three turns and ORCHID-17 again; a mandatory
input over budget is refused and the log's bytes do not change. Every request is projected by
the projector core (REQ, and M0–M5 for comparison) over the store's history, under the exact
UTF-8 request-bytes cost model; no projection writes to the log.

The seed's budget table (budget → kept turns, dropped turns, request bytes; refusal just below
the mandatory size) runs on a two-turn fixture mixing English, Chinese, quotes, newlines and
emoji. The seed did not publish its fixture text; ours is sized so that, under the ``java``
(Gson) profile, the mandatory part is 140 B and the turns 73 B and 95 B — the seed's geometry —
so the seed's budgets 139/140/235/308/408 give its figures. The conversation is likewise sized
to the seed's 264 B narrowed and 480 B widened requests.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from turncheck.models.cost import Utf8JsonCost
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import STRATEGIES, MandatoryInputExceedsBudget, Window, project
from turncheck.models.store import TurnLog, TurnStore
from turncheck.models.summaries import prompt_events
from turncheck.models.summarising import SUMMARISING
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

MODEL = "agnes-3.0-flash"
CODE_NAME = "ORCHID-17"


@dataclass(frozen=True)
class Conversation:
    """A fixture: system prompt, committed (question, answer) turns, and current questions."""

    session: str
    system: str
    turns: tuple[tuple[str, str], ...]
    questions: tuple[str, ...]


BUDGET_FIXTURE = Conversation(
    session="budget",
    system="Be brief.",
    turns=(("Hi\n", "你好"), ('Quote: "x" 🎉', "好的—noted!")),
    questions=('下一步？ Say "done"! 🙂',),
)
ORCHID = Conversation(
    session="orchid",
    system="You are a build assistant.",
    turns=(
        ('Our project code name is "ORCHID-17".', "记住了：ORCHID-17。"),
        ("We are on Java 8.\nNo upgrades.", "明白，Java 8 😀"),
        ("Which JSON library fits?", "Gson 2.10.1."),  # the third turn: a fixed local answer
    ),
    questions=("Which JSON library fits?", "项目代号？"),
)


@dataclass(frozen=True)
class ProjectionParams:
    """``budgets``: the budget table's budgets (default: mandatory − 1, mandatory, + newest turn,
    + both turns, + 100 more — the seed's 139/140/235/308/408); ``wide``: the widened budget;
    ``profile``: the request serializer's escapes."""

    profile: Literal["java", "python"] = "java"
    model: str = MODEL
    budgets: tuple[int, ...] | None = None
    wide: int = 4096
    fsync: Literal["always", "batch", "never"] = "always"

    def __post_init__(self) -> None:
        require(self.wide > 0, f"wide must be a positive budget, got {self.wide}")
        require(
            self.budgets is None or all(b > 0 for b in self.budgets),
            f"budgets must be positive, got {self.budgets}",
        )
        require(bool(self.model), "model must be a non-empty name")


def exchange(session: str, turn: int, seq: int, question: str, answer: str) -> list[Event]:
    """One whole turn: the user's question and the assistant's final answer."""
    return [
        Event(seq, session, turn, Kind.USER, text=question, chars=len(question)),
        Event(seq + 1, session, turn, Kind.TERM, text=answer, chars=len(answer)),
    ]


def commit_turns(log: TurnStore, conv: Conversation, turns: range) -> None:
    for t in turns:
        question, answer = conv.turns[t]
        log.commit(exchange(conv.session, t, log.next_seq, question, answer), turn_id=f"{conv.session}/{t}")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kept_turns(window: Window) -> int:
    """Whole turns in the window (a turn counts once its USER message is in)."""
    return sum(1 for e in window.events if e.kind is Kind.USER)


def request(
    log: TurnStore, conv: Conversation, question: str, budget: int, strategy: str, p: ProjectionParams
) -> tuple[Window, str, Utf8JsonCost]:
    """The request of ``strategy`` over the prompt the stored log implies: a committed SUMMARY
    stands for the events it covers (:func:`~models.summaries.prompt_events`)."""
    cost = Utf8JsonCost(profile=p.profile, model=p.model, system=conv.system, current=question)
    history = log.history(conv.session, costs=(cost,))
    prompt = prompt_events(history.events)
    if prompt is not history.events:
        history = History(prompt, costs=(cost,))
    window = project(history, budget, strategy, cost)
    return window, window.payload(cost), cost


def run(params: ProjectionParams, progress: Progress) -> ScenarioResult:
    with tempfile.TemporaryDirectory(prefix="turncheck-projection-") as tmp:
        stages, stage_judgements, strategy_rows = _conversation(
            Path(tmp) / "conversation.log", params, progress
        )
        budget_rows, budget_judgements = _budget_table(Path(tmp) / "budget.log", params)
    tables = (
        Table(
            "stages",
            "Narrow, commit, reopen, widen (seed 000's projection scenario)",
            (
                "stage",
                "budget",
                "request bytes",
                "turns in request",
                "turns on disk",
                f"{CODE_NAME} in request",
                "log bytes",
                "log unchanged by projection",
            ),
            tuple(stages),
            "The log keeps every confirmed turn; a request is a projection of it. Request bytes are "
            "the UTF-8 length of the serialized request, equal to the cost model's count.",
        ),
        Table(
            "budget_table",
            "Request budget → whole turns kept (seed 000's budget table)",
            ("budget", "kept turns", "dropped turns", "request bytes", "outcome"),
            tuple(budget_rows),
            "REQ keeps the system prompt and the current question, then the newest whole turns that "
            "fit; below the mandatory size it refuses instead of truncating.",
        ),
        Table(
            "strategies",
            "Every strategy over the reopened log, budget ending inside turn 2",
            (
                "strategy",
                "budget",
                "kept events",
                "kept turns",
                "answer without its question",
                "request bytes",
                "over budget",
                f"{CODE_NAME} in request",
                "log unchanged",
            ),
            tuple(strategy_rows),
            "The budget fits turn 3 and turn 2's answer but not its question. M0 and M5 (no tool "
            "pairs to protect here) send the answer alone; M1/M2 pull the question in and exceed "
            "the budget; M3, M4 and REQ keep whole turns only. None of them writes to the log.",
        ),
    )
    return ScenarioResult(
        "projection", params_dict(params), 0, tables, (*stage_judgements, *budget_judgements)
    )


def _conversation(
    path: Path, p: ProjectionParams, progress: Progress
) -> tuple[list[tuple[Cell, ...]], list[Judgement], list[tuple[Cell, ...]]]:
    conv = ORCHID
    rows: list[tuple[Cell, ...]] = []
    with TurnLog.open(path, create=True, fsync=p.fsync) as log:
        commit_turns(log, conv, range(2))
        before = digest(path)
        last = conv.turns[1]
        cost = Utf8JsonCost(profile=p.profile, model=p.model, system=conv.system, current=conv.questions[0])
        narrow = cost.frame + sum(cost.event_cost(e) for e in exchange(conv.session, 1, 0, *last))
        w, payload, _ = request(log, conv, conv.questions[0], narrow, "REQ", p)
        narrow_ok = kept_turns(w) == 1 and CODE_NAME not in payload and len(payload.encode()) == w.cost
        same = digest(path) == before
        rows.append(
            ("narrow window", narrow, w.cost, kept_turns(w), len(log), CODE_NAME in payload, log.size, same)
        )
        progress(1, 4)
        commit_turns(log, conv, range(2, 3))
        committed = tuple((t.turn_id, t.events) for t in log.turns())
    with TurnLog.open(path, readonly=True) as check:  # what the file holds after close
        on_disk = tuple((t.turn_id, t.events) for t in check.turns())
    rows.append(("commit fixed answer", None, None, None, len(on_disk), None, path.stat().st_size, None))
    progress(2, 4)
    with TurnLog.open(path, fsync=p.fsync) as log:  # reopen, widen
        before = digest(path)
        w, payload, cost = request(log, conv, conv.questions[1], p.wide, "REQ", p)
        wide_ok = kept_turns(w) == 3 and CODE_NAME in payload and len(payload.encode()) == w.cost
        same = digest(path) == before
        rows.append(
            (
                "reopen and widen",
                p.wide,
                w.cost,
                kept_turns(w),
                len(log),
                CODE_NAME in payload,
                log.size,
                same,
            )
        )
        try:
            request(log, conv, conv.questions[1], cost.frame - 1, "REQ", p)
            refused = False
        except MandatoryInputExceedsBudget:
            refused = True
        unchanged = digest(path) == before
        rows.append(
            (
                "mandatory input over budget",
                cost.frame - 1,
                f"refused (mandatory needs {cost.frame})" if refused else "not refused",
                0,
                len(log),
                False,
                log.size,
                unchanged,
            )
        )
        progress(3, 4)
        strategy_rows, strategies_clean = _strategy_rows(log, conv, p, cost, path, before)
        progress(4, 4)
    judgements = _judgements(
        rows, (on_disk, committed), (narrow_ok, wide_ok), (refused, unchanged), cost.frame, strategies_clean
    )
    return rows, judgements, strategy_rows


def _strategy_rows(
    log: TurnLog, conv: Conversation, p: ProjectionParams, cost: Utf8JsonCost, path: Path, before: str
) -> tuple[list[tuple[Cell, ...]], bool]:
    """Every trimming rule at a budget that ends inside turn 2 (room for its answer, not its
    question), as the seed compares them; and whether none of them wrote to the log."""
    strategy_rows: list[tuple[Cell, ...]] = []
    strategies_clean = True
    stored = log.turns()
    mid = cost.frame + sum(cost.event_cost(e) for e in (*stored[2].events, stored[1].events[-1]))
    for name in (s for s in STRATEGIES if s not in SUMMARISING):  # trimming rules, as the seed compares
        # a budget that ends inside turn 2: room for its answer, not its question
        sw, spayload, _ = request(log, conv, conv.questions[1], mid, name, p)
        same = digest(path) == before
        strategies_clean &= same and len(spayload.encode()) == sw.cost
        split = bool(sw.events) and sw.events[0].kind is not Kind.USER
        strategy_rows.append(
            (
                name,
                mid,
                len(sw.events),
                kept_turns(sw),
                split,
                sw.cost,
                sw.cost > mid,
                CODE_NAME in spayload,
                same,
            )
        )
    return strategy_rows, strategies_clean


def _judgements(
    rows: list[tuple[Cell, ...]],
    files: tuple[tuple[object, ...], tuple[object, ...]],
    carried: tuple[bool, bool],
    over: tuple[bool, bool],
    frame: int,
    strategies_clean: bool,
) -> list[Judgement]:
    """The scenario's five claims, each read from what the run measured."""
    (on_disk, committed), (narrow_ok, wide_ok), (refused, unchanged) = files, carried, over
    return [
        Judgement(
            "narrowed request carries one turn, no ORCHID-17",
            narrow_ok,
            f"{rows[0][2]} B, {rows[0][3]} turn(s), ORCHID-17 {'present' if rows[0][5] else 'absent'}",
        ),
        Judgement(
            "the file holds all three turns",
            on_disk == committed and len(on_disk) == 3 and CODE_NAME in repr(on_disk),
            f"{len(on_disk)} turns read back after close, identical to the committed ones, "
            f"{CODE_NAME} among them",
        ),
        Judgement(
            "widened request after reopen carries three turns and ORCHID-17",
            wide_ok,
            f"{rows[2][2]} B, {rows[2][3]} turn(s), ORCHID-17 {'present' if rows[2][5] else 'absent'}",
        ),
        Judgement(
            "over-budget mandatory input refused, log bytes unchanged",
            refused and unchanged,
            f"budget {frame - 1} < mandatory {frame}; sha256 before = after: {unchanged}",
        ),
        Judgement(
            "no strategy writes to the log",
            strategies_clean,
            "REQ and M0–M5 projected over the store; request bytes equal the serialized payload",
        ),
    ]


def default_budgets(conv: Conversation, cost: Utf8JsonCost) -> tuple[int, ...]:
    """Mandatory − 1 (refused), mandatory, + newest turn, + both turns, + 100 (seed 000's cut)."""
    m = cost.frame
    sizes = [
        sum(cost.event_cost(e) for e in exchange(conv.session, t, 0, *qa)) for t, qa in enumerate(conv.turns)
    ]
    newest, rest = sizes[-1], sum(sizes)
    return (m - 1, m, m + newest, m + rest, m + rest + 100)


def _budget_table(path: Path, p: ProjectionParams) -> tuple[list[tuple[Cell, ...]], list[Judgement]]:
    conv = BUDGET_FIXTURE
    rows: list[tuple[Cell, ...]] = []
    exact = True
    with TurnLog.open(path, create=True, fsync=p.fsync) as log:
        commit_turns(log, conv, range(len(conv.turns)))
        before = digest(path)
        cost = Utf8JsonCost(profile=p.profile, model=p.model, system=conv.system, current=conv.questions[0])
        budgets = p.budgets if p.budgets is not None else default_budgets(conv, cost)
        for budget in budgets:
            try:
                w, payload, _ = request(log, conv, conv.questions[0], budget, "REQ", p)
            except MandatoryInputExceedsBudget as exc:
                rows.append(
                    (budget, 0, len(conv.turns), None, f"refused: mandatory input needs {exc.mandatory} B")
                )
                continue
            exact &= len(payload.encode()) == w.cost <= budget
            kept = kept_turns(w)
            rows.append((budget, kept, len(conv.turns) - kept, w.cost, "ok"))
        unchanged = digest(path) == before
    refusal = [r for r in rows if r[3] is None]
    judgements = [
        Judgement(
            "budget table: request bytes are the serialized request, within budget",
            exact and unchanged,
            "; ".join(
                f"{r[0]}→{r[1]} turn(s)/{r[3]} B" if r[3] is not None else f"{r[0]}→refused" for r in rows
            ),
        ),
        Judgement(
            "refusal just below the mandatory size",
            bool(refusal) or p.budgets is not None,
            f"budget {cost.frame - 1} refused; mandatory input is {cost.frame} B",
        ),
    ]
    return rows, judgements


SCENARIO = register(
    Scenario(
        name="projection",
        params_type=ProjectionParams,
        run=run,
        summary="Seed 000: narrow, commit, reopen, widen over the durable log; the request budget table",
        presets={"quick": {}, "tiny": {}},
        order=80,
    )
)
