"""The explorer on several processes gives the one-process result, byte for byte.

Every array behind a result (states in id order, BFS parents, actions, levels), the counts,
the property outcomes with their witness ids, the worst cases with theirs, and the shortest
counterexample — for several models, with and without symmetry, under every bound, with 2 and
3 jobs, and with workers started by ``spawn`` as well as ``fork``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.my_lock import FlagLock
from turncheck.cli.app import main
from turncheck.models.catalog import build_model
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property
from turncheck.sim.explorer import Exploration, counterexample, explore
from turncheck.sim.explorer_parallel import WorkerFailed, explore_parallel


def _everything(r: Exploration) -> tuple[Any, ...]:
    return (
        r.model, dict(r.params), r.symmetry, r.distinct, r.generated, r.max_depth_seen, r.terminal,
        r.exhausted, r.bound, r.properties, r.worst, list(r.states), list(r.parent), list(r.via),
        tuple(r.levels),
    )  # fmt: skip


TRIGGER = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 4}


@pytest.mark.parametrize(
    ("name", "params"),
    [("trigger", TRIGGER), ("trigger", {**TRIGGER, "locking": "cas"}), ("keys", {}), ("clock", {})],
)
def test_catalog_models_explore_identically_on_two_processes(name: str, params: dict[str, Any]) -> None:
    model = build_model(name, params)
    one = explore(model, max_states=20_000)
    two = explore(model, max_states=20_000, jobs=2)
    assert _everything(two) == _everything(one)


@pytest.mark.parametrize(
    "bounds",
    [{"max_states": 50}, {"max_states": 777}, {"max_depth": 3}, {"max_depth": 0}, {"symmetry": False}],
)
def test_bounds_stop_where_one_process_stops(bounds: dict[str, Any]) -> None:
    model = build_model("trigger", TRIGGER)
    assert _everything(explore(model, jobs=3, **bounds)) == _everything(explore(model, **bounds))


def test_spawned_workers_and_the_shortest_counterexample() -> None:
    model = FlagLock(workers=3)
    one = explore(model)
    two = explore(model, jobs=2, start_method="spawn")
    assert _everything(two) == _everything(one)
    assert counterexample(model, two, "one-compactor") == counterexample(model, one, "one-compactor")
    assert two.outcome("one-compactor").depth == 4


class UnpicklableLock(FlagLock):
    """A model holding a lambda: it cannot be sent to a worker process."""

    def __init__(self) -> None:
        super().__init__(workers=2)
        self.hook = lambda s: s


def test_a_model_that_cannot_reach_the_workers_is_named() -> None:
    with pytest.raises(BadParameter, match="cannot be sent to worker processes"):
        explore(UnpicklableLock(), jobs=2)
    with pytest.raises(BadParameter, match="jobs >= 2"):
        explore_parallel(FlagLock(workers=2), 1)


class BrokenLock(FlagLock):
    """A model whose ``step`` fails deep in the search (in whichever process reaches it)."""

    def step(self, state: Any, action: Any) -> Any:
        nxt = super().step(state, action)
        if sum(1 for p in nxt[1:] if p == 2) >= 2:
            raise RuntimeError("boom")
        return nxt


def test_a_failing_worker_is_reported_not_hung() -> None:
    with pytest.raises((WorkerFailed, RuntimeError), match="boom"):
        explore(BrokenLock(workers=3), jobs=2)


def test_properties_that_are_not_the_models_own_are_judged_here() -> None:
    model = FlagLock(workers=3)
    props = (Property("two-or-fewer", "always", lambda s: sum(1 for p in s[1:] if p == 2) <= 1),)
    one = explore(model, properties=props)
    two = explore(model, properties=props, jobs=2)
    assert _everything(two) == _everything(one)
    assert one.outcome("two-or-fewer").status == "violated"


def test_cli_explore_and_check_take_jobs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["explore", "trigger", "-p", "writers=3", "-p", "max_turns=3", "-p", "turns=4", "--format", "json",
            "--no-reduction"]  # fmt: skip
    assert main(argv) == 0
    one = capsys.readouterr().out
    assert main([*argv, "--jobs", "2"]) == 0
    two = capsys.readouterr().out
    strip = _without_timings
    assert strip(two) == strip(one)
    check = ["check", "trigger", "-p", "writers=3", "-p", "max_turns=3", "-p", "turns=4", "--engine", "explore", "-q",
             "--trace-out", str(tmp_path / "cx.json")]  # fmt: skip
    code_one = main(check)
    out_one = capsys.readouterr().out
    code_two = main([*check, "--jobs", "2"])
    out_two = capsys.readouterr().out
    assert code_two == code_one and strip(out_two) == strip(out_one)


def _without_timings(text: str) -> str:
    import json
    import re

    try:
        obj = json.loads(text)
    except ValueError:
        return re.sub(r"time: .*", "time: T", text)
    for key in ("seconds", "states_per_second"):
        obj.get("explore", obj).pop(key, None)
    return json.dumps(obj, sort_keys=True)
