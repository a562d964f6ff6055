"""Writer clocks over columns: :class:`~models.clock.ClockParams` applied to a whole workload at
once, for seed-scale experiments (:mod:`scenarios.clock_skew`).

Every row gets its writer's stamp, its true time and its arrival rank at the store; a reader's
order (:data:`~models.clock.ORDERS`) is then one ``lexsort`` per run — the columnar form of
:func:`~models.clock.in_read_order`, which the protocol model and ``project --order`` use. Kept
apart from :mod:`models.clock` so that building the clock model (every ``check``, through the
model catalogue) does not import numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from turncheck.models.clock import ClockParams, check_order
from turncheck.models.events import Kind
from turncheck.models.random_streams import stream_rng
from turncheck.models.workload import EventColumns


@dataclass(frozen=True)
class Stamps:
    """Per row: the writer's stamp ``ts``, the true time, and the arrival rank at the store."""

    ts: np.ndarray
    true_time: np.ndarray
    arrival: np.ndarray


def _clock_rng(seed: int, block: int) -> np.random.Generator:
    return stream_rng("clock", seed, block)


def stamp_columns(cols: EventColumns, clock: ClockParams, seed: int) -> Stamps:
    """Stamp every row of ``cols`` (sessions contiguous, seq order) with its writer's clock.

    Deterministic in ``(cols, clock, seed)``: the row stream is keyed by the seed and the block's
    first session, the writers' offsets and drifts by the seed alone. Scenarios stamp workload
    blocks one at a time, so any number of worker processes gives the same stamps.
    """
    n = len(cols)
    rng = _clock_rng(seed, cols.first_session)
    writer_rng = _clock_rng(seed, 0xFFFFFFFF)  # the writers' offsets and drifts: one stream per run
    offsets = writer_rng.uniform(-clock.offset_ms, clock.offset_ms, clock.writers)
    drifts = writer_rng.uniform(-clock.drift_ppm, clock.drift_ppm, clock.writers)
    off = cols.offsets
    sess_local = np.repeat(np.arange(cols.sessions), np.diff(off))
    gaps = 1.0 + np.floor(rng.exponential(clock.gap_ms, n)) if clock.gap_ms else np.ones(n)
    starts = np.floor(rng.uniform(0, 3.6e6, cols.sessions))
    gaps[off[:-1][np.diff(off) > 0]] = 0.0
    csum = np.cumsum(gaps)
    base = csum[off[:-1].clip(max=max(n - 1, 0))] if n else csum
    true_time = csum - (base[sess_local] if n else 0) + (starts[sess_local] if n else 0)
    session = cols.session.astype(np.int64)
    agent = session % clock.writers
    tool = (session * 7 + np.maximum(cols.call, 0)) % clock.writers
    writer = np.where(cols.kind == int(Kind.RESULT), tool, agent)
    ts = true_time.copy()
    ts = ts * (1.0 + drifts[writer] * 1e-6) + offsets[writer]
    ts = np.floor(ts)
    quantized = rng.random(n) < clock.quantize_share
    ts = np.where(quantized, np.floor(ts / clock.quantum) * clock.quantum, ts)
    if clock.backstep_share:
        back = rng.random(n) < clock.backstep_share
        ts = np.where(back, ts - clock.backstep_ms, ts)
    arrive_at = true_time + (rng.exponential(clock.delay_ms, n) if clock.delay_ms else 0.0)
    arrival = np.empty(n, dtype=np.int64)
    arrival[np.lexsort((cols.seq, arrive_at))] = np.arange(n)
    return Stamps(ts=ts, true_time=true_time, arrival=arrival)


def read_permutation(cols: EventColumns, ts: np.ndarray, arrival: np.ndarray, order: str) -> np.ndarray:
    """Row order in which a reader sees each session: sessions kept contiguous, rows sorted
    within each by ``order`` (``ts`` alone keeps ties in the store's arrival order)."""
    check_order(order)
    off = cols.offsets
    sess = np.repeat(np.arange(cols.sessions), np.diff(off))
    if order == "seq":
        return np.lexsort((cols.seq, sess))
    if order == "ts-seq":
        return np.lexsort((cols.seq, ts, sess))
    return np.lexsort((arrival, ts, sess))


def reorder_columns(cols: EventColumns, perm: np.ndarray, ts: np.ndarray) -> EventColumns:
    """``cols`` with rows in read order ``perm`` (within sessions) and the stamps attached."""
    return replace(
        cols,
        seq=cols.seq[perm],
        session=cols.session[perm],
        turn=cols.turn[perm],
        kind=cols.kind[perm],
        call=cols.call[perm],
        chars=cols.chars[perm],
        cjk=cols.cjk[perm],
        ts=ts[perm],
        source=None if cols.source is None else cols.source[perm],
    )
