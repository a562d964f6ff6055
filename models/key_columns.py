"""Key collapse over columns: a whole workload's events read back one storage key at a time,
for seed-scale experiments (:mod:`scenarios.key_collapse`); :class:`~models.keys.KeysModel` is
the same mechanism as a protocol model. Kept apart from :mod:`models.keys` so that building the
model (every ``check``, through the model catalogue) does not import numpy.
"""

from __future__ import annotations

import numpy as np

from turncheck.models.keys import KeyParams
from turncheck.models.random_streams import stream_rng
from turncheck.models.workload import EventColumns


def concurrent_times(cols: EventColumns, seed: int) -> np.ndarray:
    """A true append time in [0, 1) for every row: each session's events at sorted uniform times
    over one shared period, so every session is live at once (the seed's concurrent sessions).

    Rows must be sessions-contiguous in seq order; the streams are keyed by the seed and the
    first session, so a block gives the same times alone or with its neighbours.
    """
    n = len(cols)
    rng = stream_rng("keys", seed, cols.first_session)
    u = rng.random(n)
    sess = np.repeat(np.arange(cols.sessions), np.diff(cols.offsets))
    return u[np.lexsort((u, sess))]


def dense_call_numbers(cols: EventColumns, rows: np.ndarray | None = None) -> np.ndarray:
    """Each row's call renumbered 0, 1, 2, … in order within its session (-1 for USER/TERM), so
    ``number mod call_ids`` repeats within a session only ``call_ids`` calls apart.

    ``rows`` restricts the work to those rows (whole sessions), returning their numbers in order.
    """
    call = cols.call.astype(np.int64) if rows is None else cols.call[rows].astype(np.int64)
    session = cols.session if rows is None else cols.session[rows]
    tool = call >= 0
    key = session.astype(np.int64)[tool] * (1 << 32) + call[tool]
    uniq, inverse = np.unique(key, return_inverse=True)
    sess_of = uniq >> 32
    first = np.searchsorted(sess_of, sess_of)  # index of the session's first call id
    out = np.full(call.shape[0], -1, dtype=np.int64)
    out[tool] = (np.arange(uniq.shape[0]) - first)[inverse]
    return out


def collapse_columns(
    cols: EventColumns, times: np.ndarray, params: KeyParams, key_subset: np.ndarray | None = None
) -> EventColumns:
    """The logs of the keys, as a reader of each key sees them.

    Each row is stored under key ``session mod keys``; a key's rows are read in true append
    order (``times``) and renumbered in that order (``seq``); ``source`` keeps the true session;
    a call id becomes the session's call number (:func:`dense_call_numbers`) ``mod call_ids``,
    so ids repeat across sessions, and within one only ``call_ids`` calls apart. ``key_subset``
    keeps only those keys (for building a few keys at a time).

    Returns
    -------
    EventColumns
        One "session" per key, keys in increasing order; ``session`` holds the key.
    """
    session = cols.session.astype(np.int64)
    key = session % params.keys
    rows = np.arange(len(cols)) if key_subset is None else np.flatnonzero(np.isin(key, key_subset))
    local = np.lexsort((cols.seq[rows], times[rows], key[rows]))
    order = rows[local]
    k = key[order]
    present, counts = np.unique(k, return_counts=True)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    call = dense_call_numbers(cols, None if key_subset is None else rows)[local]
    return EventColumns(
        seq=np.arange(order.shape[0], dtype=np.int64),
        session=k.astype(np.int32),
        turn=cols.turn[order],
        kind=cols.kind[order],
        call=np.where(call >= 0, call % params.call_ids, -1).astype(np.int32),
        chars=cols.chars[order],
        cjk=cols.cjk[order],
        offsets=offsets,
        first_session=int(present[0]) if present.size else 0,
        ts=None,
        source=cols.session[order].astype(np.int32),
    )
