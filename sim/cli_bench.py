"""``turncheck bench TOPIC``: print the performance figures each issue asks for.

Every ``sim/bench_<topic>.py`` exposes ``run(scale) -> list[str]``; this command finds them,
so a new benchmark is one new module. Figures are printed, never asserted: a slow machine gives
slower figures, not a failing test.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from typing import Annotated

import typer

import sim
from models.errors import UnknownName

SCALES = ("quick", "full")


def topics() -> list[str]:
    return sorted(
        m.name[len("bench_") :] for m in pkgutil.iter_modules(sim.__path__) if m.name.startswith("bench_")
    )


def bench_command(
    topic: Annotated[str, typer.Argument(help="Benchmark topic, or 'all'.")] = "all",
    scale: Annotated[
        str, typer.Option("--scale", help="quick (seconds) or full (the issues' targets).")
    ] = "full",
) -> None:
    """Run a benchmark and print its figures and ratios."""
    known = topics()
    if scale not in SCALES:
        raise UnknownName(f"unknown scale {scale!r} (known: {', '.join(SCALES)})")
    chosen = known if topic == "all" else [topic]
    for name in chosen:
        if name not in known:
            raise UnknownName(f"unknown benchmark {name!r} (known: {', '.join(known)}, all)")
    for name in chosen:
        module = importlib.import_module(f"sim.bench_{name}")
        started = time.perf_counter()
        print(f"== bench {name} ({scale})", flush=True)
        for line in module.run(scale):
            print(line, flush=True)
        print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)


def register(app: typer.Typer) -> None:
    app.command("bench", help=f"Print performance figures ({', '.join(topics())}, all).")(bench_command)
