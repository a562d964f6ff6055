"""Sweeps and the testbench on a real Dask cluster give the local process pool's results, byte
for byte.

The cluster is real: the fixture starts ``dask scheduler`` and two ``dask worker`` processes as
subprocesses listening on 127.0.0.1 (each worker a separate process that imports turncheck on its
own, as on a real cluster), waits for both workers, and stops all three at the end. The whole
module is skipped, with the reason, when the optional extra ``dask[distributed]`` is not
installed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
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


def _dask_command() -> list[str]:
    """``python -m dask`` under this interpreter, so the workers import the turncheck under test (a
    ``dask`` script found on PATH may run another Python, with another turncheck installed)."""
    import importlib.util

    if importlib.util.find_spec("dask.__main__") is not None:
        return [sys.executable, "-m", "dask"]
    found = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    if found is None:
        pytest.skip("the dask command line (from dask[distributed]) is not on PATH")
    return [found]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two worker processes on 127.0.0.1, started in an empty folder (so the
    workers import the installed turncheck, never a checkout's folders)."""
    home = tmp_path_factory.mktemp("dask-cluster")
    address_file = home / "scheduler.json"
    dask = _dask_command()
    quiet = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "cwd": home,
        "start_new_session": True,
    }
    procs = [
        subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                          "--scheduler-file", str(address_file)], **quiet)  # type: ignore[call-overload]
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not address_file.exists():
            pytest.fail("dask scheduler did not start within 60 s")
        for i in range(2):
            procs.append(
                subprocess.Popen([*dask, "worker", "--scheduler-file", str(address_file), "--nworkers", "1",
                                  "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                                  "--local-directory", str(home / f"w{i}")], **quiet)  # type: ignore[call-overload]
            )  # fmt: skip
        with distributed.Client(scheduler_file=str(address_file), timeout=30) as client:
            client.wait_for_workers(2, timeout=90)
            address = client.scheduler.address
            worker_pids = set(client.run(os.getpid).values())
        assert len(worker_pids) == 2 and os.getpid() not in worker_pids  # two real processes
        yield str(address)
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


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
    assert (
        on_dask.judgements[3].name
        == "a second executor with blocks grouped differently gives identical tables"
    )


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


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_cli_result_files_on_dask_are_byte_identical_to_jobs_1(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's cluster recipe, through the command line: sweep and testbench."""
    from turncheck.cli.app import main

    sweep_args = ["sweep", "trigger-gap", "--grid", "writers=1,8", "--grid", "gap=0,5", "--param",
                  "iterations=400", "--seeds", "2", "--quiet"]  # fmt: skip
    assert main([*sweep_args, "--jobs", "1", "-o", str(tmp_path / "sweep-local")]) == 0
    assert (
        main(
            [*sweep_args, "--executor", "dask", "--scheduler", scheduler, "-o", str(tmp_path / "sweep-dask")]
        )
        == 0
    )
    assert _files(tmp_path / "sweep-dask") == _files(tmp_path / "sweep-local")
    bench_args = ["scenario", "testbench", "--scale", "tiny", "--quiet"]
    assert main([*bench_args, "--jobs", "1", "-o", str(tmp_path / "tb-local")]) == 0
    assert (
        main([*bench_args, "--executor", "dask", "--scheduler", scheduler, "-o", str(tmp_path / "tb-dask")])
        == 0
    )
    assert _files(tmp_path / "tb-dask") == _files(tmp_path / "tb-local")
    capsys.readouterr()


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
