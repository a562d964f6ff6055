"""The SimPy runner's runs are pinned event by event, and the trigger model's ways of asking the
same rules agree.

The traces below were recorded from the runner built on generator processes (commit 91d146c):
times of every SimPy event processed, and every action applied, hashed. The runner asks the model
through ``is_enabled`` and ``step``, the explorer through ``successors``; both, and ``actions``,
read the rules the trigger model writes once, and a user's model that defines only the required
core runs in both engines with the defaults.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest
import simpy

from turncheck.models.locking import LOCKING_NAMES
from turncheck.models.protocol import UserModel
from turncheck.models.trigger import State, TriggerModel
from turncheck.sim.explorer import explore
from turncheck.sim.protocols import load_model
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
        """Records every action the runner takes."""

        def step(self, state: State, action: Action) -> State:
            actions.append(action)
            return super().step(state, action)

    monkeypatch.setattr(simpy.Environment, "step", step)
    locking, writers, gap, max_turns, turns = config
    result = simulate(Recording(writers, gap, max_turns, locking, turns=turns), spec)
    digest = hashlib.sha256(repr((times, actions)).encode()).hexdigest()[:16]
    assert (len(times), len(actions), digest) == expected
    assert result.events == len(times)


class Plain:
    """A user's model that is not a ProtocolModel: the trigger model's required methods only, so
    it is wrapped and gets the default ``is_enabled`` and ``successors``."""

    def __init__(self, model: TriggerModel) -> None:
        self.inner = model
        self.params = model.params

    def init_states(self) -> Any:
        return self.inner.init_states()

    def actions(self, state: State) -> Any:
        return self.inner.actions(state)

    def step(self, state: State, action: Action) -> State:
        return self.inner.step(state, action)

    def properties(self) -> Any:
        return self.inner.properties()

    def metrics(self, state: State) -> Any:
        return self.inner.metrics(state)


@pytest.mark.parametrize("locking", LOCKING_NAMES)
def test_a_user_model_with_the_defaults_runs_and_explores_the_same(locking: str) -> None:
    """The runner drives any model with this action vocabulary through the defaults; the
    explorer's default ``successors`` steps each action (no symmetry: a plain model has none)."""
    for spec in (RunSpec(slots=300, seed=5), RunSpec(slots=200, arrivals="poisson", rate=2.5, seed=6)):
        model = TriggerModel(4, 2, 3, locking, turns=0)
        assert astuple(simulate(UserModel(Plain(model)), spec)) == astuple(simulate(model, spec))
    model = TriggerModel(3, 1, 2, locking, turns=2)
    plain, own = explore(UserModel(Plain(model)), symmetry=False), explore(model, symmetry=False)
    assert (plain.distinct, plain.generated, list(plain.states), plain.via) == (
        own.distinct, own.generated, list(own.states), own.via,
    )  # fmt: skip


def vocabulary(model: TriggerModel) -> list[Action]:
    writers = model.config.writers
    return [("append", w) for w in range(-1, writers + 1)] + [
        ("append",),
        ("append", "0"),
        ("tick",),
        ("tick", 0),
        ("compact",),
        ("sleep",),
    ]


def disagreements(model: TriggerModel, states: Sequence[State]) -> list[tuple[State, Action]]:
    """States and actions where ``successors``, ``actions``, ``is_enabled`` and ``step`` do not
    say the same: ``successors(s)`` must be ``[(a, step(s, a)) for a in actions(s)]`` and
    ``is_enabled(s, a)`` must be ``a in actions(s)``, for every action of the vocabulary; and
    ``live_turns(s)`` (the runner's read) must be the ``live_turns`` metric."""
    wrong = []
    for s in states:
        if model.live_turns(s) != model.metrics(s)["live_turns"]:
            wrong.append((s, ("live_turns",)))
        enabled = model.actions(s)
        if model.successors(s) != [(a, model.step(s, a)) for a in enabled]:
            wrong.append((s, ("successors",)))
        wrong += [(s, a) for a in vocabulary(model) if model.is_enabled(s, a) != (a in enabled)]
    return wrong


CONFIGS = [(3, 2, 2, 2), (2, 0, 2, 3), (2, 1, 1, 4), (1, 3, 2, 5), (3, 1, 2, 0)]
STATES = 5_000
"""Enough for every config but one: cas with unbounded writers (the last, ``turns=0``) has no end
of named states (only its canonical form saturates), and a million of them took half a minute."""


@pytest.mark.parametrize("locking", LOCKING_NAMES)
def test_the_ways_of_asking_agree_on_every_explored_state(locking: str) -> None:
    checked = 0
    for writers, gap, max_turns, turns in CONFIGS:
        model = TriggerModel(writers, gap, max_turns, locking, turns=turns)
        for symmetry in (True, False):  # anonymous states, then named ones
            states = explore(model, symmetry=symmetry, max_states=STATES).states
            assert disagreements(model, states) == []
            checked += len(states)
    assert checked > 100


class MiscountsLiveTurns(TriggerModel):
    def live_turns(self, state: State) -> int:
        return state[1]  # the peak, not the live count


def test_the_check_catches_a_wrong_live_count() -> None:
    wrong = MiscountsLiveTurns(2, 1, 1, "none", turns=2)
    found = disagreements(wrong, explore(wrong).states)
    assert found and {a for _s, a in found} == {("live_turns",)}


class EnablesTheTickWhenCompactIsDue(TriggerModel):
    def is_enabled(self, state: State, action: Action) -> bool:
        return super().is_enabled(state, ("compact",) if action == ("tick",) else action)


def test_the_check_catches_a_wrong_answer() -> None:
    wrong = EnablesTheTickWhenCompactIsDue(3, 2, 3, "none", turns=3)
    states = explore(wrong).states
    found = disagreements(wrong, states)
    assert found and {a for _s, a in found} == {("tick",)}


USER_MODULE = '''
"""Writers append at most once a slot; a compaction due at a slot's end keeps the newest two."""


class Appender:
    def __init__(self, writers: int = 3) -> None:
        self.params = {"writers": writers}
        self.writers = writers

    def init_states(self):
        return [(0, (0,) * self.writers, False)]  # live turns, appended this slot, compaction due

    def actions(self, state):
        live, used, due = state
        if due:
            return [("compact",)]
        return [("append", w) for w in range(self.writers) if not used[w]] + [("tick",)]

    def step(self, state, action):
        live, used, due = state
        if action[0] == "append":
            w = action[1]
            return (live + 1, used[:w] + (1,) + used[w + 1 :], due)
        if action[0] == "tick":
            return (live, (0,) * self.writers, live > 2)
        return (2, used, False)

    def properties(self):
        return ()

    def metrics(self, state):
        return {"live_turns": state[0]}
'''


def test_a_users_package_module_class_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner drives any model with the ``("append", w)``/``tick``/``compact`` vocabulary,
    named as ``package.module:Class``: its writers append, its compactor acts when due."""
    package = tmp_path / "tc_runner_user"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "appender.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    model = load_model("tc_runner_user.appender:Appender", {"writers": "3"})
    result = simulate(model, RunSpec(slots=200, seed=3))
    assert result.appends > 100 and result.compactions > 20 and result.peak >= 3
    assert result.appends == result.arrived - result.waiting
    assert (
        simulate(load_model("tc_runner_user.appender:Appender", {"writers": "3"}), RunSpec(slots=200, seed=3))
        == result
    )
