"""Liveness over the explored state graph: fair loops on which a property never holds.

An ``eventually`` property (:class:`models.protocol.Property`) is violated by a *lasso*: a path
from an initial state to a loop that a fair run may go round for ever while the property stays
false — or a state with no enabled action, where the run stutters for ever. The loop must be
*fair* under the model's declared fairness (:meth:`ProtocolModel.fair_actions`,
:meth:`ProtocolModel.strongly_fair_actions`): an action (or action kind) that is weakly fair and
enabled in every state of the loop is taken on it; one that is strongly fair and enabled in some
state of the loop is taken on it.

Every fair loop lies in a strongly connected component of the graph restricted to the states
where the property is false, so the search is: those components (an iterative Tarjan over the
explorer's adjacency lists, measured faster than networkx's routine on the graphs the explorer
builds, which would first have to be copied into a ``DiGraph``), each kept whole when it is fair,
pruned of the states enabling a strongly fair action it never takes and split again when it is
not (weak fairness needs no pruning: an action enabled throughout a component and never taken
inside it is enabled throughout, and untaken by, every loop within it). The lasso shown is then
a shortest path to the violating state and a loop through the component that visits what its
fairness asks for.

:func:`fair_loop` judges a concrete run the same way, so a lasso found up to symmetry is checked
on the model's own states, and a saved lasso is checked again by ``turncheck replay``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Container, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.protocol import Property, ProtocolModel


@dataclass(frozen=True)
class Lasso:
    """A run ``ids`` (state ids) by ``actions`` whose last state is ``ids[loop]`` again — the loop
    is ``actions[loop:]`` — or, when ``loop == len(actions)``, a state that stutters for ever."""

    ids: tuple[int, ...]
    actions: tuple[Any, ...]
    loop: int

    @property
    def stutters(self) -> bool:
        return self.loop == len(self.actions)


class Graph:
    """The explored transitions as adjacency lists: ``succ[v]`` and ``acts[v]`` side by side;
    only the first ``expanded`` states had their successors generated."""

    def __init__(self, n: int, expanded: int, edges: Sequence[tuple[int, int, Any]]) -> None:
        self.succ: list[list[int]] = [[] for _ in range(n)]
        self.acts: list[list[Any]] = [[] for _ in range(n)]
        for src, dst, action in edges:
            self.succ[src].append(dst)
            self.acts[src].append(action)
        self.expanded = expanded

    def terminal(self, v: int) -> bool:
        return v < self.expanded and not self.succ[v]


def matches(action: Any, name: Hashable) -> bool:
    """Whether ``action`` is the fair action ``name``, or of the kind ``name`` (its first element)."""
    return action == name or (isinstance(action, tuple) and len(action) > 0 and action[0] == name)


def components(nodes: Sequence[int], succ: Sequence[Sequence[int]], keep: Container[int]) -> list[list[int]]:
    """The strongly connected components of the graph ``succ`` restricted to ``keep``, reached
    from ``nodes`` (all in ``keep``): Tarjan's algorithm with an explicit stack."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work: list[tuple[int, Iterator[int]]] = [(root, iter(succ[root]))]
        while work:
            v, it = work[-1]
            for w in it:
                if w not in keep:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work and low[v] < low[work[-1][0]]:
                    low[work[-1][0]] = low[v]
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


class _Fairness:
    """The model's fairness read once, and the fair names each state enables (cached)."""

    def __init__(self, graph: Graph, weak: Sequence[Hashable], strong: Sequence[Hashable]) -> None:
        self.graph, self.weak, self.strong = graph, tuple(weak), tuple(strong)
        self._on: dict[int, frozenset[Hashable]] = {}

    def enabled(self, v: int) -> frozenset[Hashable]:
        on = self._on.get(v)
        if on is None:
            acts = self.graph.acts[v]
            on = self._on[v] = frozenset(
                f for f in (*self.weak, *self.strong) if any(matches(a, f) for a in acts)
            )
        return on

    def cores(self, comp: Sequence[int]) -> Iterator[frozenset[int]]:
        """The fair loops' state sets within the component ``comp`` (see the module docstring)."""
        succ = self.graph.succ
        members = frozenset(comp)
        if len(comp) == 1:
            v = comp[0]
            if self.graph.terminal(v):
                yield members
                return
            if v not in succ[v]:
                return
        taken = {
            f
            for v in comp
            for w, a in zip(succ[v], self.graph.acts[v], strict=True)
            if w in members
            for f in (*self.weak, *self.strong)
            if matches(a, f)
        }
        for f in self.strong:
            if f not in taken and any(f in self.enabled(v) for v in comp):
                rest = frozenset(v for v in comp if f not in self.enabled(v))
                for sub in components(sorted(rest), succ, rest):
                    yield from self.cores(sub)
                return
        if any(f not in taken and all(f in self.enabled(v) for v in comp) for f in self.weak):
            return
        yield members

    def waypoints(self, core: frozenset[int]) -> list[tuple[int, int | None, Any]]:
        """What a loop through ``core`` must visit to be fair: per weakly fair name, a state that
        disables it or else an edge taking it; per strongly fair name it enables, an edge taking
        it. A state is ``(v, None, None)``, an edge ``(v, w, action)``."""
        out: list[tuple[int, int | None, Any]] = []
        ordered = sorted(core)
        for f in self.weak:
            off = next((v for v in ordered if f not in self.enabled(v)), None)
            out.append((off, None, None) if off is not None else self._edge(ordered, core, f))
        for f in self.strong:
            if any(f in self.enabled(v) for v in ordered):
                out.append(self._edge(ordered, core, f))
        return out

    def _edge(self, ordered: Sequence[int], core: frozenset[int], f: Hashable) -> tuple[int, int | None, Any]:
        g = self.graph
        return next(
            (v, w, a)
            for v in ordered
            for w, a in zip(g.succ[v], g.acts[v], strict=True)
            if w in core and matches(a, f)
        )


def _walk(
    graph: Graph, start: int, allowed: Container[int], goal: Callable[[int], bool], at_least_one: bool
) -> tuple[list[int], list[Any]]:
    """A shortest path inside ``allowed`` from ``start`` to a ``goal`` state: ``start`` itself
    when it is one, unless ``at_least_one`` (a loop back to ``start`` takes a step)."""
    if not at_least_one and goal(start):
        return [start], []
    prev: dict[int, tuple[int, Any]] = {}
    seen = {start}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w, a in zip(graph.succ[v], graph.acts[v], strict=True):
            if w not in allowed:
                continue
            if goal(w):
                ids, acts = [w, v], [a]
                while v != start:
                    v, b = prev[v]
                    ids.append(v)
                    acts.append(b)
                return ids[::-1], acts[::-1]
            if w not in seen:
                seen.add(w)
                prev[w] = (v, a)
                queue.append(w)
    raise AssertionError("unreachable: the goal lies in the same component")


def find_lasso(
    prop: Property[Any],
    states: Sequence[Any],
    graph: Graph,
    path_to: Callable[[int], list[int]],
    via: Sequence[Any],
    weak: Sequence[Hashable],
    strong: Sequence[Hashable],
) -> Lasso | None:
    """A lasso violating the ``eventually`` property ``prop`` over the explored graph, or None.

    The violating state is the shallowest one (lowest BFS id) from which a fair loop of states
    failing ``prop.holds`` is reachable through such states — for ``leads_to``, the shallowest
    such state where ``prop.when`` holds; the prefix is its BFS path, then a shortest path to
    the loop.
    """
    holds, when = prop.holds, prop.when
    bad = frozenset(v for v in range(graph.expanded) if not holds(states[v]))
    if not bad:
        return None
    fairness = _Fairness(graph, weak, strong)
    cores = [c for comp in components(sorted(bad), graph.succ, bad) for c in fairness.cores(comp)]
    if not cores:
        return None
    target = frozenset().union(*cores)
    if when is None:
        start = min(target)
        reach: Collection[int] = target
    else:
        reach = _reaching(graph, bad, target)
        start = min((v for v in reach if when(states[v])), default=-1)
        if start < 0:
            return None
    ids = path_to(start)
    actions = [via[i] for i in ids[1:]]
    tail, moves = _walk(graph, start, reach, target.__contains__, at_least_one=False)
    ids += tail[1:]
    actions += moves
    entry = ids[-1]
    core = next(c for c in cores if entry in c)
    loop = len(actions)
    if graph.terminal(entry):
        return Lasso(tuple(ids), tuple(actions), loop)
    here = entry
    for v, w, a in fairness.waypoints(core):
        leg, moves = _walk(graph, here, core, v.__eq__, at_least_one=False)
        ids += leg[1:]
        actions += moves
        here = v
        if w is not None:
            ids.append(w)
            actions.append(a)
            here = w
    leg, moves = _walk(graph, here, core, entry.__eq__, at_least_one=len(actions) == loop)
    ids += leg[1:]
    actions += moves
    return Lasso(tuple(ids), tuple(actions), loop)


def _reaching(graph: Graph, inside: frozenset[int], target: frozenset[int]) -> frozenset[int]:
    """The states of ``inside`` from which ``target`` is reachable within ``inside``."""
    pred: dict[int, list[int]] = {}
    for v in inside:
        for w in graph.succ[v]:
            if w in inside:
                pred.setdefault(w, []).append(v)
    seen = set(target)
    queue = deque(target)
    while queue:
        for u in pred.get(queue.popleft(), ()):
            if u not in seen:
                seen.add(u)
                queue.append(u)
    return frozenset(seen)


def fair_loop(
    model: ProtocolModel[Any, Any],
    prop: Property[Any],
    states: Sequence[Any],
    actions: Sequence[Any],
    loop: int,
) -> str | None:
    """Why the run ``states`` (``states[k + 1] = step(states[k], actions[k])``) is *not* a lasso
    violating ``prop`` from step ``loop`` on, or None when it is: its last state is the loop's
    first (or, with ``loop == len(actions)``, enables nothing), ``prop`` fails on every state of
    the loop, and the loop is fair under the model's declared fairness."""
    ring = list(states[loop:-1]) if loop < len(actions) else [states[-1]]
    if loop < len(actions) and states[-1] != states[loop]:
        return (
            f"the loop does not close: the state after step {len(actions)} is not the one after step {loop}"
        )
    enabled = [list(model.actions(s)) for s in ring]
    if loop == len(actions) and enabled[0]:
        return f"the state after step {loop} does not stutter: it enables {len(enabled[0])} action(s)"
    hit = next((k for k, s in enumerate(ring) if prop.holds(s)), None)
    if hit is not None:
        return f"{prop.name} holds after step {loop + hit}, on the loop"
    taken = list(actions[loop:])
    for f in model.fair_actions():
        if all(any(matches(a, f) for a in acts) for acts in enabled) and not any(
            matches(a, f) for a in taken
        ):
            return f"the loop is not fair: {f!r} stays enabled on it and is never taken"
    for f in model.strongly_fair_actions():
        if any(any(matches(a, f) for a in acts) for acts in enabled) and not any(
            matches(a, f) for a in taken
        ):
            return f"the loop is not fair: {f!r} is enabled on it again and again and never taken"
    return None
