"""``turncheck bench TOPIC``: print the performance figures each issue asks for.

Every ``turncheck.bench.<topic>`` module exposes ``run(scale) -> list[str]``; this command finds them,
so a new benchmark is one new module. Figures are printed, never asserted: a slow machine gives
slower figures, not a failing test. ``--format json`` prints one object per topic per line (its
lines and the elapsed seconds: a benchmark's output *is* timings, unlike a result file);
per-topic progress lines go to stderr unless ``--quiet``.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from typing import Annotated

import turncheck.bench
import typer
from turncheck.cli.options import Format, QuietOpt, ScaleOpt
from turncheck.models.errors import UnknownName


def topics() -> list[str]:
    return sorted(
        m.name for m in pkgutil.iter_modules(turncheck.bench.__path__) if not m.name.startswith("_")
    )


def bench_command(
    topic: Annotated[str, typer.Argument(help="Benchmark topic, or 'all'.")] = "all",
    scale: ScaleOpt = "quick",
    fmt: Annotated[
        Format, typer.Option("--format", help="table, or json: one object per topic per line.")
    ] = "table",
    quiet: QuietOpt = False,
) -> None:
    """Run a benchmark and print its figures and ratios (tiny and quick run the small
    configurations, in seconds; full runs the sizes the targets are stated for)."""
    known = topics()
    chosen = known if topic == "all" else [topic]
    for name in chosen:
        if name not in known:
            raise UnknownName(f"unknown benchmark {name!r} (known: {', '.join(known)}, all)")
    for name in chosen:
        module = importlib.import_module(f"turncheck.bench.{name}")
        started = time.perf_counter()
        header = f"== bench {name} ({scale})"
        if fmt == "json":
            if not quiet:
                print(header, file=sys.stderr, flush=True)
            lines = list(module.run(scale))
            seconds = round(time.perf_counter() - started, 3)
            obj = {"topic": name, "scale": scale, "lines": lines, "seconds": seconds}
            print(json.dumps(obj, ensure_ascii=False), flush=True)
        else:
            print(header, flush=True)
            for line in module.run(scale):
                print(line, flush=True)
        if not quiet:
            print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)


def register(app: typer.Typer) -> None:
    app.command("bench", help=f"Print performance figures ({', '.join(topics())}, all).")(bench_command)
