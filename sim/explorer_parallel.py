"""The explorer on several processes: the same breadth-first search, level by level.

Every process (this one, rank 0, and ``jobs - 1`` workers) keeps a replica of the visited states
with the same ids. A BFS level ``[lo, hi)`` is cut into ``jobs`` contiguous id ranges; each
rank expands its range in id order and keeps the successors new to its replica, each under its
first *key* ``(parent id, action index)``. The ranks then exchange those candidates as
``(parent id, action)`` — never the states themselves, which cost more to pickle than to
recompute — and every rank merges them in rank order, which is key order because the ranges are
contiguous, recomputing the other ranks' states with one ``step`` and ``canonical``. The first
occurrence of a state in key order gets the next id — exactly the order in which the one-process
explorer discovers it (it expands parents in id order, actions in order), so ids, parents,
actions, levels, state counts, worst cases and shortest counterexamples are the same, byte for
byte. The exact worst cases and the properties are then read by each rank over its share of the
ids and combined (maximum, then lowest id; lowest violating id).

Bounds: ``max_depth`` and ``max_states`` stop exactly where the one-process search stops
(counts of generated transitions included); ``timeout`` is checked between levels. Recording
every edge (``record_edges``) is not supported here: :func:`sim.explorer.explore` runs it in one
process. Workers start with any start method (``spawn`` included): the model is pickled to them.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import sys
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.explorer import Exploration, ProgressLine, PropertyOutcome, Status, Worst, _identity

Candidates = tuple[bytes, list[Any]]
"""One rank's new successors of a level: parent ids (``array('q')`` bytes) and actions, in key order."""


class WorkerFailed(TurncheckError):
    """A worker process of the parallel explorer stopped with an error."""


def _chunks(lo: int, hi: int, jobs: int) -> list[int]:
    return [lo + (hi - lo) * r // jobs for r in range(jobs + 1)]


class _Replica:
    """One rank's copy of the search: states in id order and their index."""

    def __init__(self, model: ProtocolModel[Any, Any], symmetry: bool, keep_tree: bool) -> None:
        self.model = model
        self.canon: Callable[[Any], Hashable] = model.canonical if symmetry else _identity
        self.states: list[Any] = []
        self.index: dict[Any, int] = {}
        self.keep_tree = keep_tree
        self.parent = array("q")
        self.via: list[Any] = []
        for s in model.init_states():
            c = self.canon(s)
            if c not in self.index:
                self.index[c] = len(self.states)
                self.states.append(c)
                self.parent.append(-1)
                self.via.append(None)

    def expand(self, lo: int, hi: int) -> tuple[array[int], array[int], list[Any], list[Any]]:
        """Expand ids ``[lo, hi)``: action counts per state and the new successors (parent ids,
        actions, states), each kept at its first key."""
        actions_of, step, canon = self.model.actions, self.model.step, self.canon
        states, index = self.states, self.index
        counts, parents, actions, found = array("q"), array("q"), [], []
        seen: set[Any] = set()
        for i in range(lo, hi):
            state = states[i]
            enabled = actions_of(state)
            if type(enabled) is not list:
                enabled = list(enabled)
            counts.append(len(enabled))
            for action in enabled:
                c = canon(step(state, action))
                if c in index or c in seen:
                    continue
                seen.add(c)
                parents.append(i)
                actions.append(action)
                found.append(c)
        return counts, parents, actions, found

    def merge(self, rank: int, ranks: Sequence[Candidates | None], own: list[Any], limit: int) -> int | None:
        """Add every rank's candidates in rank (= key) order; the first occurrence of a state
        gets the next id. Returns the parent id being expanded when ``limit`` states stop the
        search (as the one-process search stops), else None."""
        step, canon = self.model.step, self.canon
        states, index, parent, via, keep = self.states, self.index, self.parent, self.via, self.keep_tree
        setdefault = index.setdefault
        n = len(states)
        for r, cand in enumerate(ranks):
            if cand is None:
                continue
            parents = array("q")
            parents.frombytes(cand[0])
            actions = cand[1]
            for k, p in enumerate(parents):
                action = actions[k]
                c = own[k] if r == rank else canon(step(states[p], action))
                if setdefault(c, n) != n:
                    continue
                if n >= limit:
                    del index[c]
                    return p
                states.append(c)
                if keep:
                    parent.append(p)
                    via.append(action)
                n += 1
        return None

    def judge(self, props: Sequence[Property[Any]], lo: int, hi: int) -> list[int | None]:
        """The first id in ``[lo, hi)`` breaking each ``always`` property / meeting each goal."""
        out: list[int | None] = []
        states = self.states
        for p in props:
            holds, want = p.holds, p.expectation != "always"
            out.append(next((i for i in range(lo, hi) if bool(holds(states[i])) == want), None))
        return out

    def worst(self, lo: int, hi: int) -> dict[str, tuple[int, int]]:
        """Per metric: the largest value in ``[lo, hi)`` and the first id reaching it."""
        metrics_of = self.model.metrics
        worst: dict[str, int] = {}
        worst_at: dict[str, int] = {}
        states = self.states
        for i in range(lo, hi):
            for name, value in metrics_of(states[i]).items():
                if value > worst.get(name, -sys.maxsize):
                    worst[name] = value
                    worst_at[name] = i
        return {name: (worst[name], worst_at[name]) for name in worst}


def _own_properties(model: ProtocolModel[Any, Any], props: Sequence[Property[Any]]) -> list[int] | None:
    """Indices into ``model.properties()`` of ``props`` when each is the model's own (same name,
    kind, code and captured values), so a worker can rebuild them; None otherwise."""
    own = list(model.properties())
    out = []
    for p in props:
        match = next((i for i, q in enumerate(own) if _same_property(p, q)), None)
        if match is None:
            return None
        out.append(match)
    return out


def _same_property(p: Property[Any], q: Property[Any]) -> bool:
    if (p.name, p.expectation) != (q.name, q.expectation):
        return False
    f, g = p.holds, q.holds
    if f is g:
        return True
    code_f, code_g = getattr(f, "__code__", None), getattr(g, "__code__", None)
    if code_f is None or code_f is not code_g:
        return False
    cells_f = [c.cell_contents for c in (getattr(f, "__closure__", None) or ())]
    cells_g = [c.cell_contents for c in (getattr(g, "__closure__", None) or ())]
    try:
        return bool(cells_f == cells_g) and getattr(f, "__defaults__", None) == getattr(
            g, "__defaults__", None
        )
    except Exception:  # noqa: BLE001 - a captured value that cannot be compared: not provably the same
        return False


def _portable(model: ProtocolModel[Any, Any]) -> Any:
    """What a worker needs to have the same model: the model pickled, or, for a catalog model
    that does not pickle (cached bound methods), its catalog name and parameters."""
    try:
        pickle.dumps(model)
        return model
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing here
        why = f"{type(exc).__name__}: {exc}"
    from turncheck.models.catalog import build_model, model_names

    if model.name in model_names():
        try:
            rebuilt = build_model(model.name, dict(model.params))
        except TurncheckError:
            rebuilt = None
        if type(rebuilt) is type(model):
            return ("catalog", model.name, dict(model.params))
    raise BadParameter(
        f"model {model.name} cannot be sent to worker processes ({why}); explore it with --jobs 1"
    )


def _worker(conn: Connection, portable: Any, symmetry: bool, rank: int, jobs: int) -> None:
    """A worker rank: expand its range of each level, merge everyone's candidates, read its
    share of properties and metrics at the end. Module-level, so any start method can run it."""
    gc.disable()  # states are acyclic tuples, as in the one-process search
    try:
        if isinstance(portable, tuple) and portable[:1] == ("catalog",):
            from turncheck.models.catalog import build_model

            model = build_model(portable[1], portable[2])
        else:
            model = portable
        replica = _Replica(model, symmetry, keep_tree=False)
        while True:
            msg = conn.recv()
            if msg[0] == "expand":
                _, lo, hi = msg
                bounds = _chunks(lo, hi, jobs)
                counts, parents, actions, found = replica.expand(bounds[rank], bounds[rank + 1])
                conn.send((counts.tobytes(), parents.tobytes(), actions))
                others, limit = conn.recv()
                ranks: list[Candidates | None] = list(others)
                ranks.insert(rank, (parents.tobytes(), actions))
                replica.merge(rank, ranks, found, limit)
            elif msg[0] == "finish":
                _, indices, n = msg
                props = list(model.properties())
                lo, hi = _chunks(0, n, jobs)[rank : rank + 2]
                judged = replica.judge([props[i] for i in indices], lo, hi) if indices is not None else None
                conn.send((judged, replica.worst(lo, hi)))
                return
            else:
                return
    except Exception as exc:  # noqa: BLE001 - reported to the main process, which raises
        try:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        except OSError:
            pass  # the main process is gone: nobody to tell


def explore_parallel(
    model: ProtocolModel[Any, Any],
    jobs: int,
    *,
    properties: Sequence[Property[Any]] | None = None,
    symmetry: bool = True,
    max_states: int | None = 1_000_000,
    max_depth: int | None = None,
    timeout: float | None = None,
    progress: ProgressLine | None = None,
    start_method: str | None = None,
) -> Exploration:
    """:func:`sim.explorer.explore` on ``jobs`` processes (this one and ``jobs - 1`` workers);
    the same result for the same model and bounds (see the module docstring)."""
    if jobs < 2:
        raise BadParameter(f"parallel exploration needs jobs >= 2, got {jobs}")
    portable = _portable(model)
    props = tuple(model.properties()) if properties is None else tuple(properties)
    indices = _own_properties(model, props)
    limit_states = max_states if max_states is not None else sys.maxsize
    limit_depth = max_depth if max_depth is not None else sys.maxsize
    context: Any = multiprocessing.get_context(start_method)
    started = time.perf_counter()
    deadline = started + timeout if timeout is not None else float("inf")
    links: list[Connection] = []
    workers = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rank in range(1, jobs):
            mine, theirs = context.Pipe()
            proc = context.Process(target=_worker, args=(theirs, portable, symmetry, rank, jobs), daemon=True)
            proc.start()
            theirs.close()
            links.append(mine)
            workers.append(proc)
        replica = _Replica(model, symmetry, keep_tree=True)
        try:
            search = _search(
                replica, links, jobs, limit_states, limit_depth, deadline, timeout, progress, started
            )
            generated, terminal, head, bound, levels = search
            n = len(replica.states)
            for link in links:
                link.send(("finish", indices, n))
            lo, hi = _chunks(0, n, jobs)[:2]
            parts = [(replica.judge(props, lo, hi) if indices is not None else None, replica.worst(lo, hi))]
            parts += [_receive(link) for link in links]
        except (EOFError, OSError) as exc:
            raise WorkerFailed(
                f"an explorer worker process ended unexpectedly ({type(exc).__name__})"
            ) from None
        if indices is None:
            parts[0] = (replica.judge(props, 0, n), parts[0][1])
        depth_of = _depth_of(levels)
        outcomes = _outcomes(props, [p[0] for p in parts], depth_of)
        worst = _combine_worst([p[1] for p in parts], depth_of)
    finally:
        for link in links:
            try:
                link.send(("stop",))
            except (OSError, ValueError):
                pass
        for proc in workers:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        if gc_was_enabled:
            gc.enable()
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(generated, n, n - head, depth_of(n - 1) if n else 0, seconds)
    return Exploration(
        model=model.name,
        params=dict(model.params),
        symmetry=symmetry,
        distinct=n,
        generated=generated,
        max_depth_seen=depth_of(n - 1) if n else 0,
        terminal=terminal,
        exhausted=bound is None,
        bound=bound,
        seconds=seconds,
        properties=outcomes,
        worst=worst,
        states=replica.states,
        parent=replica.parent,
        via=replica.via,
        levels=tuple(levels),
        edges=None,
    )


def _receive(link: Connection) -> Any:
    msg = link.recv()
    if isinstance(msg, tuple) and len(msg) == 2 and msg[0] == "error":
        raise WorkerFailed(f"explorer worker failed: {msg[1]}")
    return msg


def _search(
    replica: _Replica,
    links: list[Connection],
    jobs: int,
    limit_states: int,
    limit_depth: int,
    deadline: float,
    timeout: float | None,
    progress: ProgressLine | None,
    started: float,
) -> tuple[int, int, int, str | None, list[int]]:
    """The level loop of rank 0: ``(generated, terminal, head, bound, levels)`` as the
    one-process search ends with them."""
    states = replica.states
    actions_of = replica.model.actions
    levels = [0]
    generated = terminal = 0
    lo, hi, d = 0, len(states), 0
    bound: str | None = None
    head = 0
    while lo < hi:
        now = time.perf_counter()
        if now >= deadline:
            bound = f"timeout ({timeout:g} s)"
            break
        if progress is not None:
            progress(generated, hi, hi - lo, d, now - started)
        for link in links:
            link.send(("expand", lo, hi))
        bounds = _chunks(lo, hi, jobs)
        counts, parents, actions, found = replica.expand(bounds[0], bounds[1])
        replies = [_receive(link) for link in links]
        ranks: list[Candidates | None] = [(parents.tobytes(), actions)]
        all_counts = array("q", counts)
        for reply in replies:
            all_counts.frombytes(reply[0])
            ranks.append((reply[1], reply[2]))
        for r, link in enumerate(links, start=1):
            link.send(([c for q, c in enumerate(ranks) if q != r], limit_states))
        stopped_at = replica.merge(0, ranks, found, limit_states)
        if stopped_at is not None:
            upto = stopped_at - lo + 1  # the one-process search counts the parent's actions too
            generated += sum(all_counts[:upto])
            terminal += all_counts[:upto].count(0)
            head = stopped_at
            bound = f"max states ({limit_states:,})"
            break
        generated += sum(all_counts)
        terminal += all_counts.count(0)
        head = hi
        lo, hi = hi, len(states)
        if lo < hi:
            d += 1
            levels.append(lo)
            if d >= limit_depth:
                if any(any(True for _ in actions_of(states[i])) for i in range(lo, hi)):
                    bound = f"max depth ({limit_depth})"
                break
    if levels[-1] >= len(states):
        levels.pop()
    return generated, terminal, head, bound, levels


def _depth_of(levels: list[int]) -> Callable[[int], int]:
    frozen = tuple(levels)

    def depth_of(i: int) -> int:
        return bisect_right(frozen, i) - 1

    return depth_of


def _outcomes(
    props: Sequence[Property[Any]], parts: Sequence[list[int | None] | None], depth_of: Callable[[int], int]
) -> tuple[PropertyOutcome, ...]:
    """Each property's lowest id over the ranks' shares (what one scan in id order finds)."""
    out = []
    for k, p in enumerate(props):
        ids = [part[k] for part in parts if part is not None and part[k] is not None]
        sid = min(ids) if ids else None  # type: ignore[type-var]
        if p.expectation == "always":
            status: Status = "holds" if sid is None else "violated"
        else:
            status = "unreached" if sid is None else "reached"
        depth = None if sid is None else depth_of(sid)
        out.append(PropertyOutcome(p.name, p.expectation, status, sid, depth, p.doc))
    return tuple(out)


def _combine_worst(
    parts: Sequence[dict[str, tuple[int, int]]], depth_of: Callable[[int], int]
) -> tuple[Worst, ...]:
    """Per metric: the largest value over the ranks, and the lowest id reaching it."""
    best: dict[str, tuple[int, int]] = {}
    for part in parts:
        for name, (value, at) in part.items():
            old = best.get(name)
            if old is None or value > old[0] or (value == old[0] and at < old[1]):
                best[name] = (value, at)
    return tuple(
        Worst(name, int(best[name][0]), best[name][1], depth_of(best[name][1])) for name in sorted(best)
    )


__all__ = ["WorkerFailed", "explore_parallel"]
