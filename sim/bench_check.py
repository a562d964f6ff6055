"""Benchmark: explorer throughput on the trigger model, and Hypothesis's time to a shrunk counterexample.

``run("full")`` explores the trigger model at writers 4, gap 2, maxTurns 4, 8 turns per writer
(621 706 distinct states, every interleaving) and prints distinct states per second on one core
(target ≥ 150 000/s), next to the *model floor*: the time the model's own ``actions``, ``step``
and ``canonical`` take over the same states without any search, so a reader sees what share
is the explorer's. Then Hypothesis finds and shrinks the unlocked-trigger counterexample
(gap 1, no saved examples) from several seeds and the median time is printed (target ≤ 5 s).
Any other scale uses a smaller configuration and fewer runs. Timings are printed only.
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

from models.catalog import build_model
from models.locking import worst_case_peak
from sim.explorer import explore
from sim.stateful import check_stateful


def _model_floor(model: Any, states: list[Any]) -> float:
    """Seconds the model alone needs to expand ``states`` (actions, step, canonical, hash)."""
    actions_of, step, canon = model.actions, model.step, model.canonical
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for s in states:
            for a in actions_of(s):
                hash(canon(step(s, a)))
        return time.perf_counter() - t0
    finally:
        if enabled:
            gc.enable()


def run(scale: str = "full") -> list[str]:
    """Run the benchmark and return the lines it printed."""
    full = scale == "full"
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    params = (
        {"writers": 4, "gap": 2, "max_turns": 4, "turns": 8}
        if full
        else {"writers": 3, "gap": 2, "max_turns": 3, "turns": 8}
    )
    model = build_model("trigger", params)
    rates = []
    result = explore(model)
    for _ in range(3 if full else 2):
        result = explore(model)
        rates.append(result.states_per_second)
    floor = min(_model_floor(model, list(result.states)) for _ in range(2))
    best = max(rates)
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    say(
        f"explorer, trigger {shown}: {result.distinct:,} distinct states, {result.generated:,} transitions, "
        f"{result.completeness()}"
    )
    say(
        f"  {max(rates):,.0f} distinct states/s best of {len(rates)} "
        f"(median {statistics.median(rates):,.0f}; target ≥ 150 000/s, one core)"
    )
    share = floor * best / result.distinct  # model seconds / explorer seconds, best runs of each
    say(
        f"  model floor (actions + step + canonical alone, best of 2): {floor:.2f} s = "
        f"{result.distinct / floor:,.0f} states/s; the model is {share:.0%} of the explorer's time"
    )
    bound = worst_case_peak(params["writers"], params["gap"], params["max_turns"], "none")
    say(f"  explored worst-case peak {result.worst_of('peak_turns')}, closed form M + 2·A·G − 1 = {bound}")

    unlocked = build_model("trigger", {"locking": "none", "gap": 1})
    times, lengths = [], []
    for seed in range(5 if full else 3):
        t0 = time.perf_counter()
        outcome = check_stateful(unlocked, max_examples=200, seed=seed, database=None)
        times.append(time.perf_counter() - t0)
        lengths.append(outcome.shrunk)
    shortest = explore(unlocked).outcome("bounded-peak-turns").depth
    say(
        f"hypothesis, unlocked trigger gap=1: found and shrank to {sorted(set(lengths))} steps "
        f"(shortest {shortest}) in median {statistics.median(times):.2f} s over {len(times)} seeds "
        f"(max {max(times):.2f} s; target ≤ 5 s)"
    )
    return lines


if __name__ == "__main__":
    run()
