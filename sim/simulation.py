"""The SimPy runner: a slotted writer/compactor protocol model driven in simulated time.

The runner owns timing, never protocol: turns *arrive* (at most ``A`` per slot, uniformly, or
as a Poisson stream) into a FIFO request queue; ``W`` writers take them one at a time and append
when the model enables their ``("append", w)``; a clock ends every slot with ``("tick",)`` at
integer times, so the gap ``G`` is ``G`` units of simulated time; the compactor acts
(``("compact",)``) when the model says it is due. Whether an action may happen, and what it
does, is always the model's ``step`` — a lock is the model's state, and a writer the model does
not enable waits for the next state change, FIFO, exactly as it would queue on a
``simpy.Resource`` (keeping the lock in a Resource as well would define the protocol twice). Any
model with this action vocabulary runs here: the trigger model under every locking strategy, or a
user's own ``package.module:Class``.

Each actor — the arrival stream, every writer, the compactor, the clock — waits on SimPy events
(the arrival stream and the clock as generator processes, a writer and the compactor as a
callback on the event it waits for), asks the model ``is_enabled`` and acts with ``step``: the
model's generic interface and nothing else, so a writer of any model names its own action
``("append", w)``. (The trigger model's initial state names its writers, so its states in a run
say which writer is which.)

After every appended turn the runner can project the live turns with the projector core
(``budget``/``strategy``) and record the window's structural report.

Determinism: the only randomness is the seeded arrival stream and turn sizes; SimPy breaks ties
by scheduling order, which is itself deterministic. Nothing here reads a wall clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal

import numpy as np
import simpy
from simpy.events import Event as SimEvent
from simpy.events import Timeout

from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import project
from turncheck.models.protocol import ProtocolModel, as_model
from turncheck.models.random_streams import stream_rng
from turncheck.models.report import Aggregate

ArrivalKind = Literal["slots", "poisson"]
ARRIVALS: tuple[ArrivalKind, ...] = ("slots", "poisson")
_TICK = ("tick",)
_COMPACT = ("compact",)
Process = Generator[SimEvent, Any, None]


@dataclass(frozen=True)
class RunSpec:
    """How to drive a model: ``slots`` slots of simulated time, arrivals ``slots`` (uniform
    ``0..writers`` per slot) or ``poisson`` (``rate`` turns per slot on average), the seed, and
    optionally a projection after every turn (``budget`` > 0) with ``strategy``."""

    slots: int = 1000
    arrivals: ArrivalKind = "slots"
    rate: float = 0.0
    seed: int = 0
    budget: int = 0
    strategy: str = "M1"

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise BadParameter(f"parameter slots must be >= 1, got {self.slots}")
        if self.arrivals not in ARRIVALS:
            raise BadParameter(f"parameter arrivals: {self.arrivals!r} is not one of {', '.join(ARRIVALS)}")
        if self.rate < 0:
            raise BadParameter(f"parameter rate must be >= 0, got {self.rate}")
        if self.budget < 0:
            raise BadParameter(f"parameter budget must be >= 0, got {self.budget}")


@dataclass(frozen=True)
class SimulationResult:
    """What one run observed. Latencies are in slots from arrival to append; the two waits are
    the longest stretches of simulated time the model kept an actor from what it was owed:
    ``compaction_wait_max`` from the compactor's first being due (after its last delete) to the
    act that deletes, ``writer_wait_max`` from a writer's finding a turn it may not take to its
    next append (or the queue's emptying). A wait still open when the run ends counts to the
    end: a compaction that starves waited the rest of the run."""

    peak: int
    final_live: int
    arrived: int
    appends: int
    compactions: int
    retries: int
    max_retry_streak: int
    latency_p50: float
    latency_p99: float
    latency_max: float
    waiting: int
    events: int
    projection: dict[str, int | float] = field(default_factory=dict)
    post_compaction_peak: int = 0  # most live turns right after any step that deleted turns
    compaction_wait_max: float = 0.0
    writer_wait_max: float = 0.0

    @property
    def throughput(self) -> float:
        return self.appends / self.arrived if self.arrived else 1.0


def slot_arrivals(writers: int, slots: int, seed: int) -> np.ndarray:
    """Per-slot arrival counts, uniform in ``0..writers`` — the stream :func:`models.trigger_slots.fast_slots`
    and the SimPy runner both consume, so the two can be compared run for run."""
    rng = stream_rng("slot-arrivals", seed)
    return rng.integers(0, writers + 1, slots)


class Simulation:
    """One SimPy run of ``model`` under ``spec``; call :meth:`run` once.

    Two SimPy events carry every wait: ``_arrival`` fires when turns arrive (idle writers wait
    on it) and ``_changed`` when the model's state changes (whoever the model does not enable
    waits on it); each is replaced when it fires, and fires only when someone waits, so an
    unwatched change schedules nothing. SimPy wakes the waiting (callbacks and processes) in the
    order they began to wait: a blocked writer queues FIFO, as on a ``simpy.Resource``.
    """

    def __init__(self, model: ProtocolModel[Any, Any], spec: RunSpec, writers: int | None = None) -> None:
        self.model = model = as_model(model)
        self.spec = spec
        self.writers = int(writers if writers is not None else model.params.get("writers", 1))
        self.env = simpy.Environment()
        (self.state,) = tuple(model.init_states())[:1]
        live = int(model.metrics(self.state)["live_turns"])
        if getattr(self.state, "live", None) == live:  # the state names its live count: read it directly
            self._live: Callable[[Any], int] = attrgetter("live")
        else:
            self._live = model.live_turns
        self._step = model.step
        self.requests: deque[float] = deque()  # arrival times of turns not yet taken by a writer
        self._arrival = SimEvent(self.env)
        self._changed = SimEvent(self.env)
        self.live = self.peak = live  # live turns in ``state``, and the most seen
        self.post_peak = 0
        self.arrived = self.appends = self.compactions = self.retries = 0
        self.streak = self.max_streak = 0
        self.latencies: list[float] = []
        self.due_since: float | None = None  # when the compactor fell due, until it deletes
        self.blocked_since: dict[int, float] = {}  # writer -> when it found a turn it may not take
        self.compaction_wait = self.writer_wait = 0.0
        self._projecting = spec.budget > 0
        if self._projecting:
            self._cost = EstimateCost()
            self._turns: deque[list[Event]] = deque()
            self._history = History(costs=(self._cost,))
            self._seq = 0
            self._turn_no = 0
            self._sizes = stream_rng("turn-sizes", spec.seed)
            self.aggregate = Aggregate(spec.budget)

    def _apply(self, action: tuple[Any, ...]) -> None:
        """Take ``action`` (enabled: the caller asked), record what it did, wake the waiting."""
        before = self.live
        self.state = state = self._step(self.state, action)
        self.live = live = self._live(state)
        if live > self.peak:
            self.peak = live
        elif live > self.post_peak and live < before + (action[0] == "append"):
            self.post_peak = live  # turns were deleted: an act's result, or a trim inside an append
        if self._projecting:
            self._follow(action, before, live)
        changed = self._changed
        if changed.callbacks:
            self._changed = SimEvent(self.env)
            changed.succeed()

    def _announce(self, turns: int) -> None:
        self.requests.extend([self.env.now] * turns)
        self.arrived += turns
        arrival = self._arrival
        if arrival.callbacks:
            self._arrival = SimEvent(self.env)
            arrival.succeed()

    # -- processes ----------------------------------------------------------------------------

    def _slot_arrivals(self) -> Process:
        yield Timeout(self.env, 0.5)
        for k in slot_arrivals(self.writers, self.spec.slots, self.spec.seed).tolist():
            if k:
                self._announce(k)
            yield Timeout(self.env, 1.0)

    def _poisson_arrivals(self) -> Process:
        rng, rate, horizon = (
            stream_rng("poisson-arrivals", self.spec.seed),
            self.spec.rate,
            float(self.spec.slots),
        )
        if rate <= 0:
            return
        block = max(16, int(rate * self.spec.slots * 1.2) + 16)
        t = 0.0
        while True:
            for gap in rng.exponential(1.0 / rate, block).tolist():
                t += gap
                if t >= horizon:
                    return
                yield Timeout(self.env, t - self.env.now)
                self._announce(1)

    def _writer(self, w: int) -> Callable[[Any], None]:
        """Writer ``w``'s wake-up: it takes the oldest waiting turn only when the model lets it
        append now (a writer the model blocks — a lock, or it already appended this slot —
        leaves it to others), then waits on the change it needs: a new state while turns wait,
        else new turns.

        A writer (and the compactor) is a callback on the event it waits for, not a generator
        process: SimPy runs an event's callbacks in the order they were added, exactly as it
        resumes the processes waiting on it, so the order of every action is the one of a
        process per writer, without a generator resumed (and ``Process._resume`` run) for every
        waiter of every change — most of them find nothing to do."""
        action, requests, enabled = ("append", w), self.requests, self.model.is_enabled
        blocked = self.blocked_since

        def wake(_event: Any) -> None:
            while requests and enabled(self.state, action):
                if w in blocked:
                    self._writer_waited(w)
                self.latencies.append(self.env.now - requests.popleft())
                self.appends += 1
                self._apply(action)
            if requests:  # turns wait that the model will not let ``w`` take: wait for a change
                if w not in blocked:
                    blocked[w] = self.env.now
                self._changed.callbacks.append(wake)  # type: ignore[union-attr]
            else:
                if w in blocked:
                    self._writer_waited(w)
                self._arrival.callbacks.append(wake)  # type: ignore[union-attr]

        return wake

    def _writer_waited(self, w: int) -> None:
        self.writer_wait = max(self.writer_wait, self.env.now - self.blocked_since.pop(w))

    def _clock(self) -> Process:
        enabled = self.model.is_enabled
        for _ in range(self.spec.slots - 1):
            yield Timeout(self.env, 1.0)
            while not enabled(self.state, _TICK):  # the compactor acts first when it is due
                yield self._changed
            self._apply(_TICK)

    def _compactor(self, _event: Any) -> None:
        """The compactor's wake-up (a callback, as a writer's): it acts while the model says
        it is due, then waits for the next change of state."""
        enabled = self.model.is_enabled
        while enabled(self.state, _COMPACT):
            live = self.live
            if self.due_since is None:
                self.due_since = self.env.now
            self._apply(_COMPACT)
            if self.live < live:
                self.compactions += 1
                self.streak = 0
                self.compaction_wait = max(self.compaction_wait, self.env.now - self.due_since)
                self.due_since = None
            else:
                self.retries += 1
                self.streak += 1
                self.max_streak = max(self.max_streak, self.streak)
        self._changed.callbacks.append(self._compactor)  # type: ignore[union-attr]

    # -- projection of the live turns ---------------------------------------------------------

    def _follow(self, action: tuple[Any, ...], before: int, live: int) -> None:
        appended = 1 if action[0] == "append" else 0
        deleted = before + appended - live
        if appended:
            self._turns.append(self._new_turn())
        for _ in range(max(0, deleted)):
            self._turns.popleft()
        if deleted > 0:
            self._history = History((e for turn in self._turns for e in turn), costs=(self._cost,))
        elif appended:
            self._history.extend(self._turns[-1])
        if appended:
            self.aggregate.add(
                project(self._history, self.spec.budget, self.spec.strategy, self._cost).report
            )

    def _new_turn(self) -> list[Event]:
        rng = self._sizes
        calls = int(rng.integers(0, 3))
        turn = self._turn_no
        self._turn_no += 1
        kinds = [Kind.USER] + [Kind.CALL, Kind.RESULT] * calls + [Kind.TERM]
        events = []
        for j, kind in enumerate(kinds):
            chars = int(rng.integers(200, 3001)) if kind == Kind.RESULT else int(rng.integers(20, 401))
            cid = f"c{turn}.{(j - 1) // 2}" if kind in (Kind.CALL, Kind.RESULT) else None
            events.append(Event(seq=self._seq, session="s", turn=turn, kind=kind, call_id=cid,
                                ts=float(self.env.now), chars=chars))  # fmt: skip
            self._seq += 1
        return events

    # -- running ------------------------------------------------------------------------------

    def _start(self, wake: Callable[[Any], None]) -> None:
        """Run ``wake`` first as SimPy starts a process: on an event now. Nothing else is due at
        time 0 before the actors have started, so a zero-delay timeout keeps the order, the
        time and the count of the events a process's ``Initialize`` would have had."""
        Timeout(self.env, 0).callbacks.append(wake)  # type: ignore[union-attr]

    def run(self) -> SimulationResult:
        """Run ``spec.slots`` slots and summarize.

        Slot ``t`` spans ``[t, t + 1)``: its arrivals land at ``t + 0.5``; the clock ends it at
        ``t + 1`` (for every slot but the last); the run stops at time ``slots``, before
        anything scheduled then — the order of :func:`models.trigger_slots.drive_slots`.
        """
        env = self.env
        env.process(self._slot_arrivals() if self.spec.arrivals == "slots" else self._poisson_arrivals())
        for w in range(self.writers):
            self._start(self._writer(w))
        self._start(self._compactor)
        env.process(self._clock())
        events = 0
        end = float(self.spec.slots)
        while env.peek() < end:
            env.step()
            events += 1
        open_waits = [end - t for t in self.blocked_since.values()]
        writer_wait = max([self.writer_wait, *open_waits])
        compaction_wait = max(
            self.compaction_wait, end - self.due_since if self.due_since is not None else 0.0
        )
        lat = np.asarray(self.latencies, dtype=np.float64)
        p50, p99, mx = (
            (float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), float(lat.max()))
            if lat.size
            else (0.0,) * 3
        )
        return SimulationResult(
            peak=self.peak,
            final_live=self.live,
            arrived=self.arrived,
            appends=self.appends,
            compactions=self.compactions,
            retries=self.retries,
            max_retry_streak=self.max_streak,
            latency_p50=round(p50, 6),
            latency_p99=round(p99, 6),
            latency_max=round(mx, 6),
            waiting=self.arrived - self.appends,
            events=events,
            projection=self.aggregate.as_dict() if self._projecting else {},
            post_compaction_peak=self.post_peak,
            compaction_wait_max=round(compaction_wait, 6),
            writer_wait_max=round(writer_wait, 6),
        )


def simulate(model: ProtocolModel[Any, Any], spec: RunSpec) -> SimulationResult:
    """Run ``model`` in simulated time under ``spec`` (see :class:`Simulation`)."""
    return Simulation(model, spec).run()
