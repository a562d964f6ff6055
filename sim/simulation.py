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

Each actor is a callback on SimPy events, scheduling exactly the events a generator process
would (see "how the actors meet SimPy" below), so a wake-up costs a call, not a generator
resume. Two optional model hooks let it ask the model less:
:meth:`~turncheck.models.protocol.ProtocolModel.stepper` asks whether an actor's action is
enabled and takes it in one call, and :meth:`~turncheck.models.protocol.ProtocolModel.repeats`
says when not to ask again; their defaults ask ``guard`` (``is_enabled``) and ``step`` every time.

After every appended turn the runner can project the live turns with the projector core
(``budget``/``strategy``) and record the window's structural report.

Determinism: the only randomness is the seeded arrival stream and turn sizes; SimPy breaks ties
by scheduling order, which is itself deterministic. Nothing here reads a wall clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import count
from operator import attrgetter
from typing import Any, Literal

import numpy as np
import simpy
from simpy.core import StopSimulation
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
Waker = Callable[[SimEvent], None]  # an actor, called when the SimPy event it waits on is processed


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
    """What one run observed. Latencies are in slots from arrival to append."""

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

    @property
    def throughput(self) -> float:
        return self.appends / self.arrived if self.arrived else 1.0


def slot_arrivals(writers: int, slots: int, seed: int) -> np.ndarray:
    """Per-slot arrival counts, uniform in ``0..writers`` — the stream :func:`models.trigger_slots.fast_slots`
    and the SimPy runner both consume, so the two can be compared run for run."""
    rng = stream_rng("slot-arrivals", seed)
    return rng.integers(0, writers + 1, slots)


class Simulation:
    """One SimPy run of ``model`` under ``spec``; call :meth:`run` once."""

    def __init__(self, model: ProtocolModel[Any, Any], spec: RunSpec, writers: int | None = None) -> None:
        self.model = model = as_model(model)
        self.spec = spec
        self.writers = int(writers if writers is not None else model.params.get("writers", 1))
        self.env = simpy.Environment()
        (self.state,) = tuple(model.init_states())[:1]
        live = int(model.metrics(self.state)["live_turns"])
        # the state names its live count (and the model keeps it as ``live_turns``): read it directly
        self._named_live = getattr(self.state, "live", None) == live
        self._live: Callable[[Any], int] = (
            attrgetter("live") if self._named_live else lambda state: int(model.metrics(state)["live_turns"])
        )
        self.live = self.peak = live  # live turns in ``state``, and the most seen
        self.now = 0.0  # ``env.now``, copied by the actors that move time (see "time" below)
        # The request queue is FIFO, so the k-th append takes the k-th arrival: the queue is a
        # count, and latencies are arrival and append times subtracted once, at the end.
        self.queued = 0  # turns arrived and not yet taken by a writer
        self._arrived_at: list[float] = []  # the time of every arrival, in order (their count: ``arrived``)
        self._served_at: list[float] = []  # the time of every call of ``_serve`` that appended,
        self._served: list[int] = []  # and how many turns it appended
        self._idle: list[int] = []  # writers waiting for an arrival, FIFO
        self._waiting: list[Waker] = []  # actors waiting for a state change, FIFO
        # per writer: its append where enabled, else None (the model's ``stepper``), whether to
        # ask again right after appending (``repeats``), the callback that wakes it on a state
        # change, and the action itself
        self._writer_rules = [
            (self._attempt(action), True, self._waker(w), action)
            for w, action in enumerate(("append", w) for w in range(self.writers))
        ]
        self.post_peak = 0
        self.compactions = self.retries = 0
        self.streak = self.max_streak = 0
        self._projecting = spec.budget > 0
        if self._projecting:
            self._cost = EstimateCost()
            self._turns: deque[list[Event]] = deque()
            self._history = History(costs=(self._cost,))
            self._seq = 0
            self._turn_no = 0
            self._sizes = stream_rng("turn-sizes", spec.seed)
            self.aggregate = Aggregate(spec.budget)

    # -- how the actors meet SimPy --------------------------------------------------------------
    #
    # Each actor (arrivals, every writer, the compactor, the clock) is a callback on SimPy events
    # rather than a generator process: SimPy calls it when its event is processed, and it
    # schedules its next event or joins a FIFO exactly where its process would have yielded. The
    # events are the processes' own: a start per actor, in creation order (a process's
    # ``Initialize``; zero-delay events made before anything runs are processed first and in
    # that order just the same), a ``Timeout`` wherever a process slept, one zero-delay event per
    # state change someone waits on and per arrival an idle writer waits on, and a zero-delay
    # event where a process would have ended. So the events, their times, their order and the
    # count are the processes' — ``tests/test_simulation_hooks.py`` pins every event time and
    # action of runs recorded from the process-based runner — without resuming a generator per
    # wake-up. Who waits is the runner's own FIFO: ``_waiting`` (a state change) and ``_idle``
    # (an arrival); a change schedules one event whose callbacks are the whole FIFO, in order.
    #
    # Time: only the arrival stream and the clock sleep, so only their callbacks see the time
    # move; each copies ``env.now`` into ``self.now`` first, and every other callback runs at
    # that time (zero-delay events) and reads ``self.now`` rather than the property.

    def _attempt(self, action: tuple[Any, ...]) -> Callable[[Any], Any]:
        enabled, step = self.model.is_enabled, self.model.step
        return lambda state: step(state, action) if enabled(state, action) else None

    def _start(self, actor: Waker) -> None:
        Timeout(self.env, 0).callbacks.append(actor)

    def _finish(self) -> None:
        Timeout(self.env, 0)  # where the actor's process would have ended: an event no one waits on

    def _acted(self, state: Any, action: tuple[Any, ...]) -> None:
        """The clock or the compactor took ``action``, which led to ``state`` (writers append in
        :meth:`_serve`)."""
        before = self.live
        self.state = state
        self.live = live = self._live(state)
        if live > self.peak:
            self.peak = live
        elif live > self.post_peak and live < before:
            self.post_peak = live  # turns were deleted: the act's result
        if self._projecting:
            self._follow(action, before, live)
        waiting = self._waiting
        if waiting:  # wake whoever waits on the state, FIFO; no one waiting, no event
            self._waiting = []
            Timeout(self.env, 0).callbacks = waiting

    def _serve(self, writers: Sequence[int], _event: SimEvent | None = None) -> None:
        """Wake ``writers`` in their order. A writer takes the oldest waiting turn and appends it
        while the model enables its append, then waits — for a state change if turns are still
        waiting, else for an arrival. Once no turn waits, every writer left would find nothing to
        take: they go back to waiting for an arrival as they are, in order, without being asked.
        Called by a waker, or as the callback of an arrival's event (bound to its writers).

        The hot path of a run: the fields it changes are kept in locals and stored back once at
        the end (nothing it calls reads them: the model's functions see only the state, SimPy
        only schedules, :meth:`_follow` gets what it needs as arguments)."""
        queued = self.queued
        if not queued:
            self._idle += writers
            return
        rules, waiting, idle, before_all = self._writer_rules, self._waiting, self._idle, queued
        state, live, peak, post_peak = self.state, self.live, self.peak, self.post_peak
        env, named, live_of, projecting = self.env, self._named_live, self._live, self._projecting
        for i, w in enumerate(writers):
            if not queued:
                idle += writers[i:]
                break
            append, repeats, waker, action = rules[w]
            while (after := append(state)) is not None:
                queued -= 1
                before, state = live, after
                live = state.live if named else live_of(state)
                if live > peak:
                    peak = live
                elif live > post_peak and live <= before:
                    post_peak = live  # a trim inside the append deleted turns
                if projecting:
                    self._follow(action, before, live)
                if waiting:  # wake whoever waits on the state, FIFO
                    Timeout(env, 0).callbacks = waiting
                    waiting = []
                if not (queued and repeats):  # else waits at once: its append cannot be enabled
                    break
            if queued:
                waiting.append(waker)
            else:
                idle.append(w)
        if queued < before_all:  # every append of this call happened now
            self._served_at.append(self.now)
            self._served.append(before_all - queued)
        self.queued, self._waiting = queued, waiting
        self.state, self.live, self.peak, self.post_peak = state, live, peak, post_peak

    def _waker(self, w: int) -> Waker:
        """Writer ``w`` waiting on a state change: with no turn left to take it waits for an
        arrival again (the usual case, kept to one test); else it is served."""
        sim, alone = self, (w,)

        def wake(_event: SimEvent) -> None:
            if sim.queued:
                sim._serve(alone)
            else:
                sim._idle.append(w)

        return wake

    @property
    def arrived(self) -> int:
        """Turns arrived so far: one arrival time is kept per turn."""
        return len(self._arrived_at)

    def _announce(self, now: float, turns: int) -> None:
        self._arrived_at.extend([now] * turns)
        self.queued += turns
        idle = self._idle
        if idle:  # one event wakes the idle writers, FIFO; none idle, no event
            self._idle = []
            Timeout(self.env, 0).callbacks.append(partial(self._serve, idle))

    # -- actors -------------------------------------------------------------------------------

    def _start_slot_arrivals(self) -> None:
        counts = iter(slot_arrivals(self.writers, self.spec.slots, self.spec.seed).tolist())
        sim, env = self, self.env

        def arrive(_event: SimEvent) -> None:
            sim.now = now = env.now
            for k in counts:
                if k:
                    sim._announce(now, k)
                Timeout(env, 1.0).callbacks.append(arrive)
                return
            sim._finish()

        self._start(lambda _event: Timeout(env, 0.5).callbacks.append(arrive))

    def _start_poisson_arrivals(self) -> None:
        rng = stream_rng("poisson-arrivals", self.spec.seed)
        sim, env, rate = self, self.env, self.spec.rate
        horizon = float(self.spec.slots)
        block = max(16, int(rate * self.spec.slots * 1.2) + 16)
        t = 0.0
        gaps: list[float] = []

        def wait() -> None:
            nonlocal t, gaps
            if not gaps:
                gaps = rng.exponential(1.0 / rate, block).tolist()
                gaps.reverse()
            t += gaps.pop()
            if t >= horizon:
                sim._finish()
            else:
                Timeout(env, t - env.now).callbacks.append(arrive)

        def arrive(_event: SimEvent) -> None:
            sim.now = now = env.now
            sim._announce(now, 1)
            wait()

        def start(_event: SimEvent) -> None:
            if rate > 0:
                wait()
            else:
                sim._finish()

        self._start(start)

    def _start_writers(self) -> None:
        def start(_event: SimEvent) -> None:  # each writer in turn, as its process would start
            self._serve((next(writers),))

        writers = iter(range(self.writers))
        for _ in range(self.writers):
            self._start(start)

    def _start_clock(self) -> None:
        sim, env, tick = self, self.env, self._attempt(_TICK)
        left = self.spec.slots - 1

        def due(_event: SimEvent) -> None:
            nonlocal left
            sim.now = env.now
            after = tick(sim.state)
            if after is None:  # the compactor acts first when it is due
                sim._waiting.append(due)
                return
            sim._acted(after, _TICK)
            left -= 1
            sleep()

        def sleep() -> None:
            if left:
                Timeout(env, 1.0).callbacks.append(due)
            else:
                sim._finish()

        self._start(lambda _event: sleep())

    def _start_compactor(self) -> None:
        sim, compact, repeats = self, self._attempt(_COMPACT), True

        def wake(_event: SimEvent) -> None:
            while (after := compact(sim.state)) is not None:
                live = sim.live
                sim._acted(after, _COMPACT)
                if sim.live < live:
                    sim.compactions += 1
                    sim.streak = 0
                else:
                    sim.retries += 1
                    sim.streak += 1
                    sim.max_streak = max(sim.max_streak, sim.streak)
                if not repeats:
                    break
            sim._waiting.append(wake)

        self._start(wake)

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

    def run(self) -> SimulationResult:
        """Run ``spec.slots`` slots and summarize.

        Slot ``t`` spans ``[t, t + 1)``: its arrivals land at ``t + 0.5``; the clock ends it at
        ``t + 1`` (for every slot but the last); the run stops at time ``slots``, before
        anything scheduled then — the order of :func:`models.trigger_slots.drive_slots`.
        """
        env = self.env
        # the end: before anything else scheduled at time ``slots`` (it is the first event made)
        Timeout(env, float(self.spec.slots)).callbacks.append(StopSimulation.callback)
        if self.spec.arrivals == "slots":
            self._start_slot_arrivals()
        else:
            self._start_poisson_arrivals()
        self._start_writers()
        self._start_compactor()
        self._start_clock()
        step = env.step
        events = 0
        try:
            for events in count():  # noqa: B007 - the loop variable is the count of events run
                step()
        except StopSimulation:
            pass
        appended_at = np.repeat(np.asarray(self._served_at, dtype=np.float64), self._served)
        appends = appended_at.size
        lat = appended_at - np.asarray(self._arrived_at[:appends], dtype=np.float64)
        p50, p99, mx = (
            (float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), float(lat.max()))
            if lat.size
            else (0.0,) * 3
        )
        projection: dict[str, int | float] = {}
        if self._projecting:
            projection = self.aggregate.as_dict()
        return SimulationResult(
            peak=self.peak,
            final_live=self.live,
            arrived=self.arrived,
            appends=appends,
            compactions=self.compactions,
            retries=self.retries,
            max_retry_streak=self.max_streak,
            latency_p50=round(p50, 6),
            latency_p99=round(p99, 6),
            latency_max=round(mx, 6),
            waiting=self.queued,
            events=events,
            projection=projection,
            post_compaction_peak=self.post_peak,
        )


def simulate(model: ProtocolModel[Any, Any], spec: RunSpec) -> SimulationResult:
    """Run ``model`` in simulated time under ``spec`` (see :class:`Simulation`)."""
    return Simulation(model, spec).run()
