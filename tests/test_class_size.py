"""The reduction counted from the classes is the reduction a second search measures.

``turncheck explore`` reports the symmetry reduction as raw states / classes. For the trigger
model the raw count is the sum of the visited classes' sizes (``W! / Π count_c!`` name tuples per
writer multiset), one pass over states the search already holds; a second search without symmetry
(which for the seed's row held more memory than the first) is left to models that cannot size
their classes. The sum must be exactly the count that second search finds, on every locking and
with and without a turn bound; under ``cas`` with unbounded writers the counting abstraction merges
more than names, so no class size is claimed there.
"""

from __future__ import annotations

from typing import Any

import pytest

from turncheck.models.catalog import model_factory
from turncheck.models.protocol import ProtocolModel
from turncheck.sim.exploration import RawStates, counted_raw, reduction_factor
from turncheck.sim.explorer import explore

CONFIGS = [
    {"writers": w, "gap": g, "max_turns": m, "locking": lock, "turns": t}
    for lock in ("none", "mutex", "cas", "append-sync", "trim-to")
    for w, g, m, t in ((2, 1, 2, 0), (3, 2, 3, 0), (3, 1, 2, 2), (4, 2, 2, 1))
]


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: "-".join(map(str, p.values())))
def test_counted_raw_states_equal_the_search_without_symmetry(params: dict[str, Any]) -> None:
    model = model_factory("trigger")(**params)
    reduced = explore(model, properties=())
    counted = counted_raw(model, reduced)
    if model.saturation() is not None:  # cas, unbounded writers: classes merge live-turn counts too
        assert counted is None
        return
    searched = RawStates.searched(explore(model, properties=(), symmetry=False))
    assert searched.exhausted and counted is not None
    assert counted.distinct == searched.distinct
    assert reduction_factor(reduced, counted) == reduction_factor(reduced, searched)
    assert reduced.lines(counted)[-1] == reduced.lines(searched)[-1]


def test_no_count_from_a_bounded_search_or_a_model_without_class_sizes() -> None:
    model = model_factory("trigger")(writers=3, gap=2, max_turns=3)
    assert counted_raw(model, explore(model, properties=(), max_states=10)) is None
    assert counted_raw(model, explore(model, properties=(), symmetry=False)) is None

    keys = model_factory("keys")()
    assert type(keys).class_size is ProtocolModel.class_size
    assert counted_raw(keys, explore(keys, properties=())) is None
