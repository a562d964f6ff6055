"""The Dask executor gives, cell by cell, the tables of the local process pool.

A ``distributed.LocalCluster`` is started inside the test process, listening on TCP loopback
(one worker, one thread, no dashboard); the whole module is skipped, with the reason, when the optional extra
``dask[distributed]`` is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from turncheck.models.errors import BadParameter
from turncheck.scenarios.base import get_scenario, no_progress, parse_params
from turncheck.scenarios.sweep import sweep
from turncheck.sim.executor import LocalExecutor
from turncheck.sim.executor_dask import DaskExecutor, DaskUnavailable, make_executor

distributed = pytest.importorskip("distributed", reason="optional extra dask[distributed] is not installed")

GRID = ["writers=1,4,8", "gap=0,5"]
FIXED = {"iterations": "400"}


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        protocol="tcp://",
        host="127.0.0.1",
    ) as cluster:
        yield cluster.scheduler_address


def test_sweep_tables_equal_the_local_pool_cell_by_cell(scheduler: str) -> None:
    local = sweep("trigger-gap", GRID, fixed=FIXED, seeds=2, seed=7, executor=LocalExecutor(2))
    seen: list[tuple[int, int]] = []
    dask = sweep("trigger-gap", GRID, fixed=FIXED, seeds=2, seed=7, executor=DaskExecutor(scheduler),
                 progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert dask.cells == local.cells
    for cell, a, b in zip(local.cells, local.results, dask.results, strict=True):
        assert a == b, cell
    assert dask.merged() == local.merged()
    assert dask.json_lines() == local.json_lines()
    assert seen[0] == (0, 12) and seen[-1] == (12, 12)


def test_testbench_on_dask_equals_local(scheduler: str) -> None:
    scenario = get_scenario("testbench")
    common = {"sessions": "2000", "turns": "20", "p_results": "1.0,0.9", "budgets": "400,4000"}
    on_dask = scenario.run(parse_params(scenario, {**common, "scheduler": scheduler}), no_progress)
    local = scenario.run(parse_params(scenario, {**common, "jobs": "2"}), no_progress)
    assert on_dask.tables == local.tables
    assert on_dask.params == local.params
    assert all(j.passed for j in on_dask.judgements), [j.line() for j in on_dask.judgements]
    assert on_dask.judgements[3].name == "a Dask cluster and --jobs 1 give identical tables"


def test_cli_sweep_with_dask_prints_the_local_table(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from turncheck.cli.app import main

    args = ["sweep", "trigger-gap", "--grid", "writers=1,8", "--grid", "gap=0,5", "--param", "iterations=400",
            "--quiet"]  # fmt: skip
    assert main([*args, "--jobs", "2"]) == 0
    local = capsys.readouterr().out
    assert main([*args, "--executor", "dask", "--scheduler", scheduler, "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out == local
    assert (tmp_path / "sweep-trigger-gap.jsonl").exists()


def test_bad_executor_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from turncheck.cli.app import main

    base = ["sweep", "trigger-gap", "--grid", "writers=1", "--param", "iterations=400", "--quiet"]
    for extra, needle in (
        (["--executor", "dask"], "--scheduler"),
        (["--executor", "ray"], "--executor"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--executor dask"),
    ):
        assert main([*base, *extra, "--out", str(tmp_path / "x")]) == 2
        assert needle in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(BadParameter):
        make_executor("dask")
    assert make_executor("local", jobs=3) == LocalExecutor(3)


def test_unreachable_scheduler_is_reported() -> None:
    executor = DaskExecutor("tcp://127.0.0.1:9", timeout=1.0)
    with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        executor.map(abs, [1, 2], no_progress)
