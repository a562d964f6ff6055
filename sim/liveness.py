"""Liveness over the explored state graph: fair loops on which a property never holds.

An ``eventually`` property (:class:`models.protocol.Property`) is violated by a *lasso*: a path
from an initial state to a loop that a fair run may go round for ever while the property stays
false — or a state with no enabled action, where the run stutters for ever. The loop must be
*fair* under the model's declared fairness (:meth:`ProtocolModel.fair_actions`,
:meth:`ProtocolModel.strongly_fair_actions`): an action (or action kind) that is weakly fair and
enabled in every state of the loop is taken on it; one that is strongly fair and enabled in some
state of the loop is taken on it.

Every fair loop lies in a strongly connected component of the graph restricted to the states
where the property is false. The pass reads the explorer's transitions as the flat arrays it
recorded (:class:`Transitions`, :class:`Graph`: fair names as bits, read per row on demand) and
finds the candidates cheaply before it runs Python over any state: a single state is a fair loop
when it stutters or steps back to itself taking every fair name it enables (whole-array tests on
the rows of such states); loops of several states need a transition back to a state found no
later in breadth-first order, and when there is one, the states no loop can pass through are
peeled off (Kahn's algorithm a frontier at a time, both ways) before Tarjan's algorithm (an
iterative one, measured about twice as fast as networkx's on the explorer's graphs, four times
with the ``DiGraph`` it would first need) splits the rest. A component is kept whole when it is
fair, pruned of the states enabling a strongly fair action it never takes and split again when
it is not (weak fairness needs no pruning: an action enabled throughout a component and never
taken inside it is enabled throughout, and untaken by, every loop within it). The lasso shown is
then a shortest path to the violating state and a loop through the component that visits what
its fairness asks for.

:func:`fair_loop` judges a concrete run the same way, so a lasso found up to symmetry is checked
on the model's own states, and a saved lasso is checked again by ``turncheck replay``.
"""

from __future__ import annotations

import functools
import operator
from array import array
from collections import deque
from collections.abc import Callable, Collection, Container, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turncheck.models.protocol import Property, ProtocolModel

if TYPE_CHECKING:
    import numpy as np


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


@dataclass(frozen=True)
class Transitions:
    """Every transition a search recorded, in the order it generated them: by source state in
    BFS order, ``out[v]`` of them from state ``v`` (for each state it expanded), the ``i``-th
    going to ``dst[i]`` by ``actions[i]``. Iterating gives ``(src, dst, action)`` triples."""

    dst: array[int]
    actions: list[Any]
    out: array[int]

    def __len__(self) -> int:
        return len(self.dst)

    def __iter__(self) -> Iterator[tuple[int, int, Any]]:
        return zip(self.src.tolist(), self.dst, self.actions, strict=True)

    @property
    def src(self) -> np.ndarray[Any, Any]:
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        out = np.frombuffer(self.out, np.int64)
        return np.repeat(np.arange(len(out)), out)


class Graph:
    """The explored transitions with the model's fairness read into them, as whole arrays.

    Fair names are bits (weakly fair ones first, then strongly fair ones). Rows by source state
    — ``succ[v]``, ``acts[v]``, ``codes[v]`` (the fair names each transition is) and
    ``enabled[v]`` (the names state ``v`` enables) — are slices of the transition arrays (``src``
    is sorted, so a state's transitions are contiguous) built on first use, so a pass that finds
    no fair loop reads few of them. Only the first ``expanded`` states had their successors
    generated.
    """

    def __init__(
        self,
        n: int,
        expanded: int,
        edges: Transitions,
        weak: Sequence[Hashable] = (),
        strong: Sequence[Hashable] = (),
    ) -> None:
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        self.n, self.expanded, self.edges = n, expanded, edges
        self.fair = (*weak, *strong)
        self.weak_bits = (1 << len(weak)) - 1
        self.src, self.dst = edges.src, np.frombuffer(edges.dst, np.int64)
        self.start = start = _starts(self.src, n)
        self.out = np.diff(start)
        self._bits = bits = _Rows(self.bits)  # one entry per distinct action
        actions = edges.actions
        self.succ = _Rows(lambda v: edges.dst[start[v] : start[v + 1]].tolist())
        self.acts = _Rows(lambda v: actions[start[v] : start[v + 1]])
        self.codes = _Rows(lambda v: [bits[a] for a in self.acts[v]])
        self.enabled = _Rows(lambda v: functools.reduce(operator.or_, self.codes[v], 0))
        self._pred: _Rows | None = None

    def bits(self, action: Any) -> int:
        """The fair names ``action`` is, as bits."""
        return sum(1 << i for i, f in enumerate(self.fair) if matches(action, f))

    def terminal(self, v: int) -> bool:
        return v < self.expanded and self.out[v] == 0

    @functools.cached_property
    def single_loops(self) -> list[int]:
        """The states that are a fair loop alone, in ascending order: an expanded state with no
        enabled action (it stutters), or one with a step back to itself that takes every fair
        name it enables (whole-array tests over the rows of such states alone)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        looping = np.unique(self.src[self.src == self.dst])
        first = self.start[looping]
        count = self.start[looping + 1] - first
        rows = _spans(first, count)
        bits, actions = self._bits, self.edges.actions
        code = np.array([bits[actions[i]] for i in rows.tolist()], np.int64)
        kept = np.where(self.dst[rows] == np.repeat(looping, count), code, 0)
        at = np.cumsum(count) - count  # where each state's row begins among ``rows``
        enabled, taken = np.bitwise_or.reduceat(code, at), np.bitwise_or.reduceat(kept, at)
        fair = looping[(enabled & ~taken) == 0]
        return sorted(np.flatnonzero(self.out[: self.expanded] == 0).tolist() + fair.tolist())

    @functools.cached_property
    def cyclic(self) -> list[int]:
        """A superset of the states on loops of two or more states: none when no transition
        leads back to a state found no later (along a loop, BFS ids cannot only grow); else the
        states both reached from a loop and reaching one (:func:`_peel`, forwards then
        backwards)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        other = self.src != self.dst
        src, dst, n = self.src[other], self.dst[other], self.n
        if not np.any(dst < src):
            return []
        alive = np.ones(n, dtype=bool)
        _peel(alive, src, dst)
        if alive.any():
            inside = alive[src] & alive[dst]
            src, dst = src[inside], dst[inside]
            order = np.argsort(dst, kind="stable")
            _peel(alive, dst[order], src[order])
        return np.flatnonzero(alive).tolist()

    def pred(self, v: int) -> list[int]:
        if self._pred is None:
            import numpy as np  # here, not at the top: only a liveness pass needs numpy

            order = np.argsort(self.dst, kind="stable")
            sources, start = self.src[order], _starts(self.dst[order], self.n)
            self._pred = _Rows(lambda w: sources[start[w] : start[w + 1]].tolist())
        return self._pred[v]


def _peel(alive: np.ndarray[Any, Any], src: np.ndarray[Any, Any], dst: np.ndarray[Any, Any]) -> None:
    """Clear in ``alive`` every state no loop of the graph ``src → dst`` (``src`` sorted, between
    states ``alive`` keeps) leads to: Kahn's algorithm, taking a whole frontier of states with no
    transition left into them at a time, so each transition is read once."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    n = len(alive)
    start = _starts(src, n)
    into = np.bincount(dst, minlength=n)
    frontier = np.flatnonzero(alive & (into == 0))
    place = np.empty(n, np.intp)
    while frontier.size:
        alive[frontier] = False
        first = start[frontier]
        reached = dst[_spans(first, start[frontier + 1] - first)]
        np.subtract.at(into, reached, 1)
        free = reached[into[reached] == 0]  # a state reached twice in one round is listed twice
        ranks = np.arange(free.size)
        place[free] = ranks
        frontier = free[place[free] == ranks]


def _starts(src: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """Where each state's row begins in the sorted ``src`` (and, last, where the rows end)."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return start


def _spans(first: np.ndarray[Any, Any], count: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The indices ``first[k] .. first[k] + count[k] - 1`` of every row ``k``, row after row."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    return np.repeat(first - np.cumsum(count) + count, count) + np.arange(count.sum())


class _Rows(dict[Any, Any]):
    """``rows[key]``: ``make(key)``, computed once."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        row = self[key] = self.make(key)
        return row


def matches(action: Any, name: Hashable) -> bool:
    """Whether ``action`` is the fair action ``name``, or of the kind ``name`` (its first element)."""
    return action == name or (isinstance(action, tuple) and len(action) > 0 and action[0] == name)


def components(
    nodes: Sequence[int], succ: _Rows | Sequence[Sequence[int]], keep: Container[int]
) -> list[list[int]]:
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


def cores(graph: Graph, comp: Sequence[int]) -> Iterator[frozenset[int]]:
    """The fair loops' state sets within the component ``comp`` of two or more states (see the
    module docstring)."""
    members = frozenset(comp)
    enabled = graph.enabled
    taken = 0
    for v in comp:
        for w, c in zip(graph.succ[v], graph.codes[v], strict=True):
            if w in members:
                taken |= c
    for i in range(len(graph.fair)):
        bit = 1 << i
        if taken & bit:
            continue
        if bit > graph.weak_bits:  # strongly fair: prune the states that enable it
            if any(enabled[v] & bit for v in comp):
                rest = frozenset(v for v in comp if not enabled[v] & bit)
                for sub in components(sorted(rest), graph.succ, rest):
                    if len(sub) > 1:
                        yield from cores(graph, sub)
                return
        elif all(enabled[v] & bit for v in comp):
            return
    yield members


def waypoints(graph: Graph, core: frozenset[int]) -> list[tuple[int, int | None, Any]]:
    """What a loop through ``core`` must visit to be fair: per weakly fair name, a state that
    disables it or else a step taking it; per strongly fair name it enables, a step taking it.
    A state is ``(v, None, None)``, a step ``(v, w, action)``."""
    out: list[tuple[int, int | None, Any]] = []
    ordered = sorted(core)
    enabled = graph.enabled
    for i in range(len(graph.fair)):
        bit = 1 << i
        off = next((v for v in ordered if not enabled[v] & bit), None)
        if bit <= graph.weak_bits and off is not None:
            out.append((off, None, None))
        elif off is None or any(enabled[v] & bit for v in ordered):
            out.append(
                next(
                    (v, w, a)
                    for v in ordered
                    for w, a, c in zip(graph.succ[v], graph.acts[v], graph.codes[v], strict=True)
                    if w in core and c & bit
                )
            )
    return out


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
) -> Lasso | None:
    """A lasso violating the ``eventually`` property ``prop`` over the explored graph, or None.

    The violating state is the shallowest one (lowest BFS id) from which a fair loop of states
    failing ``prop.holds`` is reachable through such states — for ``leads_to``, the shallowest
    such state where ``prop.when`` holds; the prefix is its BFS path, then a shortest path to
    the loop.
    """
    holds, when = prop.holds, prop.when
    on_loops = frozenset(v for v in graph.cyclic if not holds(states[v]))
    found = [
        core
        for comp in components(sorted(on_loops), graph.succ, on_loops)
        if len(comp) > 1
        for core in cores(graph, comp)
    ]
    found += [frozenset((v,)) for v in graph.single_loops if not holds(states[v])]
    if not found:
        return None
    target = frozenset().union(*found)
    if when is None:
        start = min(target)
        reach: Collection[int] = target
    else:
        reach = _reaching(graph, lambda v: v < graph.expanded and not holds(states[v]), target)
        start = min((v for v in reach if when(states[v])), default=-1)
        if start < 0:
            return None
    ids = path_to(start)
    actions = [via[i] for i in ids[1:]]
    tail, moves = _walk(graph, start, reach, target.__contains__, at_least_one=False)
    ids += tail[1:]
    actions += moves
    entry = ids[-1]
    core = next(c for c in found if entry in c)
    loop = len(actions)
    if graph.terminal(entry):
        return Lasso(tuple(ids), tuple(actions), loop)
    here = entry
    for v, w, a in waypoints(graph, core):
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


def _reaching(graph: Graph, inside: Callable[[int], bool], target: frozenset[int]) -> frozenset[int]:
    """The states ``inside`` from which ``target`` is reachable through such states."""
    seen = set(target)
    queue = deque(target)
    while queue:
        for u in graph.pred(queue.popleft()):
            if u not in seen and inside(u):
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
    the loop, and the loop is fair under the model's declared fairness. Under a counting
    abstraction (:meth:`ProtocolModel.saturation`) the last state need only be in the first's
    class: the abstraction is exact, so the loop's actions repeat from it for ever."""
    ring = list(states[loop:-1]) if loop < len(actions) else [states[-1]]
    closes = states[-1] == states[loop] or (
        model.saturation() is not None and model.canonical(states[-1]) == model.canonical(states[loop])
    )
    if loop < len(actions) and not closes:
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
