"""Locking strategies are values: every reader takes the strategy's rule, bounds, choices and colour
from :data:`models.locking.LOCKINGS`, so one entry there is the whole strategy."""

from __future__ import annotations

import dataclasses
import itertools
import typing

import pytest

from turncheck.models.locking import ALWAYS_BOUNDED, LOCKING_NAMES, LOCKINGS, LockingName, by_strength
from turncheck.models.trigger import TriggerModel, TriggerParams, TriggerState
from turncheck.models.trigger_slots import fast_slots
from turncheck.reports.plots.canvas import LOCKING_COLOURS, SERIES_STYLES
from turncheck.scenarios.trigger_gap import TriggerGapParams


def test_the_cli_and_scenario_choices_are_the_tables_names() -> None:
    assert typing.get_args(LockingName) == LOCKING_NAMES
    hints = typing.get_type_hints(TriggerGapParams)
    assert typing.get_args(hints["locking"]) == LOCKING_NAMES


def test_plots_take_each_strategys_own_colour_weakest_first() -> None:
    assert tuple(LOCKING_COLOURS) == by_strength() == ("none", "cas", "trim-to", "mutex", "append-sync")
    for name, value in LOCKINGS.items():
        assert LOCKING_COLOURS[name] == SERIES_STYLES[name].colour == value.colour
        assert SERIES_STYLES[name].marker == value.marker


def test_always_bounded_is_read_off_the_declared_bound() -> None:
    assert ALWAYS_BOUNDED == ("mutex", "append-sync")
    for name, value in LOCKINGS.items():
        assert value.always_bounded == (value.declared_bound(None, 2, 8) is not None), name


@pytest.mark.parametrize("name", LOCKING_NAMES)
def test_gap_zero_peaks_and_compacts_to_max_turns_for_every_strategy(name: str) -> None:
    s = LOCKINGS[name]
    for a, m in itertools.product([1, 3, 8], [1, 4, 16]):
        assert s.worst_case_peak(a, 0, m) == s.post_compaction_peak(a, 0, m) == m
        assert s.peak_formula_at(0) == s.post_formula_at(a, 0, m) == "M"


@pytest.mark.parametrize("name", LOCKING_NAMES)
def test_the_compaction_arithmetic_is_the_strategys_one_rule(name: str) -> None:
    """The model's act, its ``deletes`` and the fast loop all delete ``delete_count`` turns."""
    model = TriggerModel(writers=2, gap=1, max_turns=2, locking=name, turns=0)
    s = LOCKINGS[name]
    for live, count in [(3, 3), (5, 3), (2, 3), (7, 4)]:
        initial = next(iter(model.init_states()))  # the writers' classes as the model encodes them
        state = TriggerState(*initial)._replace(live=live, peak=live, pending=0, count_read=count, fired=True)
        if s.trims_in_append:
            continue  # append-sync never has a compaction in flight
        after = TriggerState(*model.step(tuple(state), ("compact",)))
        assert live - after.live == model.deletes(tuple(state)) == s.delete_count(live, count, 2)
    run = fast_slots(TriggerParams(2, 1, 2, name, 0), [2] * 50)
    assert run.peak == (s.worst_case_peak(2, 1, 2) if s.worst_case_peak(2, 1, 2) is not None else run.peak)


def test_a_strategy_is_one_frozen_value() -> None:
    value = LOCKINGS["mutex"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "other"  # type: ignore[misc]
    assert (value.reads, value.acts, value.locks, value.deletes) == (
        "on-trigger", "after-gap", "appends-until-act", "count-read"
    )  # fmt: skip
