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

from turncheck.cli.options import (
    ExecutorOpt,
    Format,
    JobsOpt,
    QuietOpt,
    ScaleOpt,
    SchedulerOpt,
    format_option,
    out_option,
)
from turncheck.cli.outputs import check_output_dir
from turncheck.cli.progress import progress_for
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter


def sweep_command(
    scenario: Annotated[str, typer.Argument(help="Scenario name (turncheck scenario --list).")],
    grid: Annotated[
        list[str] | None, typer.Option("--grid", "-g", help="Grid axis name=v1,v2,... (repeatable).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Fixed parameter k=v for every cell.")
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Replicates per cell, each with its own seed.")] = 1,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Sweep seed; cell seeds are derived from it.")
    ] = 0,
    scale: ScaleOpt = "quick",
    jobs: JobsOpt = 1,
    executor_kind: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    fmt: Annotated[Format, format_option("table, or json: one object per cell per line.")] = "table",
    out: Annotated[Path | None, out_option("Directory for the result files.")] = None,
) -> None:
    """Run a scenario over a parameter grid (--scale presets fill the parameters that are
    neither a grid axis nor a --param)."""
    from turncheck.reports.tables import table_markdown, write_result
    from turncheck.scenarios.base import get_scenario, split_assignments
    from turncheck.scenarios.presets import preset
    from turncheck.scenarios.sweep import JSON_LINE, sweep
    from turncheck.sim.executor_dask import make_executor

    if seeds < 1:
        raise BadParameter(f"parameter seeds must be >= 1, got {seeds}")
    if out is not None:
        check_output_dir(out)
    fixed = split_assignments(param or [])
    axes = {item.split("=", 1)[0].strip().replace("-", "_") for item in grid or [] if "=" in item}
    defaults = {
        k: v for k, v in preset(get_scenario(scenario), scale).items() if k not in axes and k != "seed"
    }
    fixed = {**defaults, **fixed}
    executor = make_executor(executor_kind, jobs, scheduler)
    progress = progress_for(f"sweep {scenario}", quiet, "cells")
    result = sweep(
        scenario, grid or [], fixed=fixed, seeds=seeds, seed=seed, executor=executor,
        progress=progress,
    )  # fmt: skip
    merged = result.merged()
    lines = result.json_lines()
    if out is not None:
        write_result(merged, out, beside={f"{merged.scenario}.jsonl": "\n".join(lines) + "\n"})
    if fmt == "json":
        for obj in result.json_objects():
            print_json(obj, **JSON_LINE)
    else:
        sys.stdout.write(table_markdown(merged.tables[0]))


def register(app: typer.Typer) -> None:
    app.command("sweep", help="Run a scenario over a parameter grid in worker processes.")(sweep_command)
