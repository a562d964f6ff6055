"""The SimPy runner against bare SimPy processing the same number of events.

turncheck: :func:`sim.simulation.simulate` of the trigger model, A = 8 writers, G = 5,
maxTurns 8, no locking, unbounded turns — arrivals and clock as SimPy generator processes,
writers and the compactor as callbacks on the events they wait for, asking the model before
every action. The event count is the runner's own
(``SimulationResult.events``): every SimPy event it has ``env.step`` process (pinned in
``tests/test_simulation_hooks.py``). Ceiling:
bare SimPy, the same number of processes each yielding a ``Timeout`` forever, stepped for
exactly that many events — what SimPy itself costs per event, with no protocol at all.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy
from simpy.events import Timeout

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.models.trigger import TriggerModel
from turncheck.sim.simulation import RunSpec, simulate

WRITERS, GAP, MAX_TURNS, SEED = 8, 5, 8, 20261030


def _runner(slots: int) -> Callable[[], object]:
    def run() -> object:
        return simulate(
            TriggerModel(WRITERS, GAP, MAX_TURNS, "none", turns=0), RunSpec(slots=slots, seed=SEED)
        )

    return run


def bare_simpy(events: int, processes: int) -> Callable[[], object]:
    """``processes`` processes that only wait on timeouts, stepped ``events`` times."""

    def run() -> object:
        env = simpy.Environment()

        def waiter(delay: float) -> Generator[simpy.Event, Any, None]:
            while True:
                yield Timeout(env, delay)

        for p in range(processes):
            env.process(waiter(1.0 + p / (2 * processes)))
        step = env.step
        for _ in range(events):
            step()
        return env.now

    return run


def compare(scale: str) -> list[Comparison]:
    slots = 50_000 if scale == "full" else 5_000
    events = _runner(slots)().events  # type: ignore[attr-defined]
    measured = interleave(
        [
            Contender(
                f"simulate, trigger A={WRITERS} G={GAP} maxTurns={MAX_TURNS}",
                "turncheck",
                _runner(slots),
                events,
            ),
            Contender("bare SimPy, same event count", "ceiling", bare_simpy(events, WRITERS + 3), events),
        ],  # fmt: skip
        7 if scale == "full" else 5,
    )
    return [
        Comparison(
            f"SimPy runner, {slots:,} slots, {events:,} SimPy events",
            "µs per event",
            1e6,
            measured,
            target="≤ 1.5× bare SimPy per event",
        )
    ]
