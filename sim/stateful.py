"""Hypothesis stateful machines built from any protocol model, with no per-model code.

:func:`machine_for` turns a :class:`models.protocol.ProtocolModel` into a
``RuleBasedStateMachine``: one rule draws an index into the actions enabled in the current
state (its precondition is that some action is enabled; a no-op rule covers terminal states),
and one invariant checks the model's ``always`` properties after every step. ``sometimes`` goals
are recorded across the whole run, so a run that never reached one can be reported as
inconclusive rather than green. Because the drawn value is an *index* into the enabled actions,
Hypothesis shrinks towards fewer steps and towards the first enabled action, and the minimal
failing example is a short, readable action sequence.

:func:`check_stateful` runs such a machine and returns the shrunk counterexample as data (the
initial-state index and the action list), ready to be saved as a trace. Failures are kept in a
directory example database (by default ``.turncheck/hypothesis`` under the working directory),
one sub-directory per model configuration (class, name, parameters, properties), and tried
first on the next run. The project's own stateful tests use the same factory
(``machine_for(model).TestCase``).

Under pytest the machine is an ordinary Hypothesis test and only public Hypothesis API is used:
the machine class is decorated ``@settings(deadline=None)``, so its ``TestCase`` runs with the
settings profile active when :func:`machine_for` builds it (``settings.load_profile``: examples,
database, health checks, verbosity, phases), as any ``@settings`` test reads the profile when it
is decorated — the one override is ``deadline=None``, as Hypothesis's own ``TestCase`` does, since
a step's time includes the model's first projections — and every step is reported with :func:`hypothesis.note` in the model's words ("writer appends
CALL c0"), so a failure reads as the domain transcript, not as ``Draw 1 (action): 0``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, note, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from turncheck.models.protocol import Property, ProtocolModel, as_model
from turncheck.sim.example_database import AtomicDirectoryDatabase
from turncheck.sim.run_bounds import caused_by_memory

DEFAULT_DATABASE = Path(".turncheck") / "hypothesis"


class PropertyViolation(AssertionError):
    """Raised inside a machine when an ``always`` property breaks; carries the run that broke it."""

    def __init__(self, prop: str, init: int, actions: Sequence[Any], steps: Sequence[str] = ()) -> None:
        text = f"property {prop} violated after {len(actions)} steps"
        if steps:
            text += ":\n" + "\n".join(f"  {i:>3}. {s}" for i, s in enumerate(steps, start=1))
        super().__init__(text)
        self.prop = prop
        self.init = init
        self.actions = tuple(actions)


class OutOfTime(KeyboardInterrupt):
    """Raised inside a machine once the run's time budget is spent. A ``KeyboardInterrupt``, the one
    exception Hypothesis lets through at once — any other it takes for a failure, saves, replays
    and then calls flaky — so the run simply ends, and :func:`check_stateful` (which alone catches
    it) reports the examples done and the shortest violation seen."""


class OutOfMemory(KeyboardInterrupt):
    """Raised inside a machine for a :class:`MemoryError` there (a memory limit reached), let
    through at once as :class:`OutOfTime` is. Taken for a failure, the MemoryError was saved and
    replayed; the replay, drawing differently, became Hypothesis's "Inconsistent data
    generation" or a flaky failure, a traceback. :func:`check_stateful` raises MemoryError."""


_STARVED = OutOfMemory()  # made before memory runs short: raising it allocates no new exception


def _fed(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, a MemoryError in it raised as :class:`OutOfMemory` (see there)."""
    try:
        return call(*args)
    except MemoryError:
        raise _STARVED from None


@dataclass(frozen=True)
class StatefulOutcome:
    """The verdict of one Hypothesis run over a model.

    ``violated`` names the broken property (None when every invariant held); ``init`` and
    ``actions`` are then the counterexample as Hypothesis shrank it, ending at the step that
    broke the property (the explorer, when it runs, gives a shortest one). ``goals`` maps
    each ``sometimes`` goal to whether any example reached it; ``examples`` counts the machines
    Hypothesis ran; ``stopped`` says the time budget ended the run before ``max_examples`` (a
    violation found before then is still reported, shrunk as far as the budget allowed).
    """

    model: str
    params: dict[str, Any]
    examples: int
    violated: str | None = None
    init: int = 0
    actions: tuple[Any, ...] = ()
    goals: dict[str, bool] = field(default_factory=dict)
    stopped: bool = False

    @property
    def inconclusive(self) -> bool:
        return self.violated is None and not all(self.goals.values())

    @property
    def unreached(self) -> tuple[str, ...]:
        return tuple(name for name, hit in self.goals.items() if not hit)


def database_key(model: ProtocolModel[Any, Any], properties: Sequence[Property[Any]]) -> bytes:
    """What distinguishes one model configuration's saved failures from another's."""
    params = json.dumps(dict(model.params), sort_keys=True, default=str)
    names = ",".join(p.name for p in properties)
    cls = f"{type(model).__module__}.{type(model).__qualname__}"
    return f"turncheck:{cls}:{model.name}:{params}:{names}".encode()


def configuration_database(
    directory: str | Path, model: ProtocolModel[Any, Any], properties: Sequence[Property[Any]]
) -> DirectoryBasedExampleDatabase:
    """The example database of one model configuration: a sub-directory of ``directory`` named
    by a hash of :func:`database_key`, so configurations never replay each other's failures."""
    digest = hashlib.sha256(database_key(model, properties)).hexdigest()[:16]
    return AtomicDirectoryDatabase(str(Path(directory) / digest))


def machine_for(
    model: ProtocolModel[Any, Any],
    properties: Sequence[Property[Any]] | None = None,
    *,
    reached: set[str] | None = None,
    runs: list[int] | None = None,
    deadline: float | None = None,
    found: list[PropertyViolation] | None = None,
) -> type[RuleBasedStateMachine]:
    """Build a ``RuleBasedStateMachine`` class driving ``model`` (its ``step`` must be pure).

    ``properties`` (default: all of the model's): ``always`` ones become the machine's invariant,
    ``sometimes`` ones are added to ``reached`` (shared across a run's examples) when they hold.
    ``runs`` is a one-element counter of machine instances; past ``deadline`` (a
    ``time.monotonic()`` value) each step raises :class:`OutOfTime`; ``found`` keeps the shortest
    violation seen as its last element, so a run cut short while shrinking still has its
    counterexample. The class's ``TestCase`` attribute is a ``unittest.TestCase`` for pytest.
    """
    model = as_model(model)
    props = tuple(model.properties()) if properties is None else tuple(properties)
    always = tuple(p for p in props if p.expectation == "always")
    goals = tuple(p for p in props if p.expectation == "sometimes")
    inits = list(model.init_states())
    if not inits:
        raise ValueError(f"model {model.name} has no initial state")
    goal_set: set[str] = reached if reached is not None else set()
    counter = runs if runs is not None else [0]
    init_index = st.just(0) if len(inits) == 1 else st.integers(0, len(inits) - 1)

    def in_time() -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime

    @settings(deadline=None)  # the profile active now, as every @settings Hypothesis test reads it
    class ModelMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            counter[0] += 1
            self.init = 0
            self.state: Any = None
            self.enabled: list[Any] = []
            self.trace: list[Any] = []
            self.steps: list[str] = []

        @initialize(initial_state=init_index)
        def start(self, initial_state: int) -> None:
            self.init = initial_state
            self.state = inits[initial_state]
            self.enabled = list(_fed(model.actions, self.state))
            if len(inits) > 1:
                note(f"initial state {initial_state}")

        @precondition(lambda self: bool(self.enabled))
        @rule(data=st.data())
        def act(self, data: st.DataObject) -> None:
            in_time()
            k = data.draw(st.integers(0, len(self.enabled) - 1), label="enabled action number")
            action = self.enabled[k]
            words = _fed(_format, model, self.state, action)
            self.trace.append(action)
            self.steps.append(words)
            note(f"step {len(self.trace)}: {words}")
            self.state = _fed(model.step, self.state, action)
            self.enabled = list(_fed(model.actions, self.state))

        @precondition(lambda self: self.state is not None and not self.enabled)
        @rule()
        def stutter(self) -> None:
            """Nothing is enabled (a terminal state): keep the run going without a step."""
            in_time()

        @invariant()
        def properties_hold(self) -> None:
            if self.state is not None:
                _fed(
                    _judge, self.state, (always, goals), goal_set, found, (self.init, self.trace, self.steps)
                )

    ModelMachine.__name__ = ModelMachine.__qualname__ = f"{_camel(model.name)}Machine"
    return ModelMachine


def _judge(
    state: Any,
    props: tuple[tuple[Property[Any], ...], tuple[Property[Any], ...]],
    goal_set: set[str],
    found: list[PropertyViolation] | None,
    run: tuple[int, list[Any], list[str]],
) -> None:
    """Raise the first ``always`` property ``state`` breaks, with ``run`` (initial state, actions,
    their words) as its counterexample, kept in ``found`` when shorter; record the goals reached."""
    always, goals = props
    for p in always:
        if not p.holds(state):
            violation = PropertyViolation(p.name, *run)
            if found is not None and (not found or len(found[-1].actions) > len(run[1])):
                found.append(violation)
            raise violation
    for g in goals:
        if g.name not in goal_set and g.holds(state):
            goal_set.add(g.name)


def _format(model: ProtocolModel[Any, Any], state: Any, action: Any) -> str:
    return str(model.format_action(state, action))


@contextmanager
def hypothesis_home(database: str | Path | None) -> Iterator[None]:
    """Hypothesis writes a cache (the constants of the modules under test) under ``.hypothesis``
    of the working directory even without an example database; point it beside the database, or
    at a folder removed afterwards when there is none, so a run writes nothing its caller did not
    name. The previous home is put back, so a caller's own Hypothesis tests keep theirs."""
    before = storage_directory(intent_to_write=False).home_directory
    with contextlib.ExitStack() as stack:
        if database is not None:
            set_hypothesis_home_dir(Path(database) / ".hypothesis")
        else:
            set_hypothesis_home_dir(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="turncheck-hypothesis-"))
            )
        stack.callback(set_hypothesis_home_dir, before)
        yield


def check_stateful(
    model: ProtocolModel[Any, Any],
    properties: Sequence[Property[Any]] | None = None,
    *,
    max_examples: int = 200,
    steps: int = 40,
    seed: int | None = None,
    database: str | Path | None = DEFAULT_DATABASE,
    shrink: bool = True,
    timeout: float | None = None,
) -> StatefulOutcome:
    """Search ``model`` with Hypothesis and return the shrunk counterexample, if any.

    Parameters
    ----------
    model, properties
        As for :func:`machine_for`.
    max_examples
        Runs (machines) to try; each takes up to ``steps`` actions.
    seed
        Fixes Hypothesis's random choices; the same seed and an empty database give the same run.
    database
        Directory of saved failures (tried first next time); None disables it.
    shrink
        Shrink a failure to a minimal action sequence (default).
    timeout
        Seconds the run may take; past them it stops at the next step (``stopped``), reporting
        the shortest violation seen, if any.

    Returns
    -------
    StatefulOutcome
    """
    model = as_model(model)
    props = tuple(model.properties()) if properties is None else tuple(properties)
    reached: set[str] = set()
    runs = [0]
    found: list[PropertyViolation] = []
    deadline = None if timeout is None else time.monotonic() + timeout
    machine = machine_for(model, props, reached=reached, runs=runs, deadline=deadline, found=found)
    if seed is not None:
        fixed_seed(seed)(machine)
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
    if shrink:
        phases.append(Phase.shrink)
    config = settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        database=configuration_database(database, model, props) if database is not None else None,
        phases=phases,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    goal_names = [p.name for p in props if p.expectation == "sometimes"]
    params = dict(model.params)
    try:
        with hypothesis_home(database):
            run_state_machine_as_test(machine, settings=config)
    except PropertyViolation as exc:
        goals = {g: g in reached for g in goal_names}
        return StatefulOutcome(model.name, params, runs[0], exc.prop, exc.init, exc.actions, goals)
    except OutOfMemory:
        raise MemoryError from None
    except Flaky as exc:  # a MemoryError Hypothesis met outside the machine's steps, replayed
        if caused_by_memory(exc):
            raise MemoryError from None
        raise
    except OutOfTime:
        goals = {g: g in reached for g in goal_names}
        if found:
            v = found[-1]
            return StatefulOutcome(
                model.name, params, runs[0], v.prop, v.init, v.actions, goals, stopped=True
            )
        return StatefulOutcome(model.name, params, runs[0], goals=goals, stopped=True)
    return StatefulOutcome(model.name, params, runs[0], goals={g: g in reached for g in goal_names})


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("_", "-").split("-") if part) or "Model"
