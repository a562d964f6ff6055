"""The seed 004 testbench at quick scale: every table's structural facts, the PASS lines, and
results that do not depend on how many processes computed them."""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.models.errors import BadParameter
from turncheck.models.projector import compared_strategies
from turncheck.models.summarising import SUMMARISING
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import ScenarioResult, get_scenario, no_progress, parse_params
from turncheck.scenarios.testbench import TestbenchParams, plan_manifolds, run_manifolds
from turncheck.sim.executor import LocalExecutor

TABLES = ("selfcheck", "m0-budgets", "manifolds", "m1-vs-m0", "m1-budgets", "m2-repairs", "m3-budgets",
          "m4-manifolds", "matrix", "cjk-ratio", "strategies")  # fmt: skip
SMALL = {"sessions": "2000", "turns": "10"}
"""Two generator blocks (:data:`models.workload.BLOCK` sessions each): ``jobs=2`` splits them."""


def run_testbench(**assignments: str) -> ScenarioResult:
    scenario = get_scenario("testbench")
    return scenario.run(parse_params(scenario, assignments), no_progress)


@pytest.fixture(scope="module")
def quick() -> ScenarioResult:
    """The quick scale exactly as CI and the demo run it, on two processes."""
    return run_testbench(scale="quick", jobs="2")


def test_every_judgement_line_passes(quick: ScenarioResult) -> None:
    names = [j.name for j in quick.judgements]
    assert names == [
        "generator self-check: three runs of one seed are identical",
        "clean data: M0 orphanRes == pairSplit at every budget",
        "clean data: M1 orphanRes = 0 and pairSplit = 0, overBudget within ±5 % of the seed's 54 061 / 60 000",
        "a second executor with blocks grouped differently gives identical tables",
        "M3 is never over budget",
        "M4 is never over budget and never empty",
        "M5 has zero orphan results and zero over-budget windows",
    ]
    failed = [j.line() for j in quick.judgements if not j.passed]
    assert not failed, failed


def test_tables_have_the_seed_shapes_with_m5(quick: ScenarioResult) -> None:
    assert tuple(t.name for t in quick.tables) == TABLES  # no seed comparison below the seed's scale
    budgets = [400, 1600, 4000, 8000]
    for name in ("m0-budgets", "m1-budgets", "m3-budgets", "matrix"):
        assert quick.table(name).column("budget") == budgets
    for name in ("manifolds", "m2-repairs", "m4-manifolds"):
        assert quick.table(name).column("manifold") == ["p_result 1.00", "p_result 0.97", "p_result 0.90"]
    for t in quick.tables[1:]:
        assert any("M5" in c for c in (*t.columns, *(str(cell) for r in t.rows for cell in r[:2]))), t.name
    assert quick.table("cjk-ratio").column("strategy") == ["M0", "M1", "M3", "M4", "M5"]
    assert quick.table("m1-vs-m0").columns == ("metric", "M0", "M1", "M5")
    assert quick.table("m0-budgets").column("M0 windows") == [4000] * 4
    long = quick.table("strategies")
    assert [(r["budget"], r["strategy"]) for r in long.records()] == [
        (b, s) for b in budgets for s in ("M0", "M1", "M2", "M3", "M4", "M5", "SUM", "SLIDE")
    ]
    for row in long.records():
        assert row["overBudget rate"] == round(row["overBudget"] / row["windows"], 4)  # type: ignore[operator]


def test_generator_self_check_rows_are_identical(quick: ScenarioResult) -> None:
    rows = quick.table("selfcheck").records()
    assert len(rows) == 3
    figures = [{k: r[k] for k in ("events", "calls", "results", "dangling", "checksum")} for r in rows]
    assert figures[0] == figures[1] == figures[2]
    assert figures[0]["dangling"] == figures[0]["calls"] - figures[0]["results"]  # type: ignore[operator]
    assert figures[0]["dangling"] > 0  # type: ignore[operator]  # the self-checked manifold is the seed's p_result 0.97


def test_clean_data_facts(quick: ScenarioResult) -> None:
    for row in quick.table("m0-budgets").records():
        assert row["M0 orphanRes"] == row["M0 pairSplit"] > 0  # type: ignore[operator]
        assert row["M5 orphanRes"] == row["M5 pairSplit"] == 0
    for row in quick.table("matrix").records():
        assert row["M1 overBudget"] * 2 > 4000  # type: ignore[operator]
        assert row["M5 orphanRes"] == row["M5 overBudget"] == row["M5 empty"] == 0
    m1 = {r["metric"]: r["M1"] for r in quick.table("m1-vs-m0").records()}
    assert m1["orphanRes"] == m1["pairSplit"] == 0
    m3 = quick.table("m3-budgets").records()
    empties = [int(str(r["M3 empty"])) for r in m3]
    assert empties == sorted(empties, reverse=True)  # a larger budget never empties more windows
    assert all(r["M5 empty"] == 0 for r in m3)


def test_manifold_facts(quick: ScenarioResult) -> None:
    rows = quick.table("manifolds").records()
    assert rows[0]["dangling"] == 0 and rows[0]["M0 orphanCall"] == 0
    for r in rows[1:]:
        assert 0 < r["M0 orphanCall"] <= r["M1 orphanCall"]  # type: ignore[operator]
        assert r["M5 orphanCall"] == r["M0 orphanCall"]  # M5 never cuts a pair: only the data's
    assert all(r["M1 orphanRes"] == 0 and r["M5 orphanRes"] == 0 for r in rows)
    for r in quick.table("m2-repairs").records():
        assert r["M2 orphanRes"] == 0
        assert r["M2 − M1 overBudget"] >= 0  # type: ignore[operator]
    for r in quick.table("m4-manifolds").records():
        assert r["M4 overBudget"] == r["M4 empty"] == 0
        assert r["M4 orphanRes"] <= r["M4 fallback"]  # type: ignore[operator]
        assert r["M5 overBudget"] == r["M5 empty"] == r["M5 orphanRes"] == 0


def test_cjk_ratio_table(quick: ScenarioResult) -> None:
    rows = {r["strategy"]: r for r in quick.table("cjk-ratio").records()}
    assert rows["M1"]["orphanRes 1.5"] == rows["M1"]["orphanRes 2.5"] == 0
    assert rows["M3"]["empty 2.5"] < rows["M3"]["empty 1.5"]  # type: ignore[operator]
    assert rows["M1"]["overrun 1.5"] > 1 > rows["M0"]["overrun 1.5"]  # type: ignore[operator]


def test_structural_invariants_in_every_aggregate() -> None:
    """Straight from the aggregates (not via the judgement lines): every manifold, budget, ratio."""
    params = TestbenchParams(sessions=1000, turns=30)
    runs = run_manifolds(plan_manifolds(params), LocalExecutor(1), no_progress)
    for run in runs:
        assert set(run.aggregates) == set(run.plan.keys())
        for (ratio, budget, strategy), agg in run.aggregates.items():
            where = (run.plan.p_result, ratio, budget, strategy)
            assert agg.windows == 1000, where
            if strategy in ("M3", "M4", "M5"):
                assert agg["overBudget"] == 0, where
            if strategy in ("M4", "M5"):
                assert agg["empty"] == 0, where
            if strategy in ("M1", "M2", "M3", "M5"):
                assert agg["orphanRes"] == 0, where
            if strategy == "M0" and run.plan.p_result == 1.0:
                assert agg["orphanRes"] == agg["pairSplit"], where
    assert {s for run in runs for (_, _, s) in run.aggregates} == {*compared_strategies(), *SUMMARISING}


def test_jobs_do_not_change_the_result_files(tmp_path: Path) -> None:
    texts = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        write_result(run_testbench(**SMALL, jobs=jobs), out)
        texts.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert texts[0] == texts[1]
    assert "jobs" not in run_testbench(sessions="100", turns="4", p_results="1.0", budgets="4000").params


@pytest.mark.parametrize(
    ("assignments", "needle"),
    [
        ({"p_results": "0.97,0.9"}, "p_results"),
        ({"cjk_ratios": "1.5,1.5"}, "cjk_ratios"),
        ({"jobs": "0"}, "jobs"),
        ({"budgets": "400,-1"}, "budgets"),
        ({"scale": "huge"}, "scale"),
        ({"cjk_share": "1.5"}, "cjk_share"),
        ({"term_chars": "400,20"}, "term_chars"),
    ],
)
def test_bad_parameters_are_named(assignments: dict[str, str], needle: str) -> None:
    with pytest.raises(BadParameter, match=needle):
        parse_params(get_scenario("testbench"), assignments)


def test_cli_runs_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from turncheck.cli.app import main

    argv = ["scenario", "testbench", "--param", "sessions=1000", "--param", "turns=10", "--param", "jobs=2",
            "--out", str(tmp_path), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "PASS  clean data: M0 orphanRes == pairSplit at every budget" in out
    assert "FAIL" not in out
    assert (tmp_path / "testbench.matrix.csv").exists()
    assert main(["scenario", "testbench", "--param", "p_results=0.9", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
