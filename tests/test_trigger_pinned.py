"""Pinned figures of the trigger model: explored state sets, worst cases and simulated runs.

The trigger model, the explorer and the SimPy runner are tuned for speed (memo tables, states
built with ``tuple.__new__``, lean wake-ups). Tuning must never change what they compute, so the
figures below were recorded from the plain implementation and are compared exactly: the number
of distinct states and transitions, the worst-case peak, and a digest of the BFS order itself
(every state, the action that reached it and its parent), with and without symmetry reduction.
If one of these changes, the model's semantics changed — that needs a reason, not a new number.
"""

from __future__ import annotations

import hashlib

import pytest

from turncheck.models.trigger import TriggerModel
from turncheck.sim.explorer import Exploration, explore
from turncheck.sim.simulation import RunSpec, simulate


def bfs_digest(model: TriggerModel, result: Exploration) -> str:
    """The explored states in BFS order, with the action and parent of each, as a short hash.

    Each state is written as the model wrote it before it kept its writers as counts per class:
    the per-writer records sorted (the multiset, listed class by class) in place of the counts
    and the names — so the digests recorded then still pin the same states, in the same order,
    reached by the same actions from the same parents."""
    rows = [
        ((s[0], s[1], tuple(model.records(s)), *s[3:8]), a, p)
        for s, a, p in zip(result.states, result.via, result.parent, strict=True)
    ]
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


# writers 3, gap 2, maxTurns 3, 4 turns per writer: (distinct, transitions, worst peak, digest)
# with symmetry reduction, then (distinct, transitions, digest) of the raw search. The reduced
# search's transitions are fewer than when the model offered one append per writer (3809, 261,
# 4626, 233, 2116): it offers one per class of interchangeable writers, whose appends all led to
# one state; the states, their order and the digests are those recorded then.
PINNED = {
    "none": ((1983, 3452, 11, "50efc0c54f3c889c"), (7651, 15319, "37971e7f73b4546c")),
    "mutex": ((160, 233, 4, "004bc8c6b7f43e4f"), (669, 1041, "950c22b597f10ec5")),
    "cas": ((2402, 4198, 12, "3daea7539f7a6717"), (9404, 18833, "65d97928719667a5")),
    "append-sync": ((132, 205, 3, "06f387e04920c8b5"), (564, 936, "4cd77669a6b8d8aa")),
    "trim-to": ((1037, 1909, 9, "7832ec02d723a551"), (4255, 8908, "45bc1bea53145ed5")),
}


@pytest.mark.parametrize("locking", sorted(PINNED))
def test_explored_state_sets_are_pinned(locking: str) -> None:
    model = TriggerModel(3, 2, 3, locking, turns=4)
    reduced, raw = explore(model), explore(model, symmetry=False)
    (distinct, generated, peak, digest), (raw_distinct, raw_generated, raw_digest) = PINNED[locking]
    assert reduced.exhausted and raw.exhausted
    assert (reduced.distinct, reduced.generated, reduced.worst_of("peak_turns")) == (
        distinct,
        generated,
        peak,
    )
    assert bfs_digest(model, reduced) == digest
    assert (raw.distinct, raw.generated, raw.worst_of("peak_turns")) == (raw_distinct, raw_generated, peak)
    assert bfs_digest(model, raw) == raw_digest


@pytest.mark.slow
def test_benchmark_configuration_is_pinned() -> None:
    """The configuration ``turncheck bench check`` times: 621 706 states, worst-case peak 19."""
    model = TriggerModel(4, 2, 4, "none", turns=8)
    result = explore(model)
    assert result.exhausted
    assert (result.distinct, result.generated, result.max_depth_seen) == (621_706, 1_522_391, 117)
    assert result.worst_of("peak_turns") == 19  # M + 2·A·G − 1
    assert result.outcome("bounded-peak-turns").depth == 6
    assert bfs_digest(model, result) == "ed9ca2517b8611d2"


def test_actions_returns_a_fresh_list() -> None:
    model = TriggerModel(2, 1, 2, "none", turns=2)
    (s,) = model.init_states()
    first = model.actions(s)
    first.clear()
    assert model.actions(s) == [("append", 0), ("append", 1), ("tick",)]


@pytest.mark.parametrize(
    ("locking", "expected"),
    [
        # peak, final live, arrived, appends, compactions, retries, latency p50/p99/max, events
        ("none", (67, 49, 8148, 8148, 392, 0, 0.0, 0.0, 0.0, 15954)),
        ("mutex", (9, 9, 8148, 408, 399, 0, 927.0, 1875.22, 1895.5, 6819)),
    ],
)
def test_simulated_runs_are_pinned(locking: str, expected: tuple[object, ...]) -> None:
    r = simulate(TriggerModel(8, 5, 8, locking, turns=0), RunSpec(slots=2000, seed=2024))
    got = (r.peak, r.final_live, r.arrived, r.appends, r.compactions, r.retries,
           r.latency_p50, r.latency_p99, r.latency_max, r.events)  # fmt: skip
    assert got == expected
