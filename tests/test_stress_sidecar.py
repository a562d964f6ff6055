"""The side-car rolls a killed writer's unjournaled library change back (sim/stress/sidecar.py).

A kill is made exact here: the library's write is done as the adapter does it, and the side-car's
commit never happens. Whoever takes the lock next — a read, a writer, the final state — must see
only the journaled turns, whole and in order, and the next turn must not meet the killed one's
events under its id. Each adapter runs on its real library, skipped when that is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.integrations.stores.sidecar import SidecarStore
from turncheck.models.session_store import TURN_KINDS
from turncheck.sim.stress.stores import STORES
from turncheck.sim.stress.strategies import APPEND, COMPACT

LIBRARIES = {"agents-sqlite": "agents", "langgraph-sqlite": "langgraph", "adk-database": "google.adk"}


@pytest.fixture(params=sorted(LIBRARIES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SidecarStore:
    pytest.importorskip(LIBRARIES[request.param], reason=f"{LIBRARIES[request.param]} is not installed")
    opened = STORES[request.param].open(str(tmp_path / "s.db"))
    assert isinstance(opened, SidecarStore)
    opened.setup()
    opened.connect()
    return opened


def _append(store: SidecarStore, op: str) -> int:
    with store.write(op, APPEND, lock=True) as tx:
        turn = tx.append(0, 0)
        tx.commit_header(tx.header())
    return turn


def _whole(store: SidecarStore, turns: list[int]) -> None:
    window = store.read_window()
    assert window.kinds == TURN_KINDS * len(turns)
    assert list(dict.fromkeys(window.turns)) == turns
    assert store.live_ids() == tuple(turns)


def test_a_killed_append_and_a_killed_delete_are_rolled_back(store: SidecarStore) -> None:
    try:
        first, second = _append(store, "a1"), _append(store, "a2")
        store.add_turn(second + 1)  # killed after the library's write, before the journal's commit
        _whole(store, [first, second])
        third = _append(store, "a3")
        _whole(store, [first, second, third])
        store.remove(store.items(), {first})  # a killed delete
        _whole(store, [first, second, third])
        with store.write("c1", COMPACT, lock=True) as tx:
            assert tx.delete_oldest(1) == (first,)
            tx.commit_header(tx.header())
        _whole(store, [second, third])
        assert [e.added for e in store.journal()] == [(first,), (second,), (third,), ()]
        assert [e.removed for e in store.journal()][-1] == (first,)
    finally:
        store.close()
