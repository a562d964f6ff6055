"""The explorer against a minimal breadth-first search over the same model functions.

turncheck: :func:`sim.explorer.explore` of the trigger model (writers 4, gap 2, maxTurns 4,
8 turns each: 621 706 distinct states at full scale), properties judged and worst cases taken.
Ceiling: the least a BFS over the model can do — a dict of canonical states to their parent, a
list as the queue, ``successors``/``canonical`` called exactly as the explorer calls them, and the
same per-state properties and metrics read afterwards. Each round runs in a forked
child, so the peak memory growth is each search's own. Second ceiling, where a C compiler
exists: ``benchmarks/trigger_bfs.c``, a BFS of the same model in C (same state encoding, BFS
parents, worst live turns), built with ``cc -O2`` into a temporary directory and checked to
count exactly the explorer's states; without ``cc`` its row is left out and the note says why.

The seed's row (issue 58): ``turncheck explore trigger --param writers=8 --param gap=5 --param
max_turns=8`` at default limits, run as a user runs it — a fresh interpreter, its CPU and its max
RSS read from outside (:func:`benchmarks.compare.fresh_process`) — against the C BFS of the same
model measured the same way, whose state count every run's output must state. The tiny and quick
scales run smaller parameters, named in the row's path, so the speed guard's run stays seconds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.compare import Comparison, Contender, fresh_process, interleave
from benchmarks.compare.startup import CACHED
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import expansion, explore

FULL = {"writers": 4, "gap": 2, "max_turns": 4, "turns": 8}
QUICK = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 8}
TINY = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 5}  # the CI smoke: every row, in seconds
SEED = {"full": {"writers": 8, "gap": 5, "max_turns": 8}, "quick": {"writers": 7, "gap": 4, "max_turns": 7},
        "tiny": {"writers": 6, "gap": 4, "max_turns": 6}}  # fmt: skip
"""The seed's row's parameters by scale: the seed's own at full (1,351,573 states), smaller below
(tiny: 176,719 states, about a second of CPU a run; quick: 316,093)."""


C_NAME = "C BFS of the same model (cc -O2)"
ROUNDS = 5
"""Interleaved rounds per explorer comparison: one search's CPU time on this kind of shared
two-core host swings by a third from round to round even with the machine otherwise idle, so a
median of three rounds could land either side of a 5 % target; five keep it steadier."""


def minimal_bfs(model: Any) -> int:
    """Distinct canonical states reachable from the initial ones, with BFS parents, properties
    checked and metric maxima taken over every state (what the explorer reports, minus bounds)."""
    expand, canon = expansion(model), model.canonical
    parent: dict[Any, int] = {}
    queue: list[Any] = []
    for s in model.init_states():
        c = canon(s)
        if c not in parent:
            parent[c] = -1
            queue.append(c)
    head = 0
    while head < len(queue):
        state = queue[head]
        for _action, c in expand(state):
            if c not in parent:
                parent[c] = head
                queue.append(c)
        head += 1
    for p in model.properties():
        holds = p.holds
        if p.expectation == "always":
            next((i for i, st in enumerate(queue) if not holds(st)), None)
        else:
            next((i for i, st in enumerate(queue) if holds(st)), None)
    worst: dict[str, int] = {}
    for st in queue:
        for name, value in model.metrics(st).items():
            if value > worst.get(name, -1):
                worst[name] = value
    return len(queue)


C_SOURCE = Path(__file__).resolve().parent.parent / "trigger_bfs.c"
"""The C reference BFS of the trigger model (locking ``none``), built by :func:`build_c_bfs`."""


def build_c_bfs(workdir: Path, compiler: str | None = None) -> Path | str:
    """Compile :data:`C_SOURCE` with ``cc -O2`` into ``workdir``: the binary's path, or the
    reason there is none (no ``cc`` on PATH, or its first error line), for the row's note."""
    cc = compiler or shutil.which("cc")
    if cc is None:
        return "no C compiler (cc) on PATH"
    binary = workdir / "trigger_bfs"
    try:
        done = subprocess.run([cc, "-O2", "-o", str(binary), str(C_SOURCE)], capture_output=True, text=True)
    except OSError as exc:
        return f"{cc} could not run ({exc.strerror or exc})"
    if done.returncode != 0 or not binary.is_file():
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"{cc} -O2 failed: {lines[0] if lines else f'exit {done.returncode}'}"
    return binary


def c_bfs(binary: Path, params: dict[str, int]) -> tuple[int, int, int, int, int]:
    """One run of the C BFS: distinct states, transitions, depth, worst live turns, peak RSS KiB."""
    if params.get("locking", "none") != "none":
        raise ValueError("the C BFS models the trigger under locking none only")
    argv = [str(binary), *_c_args(params)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    distinct, generated, depth, live, rss = (int(x) for x in out)
    return distinct, generated, depth, live, rss


def _c_args(params: dict[str, int]) -> list[str]:
    return [str(params.get(k, 0)) for k in ("writers", "gap", "max_turns", "turns")]


def _c(binary: Path, params: dict[str, int]) -> Callable[[], object]:
    def run() -> object:
        return c_bfs(binary, params)

    return run


def _explorer(params: dict[str, int]) -> Callable[[], object]:
    def run() -> object:
        return explore(build_model("trigger", params)).distinct

    return run


def _minimal(params: dict[str, int]) -> Callable[[], object]:
    def run() -> object:
        return minimal_bfs(build_model("trigger", params))

    return run


def seed_argv(params: dict[str, int]) -> list[str]:
    """``turncheck explore trigger --param …`` at default limits, as a fresh interpreter runs it."""
    argv = [sys.executable, "-m", "turncheck", "explore", "trigger"]
    for k, v in params.items():
        argv += ["--param", f"{k}={v}"]
    return argv


def _fresh(argv: list[str], cwd: str, distinct: int | None = None) -> Callable[[], object]:
    """One run of ``argv`` in a fresh process: its CPU and max RSS; with ``distinct``, the state
    count its output states must be that (the explorer's, checked every round)."""

    def run() -> object:
        code, cpu, rss, out = fresh_process(argv, cwd, CACHED)
        if code not in (0, 1):
            raise RuntimeError(f"{' '.join(argv[1:])} exited {code}")
        if distinct is not None and _distinct(out) != distinct:
            raise RuntimeError(f"{' '.join(argv[1:])} counts {_distinct(out)} states, the C BFS {distinct:,}")
        return cpu, rss

    return run


def _distinct(out: str) -> int | None:
    """The distinct states ``turncheck explore`` prints (``states: 1,351,573 distinct …``)."""
    found = re.search(r"^states: ([\d,]+) distinct", out, re.MULTILINE)
    return None if found is None else int(found.group(1).replace(",", ""))


def _seed(scale: str, binary: Path | str) -> Comparison:
    """The seed's row: the ``explore`` command in a fresh interpreter, CPU and max RSS, against the
    C BFS of the same model, whose state count every round's output must state (without a C
    compiler, the row has no ceiling and a first run gives the count, the note saying why)."""
    params = SEED["full" if scale == "full" else "tiny" if scale == "tiny" else "quick"]
    argv = seed_argv(params)
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-") as cwd:  # a trace it writes lands here
        if isinstance(binary, Path):
            distinct = c_bfs(binary, {**params, "turns": 0})[0]
            ceiling = [Contender(C_NAME, "ceiling", _fresh([str(binary), *_c_args(params)], cwd), distinct,
                                 measures_itself=True)]  # fmt: skip
            note = "each run a fresh process, child of a small launcher: CPU and max RSS read by wait4"
        else:
            counted = _distinct(fresh_process(argv, cwd, CACHED)[3])
            if counted is None:
                raise RuntimeError(f"the seed's {' '.join(argv[1:])} printed no state count")
            distinct = counted
            ceiling, note = [], f"C BFS row skipped: {binary}"
        contenders = [Contender("explore, fresh interpreter", "turncheck", _fresh(argv, cwd, distinct), distinct,
                                measures_itself=True), *ceiling]  # fmt: skip
        # tiny: 3 rounds, the guard's seconds; one tiny run of 3 read 19× against 29× (never higher)
        measured = interleave(contenders, 3 if scale == "tiny" else ROUNDS)
    shown = " ".join(f"--param {k}={v}" for k, v in params.items())
    return Comparison(
        f"the seed's row{'' if scale == 'full' else f' at {scale} scale'}: turncheck explore trigger {shown}, "
        f"default limits: {distinct:,} distinct states",
        "µs per state",
        1e6,
        measured,
        target="max RSS ≤ 600 MiB; CPU ≤ 20× the C BFS (at the full scale, the seed's own parameters)",
        note=note,
        clock="CPU of the child process",
    )


def compare(scale: str) -> list[Comparison]:
    params = FULL if scale == "full" else TINY if scale == "tiny" else QUICK
    distinct = explore(build_model("trigger", params)).distinct
    if minimal_bfs(build_model("trigger", params)) != distinct:
        raise RuntimeError("the minimal BFS and the explorer disagree on the state count")
    contenders = [
        Contender("explore (one process)", "turncheck", _explorer(params), distinct, isolated=True),
        Contender("minimal BFS, same model functions", "ceiling", _minimal(params), distinct, isolated=True),
    ]
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-") as tmp:
        binary = build_c_bfs(Path(tmp))
        if isinstance(binary, Path):
            c_run = c_bfs(binary, params)
            if c_run[0] != distinct:
                raise RuntimeError(f"the C BFS counts {c_run[0]:,} states, the explorer {distinct:,}")
            contenders.append(Contender(C_NAME, "ceiling", _c(binary, params), distinct, children=True))
            peak = f"{c_run[4] / 1024:,.1f} MiB" if c_run[4] else "unknown"
            note = f"C BFS: peak RSS {peak}; its CPU includes the program's start"
        else:
            note = f"C BFS row skipped: {binary}"
        measured = interleave(contenders, ROUNDS)
        seed = _seed(scale, binary)
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    return [
        Comparison(
            f"explorer, trigger {shown}: {distinct:,} distinct states",
            "µs per state",
            1e6,
            measured,
            target="CPU ≤ 1.05× and memory ≤ 1.5× the minimal BFS; ≤ 5× the C BFS",
            note=note,
        ),
        seed,
    ]
