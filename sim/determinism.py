"""Determinism self-check: the same model and seed must give the same run, step for step.

Every engine rests on ``step`` being pure: traces replay, Hypothesis shrinks and the explorer
deduplicates only because the same state and action always give the same next state. This check
builds the model twice and drives both copies through the same seeded random walks, comparing at
every step the enabled actions, the next state (also recomputed on the first copy, which catches
hidden mutable state), every property's verdict and the metrics. It stops at the first
divergence and says where, so a wall-clock read, an unseeded random draw or a mutated shared
list shows up as "run 3, step 7: next state differs".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turncheck.models.protocol import ProtocolModel


@dataclass(frozen=True)
class Divergence:
    """Where two runs that should be identical first differ."""

    run: int
    step: int
    what: str
    first: str
    second: str

    def line(self) -> str:
        return f"run {self.run}, step {self.step}: {self.what} differs: {self.first} vs {self.second}"


@dataclass(frozen=True)
class DeterminismReport:
    runs: int
    steps: int
    divergence: Divergence | None


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_determinism(
    build: Callable[[], ProtocolModel[Any, Any]], *, seed: int = 0, runs: int = 20, steps: int = 60
) -> DeterminismReport:
    """Drive two copies of a model through the same seeded walks; stop at the first divergence.

    Parameters
    ----------
    build
        Builds a fresh model (called twice).
    seed
        Seeds the walks; walk ``r`` uses ``Random(seed * 1_000_003 + r)`` for both copies.
    runs, steps
        Number of walks and their maximum length (a walk ends early in a terminal state).

    Returns
    -------
    DeterminismReport
        ``divergence`` is None when both copies agreed everywhere.
    """
    a, b = build(), build()
    total = 0
    for r in range(runs):
        walked, divergence = _walk(a, b, seed * 1_000_003 + r, r, steps)
        total += walked
        if divergence is not None:
            return DeterminismReport(r + 1, total, divergence)
    return DeterminismReport(runs, total, None)


def _walk(
    a: ProtocolModel[Any, Any], b: ProtocolModel[Any, Any], seed: int, run: int, steps: int
) -> tuple[int, Divergence | None]:
    """One seeded walk through both copies; returns the steps taken and the first divergence."""

    def differs(step: int, what: str, first: Any, second: Any) -> Divergence:
        return Divergence(run, step, what, _short(first), _short(second))

    inits_a, inits_b = list(a.init_states()), list(b.init_states())
    if inits_a != inits_b:
        return 0, differs(0, "initial states", inits_a, inits_b)
    props_a, props_b = a.properties(), b.properties()
    rng_a, rng_b = random.Random(seed), random.Random(seed)
    sa = inits_a[rng_a.randrange(len(inits_a))]
    sb = inits_b[rng_b.randrange(len(inits_b))]
    for k in range(steps + 1):
        verdict_a, verdict_b = [p.holds(sa) for p in props_a], [p.holds(sb) for p in props_b]
        if verdict_a != verdict_b:
            return k, differs(k, "property verdicts", verdict_a, verdict_b)
        metrics_a, metrics_b = dict(a.metrics(sa)), dict(b.metrics(sb))
        if metrics_a != metrics_b:
            return k, differs(k, "metrics", metrics_a, metrics_b)
        if k == steps:
            return k, None
        enabled_a, enabled_b = list(a.actions(sa)), list(b.actions(sb))
        if enabled_a != enabled_b:
            return k, differs(k, "enabled actions", enabled_a, enabled_b)
        if not enabled_a:
            return k, None
        action = enabled_a[rng_a.randrange(len(enabled_a))]
        rng_b.randrange(len(enabled_b))
        next_a, again, next_b = a.step(sa, action), a.step(sa, action), b.step(sb, action)
        if next_a != again:
            return k + 1, differs(k + 1, f"next state after {action!r} (same copy, twice)", next_a, again)
        if next_a != next_b:
            return k + 1, differs(k + 1, f"next state after {action!r}", next_a, next_b)
        sa, sb = next_a, next_b
    return steps, None
