"""The Hypothesis state machine factory: the project's own stateful tests, shrinking, goals, database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from examples.my_lock import FlagLock
from turncheck.models.catalog import build_model
from turncheck.models.protocol import Property
from turncheck.sim.checking import select_properties
from turncheck.sim.explorer import explore
from turncheck.sim.stateful import PropertyViolation, check_stateful, machine_for
from turncheck.sim.trace import Trace, replay

_SETTINGS = settings(max_examples=25, stateful_step_count=30, deadline=None, database=None)

# The project's own stateful tests: one machine per passing configuration, built by the factory.
# mutex is held to what it is built for: no turn uncounted in the gap, and its own bound M + 1
# (it breaks live ≤ maxTurns by its triggering turn; tests/test_check_cli.py shows that run)
_MUTEX = build_model("trigger", {"locking": "mutex", "gap": 1})
TestMutexTrigger = machine_for(
    _MUTEX, select_properties(_MUTEX, ["no-uncounted-gap-turn", "bounded-peak-turns"])
).TestCase
TestMutexTrigger.settings = _SETTINGS
TestAppendSyncTrigger = machine_for(build_model("trigger", {"locking": "append-sync", "gap": 2})).TestCase
TestAppendSyncTrigger.settings = _SETTINGS
TestPairSafeProjector = machine_for(build_model("projector", {"strategy": "M5"})).TestCase
TestPairSafeProjector.settings = _SETTINGS
TestSeqOrderedClock = machine_for(build_model("clock", {"order": "seq"})).TestCase
TestSeqOrderedClock.settings = _SETTINGS
TestAtomicFlagLock = machine_for(FlagLock(workers=3, atomic=True)).TestCase
TestAtomicFlagLock.settings = _SETTINGS


def test_unlocked_trigger_counterexample_is_shrunk_to_the_shortest_length() -> None:
    model = build_model("trigger", {"locking": "none", "gap": 1})
    outcome = check_stateful(model, max_examples=100, seed=0, database=None)
    assert outcome.violated == "within-max-turns"  # the first, in declared order, at step 4
    shortest = explore(model).outcome("within-max-turns").depth
    assert len(outcome.actions) == shortest == 4  # Hypothesis's own shrinking, nothing after it
    # the shrunk run replays to the same violation
    trace = Trace("trigger", dict(model.params), outcome.actions, outcome.violated, outcome.init)
    assert replay(model, trace).verdict == "same"


def test_same_seed_same_counterexample() -> None:
    model = build_model("projector", {"strategy": "M4"})
    a = check_stateful(model, max_examples=60, seed=7, database=None)
    b = check_stateful(model, max_examples=60, seed=7, database=None)
    assert a == b and a.violated == "no-orphan-results"


def test_passing_model_reaches_its_goals() -> None:
    outcome = check_stateful(
        build_model("trigger", {"locking": "append-sync"}), max_examples=40, seed=1, database=None
    )
    assert outcome.violated is None
    assert outcome.goals == {"trigger-fires": True}
    assert not outcome.inconclusive


class NeverBoth(FlagLock):
    def properties(self) -> tuple[Property[Any], ...]:
        return (
            *super().properties(),
            Property("both-compact", "sometimes", lambda s: sum(1 for p in s[1:] if p == 2) >= 2),
        )


def test_unreached_goal_makes_the_run_inconclusive() -> None:
    outcome = check_stateful(NeverBoth(workers=2, atomic=True), max_examples=30, seed=0, database=None)
    assert outcome.violated is None
    assert outcome.inconclusive and outcome.unreached == ("both-compact",)


def test_failures_are_saved_and_tried_first(tmp_path: Path) -> None:
    model = build_model("trigger", {"locking": "none", "gap": 2, "writers": 2})
    first = check_stateful(model, max_examples=200, seed=3, database=tmp_path)
    assert first.violated == "within-max-turns"
    assert any(p.is_file() for p in tmp_path.rglob("*"))
    second = check_stateful(model, max_examples=200, seed=4, database=tmp_path)
    assert second.violated == first.violated and second.actions == first.actions
    assert second.examples <= 3 < first.examples  # the saved failure ran first
    # another configuration does not share the saved example
    other = check_stateful(
        build_model("trigger", {"locking": "append-sync", "gap": 2}), max_examples=20, database=tmp_path
    )
    assert other.violated is None


def test_factory_machine_raises_a_property_violation_with_the_run() -> None:
    """Derandomized: Hypothesis's shrinking reaches a local minimum, and from a random start it
    stopped at 7 or 10 steps in 2 of 60 runs (the shortest, 4, in the rest)."""
    machine = machine_for(FlagLock(workers=2))
    with pytest.raises(PropertyViolation) as info:
        from hypothesis.stateful import run_state_machine_as_test

        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=200,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            ),
        )
    assert info.value.prop == "one-compactor"
    assert len(info.value.actions) == 4


def test_the_machine_runs_under_the_profile_active_when_it_is_built_without_a_deadline() -> None:
    settings.register_profile("turncheck-test-seven", max_examples=7, deadline=1000)
    previous = settings.default
    settings.load_profile("turncheck-test-seven")
    try:
        built = machine_for(FlagLock(workers=2)).TestCase.settings
    finally:
        settings.register_profile("turncheck-test-previous", previous)
        settings.load_profile("turncheck-test-previous")
    assert built.max_examples == 7 and built.deadline is None
    assert machine_for(FlagLock(workers=2)).TestCase.settings.max_examples == previous.max_examples


class _Counter:
    """A counter every step adds one to; ``slow_after_failure`` makes each step after the first
    violation take a second, so a run's time budget ends while Hypothesis is still shrinking (or
    replaying the failure: either takes three such steps)."""

    name = "counter"
    params: dict[str, Any] = {}

    def __init__(self, limit: int, step_seconds: float = 0.0, slow_after_failure: bool = False) -> None:
        self.limit, self.step_seconds, self.slow_after_failure = limit, step_seconds, slow_after_failure
        self.failed = False

    def init_states(self) -> list[int]:
        return [0]

    def actions(self, state: int) -> list[str]:
        return ["add"]

    def step(self, state: int, action: str) -> int:
        time.sleep(1.0 if self.failed else self.step_seconds)
        if state + 1 >= self.limit and self.slow_after_failure:
            self.failed = True
        return state + 1

    def properties(self) -> tuple[Property[int], ...]:
        return (Property("below-limit", "always", lambda s: s < self.limit),)


def test_a_timeout_ends_a_run_that_finds_nothing_at_its_next_step() -> None:
    started = time.monotonic()
    out = check_stateful(_Counter(10**9, step_seconds=0.01), max_examples=10**6, database=None, timeout=0.5)
    assert out.stopped and out.violated is None and 0 < out.examples < 10**6
    assert time.monotonic() - started < 0.5 + 5  # one 0.01 s step past the budget, and slack for load


def test_a_violation_found_before_the_timeout_is_reported_though_shrinking_was_cut_short() -> None:
    out = check_stateful(_Counter(3, slow_after_failure=True), max_examples=10**6, database=None, timeout=2.0)
    assert out.stopped and out.violated == "below-limit" and len(out.actions) >= 3


def test_without_a_timeout_the_run_is_not_stopped() -> None:
    out = check_stateful(_Counter(10**9), max_examples=5, steps=3, database=None)
    assert not out.stopped and out.examples >= 5
