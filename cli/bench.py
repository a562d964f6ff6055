"""``turncheck bench TOPIC``: the benchmarks, run from a repository checkout.

The benchmarks are a development tool and do not ship in the wheel: they live in the
repository's ``benchmarks/`` package, which this command imports (from the working directory,
as ``python -m benchmarks`` would) and runs. Anywhere else it is one line and exit 2.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from turncheck.cli.options import Format, QuietOpt, ScaleOpt, format_option
from turncheck.models.errors import TurncheckError


def benchmarks() -> Any:
    """The repository's ``benchmarks`` package, or a one-line error saying where it runs."""
    here = Path.cwd()
    if (here / "benchmarks" / "__init__.py").is_file() and str(here) not in sys.path:
        sys.path.insert(0, str(here))
    try:
        module = importlib.import_module("benchmarks")
    except ModuleNotFoundError as exc:
        if exc.name != "benchmarks":
            raise
        module = None
    if not callable(getattr(module, "run", None)):
        raise TurncheckError(
            "turncheck bench runs from a turncheck repository checkout: run it in the folder holding "
            "benchmarks/ (the benchmarks do not ship with the package)"
        )
    return module


def bench_command(
    topic: Annotated[str, typer.Argument(help="Benchmark topic, or 'all'.")] = "all",
    scale: ScaleOpt = "quick",
    fmt: Annotated[Format, format_option("table, or json: one object per topic per line.")] = "table",
    quiet: QuietOpt = False,
    compare: Annotated[
        bool,
        typer.Option("--compare", help="turncheck against its ceiling and peers, interleaved, as ratios."),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="With --compare: exit 1 when a turncheck/ceiling ratio is over 1.25× this ratio file's "
            "(benchmarks/baseline.json is the committed one), naming the figure.",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option("--write-baseline", help="With --compare: write the run's ratios to this file."),
    ] = None,
    ratios: Annotated[
        Path | None,
        typer.Option(
            "--ratios", help="With --baseline: judge this ratio file's figures instead of measuring."
        ),
    ] = None,
) -> None:
    """Run a benchmark and print its figures and ratios (tiny and quick run the small
    configurations, in seconds; full runs the sizes the targets are stated for). Exit 1: with
    --baseline, a ratio worse than 1.25× its baseline, or missing."""
    if write_baseline is not None:  # refused before the run, not after it
        from turncheck.cli.outputs import check_output_file

        check_output_file(write_baseline, "--write-baseline", make_folders=False)
    if benchmarks().run(topic, scale, fmt, quiet, compare, baseline, write_baseline, ratios):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("bench", help="Print performance figures (from a repository checkout: benchmarks/).")(
        bench_command
    )
