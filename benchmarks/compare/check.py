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
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import expansion, explore

FULL = {"writers": 4, "gap": 2, "max_turns": 4, "turns": 8}
QUICK = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 8}
TINY = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 5}  # the CI smoke: every row, in seconds


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
    argv = [str(binary), *(str(params.get(k, 0)) for k in ("writers", "gap", "max_turns", "turns"))]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    distinct, generated, depth, live, rss = (int(x) for x in out)
    return distinct, generated, depth, live, rss


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
    ]
