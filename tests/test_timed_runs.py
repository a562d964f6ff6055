"""The SimPy engine (issue 52: the cost-trigger model on every engine): random runs of any protocol
model in simulated time. It finds what the explorer finds on the cost-trigger model — an undercount,
a frame, a stale count's loop, a summarizer over the window — passes the exact estimator, says in
its PASS line that a random search is not exhaustive, reports only fair loops as lassos, gives
byte-identical output for a seed, and times each step with the model's own ``duration``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.cost_trigger import (
    NO_COMPACTION_LOOP,
    REQUEST_FITS,
    SUMMARIZER_FITS,
    CostTriggerModel,
)
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.checking import run_check
from turncheck.sim.timed_runs import run_timed

# variant → the property the SimPy engine must find broken (the explorer's shortest run in steps)
BREAKS: list[tuple[dict[str, Any], str, int]] = [
    ({"estimate": 0.75}, REQUEST_FITS, 12),
    ({"frame": 3}, REQUEST_FITS, 8),
    ({"summarizer": 11}, SUMMARIZER_FITS, 10),
    ({"stale": True, "threshold": 6}, NO_COMPACTION_LOOP, 10),  # a lasso: the loop starts after 10
]


@pytest.mark.parametrize(("params", "broken", "shortest"), BREAKS, ids=lambda v: str(v))
def test_each_variant_the_threads_report_is_found(params: dict[str, Any], broken: str, shortest: int) -> None:
    model = CostTriggerModel(**params)
    report = run_check(model, model.properties(), engine="simpy", max_examples=200, steps=40, seed=0)
    assert report.exit_code == 1 and report.source == "simpy"
    found = dict(report.counterexamples)
    assert broken in found
    cx = found[broken]
    # a random run is no shortest run, but it is a real one: it replays on the model to the break
    assert len(cx.actions) >= shortest
    state = cx.states[0]
    for a in cx.actions:
        state = model.step(state, a)
    assert state == cx.states[-1]
    if broken == NO_COMPACTION_LOOP:
        assert cx.loop is not None and cx.states[cx.loop] == cx.states[-1]


def test_the_exact_estimator_passes_and_says_it_is_not_exhaustive() -> None:
    model = CostTriggerModel(estimate=1.0, frame=0)
    report = run_check(model, model.properties(), engine="simpy", max_examples=100, steps=40, seed=0)
    assert report.verdict == "pass" and report.timed is not None and report.timed.taken > 1000
    verdict = report.lines(40, 0, None, {})[-1]
    assert verdict.startswith("PASS: no property broke in 100 random timed runs of up to 40 steps, seed 0")
    assert "not exhaustive" in verdict and "--engine explore checks every run" in verdict


def test_each_step_takes_the_time_the_model_gives_it() -> None:
    model = CostTriggerModel(estimate=0.75)
    outcome = run_timed(model, model.properties(), runs=50, steps=40, seed=0)
    f = outcome.finding(REQUEST_FITS)
    assert f is not None
    clock, expected = 0.0, []
    for state, action in zip(f.states, f.actions, strict=False):
        clock += model.duration(state, action)
        expected.append(clock)
    assert list(f.times) == pytest.approx(expected)
    # messages arrive one unit apart; the refused request of 11 in a window of 10 takes 1 + 11/10
    assert model.duration(f.states[-2], f.actions[-1]) == pytest.approx(2.1)


class Spin(ProtocolModel[int, tuple[str]]):
    """State 0 may spin for ever or go to 1; ``reaches-one`` asks that 1 is eventually reached.
    Under weak fairness of ``go`` the spinning loop is not a fair run: no lasso."""

    name = "spin"

    def __init__(self, fair: bool) -> None:
        self.fair = fair

    def init_states(self) -> Iterator[int]:
        yield 0

    def actions(self, state: int) -> list[tuple[str]]:
        return [("spin",), ("go",)] if state == 0 else [("stay",)]

    def step(self, state: int, action: tuple[str]) -> int:
        return 1 if action == ("go",) or state == 1 else 0

    def properties(self) -> tuple[Property[int], ...]:
        return (Property("reaches-one", "eventually", lambda s: s == 1),)

    def fair_actions(self) -> tuple[str, ...]:
        return ("go",) if self.fair else ()


def test_a_loop_is_a_lasso_only_when_it_is_fair() -> None:
    unfair = Spin(fair=False)
    report = run_check(unfair, unfair.properties(), engine="simpy", max_examples=20, steps=10, seed=0)
    assert report.violated == "reaches-one" and report.counterexample is not None
    assert report.counterexample.loop is not None and set(report.counterexample.actions) == {("spin",)}
    fair = Spin(fair=True)
    report = run_check(fair, fair.properties(), engine="simpy", max_examples=20, steps=10, seed=0)
    assert report.verdict == "pass"
    assert report.timed is not None and report.timed.rows(fair.properties())[0][2].endswith("(not a proof)")


@pytest.fixture
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("_in_tmp")
def test_the_command_line_is_deterministic_and_replays(cli: Any, tmp_path: Path) -> None:
    args = ("check", "cost-trigger", "--param", "estimate=0.75", "--engine", "simpy", "--format", "json",
            "--seed", "3", "--trace-out", str(tmp_path / "t.json"))  # fmt: skip
    code, first, _ = cli(*args)
    again = cli(*args)[1]
    assert code == 1 and first == again
    obj = json.loads(first)
    assert obj["violated"] == REQUEST_FITS and obj["simpy"]["exhaustive"] is False
    assert obj["counterexample"]["source"] == "simpy"
    code, out, _ = cli("replay", str(tmp_path / "t.json"))
    assert code == 1 and REQUEST_FITS in out
    code, out, _ = cli("check", "cost-trigger", "--param", "estimate=1.0", "--param", "frame=0",
                       "--engine", "simpy", "-q")  # fmt: skip
    assert code == 0 and "a random search, not exhaustive" in out.splitlines()[-1]
    code, out, _ = cli("check", "cost-trigger", "--param", "stale=true", "--param", "threshold=6",
                       "--engine", "simpy", "-q")  # fmt: skip
    assert code == 1 and "no-compaction-loop never holds — a lasso of" in out
    assert "simulated clock (run" in out


class Discharged(ProtocolModel[int, tuple[str]]):
    """0 → 1 → 2, then 2 for ever. ``answered``: whenever the state is 1 it is eventually 1 —
    which holds at once, so the loop at 2 (where it is false) breaks nothing; ``reaches-one-again``
    asks for 1 again after 2 and is broken by the same loop."""

    name = "discharged"

    def init_states(self) -> Iterator[int]:
        yield 0

    def actions(self, state: int) -> list[tuple[str]]:
        return [("next",)]

    def step(self, state: int, action: tuple[str]) -> int:
        return min(state + 1, 2)

    def properties(self) -> tuple[Property[int], ...]:
        return (
            Property.leads_to("answered", lambda s: s == 1, lambda s: s == 1),
            Property.leads_to("reaches-one-again", lambda s: s == 2, lambda s: s == 1),
        )


def test_an_obligation_met_where_it_arose_is_no_lasso() -> None:
    model = Discharged()
    outcome = run_timed(model, model.properties(), runs=3, steps=10, seed=0)
    assert [f.prop for f in outcome.findings] == ["reaches-one-again"]
    assert outcome.findings[0].loop == 2 and outcome.findings[0].times == (1.0, 2.0, 3.0)
