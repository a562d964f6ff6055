"""The SimPy runner's shortcuts change nothing: the same SimPy events at the same times, the same
actions in the same order, and model hooks (``guard``, ``stepper``, ``repeats``) that say exactly
what ``is_enabled`` and ``step`` say.

The runner drives its actors as callbacks on SimPy events and skips asking the model when a hook
says the answer cannot have changed. A hook that lies would silently change the run, so each is
checked against the plain model on every explored state, and the checks are shown to catch a
wrong hook. The traces below were recorded from the runner built on generator processes (commit
91d146c): times of every SimPy event processed, and every action applied, hashed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import astuple
from typing import Any

import pytest
import simpy

from turncheck.models.locking import LOCKING_NAMES
from turncheck.models.protocol import ProtocolModel, UserModel
from turncheck.models.trigger import TriggerModel, TriggerState
from turncheck.sim.explorer import explore
from turncheck.sim.simulation import RunSpec, simulate

Action = tuple[Any, ...]

# locking, writers, gap, maxTurns, turns per writer, run spec: (SimPy events, actions, digest)
TRACES = [
    (("none", 8, 5, 8, 0), RunSpec(slots=2000, seed=2024), (15954, 10539, "e9df591d1b481562")),
    (("mutex", 8, 5, 8, 0), RunSpec(slots=2000, seed=2024), (6819, 2806, "50fd04d53344202f")),
    (
        ("cas", 4, 2, 4, 0),
        RunSpec(slots=120, arrivals="poisson", rate=1.5, seed=3, budget=4000, strategy="M1"),
        (763, 349, "153a83803f3730c9"),
    ),
    (("append-sync", 3, 2, 4, 3), RunSpec(slots=300, seed=32), (916, 308, "d6be01a27f69f797")),
    (
        ("trim-to", 5, 1, 1, 0),
        RunSpec(slots=100, arrivals="poisson", rate=5.5, seed=4),
        (1399, 696, "92452b0073d3fa96"),
    ),
]


@pytest.mark.parametrize(("config", "spec", "expected"), TRACES, ids=[t[0][0] for t in TRACES])
def test_events_and_actions_are_those_of_the_process_runner(
    config: tuple[str, int, int, int, int],
    spec: RunSpec,
    expected: tuple[int, int, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    times: list[float] = []
    actions: list[Action] = []
    plain_step = simpy.Environment.step

    def step(env: simpy.Environment) -> None:
        plain_step(env)
        times.append(env.now)  # reached only for events processed (the end stops inside step)

    class Recording(TriggerModel):
        """Records every action the runner takes, through ``step`` or a ``stepper``."""

        def step(self, state: TriggerState, action: Action) -> TriggerState:
            actions.append(action)
            return super().step(state, action)

        def stepper(self, action: Action) -> Callable[[TriggerState], TriggerState | None]:
            attempt = super().stepper(action)

            def recorded(state: TriggerState) -> TriggerState | None:
                after = attempt(state)
                if after is not None:  # taken: enabled in ``state``
                    actions.append(action)
                return after

            return recorded

    monkeypatch.setattr(simpy.Environment, "step", step)
    locking, writers, gap, max_turns, turns = config
    result = simulate(Recording(writers, gap, max_turns, locking, turns=turns), spec)
    digest = hashlib.sha256(repr((times, actions)).encode()).hexdigest()[:16]
    assert (len(times), len(actions), digest) == expected
    assert result.events == len(times)


class WithDefaultHooks(TriggerModel):
    """The trigger model with the base's ``guard`` (asks ``is_enabled``), ``stepper`` (calls
    ``step``) and ``repeats`` (always ask again after acting), as a model that defines none of
    them gets them."""

    guard = ProtocolModel.guard  # type: ignore[assignment]
    stepper = ProtocolModel.stepper  # type: ignore[assignment]
    repeats = ProtocolModel.repeats  # type: ignore[assignment]


@pytest.mark.parametrize("locking", LOCKING_NAMES)
def test_the_default_hooks_give_the_same_run(locking: str) -> None:
    for spec in (RunSpec(slots=300, seed=5), RunSpec(slots=200, arrivals="poisson", rate=2.5, seed=6)):
        hooked = simulate(TriggerModel(4, 2, 3, locking, turns=0), spec)
        plain = simulate(WithDefaultHooks(4, 2, 3, locking, turns=0), spec)
        assert astuple(plain) == astuple(hooked)


class Plain:
    """A user's model that is not a ProtocolModel: the trigger model's required methods and
    ``is_enabled`` only, so it is wrapped and gets the default ``guard`` and ``repeats``."""

    def __init__(self, model: TriggerModel) -> None:
        self.inner = model
        self.params = model.params

    def init_states(self) -> Any:
        return self.inner.init_states()

    def actions(self, state: TriggerState) -> Any:
        return self.inner.actions(state)

    def step(self, state: TriggerState, action: Action) -> TriggerState:
        return self.inner.step(state, action)

    def properties(self) -> Any:
        return self.inner.properties()

    def metrics(self, state: TriggerState) -> Any:
        return self.inner.metrics(state)


class OwnHooks(Plain):
    """The same, defining ``guard`` and ``repeats`` itself: the wrapper must use them (its
    default ``stepper`` asks the guard)."""

    def __init__(self, model: TriggerModel) -> None:
        super().__init__(model)
        self.asked: list[Action] = []

    def guard(self, action: Action) -> Callable[[TriggerState], bool]:
        self.asked.append(action)
        return self.inner.guard(action)

    def repeats(self, action: Action) -> bool:
        return self.inner.repeats(action)


class OwnStepper(OwnHooks):
    """And its own ``stepper``, which the wrapper must use instead of asking the guard."""

    def __init__(self, model: TriggerModel) -> None:
        super().__init__(model)
        self.specialized: list[Action] = []

    def stepper(self, action: Action) -> Callable[[TriggerState], TriggerState | None]:
        self.specialized.append(action)
        return self.inner.stepper(action)


def test_a_user_model_runs_with_its_own_hooks_or_the_defaults() -> None:
    spec = RunSpec(slots=200, seed=8)
    hooked = simulate(TriggerModel(3, 1, 2, "mutex", turns=0), spec)
    assert astuple(simulate(UserModel(Plain(TriggerModel(3, 1, 2, "mutex", turns=0))), spec)) == astuple(
        hooked
    )
    own = OwnHooks(TriggerModel(3, 1, 2, "mutex", turns=0))
    assert astuple(simulate(UserModel(own), spec)) == astuple(hooked)
    assert ("compact",) in own.asked and ("append", 2) in own.asked
    stepper = OwnStepper(TriggerModel(3, 1, 2, "mutex", turns=0))
    assert astuple(simulate(UserModel(stepper), spec)) == astuple(hooked)
    assert ("tick",) in stepper.specialized and ("append", 2) in stepper.specialized
    assert stepper.asked == []


# -- the hooks against the plain model, on every explored state ------------------------------


def vocabulary(model: TriggerModel) -> list[Action]:
    writers = model.config.writers
    return [("append", w) for w in range(writers + 1)] + [("tick",), ("compact",), ("sleep",)]


def guard_mismatches(
    model: TriggerModel, states: Sequence[TriggerState]
) -> list[tuple[TriggerState, Action]]:
    """States and actions where ``guard(action)(state)`` differs from ``is_enabled``."""
    guards: dict[Action, Callable[[TriggerState], bool]] = {a: model.guard(a) for a in vocabulary(model)}
    return [(s, a) for s in states for a, g in guards.items() if g(s) != model.is_enabled(s, a)]


def stepper_mismatches(
    model: TriggerModel, states: Sequence[TriggerState]
) -> list[tuple[TriggerState, Action]]:
    """States and actions where ``stepper(action)(state)`` is not ``step(state, action)`` where
    the action is enabled and ``None`` where it is not (next states compared with their type)."""
    steppers: dict[Action, Callable[[TriggerState], TriggerState | None]] = {
        a: model.stepper(a) for a in vocabulary(model) + [("append", -1)]
    }
    mismatches = []
    for s in states:
        for a, attempt in steppers.items():
            got = attempt(s)
            want = model.step(s, a) if model.is_enabled(s, a) else None
            if got != want or type(got) is not type(want):
                mismatches.append((s, a))
    return mismatches


def repeat_violations(
    model: TriggerModel, states: Sequence[TriggerState]
) -> list[tuple[TriggerState, Action]]:
    """States where an action declared not to repeat is enabled again right after it happened."""
    once = [a for a in vocabulary(model) if not model.repeats(a)]
    return [
        (s, a)
        for s in states
        for a in once
        if model.is_enabled(s, a) and model.is_enabled(model.step(s, a), a)
    ]


CONFIGS = [(3, 2, 3, 3), (2, 0, 2, 3), (2, 1, 1, 4), (1, 3, 2, 5)]


@pytest.mark.parametrize("locking", LOCKING_NAMES)
def test_guard_stepper_and_repeats_agree_with_the_model_on_every_explored_state(locking: str) -> None:
    for writers, gap, max_turns, turns in CONFIGS:
        model = TriggerModel(writers, gap, max_turns, locking, turns=turns)
        states = explore(model, symmetry=False).states
        assert len(states) > 10
        assert guard_mismatches(model, states) == []
        assert stepper_mismatches(model, states) == []
        assert repeat_violations(model, states) == []
        # the declarations are not vacuous: appends and acts happen, and are declared once-only
        assert not model.repeats(("append", 0)) and not model.repeats(("compact",))


class SaysTickIsDueWhenCompactIs(TriggerModel):
    def guard(self, action: Action) -> Callable[[TriggerState], bool]:
        return super().guard(("compact",) if action[0] == "tick" else action)


class CompactsLikeTrimTo(TriggerModel):
    """A stepper that deletes ``live − maxTurns`` (the ``trim-to`` rule) whatever the strategy:
    the same as ``step`` wherever the count read is the live count, so only some states tell."""

    def stepper(self, action: Action) -> Callable[[TriggerState], TriggerState | None]:
        if action[0] != "compact":
            return super().stepper(action)
        m = self.config.max_turns

        def compact(state: TriggerState) -> TriggerState | None:
            if state.pending != 0:
                return None
            return state._replace(live=min(state.live, m), pending=-1, count_read=0, dirty=False)

        return compact


class TicksWhenCompactIsDue(TriggerModel):
    """A stepper that takes the tick even when the compactor is due (the right next state, in a
    state where the tick is not enabled)."""

    def stepper(self, action: Action) -> Callable[[TriggerState], TriggerState | None]:
        if action[0] != "tick":
            return super().stepper(action)
        return lambda state: self.step(state, action)


class SaysTickNeverRepeats(TriggerModel):
    def repeats(self, action: Action) -> bool:
        return False


def test_the_checks_catch_a_wrong_hook() -> None:
    wrong_guard = SaysTickIsDueWhenCompactIs(3, 2, 3, "none", turns=3)
    assert guard_mismatches(wrong_guard, explore(wrong_guard, symmetry=False).states)
    for wrong_stepper, action in (
        (CompactsLikeTrimTo(3, 2, 3, "none", turns=3), ("compact",)),
        (TicksWhenCompactIsDue(3, 2, 3, "none", turns=3), ("tick",)),
    ):
        states = explore(wrong_stepper, symmetry=False).states
        wrong = stepper_mismatches(wrong_stepper, states)
        assert wrong and {a for _s, a in wrong} == {action} and len(wrong) < len(states)
    wrong_repeats = SaysTickNeverRepeats(3, 2, 3, "none", turns=3)
    assert repeat_violations(wrong_repeats, explore(wrong_repeats, symmetry=False).states)


@pytest.mark.parametrize("locking", LOCKING_NAMES)
def test_the_steppers_tables_change_nothing_when_they_overflow(locking: str) -> None:
    """The stepper's identity-keyed memo tables, emptied every few entries, give the same run."""
    spec = RunSpec(slots=300, seed=9)
    kept = simulate(TriggerModel(4, 2, 3, locking, turns=0), spec)
    model = TriggerModel(4, 2, 3, locking, turns=0)
    model._tables.limit = 3
    assert astuple(simulate(model, spec)) == astuple(kept)
    assert all(len(t) <= 3 for t in model._tables.appended_by_id) and len(model._tables.ticked_by_id) <= 3
    assert kept.appends > 100
