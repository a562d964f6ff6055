"""The explorer on several processes gives the one-process result, byte for byte.

Every array behind a result (states in id order, BFS parents, actions, levels), the counts,
the property outcomes with their witness ids, the worst cases with theirs, and the shortest
counterexample — for several models, with and without symmetry, under every bound, with 2 and
3 jobs, and with workers started by ``spawn`` as well as ``fork`` (under ``spawn`` the states are
partitioned by :func:`stable_hash`, since ``hash(None)`` differs between interpreters before
Python 3.12). A failing worker stops the search with one line, and no worker outlives a search.
"""

from __future__ import annotations

import multiprocessing
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from examples.my_lock import FlagLock
from turncheck.cli.app import main
from turncheck.models.catalog import build_model
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.explorer import Exploration, counterexample, explore
from turncheck.sim.explorer_parallel import WorkerFailed, explore_parallel
from turncheck.sim.explorer_share import stable_hash


@pytest.fixture(autouse=True)
def no_worker_outlives_a_test() -> Iterator[None]:
    yield
    assert multiprocessing.active_children() == []


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


@pytest.mark.parametrize("jobs", [2, 3, 4])
@pytest.mark.parametrize(
    "bounds",
    [
        {"max_states": 1}, {"max_states": 50}, {"max_states": 777}, {"max_states": 2000}, {"max_depth": 3},
        {"max_depth": 0}, {"max_depth": 9, "max_states": 900}, {"symmetry": False},
    ],
)  # fmt: skip
def test_bounds_stop_where_one_process_stops(bounds: dict[str, Any], jobs: int) -> None:
    model = build_model("trigger", TRIGGER)
    assert _everything(explore(model, jobs=jobs, **bounds)) == _everything(explore(model, **bounds))


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_bounds_and_three_jobs_under_other_start_methods(method: str) -> None:
    model = build_model("trigger", {**TRIGGER, "locking": "mutex"})
    for bounds in ({}, {"max_states": 333}, {"max_depth": 5}):
        one = explore(model, **bounds)
        assert _everything(explore(model, jobs=3, start_method=method, **bounds)) == _everything(one)


def test_spawned_workers_and_the_shortest_counterexample() -> None:
    model = FlagLock(workers=3)
    one = explore(model)
    two = explore(model, jobs=2, start_method="spawn")
    assert _everything(two) == _everything(one)
    assert counterexample(model, two, "one-compactor") == counterexample(model, one, "one-compactor")
    assert two.outcome("one-compactor").depth == 4


class Labelled(NamedTuple):
    """A state with a string, a ``None`` and a nested tuple: values whose hashes a spawned
    interpreter may not share (string hashing is seeded; ``None`` hashes by address before 3.12)."""

    label: str | None
    counts: tuple[int, ...]


class LabelledCounters(ProtocolModel[Labelled, tuple[str, int]]):
    """Counters that step up to a limit, labelled by who moved last (``None`` before anyone)."""

    name = "labelled-counters"
    params: Mapping[str, Any] = {}

    def init_states(self) -> Iterator[Labelled]:
        yield Labelled(None, (0, 0, 0))

    def actions(self, state: Labelled) -> list[tuple[str, int]]:
        return [(f"c{i}", i) for i, n in enumerate(state.counts) if n < 3]

    def step(self, state: Labelled, action: tuple[str, int]) -> Labelled:
        counts = list(state.counts)
        counts[action[1]] += 1
        return Labelled(action[0] if sum(counts) % 3 else None, tuple(counts))

    def canonical(self, state: Labelled) -> Labelled:
        return Labelled(state.label, tuple(sorted(state.counts)))

    def properties(self) -> tuple[Property[Labelled], ...]:
        return (
            Property("below-eight", "always", lambda s: sum(s.counts) < 8),
            Property("labelled-four", "sometimes", lambda s: s.label is not None and sum(s.counts) == 4),
        )

    def metrics(self, state: Labelled) -> Mapping[str, int]:
        return {"spread": max(state.counts) - min(state.counts), "total": sum(state.counts)}


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_states_with_strings_and_none_partition_alike_in_every_worker(method: str) -> None:
    model = LabelledCounters()
    for bounds in ({}, {"max_states": 17}, {"symmetry": False}):
        one = explore(model, **bounds)
        for jobs in (2, 3):
            assert _everything(explore(model, jobs=jobs, start_method=method, **bounds)) == _everything(one)


class ThreeStarts(LabelledCounters):
    """Three initial states (two of one symmetry class): bounds below the initial count."""

    def init_states(self) -> Iterator[Labelled]:
        yield from (Labelled(None, (0, 0, 0)), Labelled("a", (1, 0, 0)), Labelled("a", (0, 0, 1)))


@pytest.mark.parametrize("max_states", [0, 1, 2, 3, 5])
def test_a_bound_below_the_initial_states_stops_where_one_process_stops(max_states: int) -> None:
    model = ThreeStarts()
    for symmetry in (True, False):
        one = explore(model, max_states=max_states, symmetry=symmetry)
        two = explore(model, max_states=max_states, symmetry=symmetry, jobs=2)
        assert _everything(two) == _everything(one)


def test_the_stable_hash_follows_equality() -> None:
    assert stable_hash((1, True, None, "a")) == stable_hash((True, 1, None, "a"))
    assert stable_hash(Labelled(None, (1, 2))) == stable_hash((None, (1, 2)))
    assert stable_hash(frozenset({1, 2})) == stable_hash(frozenset({2, 1}))
    assert stable_hash((1, 2)) != stable_hash((2, 1))


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


FAILS_IN_WORKERS = textwrap.dedent(
    """
    import multiprocessing

    from examples.my_lock import FlagLock


    class FailsInWorkers(FlagLock):
        def step(self, state, action):
            if multiprocessing.parent_process() is not None:
                raise RuntimeError("boom in a worker")
            return super().step(state, action)
    """
)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_an_error_in_a_worker_is_one_worker_failed(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fails_in_workers.py").write_text(FAILS_IN_WORKERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    from fails_in_workers import FailsInWorkers  # type: ignore[import-not-found]

    with pytest.raises(WorkerFailed, match=r"^explorer worker failed: RuntimeError: boom in a worker$"):
        explore(FailsInWorkers(workers=3), jobs=3, start_method=method)


def test_the_cli_reports_a_failing_worker_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fails_in_workers.py").write_text(FAILS_IN_WORKERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["explore", "fails_in_workers:FailsInWorkers", "-p", "workers=3", "--jobs", "2"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err == "turncheck: error: explorer worker failed: RuntimeError: boom in a worker\n"


class DiesInWorkers(FlagLock):
    """A model whose worker process vanishes without a word (as if killed)."""

    def step(self, state: Any, action: Any) -> Any:
        if multiprocessing.parent_process() is not None:
            import os

            os._exit(7)
        return super().step(state, action)


def test_a_worker_that_vanishes_is_reported() -> None:
    with pytest.raises(WorkerFailed, match="ended unexpectedly"):
        explore(DiesInWorkers(workers=3), jobs=2, start_method="fork")


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


@pytest.mark.parametrize("bounds", [{}, {"max_states": 777}, {"max_depth": 3}])
def test_the_last_progress_line_is_the_one_process_line(bounds: dict[str, Any]) -> None:
    model = build_model("trigger", TRIGGER)
    lines: dict[int, list[tuple[int, ...]]] = {1: [], 2: []}
    for jobs in (1, 2):
        explore(model, jobs=jobs, progress=lambda *a, jobs=jobs: lines[jobs].append(a[:4]), **bounds)
    assert lines[2][-1] == lines[1][-1]
    assert [a[0] for a in lines[2]] == sorted(a[0] for a in lines[2])  # generated only grows


def test_a_timeout_stops_the_parallel_search_and_says_so() -> None:
    result = explore(build_model("trigger", {"writers": 4, "turns": 8}), jobs=2, timeout=1e-9)
    assert not result.exhausted and result.bound is not None and result.bound.startswith("timeout")
