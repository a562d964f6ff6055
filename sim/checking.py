"""One check of one model configuration: the explorer and Hypothesis, and a single verdict.

``turncheck check`` asks one question — do the model's invariants hold, and are its goals
reachable? — and this module answers it from whichever engines were asked: the exhaustive
explorer gives a proof over the bounded space (or the shortest counterexample), Hypothesis gives
a shrunk counterexample from random runs. The verdict is ``fail`` when either engine broke an
invariant, ``inconclusive`` when nothing broke but a ``sometimes`` goal was never reached by any
engine (so the run may not have exercised what it claims to check), and ``pass`` otherwise.

The trigger model gets two more lines: its explored worst-case peak (instantaneous) and its
explored live turns right after a compaction, each compared with its closed form
(:func:`models.locking.worst_case_peak`, :func:`models.locking.post_compaction_peak`). Every
violated invariant gets its own shortest counterexample (:attr:`CheckReport.counterexamples`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from turncheck.models.errors import UnknownName
from turncheck.models.invariants import INVARIANTS
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.explorer import ConcretePath, Exploration, ProgressLine, counterexample, explore
from turncheck.sim.stateful import DEFAULT_DATABASE, StatefulOutcome, check_stateful

Engine = Literal["hypothesis", "explore", "both"]
ENGINES: tuple[str, ...] = ("hypothesis", "explore", "both")


def select_properties(model: ProtocolModel[Any, Any], names: Sequence[str]) -> tuple[Property[Any], ...]:
    """The model's properties to check: the named invariants (all when none named) and every goal.

    Raises :class:`UnknownName` for a name that is no invariant at all, or one this model does
    not check — naming the invariants it does check.
    """
    props = tuple(model.properties())
    if not names:
        return props
    checked = [p.name for p in props if p.expectation == "always"]
    for name in names:
        if name not in checked:
            if name not in INVARIANTS:
                known = sorted(set(INVARIANTS) | set(checked))
                raise UnknownName(f"unknown invariant {name!r} (known: {', '.join(known)})")
            raise UnknownName(
                f"model {model.name} does not check invariant {name!r} (it checks: {', '.join(checked)})"
            )
    return tuple(p for p in props if p.expectation == "sometimes" or p.name in names)


@dataclass(frozen=True)
class CrossCheck:
    """The trigger's explored worst-case peak against its closed-form bound."""

    explored: int
    closed_form: int | None
    reachable: bool
    exhaustive: bool
    formula: str
    reading: str = "worst-case peak"

    @property
    def agrees(self) -> bool:
        if self.closed_form is None:
            return True  # unbounded: any finite explored peak is consistent
        if not self.exhaustive:
            return self.explored <= self.closed_form
        return self.explored == self.closed_form if self.reachable else self.explored <= self.closed_form

    def line(self) -> str:
        if self.closed_form is None:
            return f"cross-check: closed form says unbounded ({self.formula}); explored peak {self.explored}"
        rel = "=" if self.explored == self.closed_form else "<" if self.explored < self.closed_form else ">"
        verdict = "agrees" if self.agrees else "DISAGREES"
        note = ""
        if not self.exhaustive:
            note = " (bounded search: explored peak is a lower bound)"
        elif not self.reachable:
            note = " (too few turns per writer to reach the worst case)"
        return (
            f"cross-check: explored {self.reading} {self.explored} {rel} closed form "
            f"{self.formula} = {self.closed_form} — {verdict}{note}"
        )


_FORMULAS = {
    "none": "M + 2·A·G − 1",
    "trim-to": "M + A·G",
    "mutex": "M + 1",
    "append-sync": "M",
    "cas": "M + 1 if A·G = 1, else unbounded",
}


def cross_check(model: ProtocolModel[Any, Any], result: Exploration) -> CrossCheck | None:
    """For the trigger model: explored peak vs :func:`models.locking.worst_case_peak`."""
    if model.name != "trigger" or "peak_turns" not in {w.metric for w in result.worst}:
        return None
    from turncheck.models.locking import turns_to_reach_worst_case, worst_case_peak

    p = model.params
    a, g, m, lock, turns = p["writers"], p["gap"], p["max_turns"], p["locking"], p["turns"]
    bound = worst_case_peak(a, g, m, lock)
    needed = turns_to_reach_worst_case(a, g, m, lock)
    reachable = turns == 0 or (needed is not None and turns >= needed)
    formula = "M" if g == 0 else _FORMULAS.get(lock, "?")
    formula = f"{formula} with A={a}, G={g}, M={m}"
    return CrossCheck(result.worst_of("peak_turns"), bound, reachable, result.exhausted, formula)


_POST_FORMULAS = {"none": "M + A·G − 1"}


def post_compaction_check(model: ProtocolModel[Any, Any], result: Exploration) -> CrossCheck | None:
    """For the trigger model: the explored live turns right after a compaction (seed 004 §9's
    reading) vs :func:`models.locking.post_compaction_peak`."""
    if model.name != "trigger" or "post_compaction_turns" not in {w.metric for w in result.worst}:
        return None
    from turncheck.models.locking import post_compaction_peak, turns_to_reach_post_compaction_peak

    p = model.params
    a, g, m, lock, turns = p["writers"], p["gap"], p["max_turns"], p["locking"], p["turns"]
    bound = post_compaction_peak(a, g, m, lock)
    needed = turns_to_reach_post_compaction_peak(a, g, m, lock)
    formula = "M" if bound == m else _POST_FORMULAS.get(lock, "?")
    formula = f"{formula} with A={a}, G={g}, M={m}"
    return CrossCheck(
        result.worst_of("post_compaction_turns"), bound, turns == 0 or turns >= needed, result.exhausted,
        formula, reading="post-compaction peak",
    )  # fmt: skip


@dataclass(frozen=True)
class CheckReport:
    """Everything one check found; ``counterexample`` is the run to print and save."""

    model: ProtocolModel[Any, Any]
    properties: tuple[Property[Any], ...]
    exploration: Exploration | None
    stateful: StatefulOutcome | None
    counterexample: ConcretePath | None
    violated: str | None
    source: str
    cross: CrossCheck | None
    others: tuple[tuple[str, ConcretePath], ...] = ()
    post: CrossCheck | None = None

    @property
    def counterexamples(self) -> tuple[tuple[str, ConcretePath], ...]:
        """Every violated invariant with its own shortest counterexample, the reported one first.

        One model can break several invariants by different mechanisms (the trigger: the
        triggering turn still visible while its compaction is pending breaks ``live ≤ maxTurns``
        in 4 steps; a turn appended uncounted in the gap breaks ``live ≤ maxTurns + 1`` in 5), so
        each gets the shortest run that shows *it*.
        """
        first = () if self.counterexample is None or self.violated is None else (
            (self.violated, self.counterexample),
        )  # fmt: skip
        return first + self.others

    @property
    def goals(self) -> dict[str, bool]:
        reached: dict[str, bool] = {}
        for p in self.properties:
            if p.expectation != "sometimes":
                continue
            hit = False
            if self.exploration is not None:
                hit = self.exploration.outcome(p.name).status == "reached"
            if self.stateful is not None:
                hit = hit or self.stateful.goals.get(p.name, False)
            reached[p.name] = hit
        return reached

    @property
    def verdict(self) -> Literal["pass", "fail", "inconclusive"]:
        if self.violated is not None:
            return "fail"
        if not all(self.goals.values()):
            return "inconclusive"
        return "pass"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "inconclusive": 3}[self.verdict]


def run_check(
    model: ProtocolModel[Any, Any],
    properties: Sequence[Property[Any]],
    *,
    engine: Engine = "both",
    max_examples: int = 200,
    steps: int = 40,
    seed: int | None = 0,
    database: str | Path | None = DEFAULT_DATABASE,
    max_states: int | None = 1_000_000,
    max_depth: int | None = None,
    timeout: float | None = None,
    progress: ProgressLine | None = None,
) -> CheckReport:
    """Run the requested engines on ``model`` and merge their findings.

    The counterexample reported is the explorer's when it found one (it is a shortest one), else
    Hypothesis's shrunk run. Properties are checked in the order the model declares them; the
    first violated one is the one reported.
    """
    props = tuple(properties)
    exploration = stateful = None
    if engine in ("explore", "both"):
        exploration = explore(
            model,
            properties=props,
            max_states=max_states,
            max_depth=max_depth,
            timeout=timeout,
            progress=progress,
        )
    if engine in ("hypothesis", "both"):
        stateful = check_stateful(
            model, props, max_examples=max_examples, steps=steps, seed=seed, database=database
        )
    path: ConcretePath | None = None
    violated: str | None = None
    source = ""
    if exploration is not None and exploration.violations:
        names = [p.name for p in props]
        first = min(exploration.violations, key=lambda o: names.index(o.name))
        violated = first.name
        path = counterexample(model, exploration, violated)
        source = "explore"
    elif stateful is not None and stateful.violated is not None:
        violated = stateful.violated
        inits = list(model.init_states())
        states = [inits[stateful.init]]
        for a in stateful.actions:
            states.append(model.step(states[-1], a))
        path = ConcretePath(stateful.init, stateful.actions, tuple(states))
        source = "hypothesis"
    others: list[tuple[str, ConcretePath]] = []
    if exploration is not None and source == "explore":
        for p in props:
            if p.name != violated and exploration.outcome(p.name).status == "violated":
                others.append((p.name, counterexample(model, exploration, p.name)))
    cross = post = None
    if exploration is not None:
        cross = cross_check(model, exploration)
        post = post_compaction_check(model, exploration)
    return CheckReport(
        model, props, exploration, stateful, path, violated, source, cross, tuple(others), post
    )
