"""The exhaustive explorer: shortest counterexamples, symmetry, bounds, worst cases, graph export."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.my_lock import FlagLock
from turncheck.models.catalog import build_model
from turncheck.models.locking import LOCKINGS, turns_to_reach_worst_case, worst_case_peak
from turncheck.models.protocol import Property
from turncheck.sim.checking import cross_check
from turncheck.sim.exploration import reduction_factor
from turncheck.sim.explorer import StderrProgress, _worst, explore
from turncheck.sim.state_graph import write_dot, write_graphml
from turncheck.sim.witness import counterexample, metric_witness


def all_runs(model: Any, length: int) -> Iterator[list[Any]]:
    """Every action sequence of exactly ``length`` steps from the (single) initial state."""
    (s0,) = list(model.init_states())
    frontier: list[tuple[Any, list[Any]]] = [(s0, [])]
    for _ in range(length):
        frontier = [(model.step(s, a), run + [a]) for s, run in frontier for a in model.actions(s)]
    for s, run in frontier:
        yield run + [s]


def test_flag_lock_violation_is_found_at_the_shortest_depth() -> None:
    model = FlagLock(workers=3)
    result = explore(model)
    assert result.exhausted and result.bound is None
    outcome = result.outcome("one-compactor")
    assert outcome.status == "violated" and outcome.depth == 4
    assert result.outcome("someone-compacts").status == "reached"
    assert result.worst_of("compacting") == 3
    # no run of fewer than 4 steps breaks the invariant
    prop = model.properties()[0]
    for length in range(4):
        assert all(prop.holds(run[-1]) for run in all_runs(model, length))


def test_atomic_flag_lock_holds_and_is_exhaustive() -> None:
    result = explore(FlagLock(workers=3, atomic=True))
    assert result.exhausted
    assert result.outcome("one-compactor").status == "holds"
    assert result.worst_of("compacting") == 1
    assert result.completeness().startswith("exhaustive")


def test_counterexample_replays_without_canonical_renaming() -> None:
    model = build_model("trigger", {"locking": "none", "gap": 1})
    result = explore(model)
    path = counterexample(model, result, "bounded-peak-turns")
    assert len(path.actions) == result.outcome("bounded-peak-turns").depth == 4
    state = list(model.init_states())[path.init]
    for action in path.actions:
        assert action in model.actions(state)
        state = model.step(state, action)
    bounded = next(p for p in model.properties() if p.name == "bounded-peak-turns")
    assert not bounded.holds(state)
    # and nothing shorter breaks it
    for length in range(4):
        assert all(bounded.holds(run[-1]) for run in all_runs(model, length))


def test_symmetry_reduction_factor_is_measured() -> None:
    model = FlagLock(workers=3)
    reduced, raw = explore(model), explore(model, symmetry=False)
    assert (reduced.distinct, raw.distinct) == (15, 45)
    assert reduction_factor(reduced, raw) == pytest.approx(3.0)
    # the verdicts do not depend on the reduction
    assert [o.status for o in reduced.properties] == [o.status for o in raw.properties]
    assert reduced.worst_of("compacting") == raw.worst_of("compacting")
    bounded = explore(model, symmetry=False, max_states=20)
    assert reduction_factor(reduced, bounded) is None
    assert reduced.lines(bounded)[-1] == (
        "symmetry: ≥ 20 raw states (raw search bounded, not exhaustive: stopped by max states (20)) / "
        "15 classes = reduction ≥ ×1.33"
    )
    partial = explore(model, max_states=5)
    assert partial.lines(raw)[-1] == "symmetry: reduction n/a (the search up to symmetry was bounded)"


@pytest.mark.parametrize(
    ("bounds", "stopped_by"),
    [({"max_states": 50}, "max states"), ({"max_depth": 3}, "max depth"), ({"timeout": 1e-9}, "timeout")],
)
def test_bounds_say_bounded_not_exhaustive(bounds: dict[str, Any], stopped_by: str) -> None:
    model = build_model("trigger", {"writers": 3, "gap": 2, "max_turns": 3, "turns": 3})
    result = explore(model, **bounds)
    assert not result.exhausted
    assert result.completeness().startswith("bounded, not exhaustive")
    assert stopped_by in result.completeness()
    if "max_states" in bounds:
        assert result.distinct == 50
    if "max_depth" in bounds:
        assert result.max_depth_seen == 3


def test_depth_bound_is_not_reported_when_nothing_lies_beyond_it() -> None:
    full = explore(FlagLock(workers=2, atomic=True))
    again = explore(FlagLock(workers=2, atomic=True), max_depth=full.max_depth_seen + 1)
    assert again.exhausted and again.distinct == full.distinct


class UnreachableGoal(FlagLock):
    """A lock whose goal (two workers compacting at once) the atomic version never reaches."""

    def properties(self) -> tuple[Property[Any], ...]:
        return (
            *super().properties(),
            Property("both-compact", "sometimes", lambda s: sum(1 for p in s[1:] if p == 2) >= 2),
        )


def test_unreachable_goal_is_reported_unreached() -> None:
    result = explore(UnreachableGoal(workers=2, atomic=True))
    assert result.outcome("both-compact").status == "unreached"
    assert result.unreached and not result.violations


def test_worst_case_witness_reaches_the_worst_value() -> None:
    model = build_model("trigger", {"writers": 2, "gap": 1, "max_turns": 2, "turns": 4})
    result = explore(model)
    path = metric_witness(model, result, "peak_turns")
    assert model.metrics(path.states[-1])["peak_turns"] == result.worst_of("peak_turns")


@pytest.mark.parametrize(
    ("writers", "gap", "max_turns", "locking"),
    [
        (a, g, m, lk)
        for a, g, m, lk in itertools.product(
            [1, 2], [0, 1, 2], [1, 2], ["none", "mutex", "append-sync", "trim-to"]
        )
    ]
    + [(1, 1, 2, "cas"), (2, 1, 1, "cas")],
)
def test_explored_worst_case_peak_equals_the_closed_form(
    writers: int, gap: int, max_turns: int, locking: str
) -> None:
    """Cross-validation: the explorer's exact worst case is the bound documented in models.locking."""
    needed = turns_to_reach_worst_case(writers, gap, max_turns, locking)
    params: Mapping[str, Any] = {
        "writers": writers,
        "gap": gap,
        "max_turns": max_turns,
        "locking": locking,
        "turns": needed if needed is not None else 5,
    }
    model = build_model("trigger", params)
    result = explore(model, max_states=200_000)
    assert result.exhausted
    bound = worst_case_peak(writers, gap, max_turns, locking)
    cross = cross_check(model, result)
    assert cross is not None and cross.agrees, cross.line()
    if bound is None:  # cas starving: with enough turns the peak keeps growing
        assert result.worst_of("peak_turns") > max_turns + 1
    else:
        assert result.worst_of("peak_turns") == bound
        assert "agrees" in cross.line()


def test_graph_is_built_after_the_search_and_exports(tmp_path: Any) -> None:
    model = FlagLock(workers=2)
    tree = explore(model)
    g = tree.graph()
    assert g.number_of_nodes() == tree.distinct
    assert g.number_of_edges() == tree.distinct - 1  # BFS tree without recorded edges
    full = explore(model, record_edges=True)
    fg = full.graph()
    assert fg.number_of_edges() >= fg.number_of_nodes() - 1
    assert len(full.edges or []) == full.generated
    write_dot(fg, str(tmp_path / "g.dot"))
    write_graphml(fg, str(tmp_path / "g.graphml"))
    text = (tmp_path / "g.dot").read_text()
    assert text.startswith('digraph "flag-lock"') and "->" in text
    back = nx.read_graphml(tmp_path / "g.graphml")
    assert back.number_of_nodes() == fg.number_of_nodes()


def test_progress_line_reports_generated_distinct_queue_depth_rate() -> None:
    out = io.StringIO()
    progress = StderrProgress(out, after=0.0)
    explore(
        build_model("trigger", {"writers": 2, "gap": 1, "turns": 3}), progress=progress, progress_every=0.0
    )
    progress.finish()
    text = out.getvalue()
    for word in ("generated", "distinct", "queued", "depth", "states/s"):
        assert word in text
    assert text.endswith("\n")


def test_recorded_transitions_are_each_expanded_states_successors_even_cut_short() -> None:
    """Row by row the transitions are the canonical successors in their order; under a state
    bound the last expanded state's row stops where the bound did."""
    model = build_model("trigger", {"writers": 3, "gap": 1, "max_turns": 2, "turns": 3})
    for bound in (None, 200):
        result = explore(model, record_edges=True, max_states=bound)
        assert result.edges is not None
        rows: dict[int, list[tuple[Any, Any]]] = {}
        for src, dst, action in result.edges:
            rows.setdefault(src, []).append((action, result.states[dst]))
        out = list(result.edges.out)
        assert out == [len(rows.get(v, [])) for v in range(len(out))] and sum(out) == len(result.edges)
        for v, row in rows.items():
            full = [(a, model.canonical(s)) for a, s in model.successors(result.states[v])]
            assert row == (full[: len(row)] if bound and v == len(out) - 1 else full)
    assert result.bound is not None and 0 < out[-1] and len(result.edges) < result.generated


@pytest.mark.parametrize("locking", ["none", "mutex", "cas", "append-sync", "trim-to"])
def test_a_structural_symmetry_skips_canonical_and_searches_the_same_states(locking: str) -> None:
    """The trigger keeps its writers as a multiset, so its successors are canonical already (but
    under cas's counting abstraction, which unbounded writers turn on): the search that skips
    ``canonical`` is the search that calls it."""
    from turncheck.models.trigger import TriggerModel

    class Asking(TriggerModel):
        def successors_are_canonical(self) -> bool:
            return False

    params = {"writers": 3, "gap": 1, "max_turns": 2, "locking": locking, "turns": 3}
    model = TriggerModel(**params)
    assert model.successors_are_canonical()
    assert TriggerModel(**{**params, "turns": 0}).successors_are_canonical() is (locking != "cas")
    fast, slow = explore(model), explore(Asking(**params))
    assert all(model.canonical(s) == s for s in fast.states)
    assert (fast.states, list(fast.parent), fast.via, fast.generated) == (
        slow.states, list(slow.parent), slow.via, slow.generated,
    )  # fmt: skip
    assert fast.properties == slow.properties and dict(fast.lassos) == dict(slow.lassos)


class _Counter:
    """A user's model (no base class) without symmetry."""

    def init_states(self) -> list[int]:
        return [0]

    def actions(self, state: int) -> list[str]:
        return ["inc"] if state < 3 else []

    def step(self, state: int, action: str) -> int:
        return state + 1

    def properties(self) -> tuple[Property[int], ...]:
        return ()


class _Renamed(_Counter):
    def canonical(self, state: int) -> int:
        return state


def test_only_a_model_without_a_canonical_of_its_own_says_its_successors_are_canonical() -> None:
    from turncheck.models.protocol import ProtocolModel, as_model

    class Unrenamed(FlagLock):
        canonical = ProtocolModel.canonical

    assert not FlagLock(workers=2).successors_are_canonical()  # it renames its workers
    assert Unrenamed(workers=2).successors_are_canonical()
    assert as_model(_Counter()).successors_are_canonical()
    assert not as_model(_Renamed()).successors_are_canonical()
    assert explore(_Renamed()).distinct == explore(_Counter()).distinct == 4


def test_the_search_leaves_the_collector_on_its_objects_old_and_a_callers_frozen_ones_frozen() -> None:
    import gc

    model = build_model("trigger", {"writers": 3, "gap": 1, "max_turns": 2, "turns": 3})
    assert gc.isenabled()
    result = explore(model)
    assert gc.isenabled() and gc.get_count()[0] < 100
    assert gc.is_tracked(result.states[-1])  # no collection has scanned (and untracked) it yet
    gc.disable()
    explore(model)
    assert not gc.isenabled()
    gc.enable()
    kept = [object() for _ in range(3)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        explore(model)
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
    del kept


@settings(max_examples=25, deadline=None)
@given(
    writers=st.integers(1, 4),
    gap=st.integers(0, 3),
    max_turns=st.integers(1, 4),
    locking=st.sampled_from(sorted(LOCKINGS)),
    turns=st.integers(0, 3),
)
def test_metric_columns_are_the_metrics_and_give_the_same_worst_cases(
    writers: int, gap: int, max_turns: int, locking: str, turns: int
) -> None:
    """The trigger's metric columns (the explorer's fast worst cases) against its ``metrics`` on
    every state of a generated configuration's search, and the worst cases read both ways."""
    model = build_model(
        "trigger",
        {"writers": writers, "gap": gap, "max_turns": max_turns, "locking": locking, "turns": turns},
    )
    result = explore(model, max_states=3_000)
    columns = model.metric_columns()
    assert columns is not None
    for s in result.states:
        assert {k: f(s) for k, f in columns.items()} == model.metrics(s)
    by_loop = _worst(_WithoutColumns(model), result.states, result.depth_of)
    assert by_loop == result.worst == _worst(model, result.states, result.depth_of)
    assert _worst(model, [], result.depth_of) == _worst(_WithoutColumns(model), [], result.depth_of) == ()


class _WithoutColumns:
    """A model that declares no metric columns: the explorer's loop over ``metrics``."""

    def __init__(self, inner: Any) -> None:
        self.metrics = inner.metrics

    def metric_columns(self) -> None:
        return None
