"""One check of one model configuration: the explorer and Hypothesis, and a single verdict.

``turncheck check`` asks one question — do the model's invariants hold, and are its goals
reachable? — and this module answers it from whichever engines were asked: the exhaustive
explorer gives a proof over the bounded space (or the shortest counterexample), Hypothesis gives
a shrunk counterexample from random runs. The verdict is ``fail`` when either engine broke an
invariant, ``inconclusive`` when nothing broke but a ``sometimes`` goal was never reached by any
engine (so the run may not have exercised what it claims to check), and ``pass`` otherwise.

A model that knows worst cases in closed form (:meth:`ProtocolModel.closed_forms` — the trigger:
its worst-case peak and its live turns right after a compaction) gets one more line for each,
comparing the explored worst case with the closed form. Every
violated invariant gets its own shortest counterexample (:attr:`CheckReport.counterexamples`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from turncheck.models.errors import UnknownName
from turncheck.models.protocol import Property, ProtocolModel, as_model
from turncheck.sim.exploration import Exploration, RawStates, reduction_factor
from turncheck.sim.explorer import ProgressLine, explore
from turncheck.sim.transcript import params_text, transcript
from turncheck.sim.witness import ConcretePath, counterexample

if TYPE_CHECKING:
    from turncheck.sim.stateful import StatefulOutcome
    from turncheck.sim.timed_runs import TimedOutcome

DEFAULT_DATABASE = Path(".turncheck") / "hypothesis"
"""Hypothesis's example database for ``check`` (:data:`sim.stateful.DEFAULT_DATABASE`, named
here too so that the explorer's path never imports Hypothesis: a ``check --engine explore``
starts without it; tests/test_cli_startup.py keeps the two equal)."""
INFO, DEBUG = 20, 10  # logging.INFO and logging.DEBUG, without importing logging


def _log(level: int, message: str, *args: object) -> None:
    """Log through this module's logger once ``logging`` is imported, else drop the line: no
    handler exists before (``-v`` or an application imports it to add one), so a small check
    does not pay for the import (issue 58 item 7)."""
    module = sys.modules.get("logging")
    if module is not None:
        module.getLogger(__name__).log(level, message, *args)


Engine = Literal["hypothesis", "explore", "both", "simpy"]
ENGINES: tuple[str, ...] = ("hypothesis", "explore", "both", "simpy")
BFS = "shortest, by breadth-first search"
TIMED = "the shortest of the random timed runs, not shrunk"


def select_properties(model: ProtocolModel[Any, Any], names: Sequence[str]) -> tuple[Property[Any], ...]:
    """The model's properties to check: the named invariants (all when none named) and every goal.

    Raises :class:`UnknownName` for a name that is no invariant at all, or one this model does
    not check — naming the invariants it does check.
    """
    props = tuple(model.properties())
    if not names:
        return props
    checked = [p.name for p in props if p.expectation != "sometimes"]
    for name in names:
        if name not in checked:
            # only a name to refuse needs the catalogue (it imports the projector): issue 58 item 7
            from turncheck.models.invariants import INVARIANTS

            if name not in INVARIANTS:
                known = sorted(set(INVARIANTS) | set(checked))
                raise UnknownName(f"unknown invariant {name!r} (known: {', '.join(known)})")
            raise UnknownName(
                f"model {model.name} does not check invariant {name!r} (it checks: {', '.join(checked)})"
            )
    return tuple(p for p in props if p.expectation == "sometimes" or p.name in names)


@dataclass(frozen=True)
class CrossCheck:
    """A model's explored worst case of one metric against its closed form."""

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


def closed_form_checks(model: ProtocolModel[Any, Any], result: Exploration) -> tuple[CrossCheck | None, ...]:
    """Each closed form the model declares (:meth:`ProtocolModel.closed_forms`, in its order)
    held against the explored worst case of its metric; None where the metric was not measured."""
    explored = {w.metric for w in result.worst}
    return tuple(
        CrossCheck(result.worst_of(c.metric), c.bound, c.reachable, result.exhausted, c.formula, c.reading)
        if c.metric in explored
        else None
        for c in as_model(model).closed_forms()
    )


def cross_check(model: ProtocolModel[Any, Any], result: Exploration) -> CrossCheck | None:
    """The model's headline closed form (its first), if any — for the trigger, the worst-case
    peak (:func:`models.locking.worst_case_peak`)."""
    checks = closed_form_checks(model, result)
    return checks[0] if checks else None


def post_compaction_check(model: ProtocolModel[Any, Any], result: Exploration) -> CrossCheck | None:
    """The model's second closed form, if any — for the trigger, the live turns right after a
    compaction (seed 004 §9's reading, :func:`models.locking.post_compaction_peak`)."""
    checks = closed_form_checks(model, result)
    return checks[1] if len(checks) > 1 else None


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
    timed: TimedOutcome | None = None

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
            if self.timed is not None:
                hit = hit or self.timed.goals.get(p.name, False)
            reached[p.name] = hit
        return reached

    @property
    def unchecked(self) -> tuple[str, ...]:
        """The ``eventually`` properties no engine checked (only the explorer can: Hypothesis
        runs are finite, and a finite run never shows that something never happens). The SimPy
        engine's timed runs search them for a fair loop, which refutes one but proves none: the
        verdict line says so."""
        if self.exploration is not None or self.timed is not None:
            return ()
        return tuple(p.name for p in self.properties if p.expectation == "eventually")

    @property
    def verdict(self) -> Literal["pass", "fail", "inconclusive"]:
        if self.violated is not None:
            return "fail"
        if not all(self.goals.values()) or self.unchecked:
            return "inconclusive"
        return "pass"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "inconclusive": 3}[self.verdict]

    def to_json(self, ref: str, trace: Path | None) -> dict[str, Any]:
        """``check --format json``: the verdict and what each engine found; ``ref`` is the model
        as the command line named it, ``trace`` where the counterexample was saved."""
        ex, hy = self.exploration, self.stateful
        out: dict[str, Any] = {
            "model": ref,
            "params": dict(self.model.params),
            "verdict": self.verdict,
            "violated": self.violated,
            "goals": self.goals,
        }
        if self.unchecked:
            out["not_checked"] = list(self.unchecked)
        if ex is not None:
            out["explore"] = {
                "distinct": ex.distinct,
                "transitions": ex.generated,
                "depth": ex.max_depth_seen,
                "exhaustive": ex.exhausted,
                "bound": ex.bound,
                "properties": {o.name: {"status": o.status, "depth": o.depth} for o in ex.properties},
                "worst": {w.metric: w.value for w in ex.worst},
            }
        if hy is not None:
            out["hypothesis"] = {
                "violated": hy.violated,
                "steps": len(hy.actions) if hy.violated else None,
                "goals": hy.goals,
                "stopped": hy.stopped,
            }
        if self.timed is not None:
            out["simpy"] = self.timed.to_json()
        if self.counterexample is not None:
            out["counterexample"] = {
                "source": self.source,
                "steps": len(self.counterexample.actions),
                **({"loop": self.counterexample.loop} if self.counterexample.loop is not None else {}),
                "actions": [list(a) for a in self.counterexample.actions],
                "trace": str(trace) if trace else None,
            }
        if self.cross is not None:
            out["cross_check"] = self.cross.line()
        if self.post is not None:
            out["post_compaction_check"] = self.post.line()
        out["counterexamples"] = {name: len(cx.actions) for name, cx in self.counterexamples}
        return out

    def lines(
        self,
        steps: int,
        seed: int,
        trace: Path | None,
        traces: Mapping[str, Path],
        preamble: Sequence[str] = (),
    ) -> list[str]:
        """``check``'s table output: engines, properties, worst cases, each counterexample as a
        transcript with where it was saved (``trace``; the further ones in ``traces``), the
        verdict. ``preamble`` follows the model line (the determinism check)."""
        model = self.model
        out = [f"model {model.name} ({params_text(model)})", *preamble]
        if self.exploration is not None:
            out += ["explorer:"] + ["  " + line for line in self.exploration.lines()]
        if self.stateful is not None:
            stop = " (stopped at --timeout)" if self.stateful.stopped else ""
            out.append(f"hypothesis: {self.stateful.examples} runs of up to {steps} steps, seed {seed}{stop}")
        if self.timed is not None:
            out.append(f"simpy: {self.timed.covered()}")
        out += self._property_rows()
        if self.exploration is not None and self.exploration.worst:
            worst = ", ".join(f"{w.metric} {w.value} (depth {w.depth})" for w in self.exploration.worst)
            out.append(f"worst case: {worst}")
        out += [c.line() for c in (self.cross, self.post) if c is not None]
        if self.counterexample is not None and self.violated is not None:
            cx = self.counterexample
            title = _title(self.violated, cx, self._how(), self._found(self.violated))
            out += ["", transcript(model, cx.states[0], cx.actions, self.violated, title=title, loop=cx.loop)]
            out += self._clock(self.violated)
            hy = self.stateful
            if self.source == "explore" and hy is not None and hy.violated is not None:
                out.append(f"hypothesis shrank its counterexample ({hy.violated}) to {len(hy.actions)} steps")
            out.append(f"trace saved: {trace}   ({replay_command(trace)})")
            out += self._other_counterexamples(traces)
        ex = self.exploration
        held = [p.name for kind in ("always", "eventually") for p in self.properties
                if ex is not None and p.expectation == kind and ex.outcome(p.name).status == "holds"]  # fmt: skip
        if self.verdict == "fail" and held:  # a bounded search's "holds" is no proof: say so
            bounded = "" if ex is None or ex.exhausted else " (bounded search, not exhaustive)"
            out.append(f"holds{bounded}: {', '.join(held)}")
        if len(self.counterexamples) > 1:
            out.append(f"violated: {', '.join(name for name, _ in self.counterexamples)}")
        live = any(p.expectation == "eventually" for p in self.properties)
        missed = [name for name, hit in self.goals.items() if not hit]
        verdicts = {
            "pass": "PASS: every invariant holds and every goal was reached"
            + (", and every eventually-property holds on every fair run" if live else ""),
            "fail": f"FAIL: {self.violated} is violated",
            "inconclusive": "INCONCLUSIVE: no invariant broke, but "
            + "; ".join(
                ([f"goal(s) never reached: {', '.join(missed)}"] if missed else [])
                + (
                    [
                        f"not checked by this engine: {', '.join(self.unchecked)} (--engine explore checks them)"
                    ]
                    if self.unchecked
                    else []
                )
            ),
        }
        if self.timed is not None and self.verdict == "pass":
            verdicts["pass"] = (
                f"PASS: no property broke in {self.timed.covered()} — a random search, not exhaustive: an "
                "eventually-property fails only on a fair loop a run closed (--engine explore checks every run)"
            )
        out.append(verdicts[self.verdict])
        return out

    def _how(self) -> str:
        return {"explore": BFS, "simpy": TIMED}.get(self.source, "shrunk by Hypothesis")

    def _clock(self, name: str) -> list[str]:
        """The simulated time at which each step of the SimPy engine's run for ``name`` ended."""
        found = self.timed.finding(name) if self.timed is not None and self.source == "simpy" else None
        if found is None:
            return []
        return [
            f"simulated clock (run {found.run}): steps 1–{len(found.times)} end at t = "
            + ", ".join(f"{t:g}" for t in found.times)
        ]

    def _property_rows(self) -> list[str]:
        if self.timed is not None:
            return _aligned([("property", "kind", "simpy"), *self.timed.rows(self.properties)])
        ex, hy = self.exploration, self.stateful
        rows = [("property", "kind", "explorer", "hypothesis")]
        for p in self.properties:
            e = h = "-"
            if ex is not None:
                o = ex.outcome(p.name)
                e = o.reading
                if o.status == "holds" and not ex.exhausted:
                    e += " (bounded)"
            if hy is not None:
                if p.expectation == "eventually":
                    h = "not checked by this engine"
                elif p.expectation == "always":
                    h = (
                        f"violated after {len(hy.actions)} steps (shrunk)"
                        if hy.violated == p.name
                        else "holds"
                        if hy.violated is None
                        else "-"
                    )
                elif hy.violated is None:
                    h = "reached" if hy.goals.get(p.name) else "unreached"
            rows.append((p.name, p.expectation, e, h))
        return _aligned(rows)

    def _found(self, name: str) -> int | None:
        """The explorer's depth for ``name`` (a lasso's prefix over its classes), if it searched."""
        if self.source != "explore" or self.exploration is None:
            return None
        return self.exploration.outcome(name).depth

    def _other_counterexamples(self, traces: Mapping[str, Path]) -> list[str]:
        """The shortest run of every further violated invariant; a run identical to one already
        shown is named, not printed again."""
        out: list[str] = []
        shown: dict[tuple[Any, ...], str] = {}
        if self.counterexample is not None and self.violated is not None:
            shown[tuple(self.counterexample.actions)] = self.violated
        for name, cx in self.others:
            key = tuple(cx.actions)
            if key in shown:
                out.append(f"{name}: broken by the same {len(cx.actions)} steps as {shown[key]}")
                continue
            shown[key] = name
            title = _title(name, cx, self._how(), self._found(name))
            out += ["", transcript(self.model, cx.states[0], cx.actions, name, title=title, loop=cx.loop)]
            out += self._clock(name)
            if name in traces:
                out.append(f"trace saved: {traces[name]}   ({replay_command(traces[name])})")
        return out


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def replay_command(path: Path | None) -> str:
    """The ``turncheck replay`` line that replays the trace at ``path`` as printed: a trace never
    loads code, so a model or a parameter naming user code (``my_trim:fn``, ``messages:…``) is
    named on the command line, as ``replay`` asks."""
    import shlex

    from turncheck.models.user_code import names_code
    from turncheck.sim.protocols import is_user_reference
    from turncheck.sim.trace import load_trace

    words = ["turncheck", "replay", str(path)]
    if path is not None and path.is_file():
        trace = load_trace(path)
        words += ["--model", trace.model] if is_user_reference(trace.model) else []
        words += [
            w
            for k, v in trace.params.items()
            if isinstance(v, str) and names_code(v)
            for w in ("--param", f"{k}={v}")
        ]
    return shlex.join(words)


def _title(name: str, cx: ConcretePath, how: str, found: int | None = None) -> str:
    """A counterexample's heading: an invariant broken in n steps, or a lasso.

    ``found`` is the lasso's prefix as the search found it (the explorer's property row). The run
    replayed on the model's own states may go round the loop first (over symmetry classes or a
    counting abstraction one pass need not close it), so a longer prefix says where its steps
    come from and the two figures never read as a contradiction."""
    if cx.loop is None:
        return f"counterexample: {name} broken in {len(cx.actions)} steps ({how})"
    around = (
        f"a loop of {len(cx.actions) - cx.loop} step(s)"
        if cx.loop < len(cx.actions)
        else "a state that stutters"
    )
    prefix = f"{cx.loop} steps"
    if found is not None and found < cx.loop:
        prefix += f" (the search's {found}, then {cx.loop - found} round the loop on the model's own states)"
    how = "shortest prefix, by breadth-first search" if how == BFS else how
    return f"counterexample: {name} never holds — a lasso of {prefix} to {around}, repeated for ever ({how})"


@dataclass(frozen=True)
class ExploreReport:
    """What ``turncheck explore`` found: the search, the search without symmetry that measures
    the reduction (``raw``, when run) and the closed-form cross-checks."""

    ref: str
    model: ProtocolModel[Any, Any]
    result: Exploration
    raw: RawStates | None
    cross: CrossCheck | None
    post: CrossCheck | None

    def to_json(self) -> dict[str, Any]:
        result, raw = self.result, self.raw
        return {
            "model": self.ref,
            "params": dict(self.model.params),
            "distinct": result.distinct,
            "transitions": result.generated,
            "depth": result.max_depth_seen,
            "terminal": result.terminal,
            "exhaustive": result.exhausted,
            "bound": result.bound,
            "raw_distinct": raw.distinct if raw is not None else None,
            "reduction": reduction_factor(result, raw) if raw is not None else None,
            "properties": {o.name: {"status": o.status, "depth": o.depth} for o in result.properties},
            "worst": {w.metric: {"value": w.value, "depth": w.depth} for w in result.worst},
            "cross_check": self.cross.line() if self.cross is not None else None,
            "post_compaction_check": self.post.line() if self.post is not None else None,
        }

    def lines(self) -> list[str]:
        out = [f"model {self.model.name} ({params_text(self.model)})", *self.result.lines(self.raw)]
        for o in self.result.properties:
            out.append(f"  {o.expectation:<9} {o.name}: {o.reading}")
        for w in self.result.worst:
            out.append(f"  worst {w.metric} = {w.value} (first at depth {w.depth})")
        return out + [c.line() for c in (self.cross, self.post) if c is not None]


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
    first violated one is the one reported. ``simpy`` runs the SimPy engine alone
    (:func:`sim.timed_runs.run_timed`: ``max_examples`` random timed runs of up to ``steps`` steps).
    """
    model = as_model(model)
    props = tuple(properties)
    _log(INFO, "check %s: engine %s, %d properties", model.name, engine, len(props))
    _log(DEBUG, "properties: %s", ", ".join(p.name for p in props))
    if engine == "simpy":
        from turncheck.sim.timed_runs import run_timed  # SimPy: imported for its engine only

        return _timed_report(model, props, run_timed(model, props, runs=max_examples, steps=steps,
                                                     seed=seed or 0, timeout=timeout))  # fmt: skip
    exploration = stateful = None
    started = time.monotonic()
    if engine in ("explore", "both"):
        exploration = explore(
            model,
            properties=props,
            max_states=max_states,
            max_depth=max_depth,
            timeout=timeout,
            progress=progress,
        )
        _log(
            INFO, "explorer: %d distinct states, %d transitions, depth %d, %s in %.2f s",
            exploration.distinct, exploration.generated, exploration.max_depth_seen,
            "exhaustive" if exploration.exhausted else f"bounded ({exploration.bound})", exploration.seconds,
        )  # fmt: skip
    if engine in ("hypothesis", "both"):
        finite = tuple(p for p in props if p.expectation != "eventually")  # a finite run shows no "never"
        from turncheck.sim.stateful import check_stateful  # Hypothesis: imported for its engine only

        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))  # one budget
        stateful = check_stateful(
            model, finite, max_examples=max_examples, steps=steps, seed=seed, database=database, timeout=left
        )
        _log(INFO, "hypothesis: %d examples, violated: %s", stateful.examples, stateful.violated)
    return _merged_report(model, props, exploration, stateful)


def _merged_report(
    model: ProtocolModel[Any, Any],
    props: tuple[Property[Any], ...],
    exploration: Exploration | None,
    stateful: StatefulOutcome | None,
) -> CheckReport:
    """The explorer's and Hypothesis's findings as one report: the explorer's shortest
    counterexample first, else Hypothesis's shrunk run; every further violated invariant's own."""
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
        checks = closed_form_checks(model, exploration)
        cross = checks[0] if checks else None
        post = checks[1] if len(checks) > 1 else None
    return CheckReport(
        model, props, exploration, stateful, path, violated, source, cross, tuple(others), post
    )


def _timed_report(
    model: ProtocolModel[Any, Any], props: tuple[Property[Any], ...], timed: TimedOutcome
) -> CheckReport:
    """The SimPy engine's findings as a report: each broken property with its shortest run."""
    _log(INFO, "simpy: %s; violated: %s", timed.covered(), timed.violated)
    paths = [(f.prop, ConcretePath(f.init, f.actions, f.states, f.loop)) for f in timed.findings]
    first = paths[0] if paths else (None, None)
    return CheckReport(model, props, None, None, first[1], first[0], "simpy" if paths else "", None,
                       tuple(paths[1:]), None, timed)  # fmt: skip
