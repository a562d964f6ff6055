"""SUMMARY events: what each one covers, which are live, and the prompt a log of them implies.

Compaction by summary appends a SUMMARY whose ``covers`` = ``[first_seq, last_seq]`` names the
events of its session it stands for. Every rule about them is written once, here: ``lint``
reports :func:`coverage_faults`, a model may use it as a property, and the projector sends
:func:`prompt_events`.

* Coverage is decided by ``seq``, never by ``ts``: a summary covers exactly the events of its
  session whose seq lies in its range.
* A summary is *live* unless a later summary of its session covers its seq (re-compaction
  replaces it). An event any summary covers is *dropped* from the prompt.
* The prompt holds every event no summary covers, in read order — the live summaries among
  them, where they were written — so a summary is never sent beside an event it covers, and
  never with part of its range.
* Coverage is *exact* when every dropped event is covered by exactly one live summary, no live
  summary covers one end of a CALL/RESULT pair without the other (a call still open when it was
  summarised, a pending approval, is the worst case: its RESULT arrives for a call the prompt no
  longer holds), and a reader that decided coverage by ``ts`` (the stamps of a summary's first
  and last covered events) would drop and keep the same events.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from turncheck.models.events import Event, Kind

_SUMMARY = Kind.SUMMARY

COVERAGE_PROBLEMS: dict[str, str] = {
    "summary-covers-nothing": "SUMMARY whose covers range holds no event of its session",
    "covered-twice": "event covered by more than one live SUMMARY",
    "lost-in-recompaction": "event covered only by SUMMARYs a later SUMMARY replaced: dropped, summarised by nothing live",
    "summary-covers-open-call": "SUMMARY covering a CALL whose RESULT comes after the summary, or never (a pending call or approval summarised away)",
    "summary-splits-pair": "SUMMARY covering one end of a CALL/RESULT pair but not the other",
    "clock-skew-coverage": "event a reader deciding coverage by ts would drop unsummarised, or send beside its SUMMARY",
}  # fmt: skip
"""The coverage findings, each a ``lint`` problem (rows of :data:`models.lint.PROBLEMS`)."""
INEXACT = ("covered-twice", "lost-in-recompaction", "summary-covers-open-call", "summary-splits-pair")
"""The findings that break exact coverage (a summary of nothing drops nothing; a skewed clock
misleads only a reader that goes by ``ts``)."""


@dataclass(frozen=True)
class Fault:
    """One coverage finding: ``problem`` (a key of :data:`COVERAGE_PROBLEMS`), the summary it is
    about, the event it is about (``None`` for a summary that covers nothing) and the detail in words."""

    problem: str
    summary: Event
    event: Event | None
    detail: str


def _covered(summary: Event, e: Event) -> bool:
    first, last = summary.covers or (0, -1)
    return e.session == summary.session and first <= e.seq <= last and e is not summary


def _union(summaries: Sequence[Event]) -> dict[str, tuple[list[int], list[int]]]:
    """Per session, the starts and running largest ends of every summary's range, sorted by start:
    a seq is covered when the range with the last start at or before it reaches it."""
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in summaries:
        if s.covers is not None:
            ranges[s.session].append(s.covers)
    out = {}
    for session, rs in ranges.items():
        rs.sort()
        out[session] = ([a for a, _ in rs], list(accumulate((b for _, b in rs), max)))
    return out


def _dropped(union: dict[str, tuple[list[int], list[int]]], e: Event) -> bool:
    found = union.get(e.session)
    if found is None:
        return False
    starts, ends = found
    k = bisect_right(starts, e.seq)
    return k > 0 and ends[k - 1] >= e.seq


def prompt_events(events: Sequence[Event]) -> Sequence[Event]:
    """The prompt a log implies (events in read order, any sessions): every event no summary
    covers, the live summaries among them where they were written. A log without summaries is
    returned as it is."""
    summaries = [e for e in events if e.kind is _SUMMARY]
    if not summaries:
        return events
    dropped = dropped_by(summaries)
    return [e for e in events if not dropped(e)]


def dropped_by(summaries: Sequence[Event]) -> Callable[[Event], bool]:
    """Whether ``summaries`` drop an event from the prompt (some summary's range covers its seq).

    Coverage only grows as a log does (a new summary drops events, none brings one back), so a
    replay that grows its prompt request by request filters each new event by the summaries
    known so far, and refilters its prompt only when a new summary arrives
    (:func:`models.per_request.replay_requests`): the same prompt :func:`prompt_events` gives.
    """
    union = _union(summaries)
    return lambda e: _dropped(union, e)


def coverage_faults(events: Sequence[Event]) -> list[Fault]:
    """Every coverage finding of a log (any sessions, any order), by seq within each session."""
    faults: list[Fault] = []
    by_session: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_session[e.session].append(e)
    for evs in by_session.values():
        if any(e.kind is _SUMMARY for e in evs):
            faults += _session_faults(sorted(evs, key=lambda e: e.seq))
    return faults


def _session_faults(ordered: list[Event]) -> list[Fault]:
    seqs = [e.seq for e in ordered]
    summaries = [e for e in ordered if e.kind is _SUMMARY]
    union = _union(summaries)
    dropped = [_dropped(union, e) for e in ordered]
    faults: list[Fault] = []
    owner: dict[int, Event] = {}  # position -> the first live summary covering it
    partner = _pairs(ordered)
    stamped = sorted((e.ts, i) for i, e in enumerate(ordered) if e.kind is not _SUMMARY)
    stamps = ([t for t, _ in stamped], [i for _, i in stamped])
    for s in summaries:
        if _dropped(union, s):
            continue
        first, last = s.covers or (0, -1)
        lo, hi = bisect_left(seqs, first), bisect_right(seqs, last)
        if lo == hi:
            faults.append(
                Fault(
                    "summary-covers-nothing",
                    s,
                    None,
                    f"no event of session {s.session} in seq {first}..{last}",
                )
            )
            continue
        for i in range(lo, hi):
            e = ordered[i]
            if i in owner:
                faults.append(Fault("covered-twice", s, e, f"also covered by SUMMARY seq {owner[i].seq}"))
            else:
                owner[i] = s
            other = partner.get(i)
            if e.kind is Kind.CALL and (other is None or ordered[other].seq > s.seq):
                when = (
                    "never gets a RESULT"
                    if other is None
                    else f"gets its RESULT at seq {ordered[other].seq}, after the summary"
                )
                faults.append(Fault("summary-covers-open-call", s, e, f"the call {when}"))
            elif other is not None and not lo <= other < hi:
                faults.append(
                    Fault(
                        "summary-splits-pair",
                        s,
                        e,
                        f"its partner {ordered[other].kind.name} seq {ordered[other].seq} is not covered",
                    )
                )
        faults += _skew_faults(s, ordered, lo, hi, dropped, stamps)
    for i, e in enumerate(ordered):
        if dropped[i] and i not in owner and e.kind is not _SUMMARY:
            by = max((s for s in summaries if _covered(s, e)), key=lambda s: s.seq)
            faults.append(
                Fault("lost-in-recompaction", by, e, f"SUMMARY seq {by.seq} covering it was replaced")
            )
    return faults


def _pairs(ordered: list[Event]) -> dict[int, int]:
    """CALL and RESULT positions paired by call id, k-th CALL with k-th RESULT (as ``lint`` pairs)."""
    calls: dict[str | None, list[int]] = defaultdict(list)
    results: dict[str | None, list[int]] = defaultdict(list)
    for i, e in enumerate(ordered):
        if e.kind is Kind.CALL:
            calls[e.call_id].append(i)
        elif e.kind is Kind.RESULT:
            results[e.call_id].append(i)
    out: dict[int, int] = {}
    for cid, cs in calls.items():
        for c, r in zip(cs, results.get(cid, ()), strict=False):
            out[c], out[r] = r, c
    return out


def _skew_faults(s: Event, ordered: list[Event], lo: int, hi: int, dropped: list[bool],
                 stamps: tuple[list[float], list[int]]) -> list[Fault]:  # fmt: skip
    """What a reader that hides the events stamped from the summary's first to its last covered
    event's ``ts`` would get wrong: kept events it hides, covered events it sends (``stamps``:
    every non-summary event's ts, sorted, and its position)."""
    t0, t1 = ordered[lo].ts, ordered[hi - 1].ts
    ts, where = stamps
    out = []
    for i in where[bisect_left(ts, t0) : bisect_right(ts, t1)]:
        if not dropped[i]:
            out.append(Fault("clock-skew-coverage", s, ordered[i],
                             f"ts {ordered[i].ts:g} lies in the summary's ts {t0:g}..{t1:g}: hidden, summarised by nothing"))  # fmt: skip
    for e in ordered[lo:hi]:
        if e.kind is not _SUMMARY and not t0 <= e.ts <= t1:
            out.append(Fault("clock-skew-coverage", s, e,
                             f"ts {e.ts:g} lies outside the summary's ts {t0:g}..{t1:g}: sent beside it"))  # fmt: skip
    return out


def exact_coverage(events: Sequence[Event]) -> bool:
    """The ``exact-coverage`` invariant of a log: none of the :data:`INEXACT` findings."""
    return not any(f.problem in INEXACT for f in coverage_faults(events))


def sent_beside(events: Sequence[Event]) -> int:
    """Events sent together with a summary that covers them (a window's coverage errors)."""
    summaries = [e for e in events if e.kind is _SUMMARY]
    if not summaries:
        return 0
    union = _union(summaries)
    return sum(1 for e in events if _dropped(union, e))
