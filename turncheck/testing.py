"""``turncheck.testing``: check your own projector from pytest, with Hypothesis.

Three things, all public and documented in ``docs/your-agent.md``:

* **strategies** for event histories — :func:`histories` (well-formed turns, parallel and dangling
  calls, optional real text), :func:`multi_session` (several sessions interleaved in one log),
  :func:`event_soups` (anything at all: reordered seqs, reused ids, mixed sources) and
  :data:`HOSTILE_TEXT` (quotes, backslashes, control characters, U+2028, CJK, emoji — the
  characters the byte-exact cost models must count right);
* :func:`check_projector` — runs a projector (ours, yours, ``"pkg.mod:fn"``, a
  ``@message_trimmer``) before every model request of every drawn history and raises an
  ``AssertionError`` whose message is the *shrunk* counterexample in domain words;
* the pytest plugin (:mod:`turncheck.pytest_plugin`, registered through the ``pytest11`` entry
  point) gives tests the ``check_projector`` fixture, and :func:`turncheck.machine_for` gives a
  protocol model's state machine, which runs under the active settings profile.

Invariant kept: :func:`check_projector` uses only public Hypothesis API and the active settings
profile (unless ``settings=`` is given), so ``--hypothesis-seed``, the example database and the
user's ``max_examples`` apply exactly as to their own ``@given`` tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import given
from hypothesis import settings as Settings
from hypothesis import strategies as st

from turncheck.models.cost import CostModel, EstimateCost
from turncheck.models.events import Event, Kind
from turncheck.models.per_request import (
    Request,
    describe_events,
    named_check,
    offences,
    parse_checks,
    replay_requests,
)
from turncheck.models.projector import Strategy, resolve_strategy, strategy_name

__all__ = [
    "HOSTILE_TEXT",
    "histories",
    "multi_session",
    "event_soups",
    "budgets",
    "check_projector",
    "check_known_failures",
    "check_store_failures",
    "check_diff",
    "describe_counterexample",
    "well_formed",
    "soup",
]

HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(list('ab "\\\n\t\x01\x7f\u2028\u2029汉字😀é<>&')), min_size=0, max_size=12
)
"""Short texts made of what JSON escaping and token estimates get wrong most often."""


@st.composite
def histories(
    draw: st.DrawFn,
    max_turns: int = 6,
    dangling: bool = False,
    parallel: bool = True,
    text: bool = False,
    session: str = "s",
) -> list[Event]:
    """One session's seq-ordered turns ``USER (CALL c, RESULT c)* TERM``.

    ``parallel`` lets a batch hold two calls whose results come back in any order; ``dangling``
    drops some results (the call never answered); ``text`` gives every event a
    :data:`HOSTILE_TEXT` text instead of a size (for the byte-exact cost models).
    Shrinks towards fewer turns, fewer calls and smaller events.
    """
    events: list[Event] = []
    seq = 0
    cid = 0

    def add(turn: int, kind: Kind, call_id: str | None = None) -> None:
        nonlocal seq
        if text:
            body = draw(HOSTILE_TEXT)
            events.append(Event(seq, session, turn, kind, call_id, ts=float(seq), text=body, chars=len(body)))
        else:
            chars = draw(st.integers(0, 60))
            cjk = draw(st.booleans())
            events.append(Event(seq, session, turn, kind, call_id, ts=float(seq), chars=chars, cjk=cjk))
        seq += 1

    for turn in range(draw(st.integers(0, max_turns))):
        add(turn, Kind.USER)
        for _ in range(draw(st.integers(0, 3))):
            batch = draw(st.integers(1, 2)) if parallel else 1
            ids = []
            for _ in range(batch):
                ids.append(f"c{cid}")
                cid += 1
                add(turn, Kind.CALL, ids[-1])
            order = draw(st.permutations(ids)) if batch > 1 else ids
            for c in order:
                if dangling and draw(st.integers(0, 4)) == 0:
                    continue
                add(turn, Kind.RESULT, c)
        add(turn, Kind.TERM)
    return events


@st.composite
def multi_session(draw: st.DrawFn, sessions: int = 3, max_turns: int = 3, **options: Any) -> list[Event]:
    """Several sessions' histories interleaved in one log (each session's order kept, ``seq``
    renumbered over the whole log), as concurrent conversations append to one store."""
    queues = [list(draw(histories(max_turns=max_turns, session=f"s{i}", **options))) for i in range(sessions)]
    out: list[Event] = []
    while any(queues):
        live = [q for q in queues if q]
        q = live[draw(st.integers(0, len(live) - 1))]
        e = q.pop(0)
        out.append(Event(len(out), e.session, e.turn, e.kind, e.call_id, ts=float(len(out)), text=e.text,
                         chars=e.chars, cjk=e.cjk))  # fmt: skip
    return out


_MESSAGES = [Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM]
"""The kinds a soup draws from: a SUMMARY needs a ``covers`` range, which a soup would not keep."""


@st.composite
def event_soups(draw: st.DrawFn, max_len: int = 18, with_text: bool = False) -> list[Event]:
    """Any sequence of events: reordered seqs, tied stamps, reused call ids, several sources."""
    n = draw(st.integers(0, max_len))
    seqs = draw(st.permutations(list(range(n))))
    events = []
    for i in range(n):
        kind = draw(st.sampled_from(_MESSAGES))
        call_id = f"c{draw(st.integers(0, 3))}" if kind in (Kind.CALL, Kind.RESULT) else None
        body = draw(HOSTILE_TEXT) if with_text else None
        events.append(
            Event(
                seq=seqs[i],
                session="k",
                turn=draw(st.integers(0, 3)),
                kind=kind,
                call_id=call_id,
                ts=float(draw(st.integers(0, 4))),
                text=body,
                chars=draw(st.integers(0, 50)),
                cjk=draw(st.booleans()),
                source=draw(st.sampled_from(["a", "b", None])),
            )
        )
    return events


well_formed = histories
"""The name the project's own tests used before the strategies were shipped."""
soup = event_soups


def budgets(low: int = 1, high: int = 200) -> st.SearchStrategy[int]:
    """Budgets in the cost model's unit; shrinks towards ``low``."""
    return st.integers(low, high)


def describe_counterexample(
    name: str, events: Sequence[Event], request: Request, broken: Sequence[str], cost: CostModel
) -> str:
    """A failing request in domain words: the history the agent had, and the window it sent."""
    w = request.window
    lines = [
        f"projector {name} breaks {', '.join(named_check(w, c) for c in broken)} at request {request.index} of this "
        f"{len(events)}-event history (budget {w.budget}, cost model {cost.name}):"
    ]
    for e in events:
        what = e.kind.name + (f" {e.call_id}" if e.call_id is not None else "")
        lines.append(f"  seq {e.seq:<3} turn {e.turn:<2} {what:<12} cost {cost.event_cost(e)}")
    r = w.report
    lines.append(
        f"window sent (cost {w.cost}/{w.budget}): {describe_events(w.events, limit=12)}"
        f"  [orphanRes {r.orphanRes}, orphanCall {r.orphanCall}, overBudget {r.overBudget}, empty {r.empty}]"
    )
    return "\n".join(lines)


def check_projector(
    projector: str | Strategy | Callable[..., Any],
    *,
    checks: Sequence[str] = ("orphanRes",),
    cost: CostModel | None = None,
    history: st.SearchStrategy[list[Event]] | None = None,
    budget: st.SearchStrategy[int] | None = None,
    settings: Settings | None = None,
    key: str = "",
) -> None:
    """Run ``projector`` before every model request of Hypothesis-drawn histories.

    Parameters
    ----------
    projector
        ``(history, budget, cost) -> Window``, a ``@message_trimmer``, or any strategy id /
        reference the command line takes (``"M5"``, ``"pkg.mod:fn"``, ``"messages:pkg.mod:fn"``).
    checks
        Counters that must stay 0 in every window (``orphanRes``, ``orphanCall``, ``overBudget``,
        ``empty``, ``pairSplit``, …, or ``nonSuffix`` / ``invented``).
    cost
        The cost model (default: the token estimate).
    history, budget
        Strategies to draw from (default: :func:`histories` with parallel and dangling calls,
        :func:`budgets`).
    settings
        Hypothesis settings for this check (default: the active profile without its deadline —
        one example replays every request of a history, and a deadline turns a busy machine into
        a failure of the projector).
    key
        What else tells this check's saved failures from another's in the example database
        (the fixture passes the test's node id); the projector's name and the checks always do.

    Raises
    ------
    AssertionError
        With the shrunk counterexample: the history up to the failing request, the window sent
        and the broken checks.
    """
    __tracebackhide__ = True  # pytest shows the user's test line, not ours
    fn = resolve_strategy(projector)  # type: ignore[arg-type]
    name = strategy_name(projector if isinstance(projector, str) else fn)
    wanted = parse_checks(",".join(checks))
    model = cost if cost is not None else EstimateCost()
    failures: list[tuple[list[Event], int]] = []

    @given(events=history if history is not None else histories(dangling=True),
           limit=budget if budget is not None else budgets())  # fmt: skip
    def projector_keeps_its_checks(events: list[Event], limit: int) -> None:
        by_session: dict[str, list[Event]] = {}
        for e in events:
            by_session.setdefault(e.session, []).append(e)
        for session, evs in by_session.items():
            for req in replay_requests(session, evs, limit, fn, model):
                broken = offences(req.window, wanted)
                if broken:
                    failures.append((list(evs[: req.end]), limit))
                    raise AssertionError(describe_counterexample(name, evs[: req.end], req, broken, model))

    # one inner function serves every projector: without a digest of its own, each check would
    # replay the failures Hypothesis saved for another (the hook Hypothesis's parametrize uses)
    inner = projector_keeps_its_checks.hypothesis.inner_test  # type: ignore[attr-defined]
    inner._hypothesis_internal_add_digest = f"{name}|{','.join(wanted)}|{key}".encode()
    test = (settings if settings is not None else Settings(deadline=None))(projector_keeps_its_checks)
    try:
        test()
    except AssertionError:
        if not failures:  # not our check (the projector itself asserted): Hypothesis's report stands
            raise
        events, limit = failures[-1]  # Hypothesis replays the shrunk example last
        found = first_offence(delete_events(events, limit, fn, model, wanted), limit, fn, model, wanted)
        if found is None:  # the prefix kept ends before the event that made its request one (a
            raise  # reply after a batch with calls left open): Hypothesis's own report stands
        smaller, req, broken = found
        raise AssertionError(describe_counterexample(name, smaller, req, broken, model)) from None


def first_offence(
    events: list[Event], limit: int, fn: Strategy, cost: CostModel, checks: Sequence[str]
) -> tuple[list[Event], Request, list[str]] | None:
    """The first request of ``events`` (one session) breaking a check, with the prefix it saw."""
    for req in replay_requests(events[0].session if events else "s", events, limit, fn, cost):
        broken = offences(req.window, checks)
        if broken:
            return events[: req.end], req, broken
    return None


def delete_events(
    events: list[Event], limit: int, fn: Strategy, cost: CostModel, checks: Sequence[str]
) -> list[Event]:
    """A last, domain-aware shrink of Hypothesis's counterexample: delete a whole turn, a CALL
    with its RESULT, a lone RESULT or a TERM while a check still breaks. Never a CALL alone, so
    no RESULT loses its CALL (that would be a broken log, not a broken projector)."""

    def units(evs: list[Event]) -> list[set[int]]:
        out: list[set[int]] = [
            {i for i, e in enumerate(evs) if e.turn == t} for t in sorted({e.turn for e in evs})
        ]
        for i, e in enumerate(evs):
            if e.kind is Kind.CALL:
                out.append(
                    {i} | {j for j, r in enumerate(evs) if r.kind is Kind.RESULT and r.call_id == e.call_id}
                )
            elif e.kind in (Kind.RESULT, Kind.TERM):
                out.append({i})
        return out

    current = events
    changed = True
    while changed:
        changed = False
        for unit in units(current):
            candidate = [e for i, e in enumerate(current) if i not in unit]
            found = first_offence(candidate, limit, fn, cost, checks) if candidate else None
            if found is not None:
                current, changed = found[0], True
                break
    return current


def check_known_failures(projector: str | Strategy) -> None:
    """Run ``projector`` on every history case of the real-failure corpus (``turncheck cases run
    --against``: each session as written, then continued; each window judged by the case's checks
    and by its history's API rules); raise an ``AssertionError`` naming each thread whose failure
    it reproduces or on whose history it sends a request the API refuses."""
    from turncheck.sim.cases import history_cases, run_against

    hit = [r for r in (run_against(c, projector) for c in history_cases()) if r.broke]
    if hit:
        lines = [f"  {r.case.source} ({r.case.name}): breaks {', '.join(r.broke)} at request {r.request}"
                 for r in hit]  # fmt: skip
        raise AssertionError(
            f"{strategy_name(projector)} breaks {len(hit)} history case(s) of the real-failure corpus (the "
            "thread's failure, or a rule of its history's API):\n" + "\n".join(lines)
        )


def check_store_failures(store: str | Callable[[str], Any]) -> None:
    """Race a session store on every store case of the corpus (``turncheck cases run --against
    store:…``): ``store`` is ``store:package.module:Factory`` or the factory itself, called with a
    session id and returning an openai-agents ``Session``. Raise an ``AssertionError`` naming each
    thread whose failure it reproduces, with the failing run's interleaving and schedule; a case
    whose library is absent is skipped, as ``cases run`` skips it."""
    from turncheck.sim.cases import store_cases
    from turncheck.sim.store_cases import check_store, load_store, race_store

    factory = load_store(store) if isinstance(store, str) else store
    name = store if isinstance(store, str) else f"store:{getattr(store, '__qualname__', store)}"
    check_store(factory)
    hit = [r for r in (race_store(c, name, factory) for c in store_cases()) if r.reproduced]
    if hit:
        lines = [
            f"  {r.case.source} ({r.case.name}):\n" + "\n".join(f"    {line}" for line in r.report)
            for r in hit
        ]
        raise AssertionError(f"{name} reproduces {len(hit)} real failure(s):\n" + "\n".join(lines))


def check_diff(
    old: str,
    new: str,
    events: Sequence[Event],
    budget: int,
    checks: Sequence[str] | str | None = None,
    cost: CostModel | None = None,
) -> None:
    """``project --per-request --strategy NEW --diff OLD`` on ``events``: raise an
    ``AssertionError`` naming each request whose window breaks, under ``new``, a check it held
    under ``old``."""
    from turncheck.models.request_diff import DEFAULT_CHECKS, diff_requests

    names = parse_checks(checks) if isinstance(checks, str) else tuple(checks or DEFAULT_CHECKS)
    sessions: dict[str, list[Event]] = {}
    for e in events:
        sessions.setdefault(e.session, []).append(e)
    d = diff_requests(sessions, budget, old, new, cost or EstimateCost(), names)
    if d.regressions:
        lines = [f"  session {c.session}, request {c.index}: {', '.join(c.old) or 'nothing'} → {', '.join(c.new)}"
                 for c in d.regressions]  # fmt: skip
        raise AssertionError(
            f"{new} breaks {', '.join(d.broken_checks())} where {old} held:\n" + "\n".join(lines)
        )
