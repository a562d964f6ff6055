"""Benchmarks: turncheck's development tool, kept in the repository and out of the wheel.

One module per topic, each with ``run(scale) -> Iterable[str]``: it measures and returns the
lines to print (figures and ratios of one run; nothing here is a timed test). :data:`BENCHMARKS`
names them in the order ``all`` runs them, so a new topic is one new file plus its line there.
``--compare`` runs each topic's comparison instead (:mod:`benchmarks.compare`). The options are
those of ``turncheck bench`` (:mod:`turncheck.cli.bench`, which imports this package from a
repository checkout and calls :func:`run`); ``python -m benchmarks`` is the same command.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks import check, demo_cost, peers, projector, store, stress, testbench, trigger
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter, UnknownName

Benchmark = Callable[[str], Iterable[str]]

BENCHMARKS: dict[str, Benchmark] = {
    "check": check.run,
    "demo": demo_cost.run,
    "peers": peers.run,
    "projector": projector.run,
    "store": store.run,
    "stress": stress.run,
    "testbench": testbench.run,
    "trigger": trigger.run,
}
"""Every benchmark topic by name, in the order ``all`` runs them."""


def run(
    topic: str,
    scale: str,
    fmt: str,
    quiet: bool,
    compare: bool,
    baseline: Path | None = None,
    write_baseline: Path | None = None,
    ratios: Path | None = None,
) -> bool:
    """Print ``topic``'s figures (``all``: every topic's), or its comparison with ``compare``.

    ``fmt="json"`` prints one object per topic per line (its lines and the elapsed seconds: a
    benchmark's output *is* timings, unlike a result file); per-topic progress lines go to
    stderr unless ``quiet``. With ``compare``, ``write_baseline`` writes the run's ratios and
    ``baseline`` judges them (or those of the ratio file ``ratios``, measuring nothing) with
    :mod:`benchmarks.compare.guard`. Returns whether the guard found a figure worse.
    """
    from benchmarks.compare import TOPICS  # a topic may have a comparison only (exec, race, …)

    known = list(BENCHMARKS)
    chosen = (list(TOPICS) if compare else known) if topic == "all" else [topic]
    if topic != "all" and topic not in known and not (compare and topic in TOPICS):
        raise UnknownName(f"unknown benchmark {topic!r} (known: {', '.join(known)}, all)")
    if not compare:
        if baseline or write_baseline or ratios:
            raise BadParameter("--baseline, --write-baseline and --ratios go with --compare")
    else:
        from benchmarks.compare import guard

        if topic != "all" and topic not in TOPICS:
            raise UnknownName(
                f"benchmark {topic!r} has no --compare (topics with one: {', '.join(TOPICS)}, all)"
            )
        if ratios and not baseline:
            raise BadParameter("--ratios is checked against a --baseline")
        expected = guard.read(baseline) if baseline else None
        if ratios:
            measured_scale, measured = guard.read(ratios)
        else:
            measured_scale, measured = scale, _compare(chosen, scale, fmt, quiet)
        if write_baseline:
            guard.write(write_baseline, measured_scale, measured)
        if expected is None:
            return False
        if expected[0] != measured_scale:
            raise BadParameter(
                f"{baseline}: a baseline of scale {expected[0]}, measured at {measured_scale}: ratios differ by scale"
            )
        lines, worse = guard.verdict(measured, expected[1], [t for t in TOPICS if t in chosen])
        print("\n".join(lines), file=sys.stderr if fmt == "json" else sys.stdout, flush=True)
        return worse
    for name in chosen:
        started = time.perf_counter()
        header = f"== bench {name} ({scale})"
        if fmt == "json":
            if not quiet:
                print(header, file=sys.stderr, flush=True)
            lines = list(BENCHMARKS[name](scale))
            seconds = round(time.perf_counter() - started, 3)
            obj = {"topic": name, "scale": scale, "lines": lines, "seconds": seconds}
            print_json(obj)
        else:
            print(header, flush=True)
            for line in BENCHMARKS[name](scale):
                print(line, flush=True)
        if not quiet:
            print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
    return False


def _compare(chosen: list[str], scale: str, fmt: str, quiet: bool) -> dict[str, float]:
    """Each chosen topic's comparison: one block of lines (or one JSON object) per topic; returns
    the ceiling ratios, by figure (:func:`benchmarks.compare.guard.figures`)."""
    from benchmarks import compare
    from benchmarks.compare.guard import figures

    ratios: dict[str, float] = {}
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
        ratios.update(figures(name, results))
        if fmt == "json":
            obj = {
                "topic": name,
                "scale": scale,
                "compare": [c.as_dict() for c in results],
                "load_average": {"start": before, "end": after},
                "cores": os.cpu_count(),
                "seconds": round(time.perf_counter() - started, 3),
            }
            print_json(obj)
        else:
            for c in results:
                for line in c.lines():
                    print(line, flush=True)
            print(f"  {compare.load_line(before, after)}", flush=True)
        if not quiet:
            print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
    return ratios
