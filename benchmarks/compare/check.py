"""The explorer against a minimal breadth-first search over the same model functions.

turncheck: :func:`sim.explorer.explore` of the trigger model (writers 4, gap 2, maxTurns 4,
8 turns each: 621 706 distinct states at full scale), properties judged and worst cases taken.
Ceiling: the least a BFS over the model can do — a dict of canonical states to their parent, a
list as the queue, ``successors``/``canonical`` called exactly as the explorer calls them, and the
same per-state properties and metrics read afterwards. Each round runs in a forked
child, so the peak memory growth is each search's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import expansion, explore

FULL = {"writers": 4, "gap": 2, "max_turns": 4, "turns": 8}
QUICK = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 8}
TINY = {"writers": 3, "gap": 2, "max_turns": 3, "turns": 5}  # the CI smoke: every row, in seconds


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
    measured = interleave(
        [
            Contender("explore (one process)", "turncheck", _explorer(params), distinct, isolated=True),
            Contender(
                "minimal BFS, same model functions", "ceiling", _minimal(params), distinct, isolated=True
            ),
        ],
        ROUNDS,
    )
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    return [
        Comparison(
            f"explorer, trigger {shown}: {distinct:,} distinct states",
            "µs per state",
            1e6,
            measured,
            target="CPU ≤ 1.05× and memory ≤ 1.5× the minimal BFS",
        ),
    ]
