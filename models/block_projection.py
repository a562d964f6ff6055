"""M0–M5 over every session of a block at once, straight from the block's index arrays.

The testbench projects each of 60 000 sessions with six strategies and keeps only the totals of
their structural reports. Cutting a block's index into per-session :class:`~models.history.History`
objects and calling the projector per session cost about three times generating the events; here
the same selection and the same report are computed for all sessions of a block with numpy, from
:func:`models.columns.block_index`, and summed into an :class:`~models.report.Aggregate`.

Invariant: for every session, the start, cost and report are exactly those of
:mod:`models.projector` on the session's history (``tests/test_block_projection.py`` compares
them window by window, on generated blocks and on reordered, collided and dangling logs). Global
rows stand in for local positions: a session's rows are contiguous, so a difference of two prefix
counts, a bisection into its prefix sums or a partner comparison means the same in both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from turncheck.models.columns import BlockIndex, block_index, column_costs
from turncheck.models.cost import EstimateCost, placeholder_event
from turncheck.models.events import Event, Kind
from turncheck.models.projector import PROJECTORS
from turncheck.models.report import COUNTERS, Aggregate
from turncheck.models.workload import EventColumns

BLOCK_STRATEGIES = frozenset(PROJECTORS)
"""The strategies this module computes; anything else goes through per-session histories."""


class _Rows:
    """The rows where a flag holds, sorted: counts before any row and the next row at or after
    any row by bisection (a block's flags are mostly sparse, and read at one or two rows per
    session — cheaper than a prefix sum over every row)."""

    __slots__ = ("rows", "n")

    def __init__(self, flags: np.ndarray) -> None:
        self.rows = np.flatnonzero(flags)
        self.n = flags.shape[0]

    def before(self, g: np.ndarray) -> np.ndarray:
        """How many flagged rows are < g."""
        return np.searchsorted(self.rows, g, side="left")

    def between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """How many flagged rows are in ``[a, b)``."""
        if not self.rows.size:
            return np.zeros(a.shape[0], dtype=np.int64)
        return self.before(b) - self.before(a)

    def next_at(self, g: np.ndarray) -> np.ndarray:
        """The first flagged row >= g (the row count N when none)."""
        ext = np.append(self.rows, self.n)
        return ext[np.searchsorted(self.rows, g, side="left")]


@dataclass(frozen=True)
class Windows:
    """One strategy's windows over a block: per session its start row (global), cost, and the
    report fields a strategy sets itself (the rest of the report follows from the start)."""

    start: np.ndarray
    cost: np.ndarray
    placeholders: np.ndarray
    dropped_partial: np.ndarray
    fallback: np.ndarray


class BlockProjector:
    """The index of one block, with the prefix counts every report reads, ready to project
    any budget and strategy under an :class:`~models.cost.EstimateCost`."""

    def __init__(self, cols: EventColumns, ix: BlockIndex | None = None) -> None:
        ix = block_index(cols) if ix is None else ix
        self.cols = cols
        n = len(cols)
        self.n = n
        off = ix.offsets.astype(np.int64)
        self.lo, self.hi = off[:-1], off[1:]
        self.seg_starts = np.append(np.flatnonzero(ix.new_seg), n)  # every turn segment's first row, then N
        self.max_seg = int(np.diff(self.seg_starts).max(initial=0))
        self.kind = ix.kind
        self.partner = ix.partner
        self.is_call = ix.is_call
        self.calls = _Rows(ix.is_call)
        self.results = _Rows(ix.is_res)
        self.first_calls = _Rows(ix.first_call)
        self.first_results = _Rows(ix.first_res)
        self.open_calls = _Rows(ix.open_ & ix.is_call)
        self.open_results = _Rows(ix.open_ & ix.is_res)
        self.last_calls = _Rows(ix.last_call)
        self.tie_inv = _Rows(ix.tie_inv)
        self.seq_inv = _Rows(ix.seq_inv)
        self.src_change = _Rows(ix.src_change)
        self.seg_src_change = _Rows(ix.seg_change)
        self.seg_first_change = _Rows(ix.seg_first_change)
        # M2 drops leading RESULTs whose CALL is not after them; M5 starts at a safe cut
        self.kept_rows = _Rows(~(ix.is_res & (ix.partner < np.arange(n))))
        self.safe_rows = _Rows(ix.covered == 0)
        self._sums: dict[object, np.ndarray] = {}

    def segment(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (exclusive) of the turn segment containing row ``g`` (``g`` < N)."""
        k = np.searchsorted(self.seg_starts, g, side="right") - 1
        return self.seg_starts[k], self.seg_starts[k + 1]

    def cost_sums(self, cost: EstimateCost) -> np.ndarray:
        """Prefix sums of cost over the block's rows (length N + 1), computed once per cost."""
        c = self._sums.get(cost.key)
        if c is None:
            per_row = column_costs(cost, self.cols)
            if per_row.size and int(per_row.min()) < 0:
                raise ValueError("a negative event cost: prefix sums would not be sorted")
            c = self._sums[cost.key] = np.concatenate(([0], np.cumsum(per_row, dtype=np.int64)))
        return c

    def fit(self, budget: int, cost: EstimateCost) -> np.ndarray:
        """``i0`` of every session: start of the longest suffix within the budget (its end if none)."""
        c = self.cost_sums(cost)
        room = budget - cost.frame
        if room < 0:
            return self.hi.copy()
        return np.maximum(np.searchsorted(c, c[self.hi] - room, side="left"), self.lo)

    def windows(self, strategy: str, budget: int, cost: EstimateCost) -> Windows:
        """Every session's window under ``strategy`` (one of M0–M5), as the projector builds it."""
        lo, hi = self.lo, self.hi
        i0 = self.fit(budget, cost)
        zeros = np.zeros(lo.shape[0], dtype=np.int64)
        placeholders, dropped, fallback = zeros, zeros, zeros
        inside = i0 < hi
        seg_start, seg_end = self.segment(np.minimum(i0, max(self.n - 1, 0)))
        if strategy == "M0":
            s = i0
        elif strategy in ("M1", "M2"):
            s = np.where(inside, seg_start, i0)
            if strategy == "M2":
                s = np.minimum(self.kept_rows.next_at(s), hi)
                placeholders = self._placeholders(s)
        elif strategy in ("M3", "M4"):
            s3 = np.where(inside & (seg_start != i0), seg_end, i0)
            if strategy == "M3":
                s, dropped = s3, (s3 > i0).astype(np.int64)
            else:
                falls = (s3 >= hi) & (hi > lo)
                s = np.where(falls, i0, s3)
                dropped = ((s3 > i0) & ~falls).astype(np.int64)
                fallback = falls.astype(np.int64)
        elif strategy == "M5":
            s = np.minimum(self.safe_rows.next_at(i0), hi)
        else:
            raise ValueError(f"strategy {strategy!r} is not computed per block")
        c = self.cost_sums(cost)
        kept = cost.frame + c[hi] - c[s] + placeholders * _placeholder_cost(cost)
        return Windows(s, kept, placeholders, dropped, fallback)

    def _placeholders(self, s: np.ndarray) -> np.ndarray:
        """M2's placeholder count: CALLs of the turn segment starting the window whose partner
        is not after the window's start (dangling, or answered before it)."""
        count = np.zeros(s.shape[0], dtype=np.int64)
        if not self.n:
            return count
        inside = s < self.hi
        _, seg_end = self.segment(np.minimum(s, self.n - 1))
        end = np.where(inside, seg_end, s)
        for k in range(self.max_seg):
            r = s + k
            valid = r < end
            if not valid.any():
                break
            rc = np.minimum(r, self.n - 1)
            count += valid & self.is_call[rc] & (self.partner[rc] < s)
        return count

    def report_columns(self, w: Windows, budget: int) -> dict[str, np.ndarray]:
        """Every counter of :class:`~models.report.Report` for every window, as columns; the
        same arithmetic as :func:`models.projector.structural_report`."""
        lo, hi, s = self.lo, self.hi, w.start
        inside = s < hi
        s1 = np.minimum(s + 1, self.n)
        open_calls = self.open_calls.between(s, hi)
        open_results = self.open_results.between(s, hi)
        mispair = self.first_results.between(s, hi) - open_results
        pairs = self.first_calls.between(s, hi) - open_calls + mispair
        calls = self.calls.between(s, hi)
        if self.n:
            before = np.maximum(s - 1, 0)
            split = (s > lo) & (self.kind[before] == Kind.CALL) & (self.partner[before] >= s)
            x = self.segment(np.minimum(s, self.n - 1))[1]
        else:
            split = np.zeros(s.shape[0], dtype=bool)
            x = s
        changes = self.seg_first_change
        partial_mixed = (self.seg_src_change.between(s1, x) > 0) & (changes.between(s1, x) == 0)
        over = (w.cost > budget).astype(np.int64)

        def body(values: np.ndarray) -> np.ndarray:
            return np.where(inside, values, 0).astype(np.int64)

        return {
            "orphanRes": body(self.results.between(s, hi) - pairs),
            "orphanCall": body(calls - pairs - w.placeholders),
            "pairSplit": body(split),
            "overBudget": over,
            "keptCost": w.cost.astype(np.int64),
            "empty": (~inside & (hi > lo)).astype(np.int64),
            "droppedPartial": w.dropped_partial,
            "fallback": w.fallback,
            "repairs": w.placeholders,
            "tieInversions": body(self.tie_inv.between(s1, hi)),
            "seqInversions": body(self.seq_inv.between(s1, hi)),
            "mispair": body(mispair),
            "mixedSources": body(self.src_change.between(s1, hi) > 0),
            "turnSrcMix": body(changes.between(s1, hi) + partial_mixed),
            "dupCallId": body(calls - self.last_calls.between(s, hi)),
        }

    def aggregate(self, strategy: str, budget: int, cost: EstimateCost, into: Aggregate) -> None:
        """Add every session's window of ``strategy`` to ``into`` (the totals ``Aggregate.add``
        of each report would give)."""
        columns = self.report_columns(self.windows(strategy, budget, cost), budget)
        into.add_totals(
            int(self.lo.shape[0]),
            {name: int(columns[name].sum()) for name in COUNTERS},
            {name: int(np.count_nonzero(columns[name])) for name in COUNTERS},
            int(columns["keptCost"].max(initial=0)),
        )


def _placeholder_cost(cost: EstimateCost) -> int:
    """The cost of M2's placeholder RESULT: its text only (the estimate reads size and CJK flag,
    which ``placeholder_event`` does not take from the CALL)."""
    call = Event(seq=0, session="s0", turn=0, kind=Kind.CALL, call_id="c0", chars=0)
    return cost.event_cost(placeholder_event(call))


def block_projectable(strategies: Iterable[str], costs: Iterable[object]) -> bool:
    """True when every strategy is one of M0–M5 and every cost model is the estimator."""
    return all(s in BLOCK_STRATEGIES for s in strategies) and all(type(c) is EstimateCost for c in costs)


__all__ = ["BLOCK_STRATEGIES", "BlockProjector", "Windows", "block_projectable"]
