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

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from turncheck.models.cost import CostModel
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import Strategy, Window, project
from turncheck.models.provider_rules import PROVIDERS, provider_findings
from turncheck.models.report import COUNTERS
from turncheck.models.summaries import prompt_events
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
    """Request ``index`` (0-based) of ``session``, made after the first ``end`` events."""

    session: str
    index: int
    end: int
    window: Window


def request_points(events: Sequence[Event] | Sequence[int]) -> list[int]:
    """Every ``p`` such that the agent calls its model with ``events[:p]``, in order: the one
    definition of a request, used by every engine, command and scenario.

    A default agent loop (openai-agents-python's ``AgentRunner.run``: the run's input is saved
    to the session, then each pass of ``while True`` calls the model once, and after the tools
    run ``NextStepRunAgain`` saves the calls and their outputs and loops to call it again)
    calls the model whenever it holds input the model has not answered:

    * after each USER — also the first of two in a row, and a USER right after a RESULT: a call
      that raised (a refused request) leaves the session ending on its input, and the user
      writes again, so the request before the second USER was made;
    * after the last RESULT of a batch whose every call is answered (not mid-batch: the loop
      waits for the rest);
    * before every model output (a TERM, or the first CALL of a run) — the output proves the
      request, even after a dangling call or a RESULT that came a turn late.

    A SUMMARY is written by compaction before the request it shrinks, so a request point never
    falls just before one: it moves past it (and a log that opens on summaries makes its first
    request with them). ``events`` may also be their kinds alone (``Kind`` or its int code, as
    :attr:`History.kind <turncheck.History>` holds): without ids, a batch is answered once it has
    as many RESULTs as CALLs. Invariant: ``0 < p ≤ len(events)``, strictly increasing; an empty
    log has none; ``len(events)`` is included exactly when a request is pending at the end.
    """
    marks = [
        (i, e.kind, e.call_id) if isinstance(e, Event) else (i, Kind(e), None) for i, e in enumerate(events)
    ]
    skeleton = [mark for mark in marks if mark[1] is not Kind.SUMMARY]
    m, out = len(skeleton), []
    for k in range(m + 1):
        prev, nxt = (skeleton[k - 1][1] if k else None), (skeleton[k][1] if k < m else None)
        output_next = nxt is Kind.TERM or (nxt is Kind.CALL and prev is not Kind.CALL)
        input_waits = prev is Kind.USER or (
            prev is Kind.RESULT and nxt is not Kind.RESULT and batch_answered(skeleton, k)
        )
        p = skeleton[k][0] if k < m else len(events)  # past the summaries written before the request
        if (output_next or input_waits) and p > 0:
            out.append(p)
    return out


def batch_answered(skeleton: Sequence[tuple[int, Kind, str | None]], k: int) -> bool:
    """Whether every call of the newest run of CALLs before ``skeleton[k]`` has a RESULT after it
    (the agent has all the tool results it waits for, so its next step is a model call). Calls
    and results pair by id, counted, so a batch that reuses an id needs a RESULT for each."""
    answered: Counter[str | None] = Counter()
    while k and skeleton[k - 1][1] is Kind.RESULT:
        k -= 1
        answered[skeleton[k][2]] += 1
    calls: Counter[str | None] = Counter()
    while k and skeleton[k - 1][1] is Kind.CALL:
        k -= 1
        calls[skeleton[k][2]] += 1
    return not calls - answered


def replay_requests(
    session: str, events: Sequence[Event], budget: int, strategy: str | Strategy, cost: CostModel
) -> Iterator[Request]:
    """Every request of one session (events in read order), projected as the agent would: over
    the prompt its log implied then (:func:`models.summaries.prompt_events`: only the summaries
    written before the request count)."""
    for index, end in enumerate(request_points(events)):
        h = History(prompt_events(events[:end]), costs=(cost,))
        yield Request(session, index, end, project(h, budget, strategy, cost))


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
        return len(provider_findings(check, window.events))
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
