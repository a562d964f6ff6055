"""``turncheck demo``, ``report`` and ``plot``: the pictures and the page, from files only.

``demo`` runs every experiment at a small scale plus one failing and one passing check and
writes results, a trace, plots and ``report.html`` (see :mod:`turncheck.cli.demo`). ``report RESULTS_DIR``
turns whatever result files and traces a directory holds into one self-contained HTML page;
``plot RESULTS_DIR`` writes the same plots as PNG and SVG files. Neither re-runs anything. All
three print a short summary (``--format json`` for scripts); ``demo`` shows progress unless
``--quiet``. Bad input is one line, exit 2, nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from turncheck.cli.options import FormatOpt, JobsOpt, QuietOpt, ScaleOpt
from turncheck.cli.outputs import check_output_dir, check_output_file
from turncheck.cli.progress import progress_for
from turncheck.cli.stdout_json import print_json

DEMO_OUT = Path("turncheck-demo")


def demo_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for everything the demo writes.")
    ] = DEMO_OUT,
    scale: ScaleOpt = "quick",
    jobs: JobsOpt = 1,
    quiet: QuietOpt = False,
    fmt: FormatOpt = "table",
) -> None:
    """Run every scenario at a small scale, a failing and a passing check, and write plots and report.html."""
    from turncheck.cli.demo import run_demo

    check_output_dir(out)
    quiet = quiet or fmt == "json"
    announce = None if quiet else lambda line: print(line, file=sys.stderr, flush=True)
    run = run_demo(out, scale, jobs, progress_for=lambda label: progress_for(label, quiet), announce=announce)
    if fmt == "json":
        print_json(run.to_json(), indent=1)
    else:
        print("\n".join(run.lines()))
    if not run.ok:
        raise typer.Exit(1)


def report_command(
    results_dir: Annotated[Path, typer.Argument(help="Directory of result files (*.json) and traces.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")] = Path("report.html"),
    title: Annotated[str, typer.Option("--title", help="Page title.")] = "turncheck report",
    quiet: QuietOpt = False,
    fmt: FormatOpt = "table",
) -> None:
    """Write one self-contained HTML page with every table, plot and judgement in RESULTS_DIR."""
    from turncheck.reports.html import write_report

    check_output_file(out)
    summary = write_report(results_dir, out, title, progress_for("report: drawing plots", quiet, "plots"))
    if fmt == "json":
        print_json(summary.to_json(), indent=1)
        return
    print("\n".join(summary.lines()))


def plot_command(
    results_dir: Annotated[Path, typer.Argument(help="Directory of result files (*.json) and traces.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the PNG and SVG files.")] = Path(
        "plots"
    ),
    quiet: QuietOpt = False,
    fmt: FormatOpt = "table",
) -> None:
    """Write every plot the result files and traces in RESULTS_DIR give, as PNG and SVG."""
    from turncheck.reports.plots import gallery
    from turncheck.reports.results_dir import read_results_dir

    check_output_dir(out)
    drawn, missing = gallery(read_results_dir(results_dir), progress_for("plot: drawing", quiet, "plots"))
    written = {d.name: [str(p) for p in d.write(out)] for d in drawn}
    if fmt == "json":
        obj = {
            "plots": [
                {
                    "name": d.name,
                    "title": d.title,
                    "reading": d.reading,
                    "files": written[d.name],
                    "sources": [str(p) for p in d.sources],
                }
                for d in drawn
            ],  # fmt: skip
            "missing": [{"plot": m.name, "source": str(m.source), "reason": m.reason} for m in missing],
        }
        print_json(obj, indent=1)
        return
    lines = [f"{len(drawn)} plot(s) in {out}/"]
    for d in drawn:
        lines.append(f"  {d.name}.png/.svg — {d.reading}")
    lines += [f"  could not draw {m.name} from {m.source}: {m.reason}" for m in missing]
    sys.stdout.write("\n".join(lines) + "\n")


def register(app: typer.Typer) -> None:
    app.command(
        "demo", help="Run every experiment at a small scale and write results, plots and report.html."
    )(demo_command)
    app.command("report", help="Write one self-contained HTML page for a directory of result files.")(
        report_command
    )
    app.command("plot", help="Write the plots of a directory of result files as PNG and SVG.")(plot_command)
