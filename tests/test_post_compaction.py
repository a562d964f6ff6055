"""The second peak reading: live turns right after each compaction (seed 004 §9's column).

Derived in :mod:`models.locking` (``post_compaction_peak``) and checked here the way the
instantaneous closed form is checked in ``tests/test_trigger.py``: every interleaving of all 135
small configurations is explored, and the explored maximum of ``post_compaction_turns`` must
equal the closed form, with a witness length that is tight.
"""

from __future__ import annotations

import itertools
import random

import pytest

from turncheck.models.locking import (
    LOCKING_NAMES,
    post_compaction_peak,
    turns_to_reach_post_compaction_peak,
)
from turncheck.models.trigger import POST_COMPACTION, TriggerModel, TriggerParams
from turncheck.models.trigger_slots import drive_slots, fast_slots
from turncheck.sim.explorer import explore
from turncheck.sim.simulation import RunSpec, simulate

GRID = list(itertools.product([1, 2, 3], [0, 1, 2], [1, 2, 3], LOCKING_NAMES))
SEED_ROWS = [(8, 1, 0), (8, 1, 2), (8, 1, 5), (8, 4, 5), (8, 8, 0), (8, 8, 2), (8, 8, 5), (16, 8, 5)]


def explored_post(writers: int, gap: int, max_turns: int, strategy: str, turns: int) -> int:
    result = explore(TriggerModel(writers, gap, max_turns, strategy, turns=turns), max_states=400_000)
    assert result.exhausted
    return result.worst_of(POST_COMPACTION)


def test_grid_is_the_135_configurations() -> None:
    assert len(GRID) == 135


@pytest.mark.parametrize("writers,gap,max_turns,strategy", GRID)
def test_explored_post_compaction_peak_equals_closed_form(
    writers: int, gap: int, max_turns: int, strategy: str
) -> None:
    closed = post_compaction_peak(writers, gap, max_turns, strategy)
    need = turns_to_reach_post_compaction_peak(writers, gap, max_turns, strategy)
    assert explored_post(writers, gap, max_turns, strategy, need) == closed
    if need > 1:  # the witness length is tight
        assert explored_post(writers, gap, max_turns, strategy, need - 1) < closed
    if strategy != "cas":  # unbounded turns: still finite, and the same worst case
        assert explored_post(writers, gap, max_turns, strategy, 0) == closed


def test_seed_table_is_the_post_compaction_closed_form() -> None:
    assert [post_compaction_peak(a, g, m, "none") for m, a, g in SEED_ROWS] == [8, 9, 12, 27, 8, 23, 47, 55]
    for strategy in ("mutex", "trim-to", "cas", "append-sync"):
        assert {post_compaction_peak(a, g, m, strategy) == m for m, a, g in SEED_ROWS} == {True}


@pytest.mark.parametrize("strategy", LOCKING_NAMES)
def test_drivers_and_simpy_runner_agree_on_the_post_compaction_peak(strategy: str) -> None:
    rng = random.Random(5)
    for _ in range(20):
        writers, gap, max_turns = rng.randint(1, 4), rng.randint(0, 3), rng.randint(1, 5)
        arrivals = [rng.randint(0, writers) for _ in range(rng.randint(1, 150))]
        model = TriggerModel(writers, gap, max_turns, strategy, turns=0)
        fast = fast_slots(model.config, arrivals)
        assert fast == drive_slots(model, arrivals)
        assert fast.post_peak <= post_compaction_peak(writers, gap, max_turns, strategy)
    r = simulate(TriggerModel(4, 2, 4, strategy, turns=0), RunSpec(slots=300, seed=3, budget=0))
    closed = post_compaction_peak(4, 2, 4, strategy)
    assert 4 <= r.post_compaction_peak <= closed
    run = fast_slots(TriggerParams(4, 2, 4, strategy, 0), [4] * 300)
    if strategy == "cas":  # saturated: every commit fails, no compaction ever happens
        assert (run.compactions, run.post_peak) == (0, 0) and run.retries > 100
    else:
        assert run.post_peak == closed  # saturated arrivals reach the closed form
