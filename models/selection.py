"""What a peer library sent, and the window that describes it under our structural report.

A peer returns its own message objects; its adapter maps them back to positions of our
history (:class:`Selection`). Most peers keep a contiguous suffix, and then the window is
exactly ``window_from_start`` at the first kept position. Some do not: litellm may skip a
message that does not fit and keep an older one, or shorten a message's content; the OpenAI
Agents SDK drops unmatched calls and outputs inside its window. Such a selection is not a
suffix, and mapping it to one would misreport what the model is sent. It becomes a
:class:`PeerWindow`: ``start``/``end`` still span the history positions the library drew from
(so code that indexes the history with them stays right), while ``events``, ``cost`` and
``report`` describe exactly the events sent, and ``dropped_inside``/``shortened`` say how the
selection differs from the span.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any

from turncheck.models.cost import CostModel
from turncheck.models.events import Event, Kind, detect_cjk
from turncheck.models.history import History
from turncheck.models.message_spans import Span
from turncheck.models.projector import Window, window_from_start
from turncheck.models.report import Report


@dataclass(frozen=True)
class Selection:
    """History positions a peer sent, in the order it sent them; ``replaced`` maps a position
    to the event as sent when the peer changed its content; ``untrimmed_on_error`` is set when
    the peer swallowed an internal error and returned its input unchanged; ``refused`` is set
    when the peer raised instead of calling the model (nothing is sent); ``invented`` are
    messages the peer made up (a summary, a "skipped N messages" note) as ``(k, event)``: the
    event is sent just before the ``k``-th kept position (``k = len(positions)``: at the end)."""

    positions: tuple[int, ...]
    replaced: Mapping[int, Event] = field(default_factory=dict)
    untrimmed_on_error: bool = False
    invented: tuple[tuple[int, Event], ...] = ()
    refused: bool = False

    def is_suffix_of(self, n: int) -> bool:
        """True when the peer sent exactly the events ``[s, n)`` unchanged, for some ``s``."""
        if self.replaced or self.invented or self.refused:
            return False
        p = self.positions
        return not p or (len(p) == n - p[0] and p == tuple(range(p[0], n)))  # no O(n) range first


class PeerWindow(Window):
    """A window whose sent events are not the contiguous suffix ``[start, end)``.

    Its report describes the events sent (computed when it is built, from a history of exactly
    those events), so it is stored rather than derived from ``start``.
    """

    _fields = (*Window._fields, "peer_report", "sent", "dropped_inside", "shortened", "untrimmed_on_error",
               "invented", "reordered", "refused")  # fmt: skip

    def __new__(  # type: ignore[misc]
        cls,
        history: History,
        strategy: str,
        budget: int,
        start: int,
        end: int,
        cost: int,
        report: Report,
        sent: tuple[Event, ...] = (),
        dropped_inside: tuple[int, ...] = (),
        shortened: tuple[int, ...] = (),
        untrimmed_on_error: bool = False,
        invented: int = 0,
        reordered: bool = False,
        refused: bool = False,
    ) -> PeerWindow:
        fields = (history, strategy, budget, start, end, cost, (), 0, 0, report, sent, dropped_inside,
                  shortened, untrimmed_on_error, invented, reordered, refused)  # fmt: skip
        return tuple.__new__(cls, fields)

    report: Report = property(itemgetter(9))  # type: ignore[assignment]
    sent: tuple[Event, ...] = property(itemgetter(10))  # type: ignore[assignment]
    dropped_inside: tuple[int, ...] = property(itemgetter(11))  # type: ignore[assignment]
    shortened: tuple[int, ...] = property(itemgetter(12))  # type: ignore[assignment]
    untrimmed_on_error: bool = property(itemgetter(13))  # type: ignore[assignment]
    invented: int = property(itemgetter(14))  # type: ignore[assignment]
    reordered: bool = property(itemgetter(15))  # type: ignore[assignment]
    refused: bool = property(itemgetter(16))  # type: ignore[assignment]

    @property
    def events(self) -> list[Event]:  # type: ignore[override]
        return list(self.sent)

    @property
    def empty(self) -> bool:  # type: ignore[override]
        return not self.sent

    @property
    def made(self) -> tuple[Event, ...]:
        """The summaries the peer made (invented SUMMARY events, not the log's own), whose
        coverage :func:`models.summarising.coverage_errors` judges over the history."""
        if not self.invented:
            return ()
        own = {id(e) for e in self.history.events}
        return tuple(e for e in self.sent if e.kind is Kind.SUMMARY and id(e) not in own)


def window_of(history: History, budget: int, cost: CostModel, selection: Selection, name: str) -> Window:
    """The window for a peer's selection: exact suffix window, or a :class:`PeerWindow`.

    For a non-suffix selection the report is computed over a history of exactly the sent
    events (so ``orphanRes``, ``orphanCall``, ``overBudget``, ``keptCost``, ``dupCallId`` … are
    those of what the model receives); ``pairSplit`` is evaluated at the span's start on the
    original history, and ``empty`` is 1 only when nothing is sent and the peer did not refuse.
    Invented events (a summary) are sent where the peer put them and count in the cost and report like any other.
    """
    n = len(history)
    for p in selection.positions:
        if not 0 <= p < n:
            raise ValueError(f"peer selection position {p} is outside the history (0..{n - 1})")
    if selection.is_suffix_of(n):
        start = selection.positions[0] if selection.positions else n
        w = window_from_start(history, budget, cost, start, name)
        if selection.untrimmed_on_error:
            return PeerWindow(history, name, budget, w.start, w.end, w.cost, w.report,
                              tuple(w.events), (), (), True)  # fmt: skip
        return w
    kept_events = [selection.replaced.get(p, history.events[p]) for p in selection.positions]
    for k, event in reversed(sorted(selection.invented, key=lambda pair: pair[0])):
        kept_events.insert(k, event)  # the last first, so events invented at one k keep their order
    sent = tuple(kept_events)
    sub = History(sent, costs=(cost,))
    inner = window_from_start(sub, budget, cost, 0, name)
    start = min(selection.positions, default=n)
    kept = set(selection.positions)
    split = int(
        start > 0 and history.kind[start - 1] == int(Kind.CALL) and history.partner[start - 1] in kept
    )
    report = inner.report._replace(pairSplit=split, empty=int(not sent and not selection.refused))
    return PeerWindow(
        history,
        name,
        budget,
        start,
        n,
        inner.cost,
        report,
        sent,
        not_kept(selection.positions, start, n),
        tuple(sorted(selection.replaced)),
        selection.untrimmed_on_error,
        len(selection.invented),
        list(selection.positions) != sorted(selection.positions),
        selection.refused,
    )


def not_kept(positions: Iterable[int], start: int, end: int) -> tuple[int, ...]:
    """The positions of ``[start, end)`` not in ``positions``, ascending: the gaps between the
    kept positions, built as ranges (a per-request replay builds one per request, and the span
    may be the whole history while few positions are kept)."""
    kept = sorted({p for p in positions if start <= p < end})
    gaps = [range(lo + 1, hi) for lo, hi in zip([start - 1, *kept], [*kept, end], strict=True)]
    return tuple(chain.from_iterable(gaps))


def selection_of_objects(
    message_spans: Sequence[Span], messages: Sequence[Any], returned: Sequence[Any],
    invent: Callable[[Any, int], Event],
) -> Selection:  # fmt: skip
    """The selection of a peer that returns (some of) the very message objects it was given,
    in any order, plus objects of its own: each given object maps to its span's positions, and
    any other object becomes an invented event (``invent(obj, k)``, ``k`` counting them)."""
    index = {id(m): i for i, m in enumerate(messages)}
    positions: list[int] = []
    invented: list[tuple[int, Event]] = []
    for obj in returned:
        i = index.get(id(obj))
        if i is None:
            invented.append((len(positions), invent(obj, len(invented))))
        else:
            positions.extend(message_spans[i].positions)
    return Selection(tuple(positions), invented=tuple(invented))


def invented_event(history: History, message: Any, k: int, kind: Kind = Kind.TERM) -> Event:
    """A message a peer made up, as an event of ``kind`` with seq ``−1 − k`` (no history event
    has a negative seq) and the message's text."""
    text = str(message.content)
    session = history.events[0].session if len(history) else ""
    return Event(-1 - k, session, 0, kind, text=text, chars=len(text), cjk=detect_cjk(text))
