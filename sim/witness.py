"""Runs of the model's own states from a search's canonical paths: what a trace replays.

The explorer searches symmetry classes and applies each action to a class representative, so its
paths name writers and call ids as renamed by ``canonical``. A counterexample, a goal's witness
or a metric's worst case is turned here into a run that replays with plain ``step`` from a real
initial state — and a lasso into a loop checked to be fair on the unreduced model — or the
model's ``canonical`` is shown not to be a symmetry (:class:`NotASymmetry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turncheck.models.errors import TurncheckError
from turncheck.models.protocol import ProtocolModel, as_model
from turncheck.sim.liveness import fair_loop

if TYPE_CHECKING:
    from turncheck.sim.explorer import Exploration


class NotASymmetry(TurncheckError):
    """A model's ``canonical`` merged states that do not behave alike (a bug in the model)."""


@dataclass(frozen=True)
class ConcretePath:
    """A replayable run: an index into ``list(model.init_states())`` and the actions taken;
    for a lasso, ``loop``: the run's last state is ``states[loop]`` again (the actions from
    ``loop`` on repeat for ever), or, with ``loop == len(actions)``, it stutters for ever."""

    init: int
    actions: tuple[Any, ...]
    states: tuple[Any, ...]
    loop: int | None = None


def concretize(model: ProtocolModel[Any, Any], canonical_path: Sequence[Any]) -> ConcretePath:
    """Turn a path of canonical states into a run of the model's own, uncanonicalised states.

    The explorer applies each action to a class representative, so its actions name writers
    and call ids as renamed by ``canonical``. To give a trace that replays with plain ``step``,
    we walk from a real initial state and at each step pick an enabled action whose successor
    lies in the next state's symmetry class (one always exists when ``canonical`` is a true
    symmetry; otherwise this raises :class:`NotASymmetry`).
    """
    model = as_model(model)
    canon = model.canonical
    inits = list(model.init_states())
    start = None
    for i, s in enumerate(inits):
        if canon(s) == canonical_path[0]:
            start = i
            break
    if start is None:
        raise NotASymmetry(f"model {model.name}: no initial state matches the start of the path")
    actions: list[Any] = []
    states: list[Any] = [inits[start]]
    _follow(model, canonical_path[1:], actions, states)
    return ConcretePath(start, tuple(actions), tuple(states))


def _follow(
    model: ProtocolModel[Any, Any], targets: Sequence[Any], actions: list[Any], states: list[Any]
) -> None:
    """Extend the run ``states`` by ``actions`` through the symmetry classes ``targets``."""
    canon = model.canonical
    state = states[-1]
    for target in targets:
        for action in model.actions(state):
            nxt = model.step(state, action)
            if canon(nxt) == target:
                actions.append(action)
                states.append(nxt)
                state = nxt
                break
        else:
            raise NotASymmetry(
                f"model {model.name}: canonical() is not a symmetry — no action from step "
                f"{len(actions)} reaches the next state's class"
            )


ROUNDS = 1000  # most passes of a loop found up to symmetry before its own states repeat
SATURATED_PASSES = 3  # passes of a loop found over a counting abstraction replayed on the model


def lasso_run(model: ProtocolModel[Any, Any], result: Exploration, name: str) -> ConcretePath:
    """The lasso violating ``name`` as a run of the model's own states, checked to be real.

    Up to symmetry the loop returns to its first state's *class*; on the model's own states one
    pass may end in a renamed copy (writers swapped), so the loop is followed round again until
    a state at the start of a pass repeats. Over a counting abstraction
    (:meth:`ProtocolModel.saturation`) the model's own states never repeat: the loop is followed
    :data:`SATURATED_PASSES` times, each pass ending in the class it started from, and the last
    pass is the loop. The run is then judged by
    :func:`sim.liveness.fair_loop` on the unreduced model: a loop that is not really fair, or on
    which the property holds, raises :class:`NotASymmetry`.
    """
    model = as_model(model)
    lasso = result.lassos[name]
    prop = next(p for p in model.properties() if p.name == name)
    path = [result.states[i] for i in lasso.ids]
    loop = lasso.loop
    if not result.symmetry:
        start = list(model.init_states()).index(path[0])
        run = ConcretePath(start, tuple(lasso.actions), tuple(path), loop)
    else:
        first = concretize(model, path)
        actions, states = list(first.actions), list(first.states)
        if not lasso.stutters and result.saturation is not None:
            for _ in range(SATURATED_PASSES - 1):
                loop = len(actions)
                _follow(model, path[lasso.loop + 1 :], actions, states)
        elif not lasso.stutters:
            passes = {states[loop]: loop}
            for _ in range(ROUNDS):
                if states[-1] in passes:
                    loop = passes[states[-1]]
                    break
                passes[states[-1]] = len(states) - 1
                _follow(model, path[lasso.loop + 1 :], actions, states)
            else:
                raise NotASymmetry(
                    f"model {model.name}: the loop for {name} does not close within {ROUNDS} passes"
                )
        run = ConcretePath(first.init, tuple(actions), tuple(states), loop)
    why = fair_loop(model, prop, run.states, run.actions, loop)
    if why is not None:
        raise NotASymmetry(
            f"model {model.name}: the lasso for {name} is not real on the model's own states: {why}"
        )
    return run


def witness(model: ProtocolModel[Any, Any], result: Exploration, state_id: int) -> ConcretePath:
    """The shortest run, replayable with plain ``step``, from an initial state to ``state_id``."""
    path = [result.states[i] for i in result.path_to(state_id)]
    if result.symmetry:
        return concretize(model, path)
    start = list(model.init_states()).index(path[0])
    return ConcretePath(start, tuple(result.canonical_actions(state_id)), tuple(path))


def counterexample(model: ProtocolModel[Any, Any], result: Exploration, name: str) -> ConcretePath:
    """The shortest run that breaks (or, for a goal, reaches) property ``name``."""
    outcome = result.outcome(name)
    if outcome.state_id is None:
        raise ValueError(f"property {name} has no witness state")
    if name in result.lassos:
        return lasso_run(model, result, name)
    return witness(model, result, outcome.state_id)


def metric_witness(model: ProtocolModel[Any, Any], result: Exploration, metric: str) -> ConcretePath:
    """A shortest run reaching the worst case of ``metric``."""
    for w in result.worst:
        if w.metric == metric:
            return witness(model, result, w.state_id)
    raise KeyError(metric)
