"""``turncheck stress --store langgraph-sqlite``: LangGraph's own ``SqliteSaver`` as the session store.

Real writer processes and a real compactor process share one SQLite file of LangGraph
checkpoints; the stress checker's verdicts must be the locking model's: ``none`` breaks the
bound, ``mutex`` and ``append-sync`` hold theirs, and no acknowledged turn is ever lost. The
file is then opened again with ``SqliteSaver`` and its latest checkpoint must hold exactly the
live turns the run's journal leaves.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.session_store import TURN_KINDS

pytest.importorskip(
    "langgraph.checkpoint.sqlite", reason="langgraph-checkpoint-sqlite (frameworks extra) is not installed"
)


def _stress(capsys: pytest.CaptureFixture[str], db: Path, locking: str) -> tuple[int, dict]:
    code = main(["stress", "--store", "langgraph-sqlite", "--db", str(db), "--locking", locking, "--writers", "3",
                 "--gap-ms", "50", "--max-turns", "8", "--seconds", "1.5", "--format", "json", "--quiet"])  # fmt: skip
    return code, json.loads(capsys.readouterr().out)


def _latest_thread(db: Path) -> list[tuple[int, str]]:
    """The live thread as a fresh reader of the file sees it, through LangGraph's public API."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from turncheck.integrations.stores.langgraph_sqlite import THREAD_ID, message_graph, message_tag

    with SqliteSaver.from_conn_string(str(db)) as saver:
        state = message_graph(saver).get_state({"configurable": {"thread_id": THREAD_ID}})
        return [message_tag(m) for m in state.values["messages"]]


@pytest.mark.parametrize(("locking", "bound"), [("mutex", 9), ("append-sync", 8)])
def test_locking_holds_its_bound_on_langgraph_checkpoints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, locking: str, bound: int
) -> None:
    db = tmp_path / "lg.db"
    code, out = _stress(capsys, db, locking)
    assert code == 0 and out["verdict"] == "ok" and out["store"] == "langgraph-sqlite", (
        out["violations"],
        out["stuck"],
        out["peak"],
        out["appends"],
    )
    assert out["peak"] <= bound and out["lost"] == 0 and out["over_deleted"] == 0 and out["appends"] > 0
    with sqlite3.connect(db) as conn:  # the saver's own tables hold the thread, one checkpoint per change
        checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    assert checkpoints >= out["appends"]
    tags = _latest_thread(db)
    turns = list(dict.fromkeys(t for t, _ in tags))
    assert len(turns) <= bound and "".join(k for _, k in tags) == TURN_KINDS * len(turns)


def test_no_locking_breaks_the_bound_and_loses_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out = _stress(capsys, tmp_path / "lg.db", "none")
    assert code == 1 and out["verdict"] == "violated"
    assert {v["invariant"] for v in out["violations"]} == {"bounded-peak-turns"}
    assert out["peak"] > 9 and out["lost"] == 0


def test_turn_messages_carry_their_turn() -> None:
    from turncheck.integrations.stores.langgraph_sqlite import message_tag, turn_messages

    assert [message_tag(m) for m in turn_messages(7)] == [(7, k) for k in TURN_KINDS]


def test_an_unopenable_checkpoint_file_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["stress", "--store", "langgraph-sqlite", "--db", "/nonexistent/dir/lg.db", "--seconds", "0.2", "-q"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("turncheck: error: store langgraph-sqlite") and err.count("\n") == 1
