"""Scenarios ``peers`` and ``token-estimate`` at a tiny scale: shape, determinism, parameters."""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from turncheck.models.errors import BadParameter
from turncheck.reports.results_dir import load_result
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import get_scenario, no_progress, parse_params


@pytest.fixture(scope="module", autouse=True)
def _text_libraries() -> None:
    """tiktoken and Faker (the peers extra), imported when the first test runs, not while every
    xdist worker collects the module."""
    pytest.importorskip("tiktoken")
    pytest.importorskip("faker")


# A fresh process with sockets refused runs the scenario as a user types it, then projects the
# peers' shared history at budget 90: every peer imports and trims offline, and no library even
# tries to connect (litellm would fetch its cost map without our settings). One process, because
# importing the peer libraries costs more than the run. That the same parameters give the same
# bytes in another process is CI's slow tier: tests/test_doc_figures.py reruns the full-scale
# ``scenario peers`` and compares its result's hash with the one README.md records.
OFFLINE_RUN = """
import json, socket, sys, time
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args[1:] or args)[:80])
    raise OSError("network disabled by the test")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
import base64, pickle
from turncheck.cli.app import main
from turncheck.models.cost import EstimateCost
from turncheck.models.history import History
from turncheck.models.projector import project
code = main(json.loads(sys.argv[1]))
h = History(pickle.loads(base64.b64decode(sys.argv[2])))
windows = {p: [e.seq for e in project(h, 90, p, EstimateCost()).events] for p in json.loads(sys.argv[3])}
time.sleep(0.5)  # let a background fetch, if any, try
print(json.dumps({"code": code, "windows": windows, "attempts": attempts}))
"""


def run_offline(out: Path, assignments: tuple[str, ...], peers: list[str]) -> dict:  # type: ignore[type-arg]
    from test_peers import EVENTS

    argv = ["scenario", "peers", "--scale", "full", "-q", "--out", str(out)]
    argv += [a for kv in assignments for a in ("--param", kv)]
    events = base64.b64encode(pickle.dumps(EVENTS)).decode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    done = subprocess.run([sys.executable, "-c", OFFLINE_RUN, json.dumps(argv), events, json.dumps(peers)],
                          cwd=out.parent, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def run(name: str, *assignments: str):  # type: ignore[no-untyped-def]
    scenario = get_scenario(name)
    return scenario.run(parse_params(scenario, list(assignments)), no_progress)


def files(result, out: Path) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """Every file written, but the measured one (peers.timing.json varies run to run by design)."""
    write_result(result, out)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "peers.timing.json"}  # fmt: skip


def test_peers_table_has_every_strategy_per_case_per_request(tmp_path: Path) -> None:
    from turncheck.models.peer import PEERS

    for peer in PEERS.values():  # find, never import: litellm must import offline
        if (reason := peer.missing()) is not None:
            pytest.skip(reason)
    args = (
        "sessions=2",
        "turns=4",
        "manifolds=1.0,0.9",
        "repro_events=3",
        "timing_sizes=20,40",  # the measured file is not compared: its sizes cost only time
        "timing_cap=5",
    )
    from test_peers import EXPECTED

    offline = run_offline(tmp_path / "a", args, sorted(PEERS))
    assert offline["code"] == 0 and offline["attempts"] == []
    assert offline["windows"] == {p: EXPECTED[p][90][0] for p in sorted(PEERS)}
    first = load_result(tmp_path / "a" / "peers.json")
    peers = first.table("peers")
    assert peers.columns[:5] == ("strategy", "case", "p_result", "p_parallel", "requests")
    strategies = {r["strategy"] for r in peers.records()}
    assert strategies == {"M0", "M1", "M2", "M3", "M4", "M5", *PEERS}
    assert len(strategies) == 6 + len(PEERS)
    cases = [r["case"] for r in peers.records() if r["strategy"] == "M0"]
    assert cases == ["p_result 1.00", "p_result 0.90", "parallel 0.30", "oversized turn"]
    # every strategy sees the same requests of a case: more than one per session (per request, not per session)
    for case in cases:
        counts = {r["requests"] for r in peers.records() if r["case"] == case}
        assert len(counts) == 1 and counts.pop() > 2
    by = {(r["strategy"], r["case"]): r for r in peers.records()}
    assert by[("peer:langchain", "p_result 1.00")]["orphanRes"] == by[("M0", "p_result 1.00")]["orphanRes"]
    assert by[("peer:openai-agents", "p_result 0.90")]["orphanCall"] == 0
    libraries = {r["strategy"]: r for r in first.table("libraries").records()}
    assert set(libraries) == set(PEERS) and all(r["version"] != "not installed" for r in libraries.values())
    assert libraries["peer:langgraph"]["counting"].startswith("its own")
    repros = first.table("reproductions").records()
    lc = next(r for r in repros if r["strategy"] == "peer:langchain" and r["property"] == "orphanRes")
    assert (lc["events"], lc["budget"], lc["history"]) == (3, 8, "U2 C(c0)15 R(c0)2")
    oversized = first.table("oversized").records()
    assert len(oversized) == 6 + len(PEERS)
    m3 = next(r for r in oversized if r["strategy"] == "M3")
    assert m3["empty"] == m3["windows"] == 4  # M3 never keeps part of a turn
    assert all(j.passed for j in first.judgements), [j.line() for j in first.judgements]
    from turncheck.reports.findings import findings

    finding = findings([first])[0]  # the README's peers bullet is this sentence (a generated block)
    assert finding.headline.startswith(
        "Popular trimmers"
    ) and "LangChain's `trim_messages` behaves exactly" in (finding.sentence)
    assert (
        "Spring AI's real `MessageWindowChatMemory` (JVM, 1.1) sends an orphaned tool result in"
        in finding.sentence
    )
    assert "2.0's turn-snapped window orphans 0 but sends an empty window in" in finding.sentence
    assert "langchain4j's message and token windows never orphan a result" in finding.sentence
    saved = json.loads((tmp_path / "a" / "peers.json").read_text())
    assert saved["params"]["cost"] == "bpe:o200k_base"
    # the measured file: a result of its own, every strategy timed at each size, said to be measured
    timing = json.loads((tmp_path / "a" / "peers.timing.json").read_text())
    assert timing["scenario"] == "peers-timing"
    table = timing["tables"][0]
    assert table["columns"] == ["strategy", "ms@20ev", "ms@40ev"] and "MEASURED" in table["reading"]
    assert {r[0] for r in table["rows"]} == strategies
    assert all(isinstance(r[1], float) and r[1] > 0 for r in table["rows"])
    # each reproduction's trace, saved beside the result and named in the traces table
    traced = {(r["strategy"], r["violated"]): r for r in first.table("traces").records()}
    assert traced[("peer:litellm", "no-orphan-results")]["history"] == "U C0 R0[1]"
    for r in traced.values():
        assert (tmp_path / "a" / r["file"]).is_file()


def test_peers_with_a_subset_of_strategies_needs_no_peer_library() -> None:
    result = run("peers", "sessions=2", "turns=4", "manifolds=0.97", "strategies=M0,M4", "cost=estimate",
                 "parallel=0", "oversized=false")  # fmt: skip
    rows = result.table("peers").records()
    assert [r["strategy"] for r in rows] == ["M0", "M4"]
    assert result.table("libraries").rows == () and result.table("reproductions").rows == ()
    assert rows[0]["overBudget"] == 0 and rows[1]["empty"] == 0  # M0 fits; M4 falls back, never empty


def test_peers_parameters_are_checked() -> None:
    scenario = get_scenario("peers")
    with pytest.raises(BadParameter, match="strategies"):
        parse_params(scenario, ["strategies=M0,peer:haystack"])
    with pytest.raises(BadParameter, match="manifolds"):
        parse_params(scenario, ["manifolds=1.5"])
    with pytest.raises(BadParameter, match="repro_events"):
        parse_params(scenario, ["repro_events=12"])
    with pytest.raises(BadParameter, match="parallel"):
        parse_params(scenario, ["parallel=2"])
    with pytest.raises(
        BadParameter, match="parameter cost must be one of estimate, utf8-json, bpe:cl100k_base"
    ):
        parse_params(scenario, ["cost=words"])
    with pytest.raises(BadParameter, match="encodings"):
        parse_params(get_scenario("token-estimate"), ["encodings=p50k_base"])


def test_token_estimate_tables_and_determinism(tmp_path: Path) -> None:
    args = ("sessions=3", "turns=8", "strategies=M0,M1,M3")
    first = run("token-estimate", *args)
    rows = first.table("strategies").records()
    # 3 strategies × (2 estimators × 2 encodings + 2 BPE selectors measured by themselves)
    assert len(rows) == 18
    for r in rows:
        if r["selectedBy"] == r["measuredBy"]:
            assert r["overBudget"] == r["overBudgetReal"] and r["overrun"] == r["overrunReal"]
    assert all(r["orphanRes"] == 0 for r in rows if r["strategy"] == "M1")
    errors = {(r["textKind"], r["encoding"]): r for r in first.table("estimator-error").records()}
    assert set(errors) == {(k, e) for k in ("english", "chinese", "json", "json-zh", "all")
                           for e in ("bpe:cl100k_base", "bpe:o200k_base")}  # fmt: skip
    zh = errors[("chinese", "bpe:cl100k_base")]
    assert zh["cjkFlagged"] == zh["events"] > 0
    assert zh["error@2.5 %"] < zh["error@1.5 %"] < 0  # cl100k spends about a token per Chinese char
    english = errors[("english", "bpe:o200k_base")]
    assert english["cjkFlagged"] == 0 and english["estimate@1.5"] == english["estimate@2.5"]
    again = run("token-estimate", *args)
    assert files(first, tmp_path / "a") == files(again, tmp_path / "b")


def test_real_text_is_seeded_and_matches_the_reader_rule() -> None:
    from turncheck.models.events import detect_cjk
    from turncheck.models.workload import WorkloadParams, generate_columns
    from turncheck.scenarios.real_text import cjk_text, dressed_sessions, phrasebook

    cols = generate_columns(WorkloadParams(sessions=2, turns=3, seed=5))
    a = list(dressed_sessions(cols, phrasebook(5), 5))
    b = list(dressed_sessions(cols, phrasebook(5), 5))
    assert a == b and sum(map(len, a)) == len(cols)
    for e in a[0]:
        assert e.chars == len(e.text or "") > 0 and e.cjk == detect_cjk(e.text or "") == cjk_text(
            e.text or ""
        )
        if e.kind.name in ("CALL", "RESULT"):
            json.loads(e.text or "")
    for text in ("\u3000\u2028b1\tx中", "  ", "中 a", "中ab"):
        assert cjk_text(text) == detect_cjk(text)
