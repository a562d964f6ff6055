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
from turncheck.cli.progress import progress_for
from turncheck.models.errors import BadParameter
from turncheck.reports.tables import dumps_result, result_markdown, write_result
from turncheck.scenarios.base import get_scenario, param_fields, parse_params, scenarios

FORMATS = ("table", "json")
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


def scenario_command(
    name: Annotated[str | None, typer.Argument(help="Scenario name (see --list).")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Parameter k=v (repeatable).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the result files.")] = DEFAULT_OUT,
    fmt: Annotated[str, typer.Option("--format", help="table | json.")] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List scenarios and their parameters.")] = False,
) -> None:
    """Run a named experiment; write NAME.json, NAME.md and CSVs to --out."""
    if list_ or name is None:
        sys.stdout.write(describe_scenarios())
        return
    if fmt not in FORMATS:
        raise BadParameter(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    scenario = get_scenario(name)
    params = parse_params(scenario, param or [])
    if out.exists() and not out.is_dir():
        raise BadParameter(f"--out {out} exists and is not a directory")
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
