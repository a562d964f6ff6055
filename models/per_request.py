"""Per-request replay: project a session at every point where a running agent calls its model.

An agent does not project its history once, at the end: it builds a window before *every*
model request — after each USER message (to answer it), after each complete batch of tool
RESULTs (to continue the turn), and before every model output the log holds. A projector that
orphans results in the middle of a conversation may well look clean at the end of the log. :func:`request_points` finds those points, in log order;
:func:`replay_requests` projects the prefix of the history at each one, exactly as the agent
would have, and :func:`offences` says which of the chosen counters a window breaks.

Invariant kept: request ``k`` of a session sees exactly the events appended before it — never
a later event — so a window here is byte-for-byte the window the agent would have sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from turncheck.models.cost import CostModel
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import (
    NamedStrategy,
    Strategy,
    Window,
    project,
    resolve_strategy,
    strategy_name,
)
from turncheck.models.provider_rules import PROVIDERS, provider_findings
from turncheck.models.report import COUNTERS
from turncheck.models.requests import request_points
from turncheck.models.selection import PeerWindow
from turncheck.models.summaries import dropped_by
from turncheck.models.summarising import coverage_errors

EXTRA_CHECKS = ("nonSuffix", "invented", "coverage")
"""Checks beyond the structural counters: the window is not a suffix of the log; it holds
messages the projector invented (message-level projectors); its summaries' coverage errors
(:func:`models.summarising.coverage_errors`)."""
CHECKS = (*COUNTERS, *EXTRA_CHECKS, *PROVIDERS)
"""… and a provider's name: the window breaks a rule of that API (:mod:`models.provider_rules`),
so the request would be refused."""


@dataclass(frozen=True)
class Request:
    """Request ``index`` (0-based) of ``session``, made after the first ``end`` events.

    ``window.history`` is the session's prompt as the replay grows it: when the request is
    yielded it holds exactly the request's prompt; later requests append to it, which moves no
    position, so the window's events and report stay this request's own."""

    session: str
    index: int
    end: int
    window: Window


def replay_requests(
    session: str,
    events: Sequence[Event],
    budget: int,
    strategy: str | Strategy,
    cost: CostModel,
    at: Callable[[int], bool] | None = None,
) -> Iterator[Request]:
    """Every request of one session (events in read order), projected as the agent would: over
    the prompt its log implied then (:func:`models.summaries.prompt_events`: only the summaries
    written before the request count).

    The prompt grows as the agent's did: one :class:`History`, the events since the last
    request appended to it, so a built-in strategy costs O(log n) per request and a user
    strategy gets the same history with the new events appended (never a rebuilt list). Two
    things rebuild it from the current prompt (O(prompt)), keeping every window the one a
    fresh ``History(prompt_events(events[:end]))`` gives: a new SUMMARY (it drops events
    already in the prompt), and a window of a :class:`Window` subclass (a summarising or peer
    window reads its history lazily, so that history must stay the request's own prefix). A
    plain window's report is computed before the history grows, for the same reason.

    ``at`` (a request's ``end`` → project it?) projects only the requests it chooses, the
    others growing the prompt unprojected (the strategy is not called for them); None: all.
    """
    h = History(costs=(cost,))
    summaries: list[Event] = []
    dropped = dropped_by(summaries)
    shared, done = True, 0
    fn: Strategy | None = None
    for index, end in enumerate(request_points(events)):
        if fn is None:  # resolved once, at the first request (a file is loaded, a trimmer wrapped)
            fn = NamedStrategy(strategy_name(strategy), resolve_strategy(strategy))
        new, done = events[done:end], end
        fresh = [e for e in new if e.kind is Kind.SUMMARY]
        if fresh:
            summaries += fresh
            dropped = dropped_by(summaries)
        if fresh or not shared:
            h = History([e for e in (*h.events, *new) if not dropped(e)], costs=(cost,))
        else:
            h.extend([e for e in new if not dropped(e)] if summaries else new)
        if at is not None and not at(end):
            shared = True  # no window holds this prompt: the next request may grow it
            continue
        window = project(h, budget, fn, cost)
        shared = keeps_to_its_prefix(window)
        if shared:
            window.report  # noqa: B018 - computed now, over this request's prefix
        yield Request(session, index, end, window)


def keeps_to_its_prefix(window: Window) -> bool:
    """True when nothing of ``window`` reads its history past ``window.end``, so the replay may
    grow that history for the next request: a plain window (its report computed now), and a
    peer's window that invented nothing (its report stored; an invented summary's coverage is
    judged over the whole history, see :func:`models.summarising.coverage_by_rule`)."""
    kind = type(window)
    return kind is Window or (kind is PeerWindow and not window.invented)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Shapes:
    """What a log holds of the shapes a trimmer gets wrong. A replay can only fail on shapes its
    log holds, so a passing replay says which it met: a log with no parallel batch cannot show a
    trimmer cutting one. Counts add over sessions (``+``)."""

    parallel: int = 0
    """Batches of two or more CALLs from one model output."""
    dangling: int = 0
    """CALLs that never get a RESULT."""
    late: int = 0
    """RESULTs written after a USER that came after their CALL (a result a turn late)."""

    def __add__(self, other: Shapes) -> Shapes:
        return Shapes(self.parallel + other.parallel, self.dangling + other.dangling, self.late + other.late)

    def words(self) -> str:
        """``2 parallel batches, 0 dangling calls, 1 late result``."""
        counts = ((self.parallel, "parallel batch", "es"), (self.dangling, "dangling call", "s"),
                  (self.late, "late result", "s"))  # fmt: skip
        return ", ".join(f"{n} {name}{'' if n == 1 else plural}" for n, name, plural in counts)


def log_shapes(events: Sequence[Event]) -> Shapes:
    """The :class:`Shapes` of one session's events, in read order."""
    parallel = run = users = late = 0
    asked: dict[str | None, int] = {}  # call id -> USERs seen when it was called
    answered: set[str | None] = set()
    for e in events:
        run = run + 1 if e.kind is Kind.CALL else 0
        parallel += run == 2
        if e.kind is Kind.USER:
            users += 1
        elif e.kind is Kind.CALL:
            asked.setdefault(e.call_id, users)
        elif e.kind is Kind.RESULT:
            answered.add(e.call_id)
            late += e.call_id in asked and users > asked[e.call_id]
    return Shapes(parallel, len(asked.keys() - answered), late)


def check_value(window: Window, check: str) -> int:
    """The value of one check for a window (a counter of its report, or an extra check)."""
    if check == "nonSuffix":
        return int(window.events != window.history.events[window.start : window.end])
    if check == "invented":
        return int(getattr(window, "invented", 0))  # PeerWindow counts what it made up
    if check in PROVIDERS:
        return len(provider_findings(check, window.events, sent=True))  # a window is a request sent
    if check == "coverage":
        return coverage_errors(window)
    return int(getattr(window.report, check))


def parse_checks(spec: str) -> tuple[str, ...]:
    """``--fail-on orphanRes,overBudget`` as a tuple; an unknown name is a one-line error."""
    names = tuple(s.strip() for s in spec.split(",") if s.strip())
    unknown = [n for n in names if n not in CHECKS or n == "keptCost"]
    if unknown or not names:
        raise BadParameter(
            f"--fail-on: unknown check {', '.join(unknown) or repr(spec)} "
            f"(checks: {', '.join(c for c in CHECKS if c != 'keptCost')})"
        )
    return names


def rules_broken(window: Window, check: str, limit: int = 3) -> list[str]:
    """For a provider check, what the window breaks in the API's words: each rule with the event
    it names (``result-not-next at RESULT#8(c0)``), the first ``limit`` and how many more."""
    if check not in PROVIDERS:
        return []
    found = provider_findings(check, window.events, sent=True)
    words = [f"{rule} at {describe_events([window.events[i]])}" for rule, i in found[:limit]]
    return words + ([f"{len(found) - limit} more"] if len(found) > limit else [])


def named_check(window: Window, check: str) -> str:
    """A check the window breaks in words, a provider's with the rules it breaks there:
    ``anthropic (result-not-next at RESULT#8(c0))``."""
    rules = rules_broken(window, check)
    return f"{check} ({'; '.join(rules)})" if rules else check


def offences(window: Window, checks: Sequence[str]) -> list[str]:
    """The checks this window breaks (a non-zero value), in the order given."""
    return [c for c in checks if check_value(window, c)]


def describe_events(events: Sequence[Event], limit: int = 6) -> str:
    """The first events of a window in words: ``USER#3 CALL c1 RESULT c1 …``."""
    words = []
    for e in events[:limit]:
        words.append(f"{e.kind.name}#{e.seq}" + (f"({e.call_id})" if e.call_id is not None else ""))
    if len(events) > limit:
        words.append(f"… ({len(events) - limit} more)")
    return " ".join(words) or "(empty window)"
