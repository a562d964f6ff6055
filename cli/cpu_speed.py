"""How much CPU a fixed piece of interpreter work takes here and now: ``benchmarks/demo_cost.py``
reads it around each measurement of the demo's steps, to bring several runs to one speed before
taking their median (the demo's own first line reads no probe: see ``cli/demo.py``'s
``cost_line``).

Invariant: the probe is the same work every time (no allocation that grows, no I/O, no clock
but the process's CPU clock), a few milliseconds of CPU.
"""

from __future__ import annotations

import statistics
import time

SAMPLES = 21  # probe runs per reading; their mean is the reading
SPACING = 0.03  # seconds between two probe runs: the reading spans about two thirds of a second, so a
# moment of contention does not decide it (one run's reading varies twofold under load; the mean of
# nine over a quarter of a second still varied from 9.7 to 14.3 ms on the idle 2-core machine)


def probe_once() -> float:
    """CPU seconds of one fixed run of dict updates and a sort (a few milliseconds idle)."""
    start = time.process_time()
    counts: dict[int, int] = {}
    for i in range(60_000):
        counts[i % 977] = counts.get(i % 977, 0) + i * 3 // 7
    sorted(str(v) for v in counts.values())
    return time.process_time() - start


def probe_seconds(samples: int = SAMPLES) -> float:
    """The mean of ``samples`` probe runs :data:`SPACING` apart: what this machine's CPU gives the
    work right now (the benchmark's contention is a mean of such readings too)."""
    readings = []
    for k in range(samples):
        if k:
            time.sleep(SPACING)
        readings.append(probe_once())
    return statistics.fmean(readings)
