"""The projector protocol model: each strategy's known failure, found exhaustively."""

from __future__ import annotations

from typing import Any

import pytest

from turncheck.models.catalog import build_model
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.invariants import INVARIANTS, invariant, seq_ordered_turns
from turncheck.models.projector_model import CALL, RESULT, ProjectorModel
from turncheck.sim.exploration import reduction_factor
from turncheck.sim.explorer import explore
from turncheck.sim.witness import counterexample

# strategy -> (no-orphan-results, within-budget, non-empty) with fresh call ids: the seed's picture
FRESH_IDS = {
    "M0": ("violated", "holds", "holds"),
    "M1": ("holds", "violated", "holds"),
    "M2": ("holds", "violated", "holds"),
    "M3": ("holds", "holds", "violated"),
    "M4": ("violated", "holds", "holds"),
    "M5": ("holds", "holds", "holds"),
}


@pytest.mark.parametrize("strategy", sorted(FRESH_IDS))
def test_each_strategy_fails_exactly_where_the_seed_says(strategy: str) -> None:
    result = explore(ProjectorModel(strategy=strategy, reuse=False))
    assert result.exhausted
    assert tuple(o.status for o in result.properties) == FRESH_IDS[strategy]


def test_m4_counterexample_is_the_fallback_orphan() -> None:
    model = build_model("projector", {"strategy": "M4"})
    result = explore(model)
    path = counterexample(model, result, "no-orphan-results")
    window = model.window(path.states[-1])
    assert window.report.fallback == 1 and window.report.orphanRes >= 1
    assert len(path.actions) == 4
    assert "fallback to M0" in model.describe_window(path.states[-1])


def test_m5_keeps_every_invariant_even_with_reused_ids() -> None:
    result = explore(build_model("projector", {"strategy": "M5", "events": 7}))
    assert result.exhausted and not result.violations
    assert result.worst_of("orphan_results") == 0 and result.worst_of("over_budget_by") == 0


def test_reused_dangling_call_id_orphans_a_result_under_m1() -> None:
    # a RESULT pairs with the oldest open CALL of its id: reusing a dangling call's id misleads M1
    model = build_model("projector", {"strategy": "M1"})
    result = explore(model)
    path = counterexample(model, result, "no-orphan-results")
    verbs = [a[0] for a in path.actions]
    assert verbs.count("user") == 2 and verbs.count("call") == 2
    assert "(reused id)" in model.format_action(path.states[-3], path.actions[-2])


def test_call_ids_are_interchangeable() -> None:
    model = ProjectorModel(strategy="M0", call_ids=3, events=5)
    reduced, raw = explore(model), explore(model, symmetry=False)
    factor = reduction_factor(reduced, raw)
    assert factor is not None and factor > 1.5
    assert [o.status for o in reduced.properties] == [o.status for o in raw.properties]


def brute_non_empty(model: ProjectorModel, state: Any) -> bool:
    """Independent reading of non-empty: the window may be empty only while no pair-safe suffix fits.

    Pairs as the history does: a RESULT pairs with the oldest still-open CALL of its id. The
    shortest pair-safe suffix is the cheapest one, so only it needs comparing with the budget.
    """
    events = state[0]
    if not model.window(state).empty or not events:
        return True
    pairs: list[tuple[int, int]] = []
    opened: dict[int, list[int]] = {}
    for pos, (kind, cid, _size, _turn) in enumerate(events):
        if kind == CALL:
            opened.setdefault(cid, []).append(pos)
        elif kind == RESULT and opened.get(cid):
            pairs.append((opened[cid].pop(0), pos))
    for start in range(len(events) - 1, -1, -1):
        if all(not (call < start <= result) for call, result in pairs):
            return sum(e[2] for e in events[start:]) > model.budget
    raise AssertionError("position 0 is always pair-safe")


@pytest.mark.parametrize("strategy", ["M3", "M4", "M5"])
def test_non_empty_matches_an_independent_reading(strategy: str) -> None:
    model = ProjectorModel(strategy=strategy)
    result = explore(model)
    prop = next(p for p in model.properties() if p.name == "non-empty")
    for state in result.states:
        assert prop.holds(state) == brute_non_empty(model, state)


@pytest.mark.parametrize(
    "params",
    [
        {"strategy": "M9"},
        {"budget": 0},
        {"events": 0},
        {"call_ids": 0},
        {"result_sizes": ()},
        {"budget": True},
    ],
)
def test_bad_parameters_name_the_parameter(params: dict[str, Any]) -> None:
    with pytest.raises(BadParameter) as info:
        ProjectorModel(**params)
    assert next(iter(params)) in str(info.value)


def test_unknown_parameter_through_the_catalog() -> None:
    with pytest.raises(UnknownName, match="no parameter 'size'"):
        build_model("projector", {"size": "3"})


def test_invariant_registry_names_every_invariant() -> None:
    assert set(INVARIANTS) == {
        "no-orphan-results",
        "bounded-peak-turns",
        "no-uncounted-gap-turn",  # issue 14: every locking strategy is held to the same named invariants
        "within-max-turns",
        "seq-ordered-turns",
        "within-budget",
        "non-empty",
        "exact-coverage",  # issue 27: compaction by summary
    }
    with pytest.raises(UnknownName, match="known: "):
        invariant("no-orphans")


def test_seq_ordered_turns_predicate() -> None:
    from turncheck.models.events import Event, Kind

    def ev(seq: int, turn: int) -> Event:
        return Event(seq=seq, session="s", turn=turn, kind=Kind.USER)

    assert seq_ordered_turns([ev(0, 0), ev(1, 0), ev(2, 1)])
    assert not seq_ordered_turns([ev(1, 0), ev(0, 0)])  # out of seq order in a turn
    assert not seq_ordered_turns([ev(0, 0), ev(2, 1), ev(1, 0)])  # turn 0 split


@pytest.mark.parametrize("strategy", sorted(FRESH_IDS))
def test_results_in_a_later_turn_orphan_every_turn_cutting_strategy_but_m5(strategy: str) -> None:
    """``late=True``: an open call may be answered turns later; M0–M4 then send its RESULT without
    its CALL, M5 never does (docs/your-agent.md, "Results that arrive turns later")."""
    model = ProjectorModel(strategy=strategy, reuse=False, late=True)
    result = explore(model)
    status = {o.name: o.status for o in result.properties}
    assert result.exhausted and status["no-orphan-results"] == ("holds" if strategy == "M5" else "violated")
    if strategy == "M3":
        path = counterexample(model, result, "no-orphan-results")
        assert [a[0] for a in path.actions] == ["user", "call", "user", "result"]
    assert model.params["late"] is True and "late" not in ProjectorModel(strategy=strategy).params
