"""Sweeps: deterministic cell seeds, byte-identical results for any --jobs, bad input refused."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.scenarios.sweep import cell_seed, parse_grid, sweep
from turncheck.sim.executor import LocalExecutor

SMALL = {"iterations": "400"}
GRID = ["writers=1,4", "gap=0,2", "max_turns=8,16"]


def test_cell_seeds_depend_only_on_the_cell() -> None:
    a = cell_seed(7, "trigger-gap", {"writers": "4", "gap": "2"}, 0)
    assert a == cell_seed(7, "trigger-gap", {"gap": "2", "writers": "4"}, 0)
    assert a != cell_seed(7, "trigger-gap", {"writers": "4", "gap": "2"}, 1)
    assert a != cell_seed(8, "trigger-gap", {"writers": "4", "gap": "2"}, 0)
    small = sweep("trigger-gap", ["writers=4", "gap=2"], fixed=SMALL)
    big = sweep("trigger-gap", ["writers=1,4", "gap=0,2"], fixed=SMALL)
    cell = next(
        r
        for c, r in zip(big.cells, big.results, strict=True)
        if c.grid == {**SMALL, "writers": "4", "gap": "2"}
    )
    assert small.results[0] == cell


def test_jobs_do_not_change_the_result_files(cli: Any, tmp_path: Path) -> None:
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        grid = [arg for g in GRID for arg in ("--grid", g)]
        argv = ["sweep", "trigger-gap", *grid, "--param", "iterations=300", "--seeds", "2",
                "--jobs", str(jobs), "--quiet", "--format", "json", "--out", str(out)]  # fmt: skip
        assert cli(*argv).code == 0
        outs.append(out)
    files = sorted(p.name for p in outs[0].iterdir())
    assert files == sorted(p.name for p in outs[1].iterdir())
    assert "sweep-trigger-gap.jsonl" in files and "sweep-trigger-gap.json" in files
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    lines = (outs[0] / "sweep-trigger-gap.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 2 * 2 * 2  # every cell × 2 seeds, one object per line
    first = json.loads(lines[0])
    assert first["grid"] == {"writers": 1, "gap": 0, "max_turns": 8} and first["replicate"] == 0
    assert first["tables"]["peaks"][0]["peak"] == 8


def test_executor_keeps_cell_order() -> None:
    assert LocalExecutor(2).map(abs, [-3, 2, -1, 0]) == [3, 2, 1, 0]
    with pytest.raises(BadParameter, match="jobs"):
        LocalExecutor(0)


def _fails_on_two(x: int) -> int:
    if x == 2:
        raise ValueError("task 2 fails")
    time.sleep(0.5)
    return x


def test_a_stopped_pool_leaves_no_wakeup_pipe_for_the_exit_hook() -> None:
    """A failing task (as Ctrl-C) ends the pool: its manager thread has closed its wake-up pipe
    before ``map`` raises, so the interpreter's exit hook never writes to a pipe being closed
    (the race printed ``OSError: [Errno 9]`` under "turncheck: interrupted")."""
    from concurrent.futures import process

    before = set(process._threads_wakeups)
    with pytest.raises(ValueError, match="task 2 fails"):
        LocalExecutor(2).map(_fails_on_two, [2, 3, 4, 5, 6])
    left = {t: w for t, w in process._threads_wakeups.items() if t not in before}
    assert all(not t.is_alive() and w._closed for t, w in left.items()), left


def test_merged_table_has_grid_columns() -> None:
    res = sweep("trigger-gap", ["writers=1,8", "gap=0,5"], fixed=SMALL, seed=3)
    t = res.merged().tables[0]
    assert t.columns[:4] == ("writers", "gap", "replicate", "cell_seed")
    peaks = {(r["writers"], r["gap"]): r["peak"] for r in t.records()}
    assert peaks[(1, 0)] == 8 and peaks[(8, 0)] == 8 and peaks[(8, 5)] > peaks[(1, 5)]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["sweep", "no-such-scenario", "--grid", "gap=1"], "no-such-scenario"),
        (["sweep", "trigger-gap", "--grid", "colour=1,2"], "colour"),
        (["sweep", "trigger-gap", "--grid", "gap=0,-1"], "gap"),
        (["sweep", "trigger-gap", "--grid", "writers=0,4"], "writers"),
        (["sweep", "trigger-gap", "--grid", "writers=1,four"], "writers"),
        (["sweep", "trigger-gap", "--grid", "gap=1", "--param", "iterations=many"], "iterations"),
        (["sweep", "locking", "--grid", "writers=1,x"], "writers"),
        (["sweep", "trigger-gap", "--grid", "gap"], "gap"),
        (["sweep", "trigger-gap"], "grid"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    args: list[str], needle: str, tmp_path: Path, cli: Any
) -> None:
    out = tmp_path / "out"
    code, _, err_text = cli(*args, "--quiet", "--out", str(out))
    assert code == 2
    err = err_text.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not out.exists()


def test_parse_grid_and_api_errors() -> None:
    assert parse_grid(["writers=1,4", "max-turns=8"]) == {"writers": ["1", "4"], "max_turns": ["8"]}
    with pytest.raises(BadParameter, match="twice"):
        parse_grid(["gap=1", "gap=2"])
    with pytest.raises(UnknownName, match="nosuch"):
        sweep("nosuch", ["gap=1"])
    with pytest.raises(BadParameter, match="seed"):
        sweep("trigger-gap", ["seed=1,2"])


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_sweep_under_spawn_and_forkserver_equals_one_process(method: str) -> None:
    """Every task function imports on its own, so worker processes that start a fresh
    interpreter (the default on macOS, Windows and Python 3.14 on Linux) give the same cells."""
    grid = ["writers=1,4", "gap=0,2"]
    one = sweep("trigger-gap", grid, fixed={"iterations": "300"}, seed=3)
    pool = sweep("trigger-gap", grid, fixed={"iterations": "300"}, seed=3,
                 executor=LocalExecutor(2, start_method=method))  # fmt: skip
    assert pool.results == one.results and pool.json_lines() == one.json_lines()


def test_testbench_under_spawn_equals_one_process() -> None:
    from turncheck.scenarios.base import get_scenario, no_progress, parse_params
    from turncheck.scenarios.testbench import plan_manifolds, run_manifolds

    scenario = get_scenario("testbench")
    params = parse_params(scenario, {"sessions": "300", "turns": "8", "p_results": "1.0", "budgets": "400"})
    plans = plan_manifolds(params)
    one = run_manifolds(plans, LocalExecutor(1), no_progress)
    spawned = run_manifolds(plans, LocalExecutor(2, start_method="spawn"), no_progress)
    assert [r.aggregates for r in spawned] == [r.aggregates for r in one]


def test_unknown_start_method_is_refused() -> None:
    with pytest.raises(BadParameter, match="start method"):
        LocalExecutor(2, start_method="threads")
