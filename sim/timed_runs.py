"""Random timed runs of any protocol model on a SimPy clock: ``turncheck check --engine simpy``.

The explorer proves a property over every interleaving and Hypothesis shrinks a random run;
neither has a clock. This engine runs the same model definition — ``init_states``, ``actions``,
``step``, ``properties``, nothing else of the protocol — in simulated time: one SimPy process per
run picks an enabled action at random (a seeded stream), holds it for the time the model says it
takes (:meth:`ProtocolModel.duration`: the cost-trigger model's messages arrive one unit apart,
and a request, the summarizer's included, takes longer the more it sends) and applies it when that
time has passed. SimPy's environment owns the clock; nothing here reads a wall clock.

What a run can show, and what it cannot:

* ``always``: checked after every step; a run that breaks one ends there, and the run is the
  counterexample (the shortest such run over all runs, not a shrunk or shortest-possible one).
* ``eventually``: a run that comes back to a state it visited closes a loop; when the property
  is false on every state of the loop, ``when`` held on the way into it and the loop is fair
  under the model's fairness (:func:`sim.liveness.fair_loop`, the check ``replay`` applies), the
  run is a lasso — a real infinite run that never satisfies it. A run that closes no such loop
  proves nothing: a random search is not exhaustive, and the verdict line says so.
* ``sometimes``: reached when some state of some run satisfies it.

Determinism: the runs draw from one stream seeded by ``seed`` (:func:`models.random_streams.stream_rng`)
in a fixed order, and a SimPy run is itself deterministic, so the same model, seed, runs and steps
give the same outcome, byte for byte.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import simpy
from simpy.events import Event as SimEvent

from turncheck.models.protocol import Property, ProtocolModel, as_model
from turncheck.models.random_streams import stream_rng
from turncheck.sim.liveness import fair_loop

Process = Generator[SimEvent, Any, None]


@dataclass(frozen=True)
class TimedFinding:
    """One property broken by one run: the run (an index into ``init_states`` and the actions),
    the simulated time at which each action ended, and for a lasso the step its loop starts at."""

    prop: str
    init: int
    actions: tuple[Any, ...]
    states: tuple[Any, ...]
    times: tuple[float, ...]
    loop: int | None = None
    run: int = 0


@dataclass(frozen=True)
class TimedOutcome:
    """What ``runs`` random timed runs of up to ``steps`` steps found (``seed``).

    ``findings``: per broken property, the shortest run that broke it, in the order the model
    declares its properties; ``goals``: each ``sometimes`` property, reached or not; ``taken``: the
    steps taken over all runs; ``distinct``: the distinct states they visited; ``horizon``: the
    latest simulated time a run reached; ``stopped``: the time budget ended the runs early."""

    runs: int
    steps: int
    seed: int
    done: int
    taken: int
    distinct: int
    horizon: float
    findings: tuple[TimedFinding, ...]
    goals: dict[str, bool] = field(default_factory=dict)
    stopped: bool = False

    @property
    def violated(self) -> str | None:
        return self.findings[0].prop if self.findings else None

    def finding(self, name: str) -> TimedFinding | None:
        return next((f for f in self.findings if f.prop == name), None)

    def covered(self) -> str:
        """What the runs covered, in one clause (for the engine line and the verdict)."""
        stop = " (stopped at --timeout)" if self.stopped else ""
        return (
            f"{self.done} random timed runs of up to {self.steps} steps, seed {self.seed}{stop}: "
            f"{self.taken} steps, {self.distinct} distinct states, simulated time up to {self.horizon:g}"
        )

    def rows(self, props: Sequence[Property[Any]]) -> list[tuple[str, str, str]]:
        """One row per property — name, kind, what the runs showed — for ``check``'s table."""
        out = []
        for p in props:
            f = self.finding(p.name)
            if p.expectation == "sometimes":
                text = "reached" if self.goals.get(p.name) else "unreached"
            elif f is not None and f.loop is None:
                text = f"violated after {len(f.actions)} steps (run {f.run})"
            elif f is not None and f.loop is not None:
                text = f"violated: lasso of {f.loop} steps to a {len(f.actions) - f.loop}-step loop (run {f.run})"
            elif p.expectation == "always":
                text = "held on every run"
            else:
                text = "no run closed a fair loop breaking it (not a proof)"
            out.append((p.name, p.expectation, text))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.done,
            "steps": self.steps,
            "seed": self.seed,
            "taken": self.taken,
            "distinct": self.distinct,
            "horizon": self.horizon,
            "exhaustive": False,
            "stopped": self.stopped,
            "violated": {
                f.prop: {"steps": len(f.actions), "loop": f.loop, "run": f.run, "times": list(f.times)}
                for f in self.findings
            },  # fmt: skip
            "goals": self.goals,
        }


class _Run:
    """One run: a SimPy process that takes a random enabled action, waits its duration, applies it."""

    def __init__(self, model: ProtocolModel[Any, Any], props: Sequence[Property[Any]], rng: Any,
                 steps: int, init: int, state: Any) -> None:  # fmt: skip
        self.model, self.props, self.rng, self.steps = model, props, rng, steps
        self.env = simpy.Environment()
        self.init = init
        self.states: list[Any] = [state]
        self.actions: list[Any] = []
        self.times: list[float] = []
        self.seen: dict[Any, list[int]] = {state: [0]}
        self.finding: TimedFinding | None = None
        self.reached: set[str] = set()

    def process(self) -> Process:
        model = self.model
        self._judge_state()
        while self.finding is None and len(self.actions) < self.steps:
            state = self.states[-1]
            enabled = list(model.actions(state))
            if not enabled:  # nothing can happen: the run stutters here for ever
                self._judge_loop(len(self.actions))
                return
            action = enabled[int(self.rng.integers(len(enabled)))]
            yield self.env.timeout(max(0.0, float(model.duration(state, action))))
            nxt = model.step(state, action)
            self.actions.append(action)
            self.states.append(nxt)
            self.times.append(float(self.env.now))
            self._judge_state()
            if self.finding is None:
                for earlier in self.seen.get(nxt, ()):
                    if self._judge_loop(earlier):
                        break
                self.seen.setdefault(nxt, []).append(len(self.actions))

    def _judge_state(self) -> None:
        state = self.states[-1]
        self.reached.update(p.name for p in self.props if p.expectation == "sometimes" and p.holds(state))
        broken = next((p for p in self.props if p.expectation == "always" and not p.holds(state)), None)
        if broken is not None:
            self.finding = self._found(broken.name, None)

    def _judge_loop(self, loop: int) -> bool:
        """Whether the run, its last state being ``states[loop]`` again (or stuttering at ``loop``),
        is a lasso breaking an ``eventually`` property; the first one it breaks is recorded."""
        for p in self.props:
            if p.expectation != "eventually" or not self._entered(p, loop):
                continue
            if fair_loop(self.model, p, self.states, self.actions, loop) is None:
                self.finding = self._found(p.name, loop)
                return True
        return False

    def _entered(self, p: Property[Any], loop: int) -> bool:
        """``when`` held at a state from which the property stays false up to the loop."""
        when: Callable[[Any], bool] = p.when or (lambda _s: True)
        for k in range(loop, -1, -1):  # back from the loop while the property stays false
            if k < loop and p.holds(self.states[k]):
                return False
            if when(self.states[k]):
                return True
        return any(when(s) for s in self.states[loop:])

    def _found(self, prop: str, loop: int | None) -> TimedFinding:
        return TimedFinding(prop, self.init, tuple(self.actions), tuple(self.states), tuple(self.times), loop)


def run_timed(
    model: ProtocolModel[Any, Any],
    properties: Sequence[Property[Any]],
    *,
    runs: int = 200,
    steps: int = 40,
    seed: int = 0,
    timeout: float | None = None,
) -> TimedOutcome:
    """``runs`` random timed runs of ``model`` of up to ``steps`` steps each, judged against
    ``properties`` (see the module's docstring for what each kind of property can show); past
    ``timeout`` seconds no further run starts, and the outcome says so."""
    model = as_model(model)
    props = tuple(properties)
    rng = stream_rng("timed-runs", seed)
    inits = list(model.init_states())
    best: dict[str, TimedFinding] = {}
    reached: set[str] = set()
    seen: set[Any] = set()
    taken = done = 0
    horizon = 0.0
    stopped = False
    deadline = None if timeout is None else time.monotonic() + timeout
    for r in range(runs):
        if deadline is not None and time.monotonic() > deadline:
            stopped = True
            break
        init = int(rng.integers(len(inits)))
        run = _Run(model, props, rng, steps, init, inits[init])
        run.env.process(run.process())
        run.env.run()
        done += 1
        taken += len(run.actions)
        horizon = max(horizon, float(run.env.now))
        seen.update(run.states)
        reached |= run.reached
        f = run.finding
        if f is not None and (f.prop not in best or len(f.actions) < len(best[f.prop].actions)):
            best[f.prop] = TimedFinding(f.prop, f.init, f.actions, f.states, f.times, f.loop, r)
    order = [p.name for p in props]
    findings = tuple(sorted(best.values(), key=lambda f: order.index(f.prop)))
    goals = {p.name: p.name in reached for p in props if p.expectation == "sometimes"}
    return TimedOutcome(
        runs, steps, seed, done, taken, len(seen), round(horizon, 6), findings, goals, stopped
    )
