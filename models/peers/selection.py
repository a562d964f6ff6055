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

from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import itemgetter

from turncheck.models.cost import CostModel
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import Window, window_from_start
from turncheck.models.report import Report


@dataclass(frozen=True)
class Selection:
    """History positions a peer sent, in the order it sent them; ``replaced`` maps a position
    to the event as sent when the peer changed its content; ``untrimmed_on_error`` is set when
    the peer swallowed an internal error and returned its input unchanged."""

    positions: tuple[int, ...]
    replaced: Mapping[int, Event] = field(default_factory=dict)
    untrimmed_on_error: bool = False

    def is_suffix_of(self, n: int) -> bool:
        """True when the peer sent exactly the events ``[s, n)`` unchanged, for some ``s``."""
        if self.replaced:
            return False
        p = self.positions
        return not p or p == tuple(range(p[0], n))


class PeerWindow(Window):
    """A window whose sent events are not the contiguous suffix ``[start, end)``.

    Its report describes the events sent (computed when it is built, from a history of exactly
    those events), so it is stored rather than derived from ``start``.
    """

    _fields = (*Window._fields, "peer_report", "sent", "dropped_inside", "shortened", "untrimmed_on_error")

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
    ) -> PeerWindow:
        fields = (history, strategy, budget, start, end, cost, (), 0, 0,
                  report, sent, dropped_inside, shortened, untrimmed_on_error)  # fmt: skip
        return tuple.__new__(cls, fields)

    report: Report = property(itemgetter(9))  # type: ignore[assignment]
    sent: tuple[Event, ...] = property(itemgetter(10))  # type: ignore[assignment]
    dropped_inside: tuple[int, ...] = property(itemgetter(11))  # type: ignore[assignment]
    shortened: tuple[int, ...] = property(itemgetter(12))  # type: ignore[assignment]
    untrimmed_on_error: bool = property(itemgetter(13))  # type: ignore[assignment]

    @property
    def events(self) -> list[Event]:  # type: ignore[override]
        return list(self.sent)

    @property
    def empty(self) -> bool:  # type: ignore[override]
        return not self.sent


def window_of(history: History, budget: int, cost: CostModel, selection: Selection, name: str) -> Window:
    """The window for a peer's selection: exact suffix window, or a :class:`PeerWindow`.

    For a non-suffix selection the report is computed over a history of exactly the sent
    events (so ``orphanRes``, ``orphanCall``, ``overBudget``, ``keptCost``, ``dupCallId`` … are
    those of what the model receives); ``pairSplit`` is evaluated at the span's start on the
    original history, and ``empty`` is 0 (a non-suffix selection sends at least one event).
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
    sent = tuple(selection.replaced.get(p, history.events[p]) for p in selection.positions)
    sub = History(sent, costs=(cost,))
    inner = window_from_start(sub, budget, cost, 0, name)
    start = min(selection.positions)
    kept = set(selection.positions)
    split = int(
        start > 0 and history.kind[start - 1] == int(Kind.CALL) and history.partner[start - 1] in kept
    )
    report = inner.report._replace(pairSplit=split, empty=0)
    return PeerWindow(
        history,
        name,
        budget,
        start,
        n,
        inner.cost,
        report,
        sent,
        tuple(p for p in range(start, n) if p not in kept),
        tuple(sorted(selection.replaced)),
        selection.untrimmed_on_error,
    )
