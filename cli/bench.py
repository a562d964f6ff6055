"""``turncheck bench TOPIC``: print the performance figures each issue asks for.

Every topic registers ``run(scale) -> list[str]`` (:data:`turncheck.bench.benchmark.BENCHMARKS`);
this command lists them from there, so a new benchmark is one new module. Figures are printed, never asserted: a slow machine gives
slower figures, not a failing test. ``--format json`` prints one object per topic per line (its
lines and the elapsed seconds: a benchmark's output *is* timings, unlike a result file);
per-topic progress lines go to stderr unless ``--quiet``. ``--compare`` runs, instead, each
topic's comparison (:mod:`turncheck.bench.compare`): turncheck, its ceiling and the peers in
interleaved rounds, printed as ratios, with the load average.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Annotated

import typer

from turncheck.bench.benchmark import BENCHMARKS
from turncheck.cli.options import Format, QuietOpt, ScaleOpt, format_option
from turncheck.models.errors import UnknownName


def topics() -> list[str]:
    return list(BENCHMARKS)


def bench_command(
    topic: Annotated[str, typer.Argument(help="Benchmark topic, or 'all'.")] = "all",
    scale: ScaleOpt = "quick",
    fmt: Annotated[Format, format_option("table, or json: one object per topic per line.")] = "table",
    quiet: QuietOpt = False,
    compare: Annotated[
        bool,
        typer.Option("--compare", help="turncheck against its ceiling and peers, interleaved, as ratios."),
    ] = False,
) -> None:
    """Run a benchmark and print its figures and ratios (tiny and quick run the small
    configurations, in seconds; full runs the sizes the targets are stated for)."""
    known = topics()
    chosen = known if topic == "all" else [topic]
    for name in chosen:
        if name not in known:
            raise UnknownName(f"unknown benchmark {name!r} (known: {', '.join(known)}, all)")
    if compare:
        from turncheck.bench.compare import TOPICS

        if topic != "all" and topic not in TOPICS:
            raise UnknownName(
                f"benchmark {topic!r} has no --compare (topics with one: {', '.join(TOPICS)}, all)"
            )
        _compare(chosen, scale, fmt, quiet)
        return
    for name in chosen:
        run = BENCHMARKS[name]
        started = time.perf_counter()
        header = f"== bench {name} ({scale})"
        if fmt == "json":
            if not quiet:
                print(header, file=sys.stderr, flush=True)
            lines = list(run(scale))
            seconds = round(time.perf_counter() - started, 3)
            obj = {"topic": name, "scale": scale, "lines": lines, "seconds": seconds}
            print(json.dumps(obj, ensure_ascii=False), flush=True)
        else:
            print(header, flush=True)
            for line in run(scale):
                print(line, flush=True)
        if not quiet:
            print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)


def _compare(chosen: list[str], scale: str, fmt: str, quiet: bool) -> None:
    """Each chosen topic's comparison: one block of lines (or one JSON object) per topic."""
    from turncheck.bench import compare

    for name in [t for t in compare.TOPICS if t in chosen]:  # TOPICS order: see its docstring
        started = time.perf_counter()
        header = f"== bench {name} --compare ({scale})"
        if fmt == "table":
            print(header, flush=True)
        elif not quiet:
            print(header, file=sys.stderr, flush=True)
        before = compare.load_average()
        results = compare.compare(name, scale)
        after = compare.load_average()
        if fmt == "json":
            obj = {
                "topic": name,
                "scale": scale,
                "compare": [c.as_dict() for c in results],
                "load_average": {"start": before, "end": after},
                "cores": os.cpu_count(),
                "seconds": round(time.perf_counter() - started, 3),
            }
            print(json.dumps(obj, ensure_ascii=False), flush=True)
        else:
            for c in results:
                for line in c.lines():
                    print(line, flush=True)
            print(f"  {compare.load_line(before, after)}", flush=True)
        if not quiet:
            print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)


def register(app: typer.Typer) -> None:
    app.command("bench", help=f"Print performance figures ({', '.join(topics())}, all).")(bench_command)
