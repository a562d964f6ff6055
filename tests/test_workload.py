"""The workload generator: seeded, block-deterministic, seed 004's manifold; and bulk histories."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models.columns import build_histories, columns_from_events
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.projector import compared_strategies, project
from turncheck.models.workload import (
    BLOCK,
    WorkloadParams,
    column_events,
    generate_block,
    generate_columns,
    generate_events,
)
from turncheck.testing import soup

SMALL = WorkloadParams(sessions=40, turns=12, p_result=0.9, p_parallel=0.25)


def test_same_seed_same_bytes_different_seed_differs():
    a, b = generate_columns(SMALL), generate_columns(SMALL)
    assert a.checksum() == b.checksum()
    assert generate_columns(WorkloadParams(sessions=40, turns=12, seed=7)).checksum() != a.checksum()


def test_blocks_are_independent_of_how_they_are_split():
    p = WorkloadParams(sessions=2 * BLOCK + 5, turns=3)
    whole = generate_columns(p)
    parts = [generate_block(p, i) for i in range(3)]
    assert np.array_equal(np.concatenate([x.kind for x in parts]), whole.kind)
    assert np.array_equal(np.concatenate([x.chars for x in parts]), whole.chars)


def test_turn_grammar_and_manifold_shape():
    cols = generate_columns(WorkloadParams(sessions=300, turns=50, p_result=0.97))
    events = list(column_events(cols))
    counts = cols.counts()
    # seed 004: ~1.8 calls per turn, p_result 0.97 leaves ~3 % dangling
    assert 1.7 < counts["calls"] / (300 * 50) < 1.9
    assert 0.02 < counts["dangling"] / counts["calls"] < 0.04
    turn = None
    for e in events:
        if (e.session, e.turn) != turn:
            assert e.kind is Kind.USER
            turn = (e.session, e.turn)
    assert [e.seq for e in events] == list(range(len(events)))
    r = cols.chars[cols.kind == Kind.RESULT]
    assert r.min() >= 200 and r.max() <= 3000


def test_events_and_columns_agree():
    assert list(generate_events(SMALL)) == list(column_events(generate_columns(SMALL)))


def test_bad_parameters_name_themselves():
    with pytest.raises(BadParameter, match="p_result"):
        WorkloadParams(p_result=1.5)
    with pytest.raises(BadParameter, match="sessions"):
        WorkloadParams(sessions=0)
    with pytest.raises(BadParameter, match="result_chars"):
        WorkloadParams(result_chars=(10, 5))


def _same_index(a: History, b: History) -> None:
    names = [n for n in History.__slots__ if not n.startswith("_") and n != "events"]
    for n in names:
        assert list(getattr(a, n)) == list(getattr(b, n)), n


def test_bulk_histories_equal_appended_histories_on_generated_logs():
    cost = EstimateCost()
    bulk = list(build_histories(generate_columns(SMALL), [cost], block=7))
    by: dict[str, list] = {}
    for e in generate_events(SMALL):
        by.setdefault(e.session, []).append(e)
    assert len(bulk) == len(by)
    for built, events in zip(bulk, by.values(), strict=True):
        appended = History(events, [cost])
        _same_index(appended, built)
        assert appended.prefix(cost) == built.prefix(cost)
        assert list(built.events) == events


@settings(max_examples=150, deadline=None)
@given(events=soup(), budget=st.integers(1, 300))
def test_bulk_histories_equal_appended_histories_on_any_log(events, budget):
    cost = EstimateCost()
    cols = columns_from_events(events)
    built = list(build_histories(cols, [cost]))
    appended = History(list(column_events(cols)), [cost])
    if not events:
        assert built == []
        return
    (built,) = built
    _same_index(appended, built)
    for s in compared_strategies():
        assert project(built, budget, s, cost).report == project(appended, budget, s, cost).report


def test_a_block_without_any_tool_call_generates():
    cols = generate_columns(WorkloadParams(sessions=2, turns=2, max_calls=0))
    assert cols.counts()["calls"] == 0 and len(cols) == 8
    cols = generate_columns(WorkloadParams(sessions=1, turns=1, p_no_calls=1.0))
    assert set(cols.kind.tolist()) == {int(Kind.USER), int(Kind.TERM)}


def test_late_results_move_to_the_next_turn_after_its_user_and_nothing_else_changes():
    """p_late_result moves written results (never drops or adds one) behind the next turn's USER;
    at 0 the workload is the one it always was."""
    from turncheck.models.lint import lint_events

    base = WorkloadParams(sessions=30, turns=8, p_result=0.9, p_parallel=0.25)
    late = WorkloadParams(sessions=30, turns=8, p_result=0.9, p_parallel=0.25, p_late_result=0.3)
    a, b = generate_columns(base), generate_columns(late)
    assert (
        generate_columns(WorkloadParams(**{**base.__dict__, "p_late_result": 0.0})).checksum() == a.checksum()
    )
    assert a.counts() == b.counts() and np.array_equal(a.offsets, b.offsets)
    events = list(column_events(b))
    report = lint_events(list(enumerate(events, start=1)))
    assert report.counts["result-in-later-turn"] > 0
    assert {k for k, n in report.counts.items() if n} <= {"result-in-later-turn", "dangling-call"}
    turn = None
    for i, e in enumerate(events):
        if (e.session, e.turn) != turn:
            assert e.kind is Kind.USER
            turn = (e.session, e.turn)
        if e.kind is Kind.RESULT:
            call = next(c for c in events[:i] if c.session == e.session and c.call_id == e.call_id)
            assert e.turn == call.turn or (
                e.turn == call.turn + 1 and events[i - 1].kind in (Kind.USER, Kind.RESULT)
            )
