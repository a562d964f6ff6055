"""``turncheck scenario NAME --param k=v …``: run one named experiment and write its results.

Parameters are parsed and validated before anything runs; a bad one is one line naming it,
exit 2, and nothing written. Results go to ``--out`` (``NAME.json``, ``NAME.md``, one CSV per
table); the Markdown tables and the judgement lines are printed (``--format json`` prints the
result file instead). Exit 1 when a judgement line fails.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import typer

from turncheck.cli.options import ExecutorOpt, FormatOpt, JobsOpt, OutDirOpt, QuietOpt, ScaleOpt, SchedulerOpt
from turncheck.cli.outputs import check_output_dir
from turncheck.cli.progress import progress_for
from turncheck.models.errors import BadParameter
from turncheck.scenarios.base import (
    Scenario,
    get_scenario,
    param_fields,
    parse_params,
    scenarios,
    split_assignments,
)
from turncheck.scenarios.presets import preset

DEFAULT_OUT = Path("turncheck-out")


def describe_scenarios() -> str:
    """Every scenario with its summary and parameters (defaults), for ``--list``."""
    lines = []
    for name, sc in scenarios().items():
        lines.append(f"{name}: {sc.summary}")
        defaults = sc.params_type()
        for field in dataclasses.fields(sc.params_type):
            hint = param_fields(sc.params_type)[field.name]
            shown = getattr(hint, "__name__", str(hint)).replace("typing.", "")
            lines.append(f"    {field.name} = {getattr(defaults, field.name)!r}  ({shown})")
    return "\n".join(lines) + "\n"


def placement(scenario: Scenario, jobs: int, executor: str, scheduler: str | None) -> dict[str, str]:
    """``--jobs/--executor/--scheduler`` as the scenario's own ``jobs``/``scheduler`` parameters.

    Refused for a scenario that runs no work in parallel, rather than silently ignored.
    """
    fields_ = param_fields(scenario.params_type)
    asked = jobs != 1 or executor != "local" or scheduler is not None
    if asked and "jobs" not in fields_:
        raise BadParameter(
            f"scenario {scenario.name} runs in one process: --jobs/--executor/--scheduler do not apply"
        )
    if executor == "dask" and not scheduler:
        raise BadParameter("--executor dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    if executor == "local" and scheduler:
        raise BadParameter("--scheduler is only used with --executor dask")
    out: dict[str, str] = {}
    if jobs != 1:
        out["jobs"] = str(jobs)
    if scheduler:
        out["scheduler"] = scheduler
    return out


def scenario_command(
    name: Annotated[str | None, typer.Argument(help="Scenario name (see --list).")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Parameter k=v (repeatable).")
    ] = None,
    scale: ScaleOpt = "quick",
    out: OutDirOpt = DEFAULT_OUT,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    jobs: JobsOpt = 1,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    list_: Annotated[bool, typer.Option("--list", help="List scenarios and their parameters.")] = False,
) -> None:
    """Run a named experiment; write NAME.json, NAME.md and CSVs to --out.

    --scale picks the scenario's preset sizes (tiny, quick, full); --param values override them.
    --jobs, --executor and --scheduler decide where a scenario that runs work in parallel (the
    testbench) runs it; they never change its results.
    """
    from turncheck.reports.tables import dumps_result, result_markdown, write_result

    if list_ or name is None:
        sys.stdout.write(describe_scenarios())
        return
    scenario = get_scenario(name)
    assignments = dict(preset(scenario, scale))
    assignments.update(split_assignments(param or []))
    assignments.update(placement(scenario, jobs, executor, scheduler))
    params = parse_params(scenario, assignments)
    check_output_dir(out)
    result = scenario.run(params, progress_for(f"scenario {name}", quiet))
    paths = write_result(result, out)
    if fmt == "json":
        sys.stdout.write(dumps_result(result))
    else:
        sys.stdout.write(result_markdown(result))
    if not quiet:
        print(f"wrote {', '.join(str(p) for p in paths)}", file=sys.stderr)
    if any(not j.passed for j in result.judgements):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("scenario", help="Run a named experiment (--list shows them) and write its results.")(
        scenario_command
    )
