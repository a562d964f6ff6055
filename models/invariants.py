"""The invariants turncheck checks, by name, and how each is read off a window or a state.

Every model that checks one of these uses the name given here, so ``--invariant NAME`` means the
same thing on every model and a user can tell at once which models check what:

* ``no-orphan-results`` — the window sent holds no RESULT whose CALL is absent (``orphanRes`` 0),
  for the strategy and read order under test;
* ``bounded-peak-turns`` — live turns never exceed the bound the locking strategy declares;
* ``seq-ordered-turns`` — each turn's events in the window are contiguous and in seq order;
* ``within-budget`` — the window's cost is within the budget (``overBudget`` 0);
* ``non-empty`` — the window is non-empty whenever anything fits: whenever the shortest suffix of
  the history that splits no CALL/RESULT pair is within the budget;
* ``exact-coverage`` — a log's SUMMARY events cover exactly what they drop: every dropped event
  by exactly one live summary, no open call or one end of a pair
  (:func:`models.summaries.exact_coverage`, what ``lint`` reports).

The window predicates below take a :class:`models.projector.Window`, so every model reads them
off the same structural report the projector core computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from turncheck.models.errors import UnknownName
from turncheck.models.events import Event
from turncheck.models.projector import Window

NO_ORPHAN_RESULTS = "no-orphan-results"
BOUNDED_PEAK_TURNS = "bounded-peak-turns"
NO_UNCOUNTED_GAP_TURN = "no-uncounted-gap-turn"
WITHIN_MAX_TURNS = "within-max-turns"
SEQ_ORDERED_TURNS = "seq-ordered-turns"
WITHIN_BUDGET = "within-budget"
NON_EMPTY = "non-empty"
EXACT_COVERAGE = "exact-coverage"


@dataclass(frozen=True)
class Invariant:
    """A named invariant and what it promises, in one sentence."""

    name: str
    doc: str


INVARIANTS: dict[str, Invariant] = {
    inv.name: inv
    for inv in (
        Invariant(NO_ORPHAN_RESULTS, "no RESULT in the window without its CALL"),
        Invariant(BOUNDED_PEAK_TURNS, "live turns never exceed the locking strategy's declared bound"),
        Invariant(
            NO_UNCOUNTED_GAP_TURN,
            "no turn arrives uncounted in the gap: live turns never exceed maxTurns + 1",
        ),
        Invariant(WITHIN_MAX_TURNS, "live turns never exceed maxTurns, the trigger's nominal promise"),
        Invariant(SEQ_ORDERED_TURNS, "each turn's events in the window are contiguous and in seq order"),
        Invariant(WITHIN_BUDGET, "the window's cost is within the budget"),
        Invariant(NON_EMPTY, "the window is non-empty whenever a pair-safe suffix fits the budget"),
        Invariant(
            EXACT_COVERAGE,
            "every event a SUMMARY drops is covered by exactly one live summary; no open call or half a pair is",
        ),
    )
}


def invariant(name: str) -> Invariant:
    """The registered invariant ``name``; raises :class:`UnknownName` listing the known ones."""
    try:
        return INVARIANTS[name]
    except KeyError:
        raise UnknownName(f"unknown invariant {name!r} (known: {', '.join(INVARIANTS)})") from None


def smallest_safe_suffix_cost(window: Window, cost_frame: int, prefix: Sequence[int]) -> int | None:
    """Cost of the shortest non-empty suffix that splits no CALL/RESULT pair (None if empty)."""
    h = window.history
    n = len(h)
    if n == 0:
        return None
    # safe_cuts is sorted, always holds 0 and ends with n, so the last cut before n exists
    last = h.safe_cuts[-2]
    return cost_frame + prefix[n] - prefix[last]


def non_empty(window: Window, cost_frame: int, prefix: Sequence[int]) -> bool:
    """False only when the window is empty although a pair-safe suffix fits the budget."""
    if not window.empty:
        return True
    smallest = smallest_safe_suffix_cost(window, cost_frame, prefix)
    return smallest is None or smallest > window.budget


def seq_ordered_turns(events: Sequence[Event]) -> bool:
    """Each (session, turn)'s events are contiguous and in increasing seq order."""
    seen: set[tuple[str, int]] = set()
    current: tuple[str, int] | None = None
    last_seq = -1
    for e in events:
        key = (e.session, e.turn)
        if key != current:
            if key in seen:
                return False
            seen.add(key)
            current = key
        elif e.seq < last_seq:
            return False
        last_seq = e.seq
    return True
