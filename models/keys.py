"""Key collapse: S sessions stored under K keys (``session mod K``), read back one key at a time.

When the storage key is not the session id, a reader that projects "the history of key k"
gets the interleaved events of every session that maps to k. Turn numbers restart in every
session, so turns of different sessions share numbers and a turn-aware projector aligns on the
wrong boundaries; call ids drawn from a small pool repeat, so a window can hold one id twice and
a RESULT can pair with another session's CALL. Seed 004 §7: 60 000 sessions on 256 keys with 32
call ids mixes 96.1 % of windows; the control S = K gives zeros.

Two forms, as in :mod:`models.clock`: :func:`collapse_columns` builds the per-key read order of
a whole workload for the projector core's ``build_histories``; :class:`KeysModel` is a small
protocol model of the same mechanism for the engines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.invariants import NO_ORPHAN_RESULTS
from turncheck.models.projector import Window, project
from turncheck.models.protocol import Property, ProtocolModel, WindowPanel
from turncheck.models.window_panel import keyed_panel
from turncheck.models.workload import EventColumns

SINGLE_SOURCE = "single-source-windows"


@dataclass(frozen=True)
class KeyParams:
    """``keys`` storage keys (``session mod keys``) and a pool of ``call_ids`` call ids."""

    keys: int = 256
    call_ids: int = 32

    def __post_init__(self) -> None:
        if self.keys < 1:
            raise BadParameter(f"parameter keys must be >= 1, got {self.keys}")
        if self.call_ids < 1:
            raise BadParameter(f"parameter call_ids must be >= 1, got {self.call_ids}")


def _keys_rng(seed: int) -> np.random.Generator:
    key = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, 7])  # 7: the key-collapse stream
    return np.random.Generator(np.random.PCG64(key))


def concurrent_times(cols: EventColumns, seed: int) -> np.ndarray:
    """A true append time in [0, 1) for every row: each session's events at sorted uniform times
    over one shared period, so every session is live at once (the seed's concurrent sessions).

    Rows must be sessions-contiguous in seq order; the streams are keyed by the seed and the
    first session, so a block gives the same times alone or with its neighbours.
    """
    n = len(cols)
    rng = np.random.Generator(
        np.random.PCG64(np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, 7, cols.first_session]))
    )
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


# -- the protocol model -------------------------------------------------------------------------


class KeysState(NamedTuple):
    """Events written so far per session, and each key's log as ``(session, index)`` pairs in
    append order."""

    written: tuple[int, ...]
    logs: tuple[tuple[tuple[int, int], ...], ...]


class KeysModel(ProtocolModel[KeysState, tuple[Any, ...]]):
    """``sessions`` sessions, each writing ``turns`` turns of USER, CALL, RESULT, TERM, stored
    under ``keys`` keys; call ids are the session's call number modulo ``call_ids``.

    Actions: ``("append", s)`` — session ``s`` appends its next event. After every append the
    reader projects each key's log with ``strategy`` at ``budget``. Properties:
    ``single-source-windows`` (always: a window holds one true session — breaks as soon as two
    sessions share a key), ``no-orphan-results`` (always: colliding call ids pair a RESULT with
    another session's CALL), and ``all-written`` (sometimes).
    """

    name = "keys"

    def __init__(
        self, sessions: int = 2, keys: int = 1, turns: int = 1, call_ids: int = 1,
        budget: int = 1000, strategy: str = "M1",
    ) -> None:  # fmt: skip
        for pname, value in (("sessions", sessions), ("keys", keys), ("turns", turns), ("call_ids", call_ids),
                             ("budget", budget)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadParameter(f"parameter {pname} must be an integer >= 1, got {value!r}")
        self.sessions, self.keys, self.turns, self.call_ids = sessions, keys, turns, call_ids
        self.budget, self.strategy = budget, strategy
        self.params: Mapping[str, Any] = {
            "sessions": sessions, "keys": keys, "turns": turns, "call_ids": call_ids,
            "budget": budget, "strategy": strategy,
        }  # fmt: skip
        kinds = (int(Kind.USER), int(Kind.CALL), int(Kind.RESULT), int(Kind.TERM))
        self._plan = tuple((t, k) for t in range(turns) for k in kinds)
        self._cost = EstimateCost()
        self._window = lru_cache(maxsize=1 << 15)(self._project)

    def init_states(self) -> Iterator[KeysState]:
        yield KeysState((0,) * self.sessions, ((),) * min(self.keys, self.sessions))

    def actions(self, state: KeysState) -> list[tuple[Any, ...]]:
        return [("append", s) for s in range(self.sessions) if state.written[s] < len(self._plan)]

    def step(self, state: KeysState, action: tuple[Any, ...]) -> KeysState:
        if action[0] != "append":
            raise BadParameter(f"model keys has no action {action!r}")
        s = action[1]
        written = list(state.written)
        i = written[s]
        written[s] = i + 1
        logs = list(state.logs)
        k = s % self.keys
        logs[k] = (*logs[k], (s, i))
        return KeysState(tuple(written), tuple(logs))

    def windows(self, state: KeysState) -> list[Window]:
        return [self._window(log) for log in state.logs if log]

    def _project(self, log: tuple[tuple[int, int], ...]) -> Window:
        h = History(costs=(self._cost,))
        for seq, (s, i) in enumerate(log):
            turn, kind = self._plan[i]
            call = f"c{turn % self.call_ids}" if kind in (int(Kind.CALL), int(Kind.RESULT)) else None
            h.append(Event(seq=seq, session=f"k{s % self.keys}", turn=turn, kind=Kind(kind), call_id=call,
                           ts=float(seq), chars=4, source=f"s{s}"))  # fmt: skip
        return project(h, self.budget, self.strategy, self._cost)

    def properties(self) -> tuple[Property[KeysState], ...]:
        total = len(self._plan)
        return (
            Property(SINGLE_SOURCE, "always",
                     lambda s: all(w.report.mixedSources == 0 for w in self.windows(s)),
                     "every key's window holds events of one true session"),
            Property(NO_ORPHAN_RESULTS, "always",
                     lambda s: all(w.report.orphanRes == 0 for w in self.windows(s)),
                     "no RESULT in a window without its CALL"),
            Property("all-written", "sometimes", lambda s: all(x == total for x in s.written),
                     "every session wrote all its turns"),
        )  # fmt: skip

    def metrics(self, state: KeysState) -> Mapping[str, int]:
        ws = self.windows(state)
        return {
            "mixed_windows": sum(w.report.mixedSources for w in ws),
            "turn_source_mix": sum(w.report.turnSrcMix for w in ws),
            "dup_call_ids": sum(w.report.dupCallId for w in ws),
        }

    def canonical(self, state: KeysState) -> KeysState:
        return state

    def format_action(self, state: KeysState, action: tuple[Any, ...]) -> str:
        s = action[1]
        turn, kind = self._plan[state.written[s]]
        call = f" c{turn % self.call_ids}" if kind in (int(Kind.CALL), int(Kind.RESULT)) else ""
        return f"session {s} appends {Kind(kind).name}{call} of its turn {turn} under key {s % self.keys}"

    def actor(self, state: KeysState, action: tuple[Any, ...]) -> str:
        return f"session {action[1]}"

    def lane_order(self) -> tuple[str, ...]:
        return ("session",)

    def window_panels(
        self, states: Sequence[KeysState], actions: Sequence[tuple[Any, ...]]
    ) -> list[WindowPanel | None]:
        return [keyed_panel(self.windows(s)) for s in states]
