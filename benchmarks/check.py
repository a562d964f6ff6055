"""Benchmark: explorer throughput on the trigger model, and Hypothesis's time to a shrunk counterexample.

``run("full")`` explores the trigger model at writers 4, gap 2, maxTurns 4, 8 turns per writer
(621 706 distinct states, every interleaving) and reports distinct states per second on one core
(target ≥ 150 000/s), next to the *model floor*: the time the model's own ``successors`` and
``canonical`` (as the explorer calls them) take over the same states without any search, so a
reader sees what share is the explorer's — the model's invariants and goals only, the workload the target was set for;
then the same search with its liveness properties too (every transition kept, the fair-loop pass
after it), so the price of ``eventually`` is a figure of its own. Then Hypothesis finds and shrinks the unlocked-trigger counterexample
(gap 1, no saved examples) from several seeds and the median time is printed (target ≤ 5 s).
Any other scale uses a smaller configuration and fewer runs.

Rates are given per wall-clock second and per CPU second of this process, with the load
average: other processes on the machine slow the first, hardly the second. ``run`` returns its
lines and prints nothing (``turncheck bench check`` prints them); timings never go into result
files.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from typing import Any

from turncheck.models.catalog import build_model
from turncheck.models.locking import worst_case_peak
from turncheck.sim.explorer import expansion, explore
from turncheck.sim.stateful import check_stateful


def _model_floor(model: Any, states: list[Any]) -> float:
    """Seconds the model alone needs to expand ``states`` as the explorer asks it (successors,
    canonical unless they are canonical already: :func:`expansion`, hash)."""
    expand = expansion(model)
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for s in states:
            for _a, after in expand(s):
                hash(after)
        return time.perf_counter() - t0
    finally:
        if enabled:
            gc.enable()


def run(scale: str = "full") -> list[str]:
    """Run the benchmark and return its lines (printing nothing)."""
    full = scale == "full"
    lines: list[str] = []
    say = lines.append

    params = (
        {"writers": 4, "gap": 2, "max_turns": 4, "turns": 8}
        if full
        else {"writers": 3, "gap": 2, "max_turns": 3, "turns": 8}
    )
    model = build_model("trigger", params)
    safety = [p for p in model.properties() if p.expectation != "eventually"]
    rates, cpu_rates = [], []
    result = explore(model, properties=safety)  # warm-up
    for _ in range(3 if full else 2):
        del result  # free the previous search before the clocks start
        cpu = time.process_time()
        result = explore(model, properties=safety)
        cpu = time.process_time() - cpu
        rates.append(result.states_per_second)
        cpu_rates.append(result.distinct / cpu if cpu > 0 else float("inf"))
    floor = min(_model_floor(model, list(result.states)) for _ in range(2))
    best = max(rates)
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    say(
        f"explorer, trigger {shown}: {result.distinct:,} distinct states, {result.generated:,} transitions, "
        f"{result.completeness()}"
    )
    say(
        f"  {max(rates):,.0f} distinct states/s best of {len(rates)} "
        f"(median {statistics.median(rates):,.0f}; per CPU second {max(cpu_rates):,.0f}; "
        f"target ≥ 150 000/s, one core; {load_note()})"
    )
    share = floor * best / result.distinct  # model seconds / explorer seconds, best runs of each
    say(
        f"  model floor (successors + canonical alone, best of 2): {floor:.2f} s = "
        f"{result.distinct / floor:,.0f} states/s; the model is {share:.0%} of the explorer's time"
    )
    cpu = time.process_time()
    live = explore(model)
    cpu = time.process_time() - cpu
    say(
        f"  with its liveness properties too: {live.distinct / cpu:,.0f} distinct states per CPU second "
        f"({cpu * max(cpu_rates) / live.distinct:.2f}× the search without them)"
    )
    del live
    bound = worst_case_peak(params["writers"], params["gap"], params["max_turns"], "none")
    say(f"  explored worst-case peak {result.worst_of('peak_turns')}, closed form M + 2·A·G − 1 = {bound}")

    unlocked = build_model("trigger", {"locking": "none", "gap": 1, "turns": 4})
    times, lengths = [], []
    for seed in range(5 if full else 3):
        t0 = time.perf_counter()
        outcome = check_stateful(unlocked, max_examples=200, seed=seed, database=None)
        times.append(time.perf_counter() - t0)
        lengths.append(len(outcome.actions))
    shortest = explore(unlocked).outcome("bounded-peak-turns").depth
    say(
        f"hypothesis, unlocked trigger gap=1: found and shrank to {sorted(set(lengths))} steps "
        f"(shortest {shortest}) in median {statistics.median(times):.2f} s over {len(times)} seeds "
        f"(max {max(times):.2f} s; target ≤ 5 s)"
    )
    return lines


def load_note() -> str:
    """The 1-minute load average and core count: context for wall-clock rates."""
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - platforms without getloadavg
        return "load average unknown"


if __name__ == "__main__":
    print("\n".join(run()))
