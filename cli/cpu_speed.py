"""How much CPU a fixed piece of interpreter work takes here and now: the demo's cost estimate
scales its measured figures by it.

CPU seconds are not a constant of the work: on a machine whose other core (or hyperthread) is
busy, or a slower one, the same step spends more CPU. ``benchmarks/demo_cost.py`` records each
step's CPU together with :func:`probe_seconds` read around the measurement; the demo, at its
start, runs the probe again and multiplies the sum by the ratio (:func:`speed_factor`): both
sides read the probe the same way, before the demo's own processes start. Issue 55: the
old line, measured on a busy machine, said "about 42 s" for a run that took 26 s.

Invariant: the probe is the same work every time (no allocation that grows, no I/O, no clock
but the process's CPU clock), a few milliseconds of CPU, so it costs the demo almost nothing.
"""

from __future__ import annotations

import statistics
import time

SAMPLES = 21  # probe runs at the demo's start; their mean is the reading
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


def speed_factor(reference: float | None, samples: int = SAMPLES) -> float:
    """How many times the CPU the recorded figures took the same work takes here now: the probe's
    mean over ``reference`` (the idle probe recorded with the figures); 1.0 with no reference."""
    if not reference:
        return 1.0
    return probe_seconds(samples) / reference
