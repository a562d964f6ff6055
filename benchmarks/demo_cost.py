"""What each demo step costs, in CPU seconds, at ``tiny`` and ``quick`` scale — the figures the
demo prints at its start (issue 32: "say at its start how long it will take").

Runs ``run_demo`` into a temporary folder in this process; the CPU (this process and its waited-for
children: the JVM and Node peers) is read each time the demo starts a step's progress bar, so each
delta is one step's cost, and the last one is the plots and the report. The start-up row — the
interpreter, the CLI's imports and the plan, before the first step — is measured in a fresh
interpreter (:func:`start_up`), as a user's ``turncheck demo`` pays it: without it the estimate
and the whole run's CPU disagreed (issue 55). ``--write`` regenerates
``cli/demo_cost.py``, which the demo reads; tests/test_demo.py fails when a step of the plan has no
figure there (a preset or a check changed without a new measurement).

Run from the repository root: ``python benchmarks/demo_cost.py [--write] [SCALE ...]`` (default
``tiny quick``), or through ``run(scale)`` as a benchmark topic (measures ``scale`` only, never writes).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from turncheck.cli.demo import START, WRITING, plan, refused_here, run_demo
from turncheck.sim.executor import no_progress

TARGET = Path(__file__).resolve().parent.parent / "cli" / "demo_cost.py"
MEASURED = ("tiny", "quick")


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# what `turncheck demo` does before its first step, in a fresh interpreter; prints its CPU seconds
_START_UP = """
import resource, sys
from turncheck.cli.app import main  # noqa: F401  (the CLI's imports, as the command pays them)
from turncheck.cli.demo import cost_line, plan
steps, skips = plan(sys.argv[1])
cost_line(sys.argv[1], steps, skipped=[name for name, _ in skips])
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime)
"""


def start_up(scale: str) -> float:
    """CPU seconds of a fresh interpreter importing the CLI and planning the demo at ``scale``."""
    done = subprocess.run(
        [sys.executable, "-c", _START_UP, scale], capture_output=True, text=True, check=True
    )
    return round(float(done.stdout.split()[-1]), 2)


# a probe process beside the measurement: one probe run every PROBE_EVERY s (a tenth of a core at
# most, so it hardly competes with the run it watches), each reading printed as it is taken
PROBE_EVERY = 0.1
_PROBE = f"""
import time
from turncheck.cli.cpu_speed import probe_once
while True:
    print(probe_once(), flush=True)
    time.sleep({PROBE_EVERY})
"""


@dataclass(frozen=True)
class Measured:
    """One scale's figures, corrected to an idle machine, and the probe readings behind the
    correction: ``idle`` (the fastest reading: nothing else on the core) and ``contention`` (the
    mean reading over the idle one: how much more CPU the same work took while the run was
    measured; 1.0 on an idle machine)."""

    costs: dict[str, float]
    idle: float
    contention: float


def measured_labels(scale: str) -> list[str]:
    """The rows one run at ``scale`` measures, in the order their progress bars start: each step
    that runs here, then the writing. A step refused here (an extra not installed) starts no bar
    and costs nothing; counting it shifted every later mark (a ``zip`` mismatch, a traceback)."""
    return [step.label for step in plan(scale)[0] if refused_here(step) is None] + [WRITING]


def measure(scale: str) -> Measured:
    """CPU seconds of the start-up, of each step of the demo's plan at ``scale`` (by label) and of
    the writing, divided by the contention a probe process saw meanwhile."""
    labels = measured_labels(scale)
    marks: list[float] = []

    def bars(label: str) -> Callable[[int, int], None]:
        marks.append(_cpu())
        return no_progress

    probe = subprocess.Popen([sys.executable, "-c", _PROBE], stdout=subprocess.PIPE, text=True)
    try:
        first = start_up(scale)
        with tempfile.TemporaryDirectory(prefix="turncheck-demo-cost-") as out:
            run_demo(Path(out) / "demo", scale, progress_for=bars)
        marks.append(_cpu())
    finally:
        probe.terminate()
        readings = [float(x) for x in probe.communicate()[0].split()]
    idle = min(readings)
    contention = statistics.fmean(readings) / idle
    steps = zip(labels, marks[:-1], marks[1:], strict=True)
    costs = {START: first, **{label: b - a for label, a, b in steps}}
    return Measured({label: round(cpu / contention, 2) for label, cpu in costs.items()}, idle, contention)


def render(measured: dict[str, Measured]) -> str:
    costs = {scale: m.costs for scale, m in measured.items()}
    idle = min(m.idle for m in measured.values())
    rows = "\n".join(
        f"    {json.dumps(scale)}: {{\n"
        + "".join(f"        {json.dumps(label)}: {cpu},\n" for label, cpu in steps.items())
        + "    },"
        for scale, steps in costs.items()
    )
    return (
        '"""CPU seconds of each demo step by scale on an idle machine (this process and its children, one\n'
        "core), of the start-up and of writing the plots and the report: what the demo sums at its start to\n"
        "say how long it will take, scaled by this machine's speed then (cli/cpu_speed.py; PROBE_SECONDS is\n"
        "the probe's idle reading where these were measured). Generated by ``python benchmarks/demo_cost.py\n"
        "--write`` — do not edit by hand; a step the plan has and this table lacks is reported as not\n"
        'measured."""\n\n'
        f"PROBE_SECONDS = {idle:.6f}\n\n"
        f"CPU_SECONDS: dict[str, dict[str, float]] = {{\n{rows}\n}}\n"
    )


def run(scale: str) -> Iterable[str]:
    m = measure(scale)
    yield (
        f"demo at {scale} scale: {sum(m.costs.values()):.1f} s CPU in all on an idle machine "
        f"(measured under contention {m.contention:.2f}, load {os.getloadavg()[0]:.2f})"
    )
    yield from (f"  {cpu:7.2f} s  {label}" for label, cpu in m.costs.items())


if __name__ == "__main__":
    args = sys.argv[1:]
    write = "--write" in args
    scales = [a for a in args if a != "--write"] or list(MEASURED)
    measured = {scale: measure(scale) for scale in scales}
    for scale, m in measured.items():
        print(
            f"{scale}: {sum(m.costs.values()):.1f} s CPU on an idle machine over {len(m.costs)} rows "
            f"(contention {m.contention:.2f}: the figures were divided by it; idle probe {m.idle * 1000:.1f} ms)"
        )
    if write:
        TARGET.write_text(render(measured), encoding="utf-8")
        print(f"wrote {TARGET}")
