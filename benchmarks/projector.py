"""Benchmark: projection per request, appends to the index, and generating the manifold.

Issue figures (printed, never asserted):

* projection — selection plus the full structural report — median per request on histories of
  10³ … 10⁶ turns, every strategy; target ≤ 10 µs and flat (O(log n));
* against seed 000's selector, which re-serializes every candidate suffix, at 2 000 turns,
  side by side, as a ratio; target ≥ 1 000×;
* 1 000 000 appends to the history index; target ≤ 5 s;
* generating the full 60 000 × 50 manifold as columns; target ≤ 10 s.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from functools import partial

from turncheck.models.cost import EstimateCost, Utf8JsonCost, message_of
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import STRATEGIES, compared_strategies, project
from turncheck.models.workload import WorkloadParams, generate_columns


def synthetic_turns(turns: int, with_text: bool = False, max_chars: int = 940) -> list[Event]:
    """``turns`` turns of USER, CALL, RESULT, TERM, with sizes that vary deterministically."""
    events: list[Event] = []
    seq = 0
    for t in range(turns):
        for kind in (Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM):
            chars = 40 + (t * 7919 + int(kind) * 104729) % (max_chars - 39)
            call = f"c{t}" if kind in (Kind.CALL, Kind.RESULT) else None
            text = ('汉字 text "q"\n' * (chars // 12 + 1))[:chars] if with_text else None
            events.append(
                Event(seq, "s", t, kind, call, ts=float(seq), text=text, chars=chars, cjk=t % 3 == 0)
            )
            seq += 1
    return events


def median_us(fn: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000


def seed000_select(events: list[Event], budget: int, cost: Utf8JsonCost) -> int:
    """Seed 000's loop: serialize the request for every start until one fits."""
    messages = [message_of(e) for e in events]
    for start in range(len(events) + 1):
        if len(cost.request(messages[start:]).encode("utf-8")) <= budget:
            return start
    raise ValueError("mandatory input exceeds budget")


def run(scale: str = "full") -> list[str]:
    """Run the benchmark; returns the printed lines."""
    full = scale == "full"
    lines: list[str] = []
    sizes = [10**3, 10**4, 10**5, 10**6] if full else [10**3, 10**4]
    cost = EstimateCost()
    rounds = 2000 if full else 300
    gc_was = gc.isenabled()
    gc.disable()
    try:
        lines.append(
            "projection median per request (µs), selection + full structural report; target ≤ 10 µs, flat:"
        )
        lines.append("  turns      " + "  ".join(f"{s:>6}" for s in compared_strategies()))
        for n in sizes:
            h = History(synthetic_turns(n), [cost])
            budgets = [2_000, 20_000, 200_000]
            row = []
            for s in compared_strategies():
                fn = STRATEGIES[s].project
                row.append(statistics.median(median_us(partial(fn, h, b, cost), rounds) for b in budgets))
            lines.append(f"  {n:>9,}  " + "  ".join(f"{v:6.2f}" for v in row))
            del h

        turns = 2000 if full else 300
        events = synthetic_turns(turns, with_text=True, max_chars=120)
        req_cost = Utf8JsonCost("java", system="You are a careful assistant.", current="What changed?")
        h = History(events, [req_cost])
        budget = req_cost.frame + (h.prefix(req_cost)[-1] * 9 // 10)
        ours = median_us(lambda: project(h, budget, "REQ", req_cost), rounds)
        t0 = time.perf_counter()
        loops = 0
        while loops < 1 or time.perf_counter() - t0 < 1.0:
            start = seed000_select(events, budget, req_cost)
            loops += 1
        theirs = (time.perf_counter() - t0) / loops * 1e6
        assert project(h, budget, "M0", req_cost).start == start
        lines.append(
            f"seed 000 selector vs bisection at {turns:,} turns (utf8-json, java, keeps ~90 %): "
            f"{theirs:,.0f} µs vs {ours:.2f} µs = {theirs / ours:,.0f}× (target ≥ 1 000×)"
        )

        n_app = 1_000_000 if full else 100_000
        appended = synthetic_turns(n_app // 4)
        t0 = time.perf_counter()
        History(appended, [cost])
        dt = time.perf_counter() - t0
        lines.append(
            f"{len(appended):,} appends to the history index: {dt:.2f} s (target ≤ 5 s for 1 000 000)"
        )
        del appended
    finally:
        if gc_was:
            gc.enable()

    params = WorkloadParams() if full else WorkloadParams(sessions=6_000)
    t0 = time.perf_counter()
    cols = generate_columns(params)
    dt = time.perf_counter() - t0
    lines.append(
        f"generate {params.sessions:,} × {params.turns} manifold: {len(cols):,} events in {dt:.2f} s "
        f"({len(cols) / dt / 1e6:.1f} M events/s; target ≤ 10 s at 60 000 × 50)"
    )
    return lines
