"""Per-request replay and shortest reproductions (``integrations.peers.requests``, ``scenarios.peer_repro``)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from test_peers import COST, EVENTS

from turncheck.integrations.peers.requests import replay, request_points
from turncheck.integrations.scenarios.peer_repro import histories, main, reproductions
from turncheck.models.events import Kind, read_jsonl
from turncheck.models.history import History
from turncheck.models.projector import project
from turncheck.models.tokenizer import MissingExtra


def test_requests_are_before_each_assistant_output() -> None:
    # USER 0, CALL 1-2 (parallel), RESULT 3-4, TERM 5, USER 6, CALL 7-8, RESULT 9, TERM 10, USER 11, TERM 12
    assert request_points(EVENTS) == [1, 5, 7, 10, 12]
    assert request_points(EVENTS[:12]) == [1, 5, 7, 10, 12]  # ends on a USER: one request pending
    assert request_points(EVENTS[:4]) == [1]  # a call is still open: no request yet at the end
    assert request_points([]) == [] and request_points(EVENTS[:1]) == [1]


def test_replay_projects_each_request_prefix() -> None:
    windows = replay(EVENTS, 40, "M0", COST)
    assert [len(w.history) for w in windows] == [1, 5, 7, 10, 12]
    for w in windows:
        again = project(History(EVENTS[: len(w.history)], costs=(COST,)), 40, "M0", COST)
        assert (w.start, w.cost, w.report) == (again.start, again.cost, again.report)


def test_llamaindex_incremental_replay_equals_fresh_memory_per_request() -> None:
    if importlib.util.find_spec("llama_index") is None:
        pytest.skip("llama-index-core is not installed")
    for budget in (25, 90):
        incremental = replay(EVENTS, budget, "peer:llamaindex", COST)
        fresh = [project(History(EVENTS[:p], costs=(COST,)), budget, "peer:llamaindex", COST)
                 for p in request_points(EVENTS)]  # fmt: skip
        assert [[e.seq for e in w.events] for w in incremental] == [[e.seq for e in w.events] for w in fresh]


def test_search_space_is_clean_and_ordered_by_length() -> None:
    seen = list(histories(5))
    lengths = [len(h) for h in seen]
    assert lengths == sorted(lengths) and lengths[0] == 1
    for h in seen:
        calls = [e.call_id for e in h if e.kind is Kind.CALL]
        results = [e.call_id for e in h if e.kind is Kind.RESULT]
        assert sorted(calls) == sorted(results)  # clean: every call answered, nothing else
        assert h[-1].kind in (Kind.USER, Kind.RESULT)


def test_shortest_reproduction_of_m0_is_a_cut_call(tmp_path: Path) -> None:
    (repro,) = [r for r in reproductions("M0", 4) if r.broken == "orphanRes"]
    assert (len(repro.events), repro.budget, repro.transcript(), repro.sent) == (
        3,
        8,
        "U2 C(c0)15 R(c0)2",
        (2,),
    )
    assert reproductions("M5", 4) == []


def test_saved_reproduction_replays_with_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("langchain_core") is None:
        pytest.skip("langchain-core is not installed")
    assert main([str(tmp_path), "4", "peer:langchain"]) == 0
    printed = capsys.readouterr().out
    path = tmp_path / "peer-langchain-orphanRes.jsonl"
    assert path.name in printed and len(read_jsonl(path)) == 3
    from turncheck.cli.app import main as cli

    code = cli(
        [
            "project",
            "-H",
            str(path),
            "-b",
            "8",
            "-s",
            "peer:langchain",
            "--cost",
            "estimate",
            "--format",
            "json",
        ]
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and rows[0]["orphanRes"] == 1


def test_a_missing_framework_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "semantic_kernel.contents", None)
    with pytest.raises(MissingExtra, match=r"semantic-kernel .*\(turncheck's frameworks extra\)"):
        project(History(EVENTS, costs=(COST,)), 40, "peer:semantic-kernel", COST)
