"""Histories built in bulk from columns: the same index as ``History.append``, vectorized.

At seed 004's scale (16.8 M events, 60 000 sessions) appending event objects one by one is
too slow; this module computes every index list of :class:`models.history.History` with numpy
over a whole block of sessions, then hands each session its slices. The result is
indistinguishable from an incrementally built history (a test compares ``index_state``), so the
one projector core serves both. Histories built here are read-only.

Pairing is the index's rule: the k-th CALL of a call id in a session's read order pairs with
the k-th RESULT of that id (FIFO matching in both directions is exactly that).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from turncheck.models.collector import cycles_not_collected
from turncheck.models.cost import CharsCost, CostModel, EstimateCost, java_round
from turncheck.models.events import CALL_CODE, RESULT_CODE, Event, Kind
from turncheck.models.history import History
from turncheck.models.workload import EventColumns

_CALL = CALL_CODE
_RESULT = RESULT_CODE


class ColumnEvents(Sequence[Event]):
    """A session's events materialized lazily from columns (one Event per access)."""

    def __init__(self, cols: EventColumns, lo: int, hi: int, ts: np.ndarray, src: np.ndarray) -> None:
        self._cols, self._lo, self._hi, self._ts, self._src = cols, lo, hi, ts, src

    def __len__(self) -> int:
        return self._hi - self._lo

    def _event(self, i: int) -> Event:
        c = self._cols
        g = self._lo + i
        call = int(c.call[g])
        session = int(c.session[g])
        source = int(self._src[g])
        return Event(
            seq=int(c.seq[g]),
            session=f"s{session}",
            turn=int(c.turn[g]),
            kind=Kind(int(c.kind[g])),
            call_id=f"c{call}" if call >= 0 else None,
            ts=float(self._ts[g]),
            chars=int(c.chars[g]),
            cjk=bool(c.cjk[g]),
            source=None if source == session else f"s{source}",
        )

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> list[Event]: ...
    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._event(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._event(i)


def column_costs(cost: CostModel, cols: EventColumns) -> np.ndarray:
    """Per-row cost under ``cost``: vectorized for the estimator, event by event otherwise."""
    if isinstance(cost, EstimateCost):
        ratio = np.where(cols.cjk, cost.cjk_ratio, cost.ascii_ratio)
        out = np.floor(cols.chars / ratio + 0.5).astype(np.int64)
        return out
    if isinstance(cost, CharsCost):
        return np.where(cols.cjk | (not cost.cjk), cols.chars, 0).astype(np.int64)
    from turncheck.models.workload import column_events

    return np.fromiter((cost.event_cost(e) for e in column_events(cols)), dtype=np.int64, count=len(cols))


def _pair(kind: np.ndarray, call: np.ndarray, sess_of_row: np.ndarray, n: int) -> tuple[np.ndarray, bool]:
    """``(partner, unique)``: the partner row of every row (-1 when unpaired) — the k-th CALL of
    a (session, call id) pairs with the k-th RESULT — and whether no id repeats within a session
    among CALLs nor among RESULTs. When none repeats (the generator's logs) pairing is a direct
    lookup; otherwise occurrences are ranked by a stable sort."""
    partner = np.full(n, -1, dtype=np.int64)
    tool = np.flatnonzero((kind == _CALL) | (kind == _RESULT))
    if not tool.size:
        return partner, True
    span = int(call[tool].max()) + 1
    key = sess_of_row[tool] * span + call[tool]
    is_call = kind[tool] == _CALL
    calls, results = tool[is_call], tool[~is_call]
    key_call, key_res = key[is_call], key[~is_call]
    size = int(key.max()) + 1
    call_row = np.full(size, -1, dtype=np.int64)
    res_row = np.full(size, -1, dtype=np.int64)
    call_row[key_call] = calls
    res_row[key_res] = results
    # a repeated key keeps only its last row in the table: every row reads itself back iff none repeats
    unique = bool((call_row[key_call] == calls).all() and (res_row[key_res] == results).all())
    if unique:
        b = res_row[key_call]
        answered = b >= 0
        a, b = calls[answered], b[answered]
    else:
        order = np.lexsort((tool, kind[tool], key))
        t = tool[order]
        k2 = key[order] * 4 + kind[t]
        new_grp = np.ones(t.size, dtype=bool)
        new_grp[1:] = k2[1:] != k2[:-1]
        grp_start = np.maximum.accumulate(np.where(new_grp, np.arange(t.size), 0))
        rank = np.arange(t.size) - grp_start
        by = np.lexsort((kind[t], rank, key[order]))
        tk = t[by]
        kk = key[order][by]
        rr = rank[by]
        same = (kk[1:] == kk[:-1]) & (rr[1:] == rr[:-1])
        a, b = tk[:-1][same], tk[1:][same]
    partner[a] = b
    partner[b] = a
    return partner, unique


def _segmented(cols: EventColumns, lo: int, hi: int) -> EventColumns:
    a, b = int(cols.offsets[lo]), int(cols.offsets[hi])
    return EventColumns(
        seq=cols.seq[a:b], session=cols.session[a:b], turn=cols.turn[a:b], kind=cols.kind[a:b],
        call=cols.call[a:b], chars=cols.chars[a:b], cjk=cols.cjk[a:b],
        offsets=cols.offsets[lo : hi + 1] - a, first_session=cols.first_session + lo,
        ts=None if cols.ts is None else cols.ts[a:b], source=None if cols.source is None else cols.source[a:b],
    )  # fmt: skip


def build_histories(
    cols: EventColumns, costs: Iterable[CostModel] = (), block: int = 1000
) -> Iterator[History]:
    """One read-only :class:`History` per session of ``cols``, in order, ``block`` sessions of
    index work at a time (memory stays proportional to a block)."""
    costs = list(costs)
    for lo in range(0, cols.sessions, block):
        part = (
            cols
            if (lo == 0 and cols.sessions <= block)
            else _segmented(cols, lo, min(lo + block, cols.sessions))
        )
        with cycles_not_collected():  # millions of small ints: generational passes would dominate
            built = list(_build_block(part, costs))
        yield from built


@dataclass(frozen=True)
class BlockIndex:
    """The index of every session of a block as global row arrays (what ``History`` keeps per
    session, before it is cut into per-session lists).

    Row ``i`` of a flag array describes row ``i`` (or, for the adjacent-pair flags, the pair
    ``(i-1, i)`` of one session). ``partner`` holds global rows (-1 when unpaired);
    ``covered[i] > 0`` means the cut before row ``i`` splits a pair. :mod:`models.block_projection`
    projects straight from these arrays.
    """

    offsets: np.ndarray
    sess_of_row: np.ndarray
    kind: np.ndarray
    partner: np.ndarray
    new_seg: np.ndarray
    is_call: np.ndarray
    is_res: np.ndarray
    first_call: np.ndarray
    first_res: np.ndarray
    open_: np.ndarray
    last_call: np.ndarray
    covered: np.ndarray
    tie_inv: np.ndarray
    seq_inv: np.ndarray
    src_change: np.ndarray
    seg_change: np.ndarray
    seg_first_change: np.ndarray


def _after_previous(values: np.ndarray, first_row: np.ndarray, differs: bool) -> np.ndarray:
    """Row i: ``values[i] != values[i-1]`` (``differs``) or ``values[i] < values[i-1]``, within a session."""
    out = np.zeros(values.shape[0], dtype=bool)
    if values.shape[0] > 1:
        out[1:] = (values[1:] != values[:-1]) if differs else (values[1:] < values[:-1])
        out &= ~first_row
    return out


def block_index(cols: EventColumns) -> BlockIndex:
    """Every index array of a block of sessions, vectorized (see :class:`BlockIndex`)."""
    n = len(cols)
    off = cols.offsets
    sess_of_row = np.repeat(np.arange(cols.sessions), np.diff(off))
    first_row = np.zeros(n, dtype=bool)
    first_row[off[:-1][off[:-1] < n]] = True
    kind = cols.kind.astype(np.int64)
    turn = cols.turn

    partner, unique = _pair(kind, cols.call.astype(np.int64), sess_of_row, n)

    # turn segments
    new_seg = first_row.copy()
    if n > 1:
        new_seg[1:] |= turn[1:] != turn[:-1]

    # adjacent-pair flags (row i describes the pair (i-1, i)), never across sessions
    seq_inv = _after_previous(cols.seq, first_row, differs=False)
    tie_inv = np.zeros(n, dtype=bool)
    if seq_inv.any():
        ts = cols.stamps()
        tie_inv[1:] = seq_inv[1:] & (ts[1:] == ts[:-1])
    # without a source column every row's source is its session: no change within a session
    src_change = (
        np.zeros(n, dtype=bool) if cols.source is None else _after_previous(cols.source, first_row, True)
    )
    seg_change = src_change & ~new_seg
    seg_first_change = np.zeros(n, dtype=bool)
    if seg_change.any():
        seg_global = np.cumsum(new_seg)
        rows = np.flatnonzero(seg_change)
        first_in_seg = np.ones(rows.size, dtype=bool)
        first_in_seg[1:] = seg_global[rows[1:]] != seg_global[rows[:-1]]
        seg_first_change[rows[first_in_seg]] = True

    is_call = kind == _CALL
    is_res = kind == _RESULT
    rows_n = np.arange(n)
    open_ = partner == -1
    first_endpoint = open_ | (partner > rows_n)
    first_call = is_call & first_endpoint
    first_res = is_res & first_endpoint

    # last CALL of each call id per session (every CALL when no id repeats)
    if unique:
        last_call = is_call.copy()
    else:
        last_call = np.zeros(n, dtype=bool)
        calls = np.flatnonzero(is_call)
        order = np.lexsort((calls, cols.call[calls], sess_of_row[calls]))
        c = calls[order]
        is_last = np.ones(c.size, dtype=bool)
        is_last[:-1] = (sess_of_row[c[1:]] != sess_of_row[c[:-1]]) | (cols.call[c[1:]] != cols.call[c[:-1]])
        last_call[c[is_last]] = True

    # safe cuts: cut p (local 0..len) is unsafe when a pair (a, b) has a < p <= b
    pa = np.flatnonzero(partner > rows_n)
    cover = np.bincount(pa + 1, minlength=n + 1) - np.bincount(partner[pa] + 1, minlength=n + 1)
    covered = np.cumsum(cover)[:n]  # covered[i] > 0: cut at row i (before event i) is unsafe

    return BlockIndex(
        offsets=off, sess_of_row=sess_of_row, kind=kind, partner=partner, new_seg=new_seg,
        is_call=is_call, is_res=is_res, first_call=first_call, first_res=first_res, open_=open_,
        last_call=last_call, covered=covered, tie_inv=tie_inv, seq_inv=seq_inv,
        src_change=src_change, seg_change=seg_change, seg_first_change=seg_first_change,
    )  # fmt: skip


def _build_block(cols: EventColumns, costs: list[CostModel]) -> Iterator[History]:
    n = len(cols)
    off = cols.offsets
    ix = block_index(cols)
    kind, partner = ix.kind, ix.partner
    lo_of_row = off[:-1][ix.sess_of_row]
    seg_global = np.cumsum(ix.new_seg) - 1
    seg_first = seg_global[off[:-1].clip(max=max(n - 1, 0))] if n else np.zeros(0, dtype=np.int64)
    seg_idx = seg_global - seg_first[ix.sess_of_row]
    is_call, is_res, open_, new_seg, last_call, covered = (
        ix.is_call, ix.is_res, ix.open_, ix.new_seg, ix.last_call, ix.covered
    )  # fmt: skip
    ts = cols.stamps()
    src = cols.sources()

    prefix_cols = {
        "calls": is_call, "results": is_res, "first_calls": ix.first_call, "first_results": ix.first_res,
        "tie_inv": ix.tie_inv, "seq_inv": ix.seq_inv, "src_change": ix.src_change,
        "seg_src_change": ix.seg_change, "seg_first_change": ix.seg_first_change,
    }  # fmt: skip
    sessions = cols.sessions

    lengths = np.diff(off)

    def per_session_prefix(values: np.ndarray) -> list[int] | None:
        if not values.any():
            return None
        v_ext = np.insert(values.astype(np.int64), off[:-1], 0)
        c = np.cumsum(v_ext)
        base = np.repeat(c[off[:-1] + np.arange(sessions)], lengths + 1)
        return (c - base).tolist()  # type: ignore[no-any-return]

    def per_session_rows(mask: np.ndarray, extra_end: bool = False) -> tuple[list[int], np.ndarray]:
        if extra_end:  # one more slot per session: its end cut, always safe
            mask = np.insert(mask, off[1:], True)
            starts = off[:-1] + np.arange(sessions)
        else:
            starts = off[:-1]
        rows = np.flatnonzero(mask)
        bounds = np.searchsorted(rows, np.concatenate((starts, [mask.shape[0]])))
        return (rows - np.repeat(starts, np.diff(bounds))).tolist(), bounds

    prefix_lists = {name: per_session_prefix(v) for name, v in prefix_cols.items()}
    cost_lists = [(cst, per_session_prefix(column_costs(cst, cols)) or [0] * (n + sessions)) for cst in costs]
    kind_list = kind.tolist()
    partner_list = np.where(partner >= 0, partner - lo_of_row, -1).tolist()
    seg_idx_list = seg_idx.tolist()
    sorted_lists = {
        "seg_starts": per_session_rows(new_seg),
        "open_calls": per_session_rows(open_ & is_call),
        "open_results": per_session_rows(open_ & is_res),
        "last_calls": per_session_rows(last_call),
        "late_calls": per_session_rows(is_call & ~ix.first_call),  # paired with an earlier RESULT
        "safe_cuts": per_session_rows(covered == 0, extra_end=True),
    }
    offs = off.tolist()
    # one list of zeros per length, shared by the sessions of that length (read-only histories):
    # a counter that is zero everywhere reads at list speed without a list per session
    zero_lists: dict[int, list[int]] = {}
    for s in range(sessions):
        lo, hi = offs[s], offs[s + 1]
        zeros = zero_lists.get(hi - lo + 1)
        if zeros is None:
            zeros = zero_lists[hi - lo + 1] = [0] * (hi - lo + 1)
        h = History.__new__(History)
        h.events = ColumnEvents(cols, lo, hi, ts, src)  # type: ignore[assignment]
        h.kind = kind_list[lo:hi]
        h.partner = partner_list[lo:hi]
        h.seg_idx = seg_idx_list[lo:hi]
        for name, lst in prefix_lists.items():
            setattr(h, name, zeros if lst is None else lst[lo + s : hi + s + 1])
        for name, (lst, bounds) in sorted_lists.items():
            setattr(h, name, lst[bounds[s] : bounds[s + 1]])
        h._open_call_ids = h._open_result_ids = None  # type: ignore[assignment]
        h._last_call_of = None  # type: ignore[assignment]
        h._seg_mixed = False
        h._prefix = {cst.key: lst[lo + s : hi + s + 1] for cst, lst in cost_lists}
        h._costs = {cst.key: cst for cst, _ in cost_lists}
        h._hot = (None, [0], 0)
        yield h


__all__ = [
    "BlockIndex",
    "ColumnEvents",
    "block_index",
    "build_histories",
    "column_costs",
    "columns_from_events",
    "java_round",
]


def columns_from_events(events: Sequence[Event]) -> EventColumns:
    """Columns of events given in read order, grouped by session (each session's rows contiguous,
    sessions in order of first appearance). Session, source and call ids are numbered in order of
    first appearance; ``build_histories`` on the result equals ``History`` built by appending."""
    by_session: dict[str, list[Event]] = {}
    for e in events:
        by_session.setdefault(e.session, []).append(e)
    ordered = [e for group in by_session.values() for e in group]
    names: dict[str, int] = {}
    for e in ordered:
        names.setdefault(e.session, len(names))
    for e in ordered:
        names.setdefault(e.true_session, len(names))
    call_ids: dict[str, int] = {}
    m = len(ordered)
    sizes = [len(g) for g in by_session.values()]
    return EventColumns(
        seq=np.array([e.seq for e in ordered], dtype=np.int64),
        session=np.array([names[e.session] for e in ordered], dtype=np.int32),
        turn=np.array([e.turn for e in ordered], dtype=np.int32),
        kind=np.array([int(e.kind) for e in ordered], dtype=np.int8),
        call=np.array(
            [call_ids.setdefault(e.call_id, len(call_ids)) if e.call_id is not None else -1 for e in ordered],
            dtype=np.int32,
        ),
        chars=np.array([e.size for e in ordered], dtype=np.int32),
        cjk=np.array([e.cjk for e in ordered], dtype=bool),
        offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        if m
        else np.zeros(1, dtype=np.int64),
        ts=np.array([e.ts for e in ordered], dtype=np.float64),
        source=np.array([names[e.true_session] for e in ordered], dtype=np.int32),
    )
