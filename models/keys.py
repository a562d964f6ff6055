"""Key collapse: S sessions stored under K keys (``session mod K``), read back one key at a time.

When the storage key is not the session id, a reader that projects "the history of key k"
gets the interleaved events of every session that maps to k. Turn numbers restart in every
session, so turns of different sessions share numbers and a turn-aware projector aligns on the
wrong boundaries; call ids drawn from a small pool repeat, so a window can hold one id twice and
a RESULT can pair with another session's CALL. Seed 004 §7: 60 000 sessions on 256 keys with 32
call ids mixes 96.1 % of windows; the control S = K gives zeros.

Two forms, as in :mod:`models.clock`: :func:`~models.key_columns.collapse_columns` builds the
per-key read order of a whole workload for the projector core's ``build_histories`` (numpy's,
in :mod:`models.key_columns`, so that building a model does not import it); :class:`KeysModel` is
a small protocol model of the same mechanism for the engines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from turncheck.models.catalog import register_model
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.invariants import NO_ORPHAN_RESULTS
from turncheck.models.projector import Window, project
from turncheck.models.protocol import Property, ProtocolModel, WindowPanel
from turncheck.models.window_panel import keyed_panel

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


register_model(
    "keys",
    KeysModel,
    description="key collapse: sessions stored under fewer keys, read back one key at a time",
)
