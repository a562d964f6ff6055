"""The explorer against a minimal breadth-first search over the same model functions.

turncheck: :func:`sim.explorer.explore` of the trigger model (writers 4, gap 2, maxTurns 4,
8 turns each: 621 706 distinct states at full scale), properties judged and worst cases taken.
Ceiling: the least a BFS over the model can do — a dict of canonical states to their parent, a
list as the queue, ``successors``/``canonical`` called exactly as the explorer calls them, and the
same per-state properties and metrics read afterwards. Each round runs in a forked
child, so the peak memory growth is each search's own.

``explore --jobs 2`` is measured twice: the work of both its ranks done in this one process
(:func:`partitioned_work`, CPU time against the one-process search — the work the partition
adds, which load hardly moves), and the real thing in wall time against ``--jobs 1``.
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from turncheck.bench.compare import Comparison, Contender, interleave, paired_ratio
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import explore
from turncheck.sim.explorer_parallel import assemble
from turncheck.sim.explorer_share import Share, ownership

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
    successors, canon = model.successors, model.canonical
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
        for _action, after in successors(state):
            c = canon(after)
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


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the explorer's workers, once joined)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _explorer_jobs(params: dict[str, int], jobs: int, cpu: list[tuple[float, float]]) -> Callable[[], object]:
    """One search on ``jobs`` processes (the platform's start method); appends the CPU seconds of
    this process and of the workers (once joined) to ``cpu``."""

    def run() -> object:
        c0, k0 = time.process_time(), _children_cpu()
        distinct = explore(build_model("trigger", params), jobs=jobs).distinct
        cpu.append((time.process_time() - c0, _children_cpu() - k0))
        return distinct

    return run


def _distinct_of(params: dict[str, int]) -> int:
    return explore(build_model("trigger", params)).distinct


def _two_at_once(params: dict[str, int]) -> Callable[[], object]:
    """Two independent one-process searches on two processes at once: no exchange, no waiting —
    the most any two-process search can get from this machine."""

    def run() -> object:
        with multiprocessing.get_context().Pool(2) as pool:
            return sum(pool.map(_distinct_of, [params, params]))

    return run


def compare_jobs(params: dict[str, int], distinct: int) -> Comparison:
    """``explore --jobs 2`` against ``--jobs 1`` in wall-clock time, interleaved in one run (workers
    started by the platform's default method, their start-up included); the result arrays are
    compared once first. The note adds CPU seconds per process: on a shared machine wall time
    counts the other jobs, so the one-process CPU over the busier process's CPU is printed too —
    the speedup an idle machine would give if no process ever waited for the other."""
    one = explore(build_model("trigger", params))
    two = explore(build_model("trigger", params), jobs=2)
    same = (list(one.states), list(one.parent), one.via, one.properties, one.worst, one.levels) == (
        list(two.states), list(two.parent), two.via, two.properties, two.worst, two.levels,
    )  # fmt: skip
    if not same:
        raise RuntimeError("explore --jobs 2 and --jobs 1 disagree")
    del one, two
    cpu_one: list[tuple[float, float]] = []
    cpu_two: list[tuple[float, float]] = []
    measured = interleave(
        [
            Contender(
                "explore --jobs 2", "turncheck", _explorer_jobs(params, 2, cpu_two), distinct, wall=True
            ),
            Contender(
                "explore --jobs 1 (one process)",
                "ceiling",
                _explorer_jobs(params, 1, cpu_one),
                distinct,
                wall=True,
            ),
            Contender(
                "two independent one-process searches at once, per state of both",
                "ceiling",
                _two_at_once(params),
                2 * distinct,
                wall=True,
            ),
        ],
        ROUNDS,
    )
    speedup = paired_ratio(measured[1], measured[0])
    machine = paired_ratio(measured[1], measured[2])
    one_cpu = statistics.median(c for c, _ in cpu_one)
    main_cpu = statistics.median(c for c, _ in cpu_two)
    worker_cpu = statistics.median(k for _, k in cpu_two)
    split = (
        f"CPU, median of the rounds: one process {one_cpu:.2f} s; 2 jobs: this process {main_cpu:.2f} s + "
        f"worker {worker_cpu:.2f} s = {main_cpu + worker_cpu:.2f} s ({(main_cpu + worker_cpu) / one_cpu:.2f}× the "
        f"work); one-process CPU ÷ the busier process's CPU {one_cpu / max(main_cpu, worker_cpu):.2f}×"
    )
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    return Comparison(
        f"parallel explorer, trigger {shown}: {distinct:,} distinct states, same result on 2 processes",
        "µs per state",
        1e6,
        measured,
        target="≥ 1.6× faster with 2 jobs on a 2-core machine (wall time)",
        note=f"speedup with 2 jobs: {speedup:.2f}× in wall time; {split}; two independent searches at once "
        f"run {machine:.2f}× the one-process rate, the most two processes got from this machine in this run; "
        "wall time counts every other job on the machine — read it beside the load average",
        clock="wall time",
    )


def partitioned_work(model: Any, ranks: int = 2) -> int:
    """All the work of ``explore --jobs ranks`` done in this one process, rank after rank: each
    level's expansion with the outboxes pickled, the merge, the numbering, each share's
    properties and metrics, and the assembly of the result — everything but the waiting and the
    process start-up. Its CPU time over the one-process search's is the work the partition adds,
    a ratio the machine's load hardly moves; ``ranks`` over it is the best speedup ``ranks``
    idle cores could give."""
    table = ownership(ranks, lighter=0)
    shares = [Share(model, model.canonical, r, table, hash) for r in range(ranks)]
    new = True
    while new:
        out = [s.expand() for s in shares]
        keys = [s.merge([out[o][r] for o in range(ranks) if o != r]) for r, s in enumerate(shares)]
        numbered = [
            s.number([keys[o] for o in range(ranks) if o != r], sys.maxsize) for r, s in enumerate(shares)
        ]
        for s in shares:
            s.tally(None)
        new = numbered[0][0] > 0
    props = list(model.properties())
    for s in shares:
        s.judge(props)
        s.worst()
    states, _parent, _via = assemble(shares[0].distinct, [shares[0], *(s.shipment() for s in shares[1:])])
    return len(states)


def _partitioned(params: dict[str, int]) -> Callable[[], object]:
    def run() -> object:
        return partitioned_work(build_model("trigger", params))

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
    if partitioned_work(build_model("trigger", params)) != distinct:
        raise RuntimeError("the partitioned search and the explorer disagree on the state count")
    work = interleave(
        [
            Contender(
                "both ranks of explore --jobs 2, in one process", "turncheck", _partitioned(params), distinct
            ),
            Contender("explore (one process)", "ceiling", _explorer(params), distinct),
        ],
        ROUNDS,
    )
    return [
        Comparison(
            f"explorer, trigger {shown}: {distinct:,} distinct states",
            "µs per state",
            1e6,
            measured,
            target="CPU ≤ 1.05× and memory ≤ 1.5× the minimal BFS",
        ),
        Comparison(
            f"work of the partitioned explorer, trigger {shown}: {distinct:,} distinct states, 2 ranks",
            "µs per state",
            1e6,
            work,
            note=f"best speedup two idle cores could give this work: {2 / paired_ratio(work[0], work[1]):.2f}× "
            "(no waiting, no start-up, perfect balance)",
        ),
        compare_jobs(params, distinct),
    ]
