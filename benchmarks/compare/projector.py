"""Projector per request: turncheck's strategies, a bare bisection, LangChain and litellm trimmers.

turncheck's request is a strategy call (selection and the ``Window``; M0–M5 in turn, three
budgets); the structural report is computed on first access, so it is measured as a second
contender that reads it. The ceiling is one ``bisect_left`` on the prefix sums — the least any
projector over a cost index must do. The peers (extra ``peers``) are
``langchain_core.messages.trim_messages`` and ``litellm.utils.trim_messages`` behind our
projector signature (:mod:`integrations.peers`), on a smaller history: they are O(n) per request and
more, so the same history size would take minutes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
from bisect import bisect_left
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.compare import Comparison, Contender, interleave
from benchmarks.projector import synthetic_turns
from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.messages import history_messages
from turncheck.models.per_request import replay_requests
from turncheck.models.projector import (
    MESSAGES_PREFIX,
    STRATEGIES,
    compared_strategies,
    m5,
    project,
    resolve_strategy,
)
from turncheck.models.requests import request_points

BUDGETS = (2_000, 20_000, 200_000)
PEER_BUDGET = 20_000
PEERS = (("peer:langchain", "langchain_core", "LangChain trim_messages"),
         ("peer:litellm", "litellm", "litellm trim_messages"))  # fmt: skip


def _requests(h: History, cost: EstimateCost, loops: int, read_report: bool) -> Callable[[], object]:
    calls = [(STRATEGIES[s].project, b) for s in compared_strategies() for b in BUDGETS]

    def run() -> object:
        last = None
        for _ in range(loops):
            for fn, b in calls:
                last = fn(h, b, cost)
                if read_report:
                    last.report  # noqa: B018 - the lazy report is the work measured
        return last

    return run


def _bisect(h: History, cost: EstimateCost, loops: int) -> Callable[[], object]:
    p = h.prefix(cost)
    rooms = [b - cost.frame for b in BUDGETS] * len(compared_strategies())

    def run() -> object:
        last = 0
        for _ in range(loops):
            for room in rooms:
                last = bisect_left(p, p[-1] - room)
        return last

    return run


def _peer(h: History, cost: EstimateCost, name: str, loops: int) -> Callable[[], object]:
    def run() -> object:
        last = None
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in range(loops):
                last = project(h, PEER_BUDGET, name, cost)
        return last

    return run


def compare(scale: str) -> list[Comparison]:
    """``full`` and ``quick`` measure; ``tiny`` (the CI smoke run) only shows that every row runs:
    a smaller history, fewer loops and rounds, and one round of the peers, whose import and
    per-request cost (litellm's, most) would otherwise be most of the smoke run's time."""
    full, tiny = scale == "full", scale == "tiny"
    cost = EstimateCost()
    per_round = len(compared_strategies()) * len(BUDGETS)
    out: list[Comparison] = []
    for turns in (250_000,) if full else (1_000,) if tiny else (10_000,):
        h = History(synthetic_turns(turns), [cost])
        # tens of ms a run: a burst of host noise hits one round, not all
        loops = 4000 if full else 100 if tiny else 1000
        units = loops * per_round
        measured = interleave(
            [
                Contender("M0–M5, selection + Window", "turncheck", _requests(h, cost, loops, False), units),
                Contender(
                    "M0–M5 + structural report read", "turncheck", _requests(h, cost, loops, True), units
                ),
                Contender("bisect_left on the prefix sums", "ceiling", _bisect(h, cost, loops), units),
            ],
            9 if full else 3 if tiny else 5,
        )
        out.append(
            Comparison(
                f"projector per request, {len(h):,} events, budgets {', '.join(map(str, BUDGETS))}",
                "µs per request",
                1e6,
                measured,
                target="selection + Window ≤ 1.5 µs per request; report lazy, O(log n)",
            )
        )
    small = History(synthetic_turns(250 if full else 10 if tiny else 50), [cost])
    contenders = [
        Contender(
            "M0–M5, selection + Window", "turncheck", _requests(small, cost, 200, False), 200 * per_round
        )
    ]
    missing = []
    for name, module, label in PEERS:
        if importlib.util.find_spec(module) is None:
            missing.append(f"{label}: {module} not installed (pip install 'turncheck[peers]')")
            continue
        _peer(small, cost, name, 1)()  # import the library and warm its caches outside the clock
        contenders.append(Contender(label, "peer", _peer(small, cost, name, 1), 1))
    measured = interleave(contenders, 5 if full else 1 if tiny else 3)
    out.append(
        Comparison(
            f"projector against peer trimmers, {len(small):,} events, budget {PEER_BUDGET}",
            "ms per request",
            1e3,
            measured,
            note="; ".join(missing)
            or "peers are O(n) per request or worse: their ratio grows with the history, ours is O(log n)",
        )
    )
    out.append(_replay(scale))
    out.append(_replay_messages(scale))
    return out


def _replay(scale: str) -> Comparison:
    """``project --per-request``'s replay of one session of USER/TERM turns, M5: request points,
    the history grown request by request, a window and its report per request. Ceiling: the
    history built once, one M5 selection per request over it (no replay can do less)."""
    turns = 20_000 if scale == "full" else 1_000 if scale == "tiny" else 5_000
    cost, events = EstimateCost(), list(synthetic_session(turns))

    def replay() -> object:
        return sum(1 for _ in replay_requests("s", events, 2_000, "M5", cost))

    def ceiling() -> object:
        h = History(events, [cost])
        return [m5(h, 2_000, cost) for _ in range(turns)]

    measured = interleave(
        [
            Contender("replay_requests, M5", "turncheck", replay, turns),
            Contender("one History, one M5 selection per request", "ceiling", ceiling, turns),
        ],
        5 if scale == "full" else 3,
    )
    return Comparison(
        f"per-request replay, one session of {turns:,} USER/TERM turns, M5, budget 2000",
        "µs per request",
        1e6,
        measured,
        target="linear in the log: 4× the turns ≤ 6× the CPU",
    )


TRIM = Path(__file__).resolve().parent.parent.parent / "examples" / "your-agent" / "trim.py"
"""The trimmer of docs/your-agent.md: ``keep_recent`` stops at the budget, so its own work per
request is the window's, not the history's."""


def _replay_messages(scale: str) -> Comparison:
    """``project --per-request -s messages:…:keep_recent``'s replay of one session of USER/TERM
    turns: the messages grown request by request, a list of copies handed to the trimmer and
    restored after it, its answer mapped back to events, a window per request. Ceiling: the same
    ``keep_recent`` called in a plain loop on the growing list of the same messages, built once
    (no replay can hand it less)."""
    turns = 4_000 if scale == "full" else 200 if scale == "tiny" else 1_000
    cost, events = EstimateCost(), list(synthetic_session(turns))
    strategy = resolve_strategy(f"{MESSAGES_PREFIX}{TRIM}:keep_recent")
    keep_recent = strategy.__wrapped__  # type: ignore[attr-defined]
    budget = 4_000
    ends = request_points(events)
    message_spans, messages = history_messages(History(events))

    def replay() -> object:
        return sum(1 for _ in replay_requests("s", events, budget, strategy, cost))

    def ceiling() -> object:
        prefix: list[object] = []
        j, last = 0, None
        for end in ends:
            while j < len(messages) and message_spans[j].end <= end:
                prefix.append(messages[j])
                j += 1
            last = keep_recent(prefix, budget - cost.frame)
        return last

    measured = interleave(
        [
            Contender("replay_requests, messages:trim.py:keep_recent", "turncheck", replay, len(ends)),
            Contender("keep_recent in a loop on the growing message list", "ceiling", ceiling, len(ends)),
        ],
        5 if scale == "full" else 3,
    )
    return Comparison(
        f"per-request replay of a message trimmer, one session of {turns:,} USER/TERM turns, "
        f"keep_recent, budget {budget}",
        "µs per request",
        1e6,
        measured,
        target="linear in the log: the ratio stays put as the session grows (4× the turns ≤ 6× the CPU)",
    )


def synthetic_session(turns: int) -> Iterator[Event]:
    """One session of ``turns`` USER/TERM turns (a question, a longer answer)."""
    for t in range(turns):
        yield Event(2 * t + 1, "s", t, Kind.USER, chars=200)
        yield Event(2 * t + 2, "s", t, Kind.TERM, chars=600)
