"""Summarising strategies: compaction by summary, as a projector the testbench measures beside M0–M5.

A summarising strategy sends, before a suffix of the history, SUMMARY events it makes for the
older part (:class:`SummaryWindow`); a made summary's size is ``RATIO`` × the characters it
covers, costed by the window's cost model like any event, and it covers its events by ``seq``
(:mod:`models.summaries`). The structural report is that of the raw suffix (a RESULT whose CALL
went into a summary is an orphan), and :func:`coverage_errors` counts what the summaries get
wrong: events sent beside a summary covering them, events covered twice, calls left open or
pairs split by a summary's edge.

| id    | rule |
|-------|------|
| SUM   | the oldest whole turns become one summary: the first turn start ``s`` (at most the newest turn's) at which summary + ``[s, n)`` fits the budget; else ``s`` is the newest turn's start (over budget) |
| SLIDE | Google ADK's sliding window (``EventsCompactionConfig(compaction_interval=3, overlap_size=1)``): after every third completed turn, one summary of those turns and the turn before them; every summary is sent, then the turns no summary covers — by turn count, never by budget |
"""

from __future__ import annotations

from bisect import bisect_left
from operator import itemgetter

from turncheck.models.cost import CharsCost, CostModel
from turncheck.models.events import CALL_CODE, RESULT_CODE, Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import (
    Window,
    _fit,
    _turn_start_at_or_after,
    _window,
    register_strategy,
    structural_report,
)
from turncheck.models.report import Report
from turncheck.models.summaries import INEXACT, coverage_faults, sent_beside

_CALL, _TERM, _SUMMARY = CALL_CODE, int(Kind.TERM), int(Kind.SUMMARY)
_PAIRED = (CALL_CODE, RESULT_CODE)
RATIO = 0.02
"""A made summary's characters per covered character."""
INTERVAL, OVERLAP = 3, 1
"""SLIDE's turns per compaction and turns of overlap with the previous one (ADK's example)."""


class SummaryWindow(Window):
    """A window that sends a summary of each run of history positions in ``spans`` (their
    ``sizes``: characters and CJK flag) before ``history.events[start:end]``; ``cost`` counts
    them. The summary events (``made``) are built when read: a study reads the report and the
    coverage, which need only the spans. Never empty while it sends a summary."""

    _fields = (*Window._fields, "spans", "sizes")

    def __new__(  # type: ignore[misc]
        cls, history: History, strategy: str, budget: int, start: int, end: int, cost: int,
        spans: tuple[tuple[int, int], ...], sizes: tuple[tuple[int, bool], ...],
    ) -> SummaryWindow:  # fmt: skip
        return tuple.__new__(cls, (history, strategy, budget, start, end, cost, (), 0, 0, spans, sizes))

    spans: tuple[tuple[int, int], ...] = property(itemgetter(9))  # type: ignore[assignment]
    sizes: tuple[tuple[int, bool], ...] = property(itemgetter(10))  # type: ignore[assignment]

    @property
    def made(self) -> tuple[Event, ...]:
        """The summaries sent, in order: each covers the seqs of its span, and follows every
        event of the history (so a RESULT sent after its CALL went into a summary is a split pair)."""
        h = self.history
        after = _seq_after(h)
        return tuple(made_summary(h, lo, hi, after + k, size)
                     for k, ((lo, hi), size) in enumerate(zip(self.spans, self.sizes, strict=True)))  # fmt: skip

    @property
    def events(self) -> list[Event]:  # type: ignore[override]
        return [*self.made, *self.history.events[self.start : self.end]]

    @property
    def empty(self) -> bool:  # type: ignore[override]
        return self.start >= self.end and not self.spans

    @property
    def report(self) -> Report:  # type: ignore[override]
        report = structural_report(self.history, self.start, self.cost, self.budget)
        return report._replace(empty=int(self.empty and len(self.history) > 0))


def coverage_errors(window: Window) -> int:
    """A window's coverage errors: events sent beside a summary that covers them, plus the
    faults of the summaries the strategy made (:data:`INEXACT`) over the history.

    The rule is :func:`coverage_by_rule`; for made summaries over a history in seq order and
    without summaries of its own (each made from a run of positions) the same count is read off the history's index in
    O(summaries × log n): overlaps of the runs with the raw part and with each other, open CALLs
    inside a run, and pairs across a run's edge when the edge is not a safe cut.
    """
    h = window.history
    spans: tuple[tuple[int, int], ...] = getattr(window, "spans", ())
    if not spans or h.seq_inv[len(h)] or _SUMMARY in h.kind:  # the log's own summaries: the rule
        return coverage_by_rule(window)
    errors = sum(max(0, min(hi, window.end) - max(lo, window.start)) for lo, hi in spans)
    edges = sorted([(lo, 1) for lo, _ in spans] + [(hi, -1) for _, hi in spans])
    depth, at = 0, 0
    for pos, step in edges:
        errors += max(0, depth - 1) * (pos - at)
        depth, at = depth + step, pos
    cuts, open_calls = h.safe_cuts, h.open_calls
    for lo, hi in spans:
        if _is_cut(cuts, lo) and _is_cut(cuts, hi):
            errors += bisect_left(open_calls, hi) - bisect_left(open_calls, lo)
        else:
            kind, partner = h.kind, h.partner
            errors += sum(1 for i in range(lo, hi) if (kind[i] == _CALL and partner[i] < 0)
                          or (kind[i] in _PAIRED and partner[i] >= 0 and not lo <= partner[i] < hi))  # fmt: skip
    return errors


def _is_cut(cuts: list[int], pos: int) -> bool:
    k = bisect_left(cuts, pos)
    return k < len(cuts) and cuts[k] == pos


def coverage_by_rule(window: Window) -> int:
    """:func:`coverage_errors` by :mod:`models.summaries`' rules over every event."""
    errors = sent_beside(window.events)
    made = getattr(window, "made", ())
    if made:
        mine = {id(s) for s in made}
        faults = coverage_faults([*window.history.events, *made])
        errors += sum(1 for f in faults if id(f.summary) in mine and f.problem in INEXACT)
    return errors


SIZES = (CharsCost(), CharsCost(cjk=True))
"""The prefix sums a made summary's size is read from (characters, CJK characters)."""


def summary_size(h: History, lo: int, hi: int) -> tuple[int, bool]:
    """Characters and CJK flag of the summary of positions ``[lo, hi)``: ``RATIO`` × their
    characters, CJK when most of them are (from the history's prefix sums of :data:`SIZES`)."""
    size, cjk = h.prefix(SIZES[0]), h.prefix(SIZES[1])
    chars, cjk_chars = size[hi] - size[lo], cjk[hi] - cjk[lo]
    return round(RATIO * chars), 2 * cjk_chars >= chars > 0


def summary_cost(cost: CostModel, size: tuple[int, bool]) -> int:
    """What a summary of that size costs: a cost model prices an event by its kind and content."""
    return cost.event_cost(Event(0, "", 0, Kind.SUMMARY, chars=size[0], cjk=size[1]))


def made_summary(h: History, lo: int, hi: int, seq: int, size: tuple[int, bool]) -> Event:
    """The summary ``seq`` of positions ``[lo, hi)`` (non-empty) of ``size``, covering their seqs."""
    events = h.events
    if h.seq_inv[hi] - h.seq_inv[lo + 1]:
        seqs = [e.seq for e in events[lo:hi]]
        covers = (min(seqs), max(seqs))
    else:
        covers = (events[lo].seq, events[hi - 1].seq)
    last = events[hi - 1]
    return Event(seq, last.session, events[lo].turn, Kind.SUMMARY, ts=last.ts, chars=size[0], cjk=size[1],
                 covers=covers)  # fmt: skip


def _seq_after(h: History) -> int:
    """A seq after every event of the history: a made summary follows what it was made from."""
    n = len(h)
    return (h.events[-1].seq if not h.seq_inv[n] else max(e.seq for e in h.events)) + 1


def summarise_oldest_turns(history: History, budget: int, cost: CostModel) -> Window:
    """SUM: the oldest whole turns become one summary; the newest turn is never summarised."""
    h = history
    i0, p, frame = _fit(h, budget, cost)
    n = len(p) - 1
    newest = h.seg_starts[-1] if n else 0
    first = min(_turn_start_at_or_after(h, i0), newest)
    if i0 == 0 or first == 0:
        return _window(h, "SUM", budget, p, frame, 0)
    for s in h.seg_starts[h.seg_idx[first] :]:
        size = summary_size(h, 0, s)
        total = frame + summary_cost(cost, size) + p[n] - p[s]
        if total <= budget or s == newest:
            return SummaryWindow(h, "SUM", budget, s, n, total, ((0, s),), (size,))
    raise AssertionError("unreachable: the newest turn's start is the last candidate")  # pragma: no cover


def sliding_window(history: History, budget: int, cost: CostModel) -> Window:
    """SLIDE: a summary per ``INTERVAL`` completed turns (and ``OVERLAP`` turns before them)."""
    h = history
    p = h.prefix(cost)
    n = len(p) - 1
    bounds = [*h.seg_starts, n]
    done = len(h.seg_starts) - (n > 0 and h.kind[-1] != _TERM)
    spans = tuple(
        (bounds[max(0, k - INTERVAL - OVERLAP)], bounds[k]) for k in range(INTERVAL, done + 1, INTERVAL)
    )
    if not spans:
        return _window(h, "SLIDE", budget, p, cost.frame, 0)
    sizes = tuple(summary_size(h, lo, hi) for lo, hi in spans)
    s = spans[-1][1]
    total = cost.frame + sum(summary_cost(cost, size) for size in sizes) + p[n] - p[s]
    return SummaryWindow(h, "SLIDE", budget, s, n, total, spans, sizes)


register_strategy("SUM", summarise_oldest_turns, colour="#6b6ecf", marker="*", compared=False)
register_strategy("SLIDE", sliding_window, colour="#d6616b", marker="X", linestyle="--", compared=False)
SUMMARISING = ("SUM", "SLIDE")
"""The summarising strategies, which the testbench measures beside the compared ones."""
