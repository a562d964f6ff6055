"""The trigger model: its closed-form worst case, its drivers, its properties and parameters."""

from __future__ import annotations

import itertools
import random

import pytest

from turncheck.models.catalog import MODELS, build_model
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.invariants import BOUNDED_PEAK_TURNS
from turncheck.models.locking import LOCKING_NAMES, LOCKINGS, turns_to_reach_worst_case, worst_case_peak
from turncheck.models.trigger import WRITERS_FINISH, TriggerModel, TriggerParams, TriggerState
from turncheck.models.trigger_slots import drive_slots, fast_slots


def explore_peak(model: TriggerModel, limit: int = 500_000) -> int:
    """Breadth-first over every interleaving (canonical states); the largest live count seen."""
    (s0,) = model.init_states()
    seen = {model.canonical(s0)}
    frontier = [s0]
    best = 0
    while frontier:
        nxt = []
        for s in frontier:
            best = max(best, s[0])
            for a in model.actions(s):
                t = model.step(s, a)
                c = model.canonical(t)
                if c not in seen:
                    seen.add(c)
                    nxt.append(t)
        assert len(seen) < limit, "configuration too large for a unit test"
        frontier = nxt
    return best


GRID = list(itertools.product([1, 2, 3], [0, 1, 2], [1, 2, 3], LOCKING_NAMES))


@pytest.mark.parametrize("writers,gap,max_turns,strategy", GRID)
def test_explored_worst_case_equals_closed_form(
    writers: int, gap: int, max_turns: int, strategy: str
) -> None:
    closed = worst_case_peak(writers, gap, max_turns, strategy)
    need = turns_to_reach_worst_case(writers, gap, max_turns, strategy)
    if closed is None:  # cas starving: more turns, higher peak — no finite worst case
        assert explore_peak(TriggerModel(writers, gap, max_turns, strategy, turns=3)) < explore_peak(
            TriggerModel(writers, gap, max_turns, strategy, turns=4)
        )
        return
    assert need is not None
    assert explore_peak(TriggerModel(writers, gap, max_turns, strategy, turns=need)) == closed
    if need > 1:  # the witness length is tight
        assert explore_peak(TriggerModel(writers, gap, max_turns, strategy, turns=need - 1)) < closed
    if strategy != "cas":  # unbounded turns: still finite, and the same worst case
        assert explore_peak(TriggerModel(writers, gap, max_turns, strategy, turns=0)) == closed


def test_seed_row_closed_forms() -> None:
    # the derivation in models.locking, on the seed's eight rows
    rows = [(8, 1, 0), (8, 1, 2), (8, 1, 5), (8, 4, 5), (8, 8, 0), (8, 8, 2), (8, 8, 5), (16, 8, 5)]
    assert [worst_case_peak(a, g, m, "none") for m, a, g in rows] == [8, 11, 17, 47, 8, 39, 87, 95]
    assert [worst_case_peak(a, g, m, "trim-to") for m, a, g in rows] == [8, 10, 13, 28, 8, 24, 48, 56]


@pytest.mark.parametrize("strategy", LOCKING_NAMES)
def test_fast_path_equals_model_steps(strategy: str) -> None:
    rng = random.Random(7)
    for _ in range(30):
        writers, gap, max_turns = rng.randint(1, 4), rng.randint(0, 4), rng.randint(1, 6)
        arrivals = [rng.randint(0, writers) for _ in range(rng.randint(0, 120))]
        model = TriggerModel(writers, gap, max_turns, strategy, turns=0)
        assert fast_slots(model.config, arrivals) == drive_slots(model, arrivals)


@pytest.mark.parametrize("strategy", LOCKING_NAMES)
def test_random_runs_never_exceed_closed_form(strategy: str) -> None:
    rng = random.Random(11)
    for writers, gap, max_turns in itertools.product([1, 2, 4], [0, 1, 3], [2, 5]):
        closed = worst_case_peak(writers, gap, max_turns, strategy)
        arrivals = [rng.randint(0, writers) for _ in range(3000)]
        run = fast_slots(TriggerParams(writers, gap, max_turns, strategy, 0), arrivals)
        if closed is not None:
            assert run.peak <= closed
        bound = LOCKINGS[strategy].declared_bound(writers, gap, max_turns)
        if bound is not None:
            assert run.peak <= bound


def test_none_exceeds_max_turns_when_turns_arrive_in_the_gap() -> None:
    for writers, gap, max_turns in itertools.product([1, 2, 8], [1, 2, 5], [2, 8]):
        # fill to maxTurns, then one slot with every writer appending: the read, then the gap
        arrivals = [writers] * (max_turns // writers + 2 * gap + 2)
        run = fast_slots(TriggerParams(writers, gap, max_turns, "none", 0), arrivals)
        assert run.peak > max_turns


def test_properties_and_metrics() -> None:
    model = TriggerModel(writers=2, gap=1, max_turns=2, locking="none", turns=4)
    props = {p.name: p for p in model.properties()}
    assert props[BOUNDED_PEAK_TURNS].expectation == "always"
    (s,) = model.init_states()
    for action in [("append", 0), ("append", 1), ("tick",), ("append", 0)]:
        assert action in model.actions(s)
        s = model.step(s, action)
    assert TriggerState(*s).live == 3 and not props[BOUNDED_PEAK_TURNS].holds(s)
    assert model.metrics(s) == {"live_turns": 3, "peak_turns": 3, "post_compaction_turns": 0}
    assert props["trigger-fires"].holds(s)
    # writers are interchangeable: renaming them changes the names, not the multiset
    named = TriggerState(*s)
    assert named.names is not None and len(set(named.names)) == 2
    renamed = named._replace(names=tuple(reversed(named.names)))
    assert renamed != named and model.canonical(renamed) == model.canonical(s)
    assert TriggerState(*model.canonical(s)).names is None
    assert model.records(s) == [(1, 2), (0, 3)] and model.records(model.canonical(s)) == [(0, 3), (1, 2)]
    text = model.format_action(s, ("tick",))
    assert "compaction due" in text
    after = model.step(s, ("tick",))
    assert model.actions(after) == [("compact",)]
    assert "deletes 1 oldest" in model.format_action(after, ("compact",))


def test_mutex_and_append_sync_hold_their_declared_bounds() -> None:
    for strategy in ("mutex", "append-sync", "trim-to"):
        model = TriggerModel(writers=2, gap=2, max_turns=2, locking=strategy, turns=4)
        assert explore_peak(model) <= model.bound


def test_catalog_builds_from_strings_and_refuses_bad_input() -> None:
    assert "trigger" in MODELS
    m = build_model("trigger", {"writers": "3", "gap": "0", "max-turns": "4", "locking": "mutex"})
    assert m.params["writers"] == 3 and m.params["max_turns"] == 4 and m.params["locking"] == "mutex"
    # writers are unbounded by default (the starvation under cas and the seed's row need it):
    # so the default has no writers-finish property
    default = build_model("trigger")
    assert default.params["turns"] == 0 and WRITERS_FINISH not in {p.name for p in default.properties()}
    with pytest.raises(BadParameter, match="gap"):
        build_model("trigger", {"gap": "-1"})
    with pytest.raises(BadParameter, match="writers"):
        build_model("trigger", {"writers": "0"})
    with pytest.raises(BadParameter, match="writers"):
        build_model("trigger", {"writers": "two"})
    with pytest.raises(BadParameter, match="locking"):
        build_model("trigger", {"locking": "spin"})
    with pytest.raises(UnknownName, match="colour"):
        build_model("trigger", {"colour": "red"})
    with pytest.raises(UnknownName, match="nosuch"):
        build_model("nosuch")


def test_a_writer_count_whose_one_state_no_limit_could_cut_short_is_refused() -> None:
    from turncheck.cli.app import main
    from turncheck.models.trigger_state import MAX_WRITERS, TriggerParams

    assert TriggerParams(writers=MAX_WRITERS).writers == MAX_WRITERS
    with pytest.raises(BadParameter, match=f"writers must be <= {MAX_WRITERS}"):
        TriggerParams(writers=MAX_WRITERS + 1)
    # the largest model takes its limits: one level of 1024 successors, then the state limit
    args = ["explore", "trigger", "-p", f"writers={MAX_WRITERS}", "--max-states", "1000", "--no-reduction"]
    assert main([*args, "--timeout", "60"]) == 0
