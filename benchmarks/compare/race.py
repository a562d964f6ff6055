"""``turncheck race`` per schedule against ``asyncio.run`` of the same test.

turncheck: :func:`sim.race.explore.run_schedule` — one schedule of the test under the controlled
loop, a random walk choosing who runs next, the steps recorded and the outcome judged, as
``race`` runs each schedule. Ceiling: ``asyncio.run`` of the same test — the least any run of
async code costs (a loop made, the tasks run, the loop closed). The test is a chat store under
a lock with a tool's round trip beside it (``examples/races/store.py``'s shape): writers that
each read, await and write back.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.sim.race.explore import run_schedule
from turncheck.sim.race.schedule import Schedule, random_walk

WRITERS = 4


async def locked_appends() -> None:
    """``WRITERS`` tasks append to one session through a lock, each read and write one await."""
    lock, data = asyncio.Lock(), {"s": list[str]()}

    async def append(message: str) -> None:
        async with lock:
            await asyncio.sleep(0)
            messages = list(data["s"])
            messages.append(message)
            await asyncio.sleep(0)
            data["s"] = messages

    await asyncio.gather(*(append(f"m{i}") for i in range(WRITERS)))
    assert len(data["s"]) == WRITERS


def _schedules(runs: int) -> Callable[[], object]:
    def run() -> object:
        rng = random.Random(0)
        return [run_schedule(locked_appends, Schedule(0, i), random_walk(rng)) for i in range(runs)]

    return run


def _asyncio(runs: int) -> Callable[[], object]:
    def run() -> object:
        return [asyncio.run(locked_appends()) for _ in range(runs)]

    return run


def compare(scale: str) -> list[Comparison]:
    runs = 2_000 if scale == "full" else 100 if scale == "tiny" else 500
    first = _schedules(1)()
    if not isinstance(first, list) or first[0].failure is not None:
        raise RuntimeError("the race benchmark's test failed under the controlled loop")
    measured = interleave(
        [
            Contender("run_schedule, random walk", "turncheck", _schedules(runs), runs),
            Contender("asyncio.run of the same test", "ceiling", _asyncio(runs), runs),
        ],
        5 if scale == "full" else 3,
    )
    return [
        Comparison(
            f"race, per schedule: {WRITERS} writers appending under a lock",
            "µs per schedule",
            1e6,
            measured,
            target="≤ 1.2× asyncio.run per schedule",
        )
    ]
