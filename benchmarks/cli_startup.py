"""What the command line costs before it does anything: ``--help`` and a completion TAB.

Issue 25's target: ``turncheck --help`` at most 3× the CPU of ``python -c "import typer"`` (the
floor: the interpreter and typer, which every run pays). Each round starts, one after another, a
fresh interpreter for ``import typer``, ``python -m turncheck --help`` and a completion of
``turncheck ch``; the CPU (user + system) of each child is read from ``getrusage``, so other
load on the machine slows the rounds without inflating the figures much. Prints the median of
each and the ratios, with the load average before and after.

Run from the repository root: ``python benchmarks/cli_startup.py [ROUNDS]`` (default 15), or
through ``run(scale)`` as a benchmark topic.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Iterable

PROBES: dict[str, tuple[list[str], dict[str, str]]] = {
    "import typer": (["-c", "import typer"], {}),
    "turncheck --help": (["-m", "turncheck", "--help"], {}),
    "TAB (turncheck ch)": (
        ["-m", "turncheck"],
        {"_TURNCHECK_COMPLETE": "complete_bash", "COMP_WORDS": "turncheck ch", "COMP_CWORD": "1"},
    ),
}
ROUNDS = {"tiny": 3, "quick": 15, "full": 50}


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child interpreter running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *argv], env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(rounds: int) -> list[str]:
    load = os.getloadavg()
    samples: dict[str, list[float]] = {name: [] for name in PROBES}
    for _ in range(rounds):  # interleaved: a burst of load falls on every probe alike
        for name, (argv, env) in PROBES.items():
            samples[name].append(child_cpu(argv, env))
    median = {name: statistics.median(values) for name, values in samples.items()}
    floor = median["import typer"]
    lines = [f"CPU per run, median of {rounds} rounds ({sys.executable}):"]
    for name, value in median.items():
        lines.append(f"  {name:<20} {value * 1000:7.1f} ms  ×{value / floor:.2f} of import typer")
    lines.append(
        f"target: turncheck --help ≤ 3× import typer: {'PASS' if median['turncheck --help'] <= 3 * floor else 'FAIL'}"
    )
    end = os.getloadavg()
    lines.append(f"load average: {load[0]:.2f} at start, {end[0]:.2f} at end ({os.cpu_count()} cores)")
    return lines


def run(scale: str) -> Iterable[str]:
    return measure(ROUNDS[scale])


if __name__ == "__main__":
    print("\n".join(measure(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS["quick"])))
