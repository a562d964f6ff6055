"""Writer clocks and read orders: what happens to turns when a log is read back by timestamp.

Every event gets a ``seq`` (its append order) and a ``ts`` stamped by its writer's own clock:
an offset, a drift, a share of stamps quantized down to a multiple of ``quantum`` (seed 004
rounds 5 % of stamps to tens of ms, creating ties) and occasional backward steps. Events reach
the store after a delivery delay, so the store's *arrival order* is not the seq order. A reader
sorts one session's events by a key — ``seq``, ``ts-seq`` (``ts`` with ``seq`` breaking ties) or
``ts`` alone (a stable sort over the arrival order, so ties fall in arrival order) — and
projects. Only ``seq`` keeps every turn contiguous and in order; the others let a RESULT slide
before its CALL or a turn split in two, and turn-aware trimming then orphans results.

Two forms of the same idea live here:

* plain functions over columns (:mod:`models.clock_columns`: ``stamp_columns``,
  ``read_permutation``, ``reorder_columns``) for seed-scale experiments, feeding the projector
  core's ``build_histories`` — numpy's, kept apart so that building a model does not import it;
* :class:`ClockModel`, a small protocol model (agent and tool writers, clock ticks, backward
  steps, quantized stamps, deliveries) whose ``seq-ordered-turns`` property breaks under
  ``order=ts`` and holds under ``order=seq``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any, Literal, NamedTuple, TypeVar

from turncheck.models.catalog import register_model
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.invariants import SEQ_ORDERED_TURNS, seq_ordered_turns
from turncheck.models.projector import Window, project
from turncheck.models.protocol import Property, ProtocolModel, WindowPanel
from turncheck.models.window_panel import window_panel

Order = Literal["seq", "ts-seq", "ts"]
ORDERS: tuple[Order, ...] = ("seq", "ts-seq", "ts")


def check_order(order: str) -> Order:
    if order not in ORDERS:
        raise BadParameter(f"parameter order: {order!r} is not one of {', '.join(ORDERS)}")
    return order  # type: ignore[return-value]


# -- clocks over columns ------------------------------------------------------------------------


@dataclass(frozen=True)
class ClockParams:
    """How writers stamp and deliver events (times in ms).

    Within a session, consecutive events are ``1 + ⌊Exp(gap_ms)⌋`` ms apart in true time (the
    default ``gap_ms = 0`` makes stamps a per-session counter, as the seed's were). USER,
    CALL and TERM are stamped by the session's agent clock, each RESULT by a tool clock; there are
    ``writers`` clocks, each with an offset uniform in ``±offset_ms`` and a drift uniform in
    ``±drift_ppm``. A share ``quantize_share`` of stamps is floored to a multiple of ``quantum``;
    a share ``backstep_share`` is taken just after the clock stepped back by ``backstep_ms``.
    Each event reaches the store ``Exp(delay_ms)`` after it was written. The defaults are seed
    004's minimal disturbance: only the 5 % quantization to tens.
    """

    writers: int = 8
    gap_ms: float = 0.0
    offset_ms: float = 0.0
    drift_ppm: float = 0.0
    quantize_share: float = 0.05
    quantum: int = 10
    backstep_share: float = 0.0
    backstep_ms: float = 50.0
    delay_ms: float = 20.0

    def __post_init__(self) -> None:
        if self.writers < 1:
            raise BadParameter(f"parameter writers must be >= 1, got {self.writers}")
        for name in ("gap_ms", "offset_ms", "drift_ppm", "backstep_ms", "delay_ms"):
            if getattr(self, name) < 0:
                raise BadParameter(f"parameter {name} must be >= 0, got {getattr(self, name)}")
        for name in ("quantize_share", "backstep_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise BadParameter(f"parameter {name} must be within [0, 1], got {getattr(self, name)}")
        if self.quantum < 1:
            raise BadParameter(f"parameter quantum must be >= 1, got {self.quantum}")


T = TypeVar("T")


def in_read_order(items: Iterable[T], order: str, seq_ts: Callable[[T], tuple[int, Any]]) -> list[T]:
    """``items`` as a reader sorts them in ``order``, given each item's ``(seq, ts)``: by seq; by
    ``(ts, seq)``; by ts alone, a stable sort, so ties keep the order given (the store's arrival
    order). The one definition of the orders; :func:`~models.clock_columns.read_permutation` is
    its columnar form."""
    check_order(order)
    if order == "seq":
        return sorted(items, key=lambda x: seq_ts(x)[0])
    if order == "ts-seq":
        return sorted(items, key=lambda x: seq_ts(x)[::-1])
    return sorted(items, key=lambda x: seq_ts(x)[1])


# -- the protocol model -------------------------------------------------------------------------

# one event in flight or stored: (seq, ts, turn, kind, call)
Ev = tuple[int, int, int, int, int]
AGENT, TOOL = 0, 1


class ClockState(NamedTuple):
    """Events issued so far, true time, each writer's clock adjustment (its offset plus backward
    steps), backward steps still allowed, each writer's FIFO outbox, and the store's events in
    arrival order. A named tuple: immutable, hashable and cheap for the explorer."""

    emitted: int
    time: int
    adjust: tuple[int, int]
    back_left: int
    outboxes: tuple[tuple[Ev, ...], tuple[Ev, ...]]
    store: tuple[Ev, ...]


def _turn_kinds(calls: int) -> tuple[int, ...]:
    return (int(Kind.USER), *((int(Kind.CALL), int(Kind.RESULT)) * calls), int(Kind.TERM))


class ClockModel(ProtocolModel[ClockState, tuple[Any, ...]]):
    """One session written by an agent (USER, CALL, TERM) and a tool runner (RESULT), each
    stamping from its own clock, read back by ``order`` and projected with M1.

    Actions: ``("emit", q)`` issues the next event into its writer's outbox, stamped with that
    writer's clock, floored to a multiple of ``quantum`` when ``q`` is 1 (offered only when
    ``quantum`` > 0); ``("deliver", w)`` lands the oldest event of writer ``w``'s outbox in the
    store; ``("tick",)`` advances true time (up to ``horizon``); ``("back", w)`` steps writer
    ``w``'s clock back by one (at most ``backsteps`` times in all). The tool clock starts
    ``offset`` ahead (negative: behind) of the agent's.

    Properties: ``seq-ordered-turns`` (always: the projected window keeps each turn contiguous
    and in seq order) and ``all-delivered`` (sometimes: every event reached the store).
    """

    name = "clock"

    def __init__(
        self,
        order: str = "seq",
        turns: int = 1,
        calls: int = 1,
        offset: int = 0,
        backsteps: int = 0,
        quantum: int = 0,
        horizon: int = 2,
        budget: int = 1000,
        strategy: str = "M1",
    ) -> None:
        self.order = check_order(order)
        for name, value, lo in (
            ("turns", turns, 1), ("calls", calls, 0), ("backsteps", backsteps, 0),
            ("quantum", quantum, 0), ("horizon", horizon, 0), ("budget", budget, 1),
        ):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                raise BadParameter(f"parameter {name} must be an integer >= {lo}, got {value!r}")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise BadParameter(f"parameter offset must be an integer, got {offset!r}")
        self.turns, self.calls, self.offset = turns, calls, offset
        self.backsteps, self.quantum, self.horizon = backsteps, quantum, horizon
        self.budget, self.strategy = budget, strategy
        self.params: Mapping[str, Any] = {
            "order": order, "turns": turns, "calls": calls, "offset": offset, "backsteps": backsteps,
            "quantum": quantum, "horizon": horizon, "budget": budget, "strategy": strategy,
        }  # fmt: skip
        kinds = _turn_kinds(calls)
        self._plan = tuple((t, k, (j - 1) // 2 if k in (int(Kind.CALL), int(Kind.RESULT)) else -1)
                           for t in range(turns) for j, k in enumerate(kinds))  # fmt: skip
        self._cost = EstimateCost()
        self._window = lru_cache(maxsize=1 << 15)(self._project)

    def init_states(self) -> Iterator[ClockState]:
        yield ClockState(0, 0, (0, self.offset), self.backsteps, ((), ()), ())

    def actions(self, state: ClockState) -> list[tuple[Any, ...]]:
        emitted, time, _adjust, back_left, outboxes, _store = state
        out: list[tuple[Any, ...]] = []
        if emitted < len(self._plan):
            out.append(("emit", 0))
            if self.quantum:
                out.append(("emit", 1))
        out.extend(("deliver", w) for w in (AGENT, TOOL) if outboxes[w])
        if time < self.horizon:
            out.append(("tick",))
        if back_left:
            out.extend(("back", w) for w in (AGENT, TOOL))
        return out

    def writer_of(self, kind: int) -> int:
        return TOOL if kind == int(Kind.RESULT) else AGENT

    def step(self, state: ClockState, action: tuple[Any, ...]) -> ClockState:
        emitted, time, adjust, back_left, outboxes, store = state
        verb = action[0]
        if verb == "emit":
            turn, kind, call = self._plan[emitted]
            w = self.writer_of(kind)
            ts = time + adjust[w]
            if action[1]:
                ts = (ts // self.quantum) * self.quantum
            boxes = list(outboxes)
            boxes[w] = (*boxes[w], (emitted, ts, turn, kind, call))
            return ClockState(emitted + 1, time, adjust, back_left, (boxes[AGENT], boxes[TOOL]), store)
        if verb == "deliver":
            w = action[1]
            boxes = list(outboxes)
            head, boxes[w] = boxes[w][0], boxes[w][1:]
            return ClockState(emitted, time, adjust, back_left, (boxes[AGENT], boxes[TOOL]), (*store, head))
        if verb == "tick":
            return ClockState(emitted, time + 1, adjust, back_left, outboxes, store)
        if verb == "back":
            adj = list(adjust)
            adj[action[1]] -= 1
            return ClockState(emitted, time, (adj[AGENT], adj[TOOL]), back_left - 1, outboxes, store)
        raise BadParameter(f"model clock has no action {action!r}")

    def read_order(self, store: tuple[Ev, ...]) -> tuple[Ev, ...]:
        """The store's events as the reader sorts them (stable: ties keep arrival order)."""
        return tuple(in_read_order(store, self.order, itemgetter(0, 1)))

    def window(self, state: ClockState) -> Window:
        return self._window(self.read_order(state[5]))

    def _project(self, events: tuple[Ev, ...]) -> Window:
        h = History(costs=(self._cost,))
        for seq, ts, turn, kind, call in events:
            h.append(
                Event(seq=seq, session="s", turn=turn, kind=Kind(kind),
                      call_id=f"c{turn}.{call}" if call >= 0 else None, ts=float(ts),
                      writer="tool" if kind == int(Kind.RESULT) else "agent", chars=4)
            )  # fmt: skip
        return project(h, self.budget, self.strategy, self._cost)

    def properties(self) -> tuple[Property[ClockState], ...]:
        total = len(self._plan)
        return (
            Property(
                SEQ_ORDERED_TURNS,
                "always",
                lambda s: seq_ordered_turns(self.window(s).events),
                f"the window read by {self.order} keeps each turn contiguous and in seq order",
            ),
            Property(
                "all-delivered",
                "sometimes",
                lambda s: len(s[5]) == total,
                "every event of the session reached the store",
            ),
        )

    def metrics(self, state: ClockState) -> Mapping[str, int]:
        r = self.window(state).report
        return {"stored": len(state[5]), "seq_inversions": r.seqInversions, "tie_inversions": r.tieInversions,
                "mispair": r.mispair, "orphan_results": r.orphanRes}  # fmt: skip

    def canonical(self, state: ClockState) -> ClockState:
        return state

    def format_action(self, state: ClockState, action: tuple[Any, ...]) -> str:
        emitted, time, adjust, _back, outboxes, _store = state
        verb = action[0]
        if verb == "emit":
            turn, kind, call = self._plan[emitted]
            w = self.writer_of(kind)
            ts = time + adjust[w]
            stamp = f"ts={ts}"
            if action[1]:
                stamp = f"ts={(ts // self.quantum) * self.quantum} (quantized from {ts})"
            label = Kind(kind).name + (f" c{turn}.{call}" if call >= 0 else "")
            return f"{('agent', 'tool')[w]} writes seq {emitted} {label} of turn {turn}, {stamp}"
        if verb == "deliver":
            seq, ts, _turn, kind, _call = outboxes[action[1]][0]
            sender = ("agent", "tool")[action[1]]
            return f"store receives seq {seq} {Kind(kind).name} (ts={ts}) from the {sender}"
        if verb == "tick":
            return f"time advances to {time + 1}"
        return f"{('agent', 'tool')[action[1]]} clock steps back to {time + adjust[action[1]] - 1}"

    # -- transcript hooks --------------------------------------------------------------------

    def actor(self, state: ClockState, action: tuple[Any, ...]) -> str:
        verb = action[0]
        if verb == "emit":
            return ("agent", "tool")[self.writer_of(self._plan[state[0]][1])]
        if verb in ("deliver", "back"):
            return ("agent", "tool")[action[1]] if verb == "back" else "store"
        return "clock"

    def lane_order(self) -> tuple[str, ...]:
        return ("agent", "tool", "store", "clock")

    def columns(self, state: ClockState) -> Mapping[str, Any]:
        order = self.read_order(state[5])
        return {
            "read": " ".join(str(e[0]) for e in order) or "-",
            "ts": " ".join(str(e[1]) for e in order) or "-",
        }

    def describe_window(self, state: ClockState) -> str:
        w = self.window(state)
        parts = [f"{Kind(e.kind).name}#{e.seq}@{int(e.ts)}" for e in w.events]
        return f"reader sorts by {self.order} and {self.strategy} sends: " + (" ".join(parts) or "(empty)")

    def window_panels(
        self, states: Sequence[ClockState], actions: Sequence[tuple[Any, ...]]
    ) -> list[WindowPanel | None]:
        return [window_panel(self.window(s)) for s in states]

    def window_steps(
        self, states: Sequence[ClockState], actions: Sequence[tuple[Any, ...]]
    ) -> tuple[set[int], str]:
        """The writes (``emit`` steps) of the events in the window sent, as the reader ordered them."""
        emits = [k for k, a in enumerate(actions, start=1) if a[0] == "emit"]
        seqs = {int(e.seq) for e in self.window(states[-1]).events}
        return {
            emits[s] for s in seqs if s < len(emits)
        }, f"writes of the events in the window sent ({self.order} order)"


register_model("clock", ClockModel, description="writer clocks and read orders: turns read back by timestamp")
