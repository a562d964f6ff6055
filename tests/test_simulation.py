"""The SimPy runner drives the trigger model exactly as the reference slot driver does."""

from __future__ import annotations

import itertools

import pytest

from turncheck.models.errors import BadParameter
from turncheck.models.locking import LOCKING_NAMES, LOCKINGS, worst_case_peak
from turncheck.models.trigger import TriggerModel
from turncheck.models.trigger_slots import drive_slots, fast_slots
from turncheck.sim.simulation import RunSpec, simulate, slot_arrivals


@pytest.mark.parametrize("strategy", LOCKING_NAMES)
def test_simpy_run_equals_model_driver(strategy: str) -> None:
    for writers, gap, max_turns in [(1, 0, 3), (2, 1, 2), (3, 2, 4), (4, 3, 2)]:
        model = TriggerModel(writers, gap, max_turns, strategy, turns=0)
        spec = RunSpec(slots=300, seed=writers * 10 + gap)
        sim = simulate(model, spec)
        arrivals = slot_arrivals(writers, 300, spec.seed).tolist()
        ref = drive_slots(model, arrivals)
        assert ref == fast_slots(model.config, arrivals)
        assert (sim.peak, sim.appends, sim.compactions, sim.retries) == (
            ref.peak, ref.appends, ref.compactions, ref.retries,
        )  # fmt: skip
        assert sim.final_live == ref.live
        assert sim.events > 300


def test_small_grid_peaks_within_closed_form_and_declared_bounds() -> None:
    for strategy, writers, gap in itertools.product(LOCKING_NAMES, [1, 2, 4], [0, 1, 3]):
        r = simulate(TriggerModel(writers, gap, 3, strategy, turns=0), RunSpec(slots=400, seed=gap))
        worst = worst_case_peak(writers, gap, 3, strategy)
        assert worst is None or r.peak <= worst
        bound = LOCKINGS[strategy].declared_bound(writers, gap, 3)
        if strategy in ("mutex", "append-sync"):
            assert bound is not None and r.peak <= bound
        if strategy == "none" and gap > 0:
            assert r.peak > 3  # turns arrived in the gap: the nominal bound is broken


def test_poisson_arrivals_latency_and_projection() -> None:
    spec = RunSpec(slots=300, arrivals="poisson", rate=1.5, seed=3, budget=4000, strategy="M1")
    a = simulate(TriggerModel(4, 2, 4, "mutex", turns=0), spec)
    b = simulate(TriggerModel(4, 2, 4, "mutex", turns=0), spec)
    assert a == b  # deterministic
    assert a.peak <= 5
    assert a.latency_max >= a.latency_p99 >= a.latency_p50 >= 0
    assert a.latency_max > 0  # appends waited behind the compaction's lock
    assert a.projection["windows"] == a.appends  # one request projected per appended turn
    assert a.projection["orphanRes"] == 0  # whole turns are deleted: nothing orphaned
    free = simulate(TriggerModel(4, 2, 4, "none", turns=0), spec)
    assert free.latency_p99 < a.latency_p99 and free.peak > 5  # no lock: only per-slot queueing


def test_cas_starves_under_contention() -> None:
    r = simulate(TriggerModel(4, 3, 4, "cas", turns=0), RunSpec(slots=300, seed=1))
    assert r.retries > r.compactions and r.max_retry_streak >= 10
    assert r.peak > worst_case_peak(4, 3, 4, "none")  # type: ignore[operator]


def test_the_waits_are_what_each_strategy_makes_an_actor_wait() -> None:
    """A due compaction waits only under cas, G slots per failed commit, and a starving one to
    the end of the run; a writer waits only behind a lock, exactly the G slots it is held."""
    spec = RunSpec(slots=300, seed=1)
    cas = simulate(TriggerModel(4, 3, 4, "cas", turns=0), spec)
    assert cas.compaction_wait_max >= 3 * (cas.max_retry_streak - 1) > 0 and cas.writer_wait_max == 0
    assert cas.compaction_wait_max not in (cas.peak, cas.post_compaction_peak, cas.latency_max)
    longer = simulate(TriggerModel(4, 3, 4, "cas", turns=0), RunSpec(slots=600, seed=1))
    assert longer.compaction_wait_max > cas.compaction_wait_max  # still waiting when the run ends
    for strategy in ("mutex", "append-sync"):
        one = simulate(TriggerModel(1, 2, 8, strategy, turns=0), spec)
        assert (one.writer_wait_max, one.compaction_wait_max) == (2.0, 0.0)  # held for the gap
        many = simulate(TriggerModel(4, 2, 4, strategy, turns=0), spec)
        assert many.writer_wait_max > 2.0 and many.writer_wait_max != many.peak
    free = simulate(TriggerModel(4, 2, 4, "none", turns=0), spec)
    assert (free.writer_wait_max, free.compaction_wait_max) == (0.0, 0.0)


def test_bad_run_specs() -> None:
    with pytest.raises(BadParameter, match="slots"):
        RunSpec(slots=0)
    with pytest.raises(BadParameter, match="arrivals"):
        RunSpec(arrivals="bursty")  # type: ignore[arg-type]
    with pytest.raises(BadParameter, match="rate"):
        RunSpec(rate=-1.0)
