"""``turncheck sweep SCENARIO --grid k=v1,v2 …``: a scenario over a parameter grid, in parallel.

Cells run on ``--jobs`` local processes, or on a Dask cluster with ``--executor dask
--scheduler ADDRESS``; the tables are the same either way. Prints the merged table
(``--format table``, Markdown) or one JSON object per cell per line (``--format json``);
``--out DIR`` also writes ``sweep-SCENARIO.json/.md/.sweep.csv`` and ``sweep-SCENARIO.jsonl``.
A progress bar goes to stderr unless ``--quiet``. Every cell is validated before the first one
runs, so a bad parameter is one line naming it, exit 2, and nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from turncheck.cli.progress import ProgressBar
from turncheck.models.errors import BadParameter
from turncheck.reports.tables import table_markdown, write_result
from turncheck.scenarios.sweep import sweep
from turncheck.sim.executor_dask import make_executor

FORMATS = ("table", "json")


def _assignments(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise BadParameter(f"parameter {item!r} must be written k=v")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def sweep_command(
    scenario: Annotated[str, typer.Argument(help="Scenario name (turncheck scenario --list).")],
    grid: Annotated[
        list[str] | None, typer.Option("--grid", "-g", help="Grid axis name=v1,v2,... (repeatable).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Fixed parameter k=v for every cell.")
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Replicates per cell, each with its own seed.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Sweep seed; cell seeds are derived from it.")] = 0,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes.")] = 1,
    executor_kind: Annotated[
        str, typer.Option("--executor", help="local (process pool) or dask (needs --scheduler).")
    ] = "local",
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    fmt: Annotated[
        str, typer.Option("--format", help="table or json (one object per cell per line).")
    ] = "table",
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the result files.")] = None,
) -> None:
    if fmt not in FORMATS:
        raise BadParameter(f"parameter format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if seeds < 1:
        raise BadParameter(f"parameter seeds must be >= 1, got {seeds}")
    executor = make_executor(executor_kind, jobs, scheduler)
    progress = (lambda done, total: None) if quiet else ProgressBar(f"sweep {scenario}", "cells")
    result = sweep(
        scenario, grid or [], fixed=_assignments(param), seeds=seeds, seed=seed, executor=executor,
        progress=progress,
    )  # fmt: skip
    merged = result.merged()
    lines = result.json_lines()
    if out is not None:
        write_result(merged, out)
        (Path(out) / f"{merged.scenario}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if fmt == "json":
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        sys.stdout.write(table_markdown(merged.tables[0]))


def register(app: typer.Typer) -> None:
    app.command("sweep", help="Run a scenario over a parameter grid in worker processes.")(sweep_command)
