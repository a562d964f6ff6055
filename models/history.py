"""One session's history in read order, indexed incrementally so every projection is O(log n).

The index keeps, per position, the event's kind, its CALL/RESULT partner and its turn segment,
and a handful of prefix counts. Every counter of a window's structural report is then a
difference of two prefix values or a bisection into a short sorted list, and the longest suffix
under a budget is a bisection into prefix sums of cost. Appending does O(1) amortized work.

Definitions the index commits to (the projector and the report rely on them):

* A *turn segment* is a maximal run of consecutive events with the same ``turn`` number. In a
  seq-ordered, well-formed log it is exactly one turn; when a reader reorders events, or keys
  collide, it is what an implementation that aligns on turn numbers sees.
* Pairing: a RESULT pairs with the oldest still-open CALL of its ``call_id``; a CALL read after
  its RESULT (possible under clock ordering) pairs with the oldest open RESULT of its id. The
  earlier event of a pair is its *first endpoint*. An open CALL is a dangling call (so far); a
  *late* CALL is one paired with a RESULT read before it. Only these two can lack a RESULT
  after them, which is what M2's placeholder rule looks for.
* A *safe cut* is a position p (0 ≤ p ≤ n) that no complete pair straddles; M5 starts at the
  first safe cut at or after the longest budget suffix.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator

from turncheck.models.cost import CostModel
from turncheck.models.events import CALL_CODE, RESULT_CODE, Event, check_encodable

_CALL = CALL_CODE
_RESULT = RESULT_CODE


class History:
    """An append-only, indexed view of one session's events in read order.

    Projection never mutates a history. ``append`` is the only door through which state
    changes, and it keeps every index consistent with the events.

    What a strategy reads, per position ``i`` (``0 <= i < len(history)``), all plain lists to be
    read, never written:

    * ``events[i]``: the :class:`Event` itself;
    * ``kind[i]``: its kind's code, an ``int`` equal to a :class:`Kind` member
      (``history.kind[i] == Kind.RESULT``);
    * ``partner[i]``: the position of the other end of its CALL/RESULT pair (pairing as in the
      module docstring: a RESULT pairs with the oldest open CALL of its ``call_id``), or ``-1``
      for an event of another kind, and for a CALL or RESULT whose partner is not (yet) in the
      history. A window starting at ``start`` orphans the RESULT at ``i`` exactly when
      ``kind[i] == Kind.RESULT and partner[i] < start``.

    The other attributes are the projector's internal index and may change between versions.
    """

    __slots__ = (
        "events", "kind", "partner", "seg_idx", "seg_starts",
        "calls", "results", "first_calls", "first_results",
        "tie_inv", "seq_inv", "src_change", "seg_src_change", "seg_first_change",
        "open_calls", "open_results", "last_calls", "late_calls", "safe_cuts",
        "_open_call_ids", "_open_result_ids", "_last_call_of", "_seg_mixed",
        "_prefix", "_costs", "_hot",
    )  # fmt: skip

    def __init__(self, events: Iterable[Event] = (), costs: Iterable[CostModel] = ()) -> None:
        self.events: list[Event] = []
        self.kind: list[int] = []
        self.partner: list[int] = []
        self.seg_idx: list[int] = []
        self.seg_starts: list[int] = []
        # prefix counts, length n + 1: value k counts positions j < k
        self.calls = [0]
        self.results = [0]
        self.first_calls = [0]
        self.first_results = [0]
        self.tie_inv = [0]
        self.seq_inv = [0]
        self.src_change = [0]
        self.seg_src_change = [0]
        self.seg_first_change = [0]
        # sorted position lists
        self.open_calls: list[int] = []
        self.open_results: list[int] = []
        self.last_calls: list[int] = []
        self.late_calls: list[int] = []  # CALLs paired with a RESULT read before them
        self.safe_cuts: list[int] = [0]
        self._open_call_ids: dict[str, deque[int]] = {}
        self._open_result_ids: dict[str, deque[int]] = {}
        self._last_call_of: dict[str, int] = {}
        self._seg_mixed = False
        self._prefix: dict[object, list[int]] = {}
        self._costs: dict[object, CostModel] = {}
        self._hot: tuple[CostModel | None, list[int], int] = (None, [0], 0)
        for cost in costs:
            self.prefix(cost)
        for event in events:
            self.append(event)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def prefix(self, cost: CostModel) -> list[int]:
        """Prefix sums of per-event cost under ``cost`` (length n + 1), kept up to date on append.

        The first call for a cost key costs O(n); later appends extend it in O(1). The cost
        model asked for last is remembered by identity with its prefix sums and its ``frame``
        (``_hot``; a cost model is a frozen value, so both stay valid), so a projector asking
        again with the same object skips computing its key.
        """
        hot = self._hot
        if hot[0] is cost:
            return hot[1]
        key = cost.key
        p = self._prefix.get(key)
        if p is None:
            p = [0]
            total = 0
            for e in self.events:
                total += cost.event_cost(e)
                p.append(total)
            self._prefix[key] = p
            self._costs[key] = cost
        self._hot = (cost, p, cost.frame)
        return p

    def append(self, event: Event) -> int:
        """Append one event in read order; returns its position."""
        if event.text is not None:
            check_encodable(event.text, f"text of event seq {event.seq}")
        q = len(self.events)
        prev = self.events[-1] if q else None
        kind = int(event.kind)
        for key, p in self._prefix.items():
            p.append(p[-1] + self._costs[key].event_cost(event))

        # turn segments
        new_segment = prev is None or event.turn != prev.turn
        if new_segment:
            self.seg_starts.append(q)
            self._seg_mixed = False
        self.seg_idx.append(len(self.seg_starts) - 1)

        # adjacent-pair flags for the pair (q-1, q)
        tie = seq = change = seg_change = first_change = 0
        if prev is not None:
            if event.seq < prev.seq:
                seq = 1
                if event.ts == prev.ts:
                    tie = 1
            if event.true_session != prev.true_session:
                change = 1
                if not new_segment:
                    seg_change = 1
                    if not self._seg_mixed:
                        first_change = 1
                        self._seg_mixed = True
        self.tie_inv.append(self.tie_inv[-1] + tie)
        self.seq_inv.append(self.seq_inv[-1] + seq)
        self.src_change.append(self.src_change[-1] + change)
        self.seg_src_change.append(self.seg_src_change[-1] + seg_change)
        self.seg_first_change.append(self.seg_first_change[-1] + first_change)

        # pairing
        self.events.append(event)
        self.kind.append(kind)
        self.partner.append(-1)
        opened_call = opened_result = 0
        if kind == _CALL or kind == _RESULT:
            opened_call, opened_result = self._pair(q, kind, event.call_id or "")
        self.safe_cuts.append(q + 1)
        self.calls.append(self.calls[-1] + (kind == _CALL))
        self.results.append(self.results[-1] + (kind == _RESULT))
        self.first_calls.append(self.first_calls[-1] + opened_call)
        self.first_results.append(self.first_results[-1] + opened_result)
        return q

    def _pair(self, q: int, kind: int, cid: str) -> tuple[int, int]:
        """Pair the CALL or RESULT at ``q`` with the oldest open partner of its id, or leave it
        open; keep the safe cuts, late calls and last calls of an id; (opened call, opened result)."""
        opened_call = opened_result = 0
        waiting, mine, opened = (
            (self._open_result_ids, self._open_call_ids, self.open_calls)
            if kind == _CALL
            else (self._open_call_ids, self._open_result_ids, self.open_results)
        )
        queue = waiting.get(cid)
        if queue:
            a = queue.popleft()
            if not queue:
                del waiting[cid]
            self.partner[a] = q
            self.partner[q] = a
            other = self.open_results if kind == _CALL else self.open_calls
            del other[bisect_left(other, a)]
            cuts = self.safe_cuts
            while cuts[-1] > a:
                cuts.pop()
            if kind == _CALL:
                self.late_calls.append(q)
        else:
            mine.setdefault(cid, deque()).append(q)
            opened.append(q)
            opened_call, opened_result = (1, 0) if kind == _CALL else (0, 1)
        if kind == _CALL:
            last = self._last_call_of.get(cid)
            if last is not None:
                del self.last_calls[bisect_left(self.last_calls, last)]
            self.last_calls.append(q)
            self._last_call_of[cid] = q
        return opened_call, opened_result

    def extend(self, events: Iterable[Event]) -> None:
        for e in events:
            self.append(e)

    def segment_end(self, i: int) -> int:
        """End (exclusive) of the turn segment containing position ``i`` (``i`` < n)."""
        nxt = self.seg_idx[i] + 1
        return self.seg_starts[nxt] if nxt < len(self.seg_starts) else len(self.events)

    def index_state(self) -> tuple[object, ...]:
        """Every index list, for comparing two ways of building the same history."""
        return tuple(getattr(self, name) for name in self.__slots__ if not name.startswith("_"))
