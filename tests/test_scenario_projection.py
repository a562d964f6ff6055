"""Scenario ``projection`` (seed 000): narrow → commit → reopen → widen, and the budget table."""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.models.cost import Utf8JsonCost
from turncheck.models.errors import BadParameter
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import get_scenario, parse_params
from turncheck.scenarios.projection import BUDGET_FIXTURE, ORCHID, ProjectionParams, default_budgets, run


def quiet(done: int, total: int) -> None:
    assert 0 < done <= total


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return run(ProjectionParams(), quiet)


def test_stages_reproduce_the_seed(result) -> None:  # type: ignore[no-untyped-def]
    stages = {r["stage"]: r for r in result.table("stages").records()}
    narrow, commit, wide, refused = (
        stages[s]
        for s in ("narrow window", "commit fixed answer", "reopen and widen", "mandatory input over budget")
    )
    assert (narrow["request bytes"], narrow["turns in request"], narrow["ORCHID-17 in request"]) == (
        264,
        1,
        False,
    )
    assert narrow["turns on disk"] == 2 and narrow["log unchanged by projection"] is True
    assert commit["turns on disk"] == 3
    assert (wide["request bytes"], wide["turns in request"], wide["ORCHID-17 in request"]) == (480, 3, True)
    assert (
        str(refused["request bytes"]).startswith("refused") and refused["log unchanged by projection"] is True
    )
    assert refused["log bytes"] == wide["log bytes"] == commit["log bytes"]
    assert all(j.passed for j in result.judgements), [j.line() for j in result.judgements if not j.passed]


def test_budget_table_is_the_seeds(result) -> None:  # type: ignore[no-untyped-def]
    rows = [r[:4] for r in result.table("budget_table").rows]
    assert rows == [(139, 0, 2, None), (140, 0, 2, 140), (235, 1, 1, 235), (308, 2, 0, 308), (408, 2, 0, 308)]
    assert result.table("budget_table").rows[0][4] == "refused: mandatory input needs 140 B"


def test_fixture_mixes_the_seeds_material() -> None:
    text = (
        BUDGET_FIXTURE.system + "".join(q + a for q, a in BUDGET_FIXTURE.turns) + BUDGET_FIXTURE.questions[0]
    )
    assert '"' in text and "\n" in text and any("\u4e00" <= c <= "\u9fff" for c in text)
    assert any(ord(c) > 0xFFFF for c in text) and any(c.isascii() and c.isalpha() for c in text)
    cost = Utf8JsonCost(
        profile="java",
        model="agnes-3.0-flash",
        system=BUDGET_FIXTURE.system,
        current=BUDGET_FIXTURE.questions[0],
    )
    assert default_budgets(BUDGET_FIXTURE, cost) == (139, 140, 235, 308, 408)
    assert "ORCHID-17" in ORCHID.turns[0][0] and "Java 8" in ORCHID.turns[1][0]


def test_strategies_over_the_store(result) -> None:  # type: ignore[no-untyped-def]
    rows = {r["strategy"]: r for r in result.table("strategies").records()}
    assert set(rows) == {"M0", "M1", "M2", "M3", "M4", "M5", "REQ"}
    assert all(r["log unchanged"] for r in rows.values())
    assert rows["M0"]["answer without its question"] and not rows["REQ"]["answer without its question"]
    assert rows["M1"]["over budget"] and not rows["M3"]["over budget"]
    assert rows["REQ"]["kept turns"] == rows["M3"]["kept turns"] == 1


def test_other_profile() -> None:
    res = run(ProjectionParams(profile="python"), quiet)
    assert all(j.passed for j in res.judgements)


def test_explicit_budgets_and_bad_parameters() -> None:
    scenario = get_scenario("projection")
    res = run(parse_params(scenario, ["budgets=100,235,1000"]), quiet)
    assert [r[:2] for r in res.table("budget_table").rows] == [(100, 0), (235, 1), (1000, 2)]
    with pytest.raises(BadParameter, match="wide"):
        parse_params(scenario, ["wide=0"])
    with pytest.raises(BadParameter, match="budgets"):
        parse_params(scenario, ["budgets=10,-1"])
    with pytest.raises(BadParameter, match="profile"):
        parse_params(scenario, ["profile=ruby"])


def test_deterministic_result_files(tmp_path: Path, result) -> None:  # type: ignore[no-untyped-def]
    write_result(result, tmp_path / "a")
    write_result(run(ProjectionParams(), quiet), tmp_path / "b")
    names = sorted(f.name for f in (tmp_path / "a").iterdir())
    assert any(n.endswith(".json") for n in names) and any(n.endswith(".csv") for n in names)
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_committed_summary_stands_for_what_it_covers(tmp_path: Path) -> None:
    """A log with a SUMMARY (compaction by summary inside turn 3, covering turns 1–2) is
    accepted by the store, read back after reopening, and every strategy projects the prompt it
    implies: never a covered event beside the summary, the code name carried by the summary."""
    from turncheck.models.events import Event, Kind
    from turncheck.models.store import TurnLog
    from turncheck.models.summaries import exact_coverage, sent_beside
    from turncheck.scenarios.projection import CODE_NAME, commit_turns, exchange, request

    text = f"Code name {CODE_NAME}; Java 8, no upgrades."
    params = ProjectionParams()
    path = tmp_path / "summary.log"
    with TurnLog.open(path, create=True, fsync="never") as log:
        commit_turns(log, ORCHID, range(2))
        question, answer = ORCHID.turns[2]
        user = exchange(ORCHID.session, 2, log.next_seq, question, answer)[0]
        summary = Event(
            user.seq + 1, ORCHID.session, 2, Kind.SUMMARY, text=text, chars=len(text), covers=(0, 3)
        )
        term = Event(user.seq + 2, ORCHID.session, 2, Kind.TERM, text=answer, chars=len(answer))
        log.commit([user, summary, term], turn_id="orchid/2")
    with TurnLog.open(path, fsync="never") as log:
        events = list(log.history(ORCHID.session).events)
        assert [e.kind for e in events][-3:] == [Kind.USER, Kind.SUMMARY, Kind.TERM]
        assert events[-2].covers == (0, 3) and exact_coverage(events)
        for strategy in ("REQ", "M0", "M3", "M5"):
            window, payload, _ = request(log, ORCHID, ORCHID.questions[1], 4096, strategy, params)
            assert [e.seq for e in window.events] == [4, 5, 6], strategy
            assert sent_beside(window.events) == 0 and CODE_NAME in payload
