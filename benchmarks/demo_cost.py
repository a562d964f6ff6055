"""What each demo step costs, in CPU seconds, at ``tiny`` and ``quick`` scale — the figures the
demo prints at its start (issue 32: "say at its start how long it will take").

Runs ``run_demo`` into a temporary folder in this process; the CPU (this process and its waited-for
children: the JVM and Node peers) is read each time the demo starts a step's progress bar, so each
delta is one step's cost, and the last one is the plots and the report. The start-up row — the
interpreter, the CLI's imports and the plan, before the first step — is measured in a fresh
interpreter (:func:`start_up`), as a user's ``turncheck demo`` pays it: without it the estimate
and the whole run's CPU disagreed (issue 55). ``--write`` also measures what each step an install
without extras refuses adds to the plots and the report (:func:`writing_shares`: the writing is
re-run without that step's outcome), since such an install writes none of its plots; then it
regenerates ``cli/demo_cost.py``, which the demo reads. tests/test_demo.py fails when a step of
the plan has no figure there (a preset or a check changed without a new measurement).

Run from the repository root: ``python benchmarks/demo_cost.py [--write] [SCALE ...]`` (default
``tiny quick``), or through ``run(scale)`` as a benchmark topic (measures ``scale`` only, never writes).
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from turncheck.cli.cpu_speed import probe_seconds
from turncheck.cli.demo import START, WRITING, DemoRun, Outcome, plan, refused_here, run_demo, write_outputs
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


# a fresh interpreter in which every distribution only an extra requires is absent, as on a plain
# `pip install .`: an import of one fails as a missing module does, and find_spec finds none; it
# prints the labels of the steps at the scale it is given that such an install refuses
_CORE_ONLY = """
import importlib.abc, importlib.util, json, sys
absent = set(sys.argv[2].split(","))
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in absent:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Absent())
found = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if name.partition(".")[0] in absent else found(name, package))
from turncheck.cli.demo import plan, refused_here
print(json.dumps([step.label for step in plan(sys.argv[1])[0] if refused_here(step) is not None]))
"""


def extras_only_modules() -> set[str]:
    """The top-level modules of the distributions turncheck's extras require and its core does
    not (read from the installed turncheck's ``Requires-Dist``)."""
    requires = metadata.requires("turncheck") or []
    names = {re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires}
    core = {re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r}
    wanted = {_normal(n) for n in names - core}
    return {
        module
        for module, dists in metadata.packages_distributions().items()
        if any(_normal(d) in wanted for d in dists)
    }


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def refused_without_extras(scale: str) -> list[str]:
    """The labels of the steps at ``scale`` that an install without any extra refuses."""
    done = subprocess.run(
        [sys.executable, "-c", _CORE_ONLY, scale, ",".join(sorted(extras_only_modules()))],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    labels: list[str] = json.loads(done.stdout.splitlines()[-1])
    return labels


REPEATS = 2  # writings per variant; the least CPU of them is taken (one writing varies by a tenth)


def writing_shares(run: DemoRun, labels: Iterable[str], repeats: int = REPEATS) -> dict[str, float]:
    """CPU seconds each of ``labels``' steps adds to writing ``run``'s plots and report: the
    writing with every outcome, less the writing with that step's outcome skipped, as an install
    that refuses the step writes it (never below zero)."""

    def writing(outcomes: list[Outcome]) -> float:
        spent = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="turncheck-demo-share-") as out:
                before = _cpu()
                write_outputs(DemoRun(Path(out), run.scale, outcomes, skips=run.skips), no_progress)
                spent.append(_cpu() - before)
        return min(spent)

    whole = writing(list(run.outcomes))
    return {
        label: max(0.0, whole - writing([
            Outcome(o.step, skipped="refused") if o.step.label == label else o for o in run.outcomes
        ]))
        for label in labels
    }  # fmt: skip


@dataclass(frozen=True)
class Measured:
    """One scale's CPU seconds as measured, and ``reference``: the demo's own speed probe
    (:func:`~turncheck.cli.cpu_speed.probe_seconds`) read before, between the steps and after,
    their mean (one reading varied by a fifth on this host, idle).

    The demo scales the figures by its probe at its start over the recorded one, so the figures
    are kept with the probe read the same way around them: a machine as busy as this one was reads
    the same and gets the figures back. A probe process running beside the measurement read the
    demo's own worker processes and bridges as contention, and dividing by that took their real
    cost out: the line said 33 s for a run of 38. ``shares`` holds what each step an install
    without extras refuses adds to the writing; the writing's own row is the rest."""

    costs: dict[str, float]
    reference: float
    shares: dict[str, float]


def measured_labels(scale: str) -> list[str]:
    """The rows one run at ``scale`` measures, in the order their progress bars start: each step
    that runs here, then the writing. A step refused here (an extra not installed) starts no bar
    and costs nothing; counting it shifted every later mark (a ``zip`` mismatch, a traceback)."""
    return [step.label for step in plan(scale)[0] if refused_here(step) is None] + [WRITING]


def measure(scale: str, shares: bool = False) -> Measured:
    """CPU seconds of the start-up, of each step of the demo's plan at ``scale`` (by label) and of
    the writing, and the speed probe's mean reading over the run: read before it, at each step's
    start (the demo's own work paused there; the probe's CPU kept out of the steps') and after it.
    With ``shares``, also each optional step's share of the writing (:func:`writing_shares`),
    taken out of its row."""
    labels = measured_labels(scale)
    optional = [label for label in refused_without_extras(scale) if label in labels] if shares else []
    marks: list[float] = []
    readings = [probe_seconds()]
    probing = 0.0

    def bars(label: str) -> Callable[[int, int], None]:
        nonlocal probing
        stop_bridges()  # the step before's, so their CPU is its own (waited for, then counted)
        before = _cpu()
        readings.append(probe_seconds())
        probing += _cpu() - before
        marks.append(_cpu() - probing)
        return no_progress

    first = start_up(scale)
    with tempfile.TemporaryDirectory(prefix="turncheck-demo-cost-") as out:
        run = run_demo(Path(out) / "demo", scale, progress_for=bars)
        stop_bridges()
        marks.append(_cpu() - probing)
        split = writing_shares(run, optional)
    readings.append(probe_seconds())
    steps = zip(labels, marks[:-1], marks[1:], strict=True)
    costs = {START: first, **{label: b - a for label, a, b in steps}}
    costs[WRITING] = max(0.0, costs[WRITING] - sum(split.values()))
    return Measured(costs, statistics.fmean(readings), split)


def stop_bridges() -> None:
    """Stop (and wait for) every exec-protocol command still running — the peers' JVM and Node
    bridges serve a whole run and end at the interpreter's exit, where a user's ``time turncheck
    demo`` counts them and this process's children's CPU never did: the quick demo with every extra
    took 100 to 126 s of CPU against a table of 89."""
    from turncheck.models.exec_protocol import _stop_all

    _stop_all()


RUNS = 3  # runs per scale --write takes the median of: one run's steps varied by half on this host

# one measurement in a fresh interpreter, printed as JSON: each run starts cold, as a user's demo does
_ONE_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from benchmarks.demo_cost import measure
m = measure(sys.argv[2], shares=sys.argv[3] == "shares")
print(json.dumps({"costs": m.costs, "reference": m.reference, "shares": m.shares}))
"""


def measure_runs(scale: str, runs: int = RUNS, shares: bool = False) -> Measured:
    """The median, label by label, of ``runs`` measurements at ``scale``, each in a fresh
    interpreter and brought to the first's probe reading (the writing shares: of the first run
    alone). A fresh interpreter each: in one process the later runs reused the peers' warm JVM and
    Node bridges, and their median left out the start a user's run pays (28 s against 41)."""
    taken = []
    for k in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _ONE_RUN, str(TARGET.parent.parent), scale, "shares" if shares and not k else "-"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        taken.append(Measured(**json.loads(done.stdout.splitlines()[-1])))
    reference = taken[0].reference
    costs = {
        label: statistics.median(m.costs[label] * reference / m.reference for m in taken)
        for label in taken[0].costs
    }
    return Measured(costs, reference, taken[0].shares)


def render(measured: dict[str, Measured]) -> str:
    """``cli/demo_cost.py``: each scale's figures brought to the fastest scale's probe reading
    (what they would have cost at that speed), which is recorded as ``PROBE_SECONDS``."""
    probe = min(m.reference for m in measured.values())
    costs = {scale: _scaled(m.costs, probe / m.reference) for scale, m in measured.items()}
    shares = {scale: _scaled(m.shares, probe / m.reference) for scale, m in measured.items()}
    rows = "\n".join(
        f"    {json.dumps(scale)}: {{\n"
        + "".join(f"        {json.dumps(label)}: {cpu},\n" for label, cpu in steps.items())
        + "    },"
        for scale, steps in costs.items()
    )
    share_rows = "\n".join(
        f"    {json.dumps(scale)}: {{"
        + "".join(f"\n        {json.dumps(label)}: {cpu}," for label, cpu in split.items())
        + ("\n    }," if split else "},")
        for scale, split in shares.items()
    )
    return (
        '"""CPU seconds of each demo step by scale (this process and its children, one\n'
        "core), of the start-up and of writing the plots and the report: what the demo sums at its start to\n"
        "say how long it will take (PROBE_SECONDS: the speed probe's reading, cli/cpu_speed.py, these runs\n"
        "were brought to before their median was taken). WRITING_SHARES holds what a step an install\n"
        "without extras refuses adds to the writing, counted only where it runs. Generated by ``python\n"
        "benchmarks/demo_cost.py --write`` — do not edit by hand; a step the plan has and this table lacks\n"
        'is reported as not measured."""\n\n'
        f"PROBE_SECONDS = {probe:.6f}\n\n"
        f"CPU_SECONDS: dict[str, dict[str, float]] = {{\n{rows}\n}}\n\n"
        f"WRITING_SHARES: dict[str, dict[str, float]] = {{\n{share_rows}\n}}\n"
    )


def _scaled(costs: dict[str, float], factor: float) -> dict[str, float]:
    return {label: round(cpu * factor, 2) for label, cpu in costs.items()}


def run(scale: str) -> Iterable[str]:
    m = measure(scale)
    yield (
        f"demo at {scale} scale: {sum(m.costs.values()):.1f} s CPU in all (speed probe "
        f"{m.reference * 1000:.1f} ms, load {os.getloadavg()[0]:.2f})"
    )
    yield from (f"  {cpu:7.2f} s  {label}" for label, cpu in m.costs.items())


if __name__ == "__main__":
    args = sys.argv[1:]
    write = "--write" in args
    scales = [a for a in args if a != "--write"] or list(MEASURED)
    measured = {scale: measure_runs(scale, RUNS if write else 1, shares=write) for scale in scales}
    for scale, m in measured.items():
        print(
            f"{scale}: {sum(m.costs.values()) + sum(m.shares.values()):.1f} s CPU over {len(m.costs)} rows "
            f"(speed probe {m.reference * 1000:.1f} ms around them, load {os.getloadavg()[0]:.2f})"
        )
        for label, cpu in m.shares.items():
            print(f"  {cpu:.2f} s of the writing is {label}'s (refused without extras)")
    if write:
        TARGET.write_text(render(measured), encoding="utf-8")
        print(f"wrote {TARGET}")
