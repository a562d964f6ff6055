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
recorded (:class:`Transitions`, :class:`Graph`: fair names as bits; per state or transition one
array cell, no Python object) and finds the candidates cheaply before it runs Python over any
state: a single state is a fair loop when it stutters or steps back to itself taking every fair
name it enables (whole-array tests on the rows of such states); loops of several states need a
transition back to a state found no later in breadth-first order, and when there is one, the
states no loop can pass through are peeled off (Kahn's algorithm a frontier at a time, both
ways), once over the whole graph and again among its states where the property is false, before
Tarjan's algorithm (iterative, over arrays: about three times as fast as networkx's on a random
graph of 500 000 states, ten times with the ``DiGraph`` it would first need) splits the rest
(issue 58: on the trigger's seed row, 1.35 million states, the peak went from 1 083 MiB to 395,
the search alone with every transition kept 376). A component is kept whole when it is
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
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
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

    Fair names are bits (weakly fair ones first, then strongly fair ones). ``src`` is sorted, so
    a state's transitions are contiguous: state ``v``'s are ``start[v]`` up to ``start[v + 1]``
    in ``dst`` and the recorded actions. What a pass reads per transition or per state is one
    array over all of them, built on first use — ``codes`` (the fair names each transition is,
    each distinct action mapped to its bits once) and ``enabled`` (the names each state
    enables) — so nothing is kept per state but array cells, and a pass that finds no fair loop
    builds neither. Only the first ``expanded`` states had their successors generated.
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
        out = np.frombuffer(edges.out, np.int64)
        # a state id or a transition's index in half the memory, whenever they fit
        ids = np.int32 if max(n, len(edges)) < 2**31 else np.int64
        self.src = np.repeat(np.arange(len(out), dtype=ids), out)
        self.dst = np.frombuffer(edges.dst, np.int64).astype(ids)
        self.start = _starts(self.src, n)
        self._bits = _Bits(self.bits)  # one entry per distinct action

    def bits(self, action: Any) -> int:
        """The fair names ``action`` is, as bits."""
        return sum(1 << i for i, f in enumerate(self.fair) if matches(action, f))

    def terminal(self, v: int) -> bool:
        return v < self.expanded and self.start[v] == self.start[v + 1]

    def rows(self, ids: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The transitions of the states ``ids``, state after state."""
        first = self.start[ids]
        return _spans(first, self.start[ids + 1] - first)

    @functools.cached_property
    def codes(self) -> np.ndarray[Any, Any]:
        """The fair names each transition is, as bits."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        return np.fromiter(map(self._bits.__getitem__, self.edges.actions), np.int64, len(self.edges))

    @functools.cached_property
    def enabled(self) -> np.ndarray[Any, Any]:
        """The fair names each state enables, as bits: its transitions' ``codes`` or-ed."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        enabled = np.zeros(self.n, np.int64)
        rows = np.flatnonzero(np.diff(self.start))
        if rows.size:
            enabled[rows] = np.bitwise_or.reduceat(self.codes, self.start[rows])
        return enabled

    @functools.cached_property
    def single_loops(self) -> np.ndarray[Any, Any]:
        """The states that are a fair loop alone, in ascending order: an expanded state with no
        enabled action (it stutters), or one with a step back to itself that takes every fair
        name it enables (whole-array tests over the rows of such states alone)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        looping = _distinct(self.src[self.src == self.dst])
        first = self.start[looping]
        count = self.start[looping + 1] - first
        rows = _spans(first, count)
        actions = map(self.edges.actions.__getitem__, rows.tolist())
        code = np.fromiter(map(self._bits.__getitem__, actions), np.int64, rows.size)
        kept = np.where(self.dst[rows] == np.repeat(looping, count), code, 0)
        at = np.cumsum(count) - count  # where each state's row begins among ``rows``
        enabled, taken = np.bitwise_or.reduceat(code, at), np.bitwise_or.reduceat(kept, at)
        fair = looping[(enabled & ~taken) == 0]
        stutter = np.flatnonzero(np.diff(self.start[: self.expanded + 1]) == 0)
        return np.sort(np.concatenate((stutter, fair.astype(np.int64))))

    @functools.cached_property
    def cyclic(self) -> np.ndarray[Any, Any]:
        """A superset of the states on loops of two or more states (a mask): :meth:`looping_within`."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        return self.looping_within(np.ones(self.n, dtype=bool))

    def looping_within(self, inside: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """A superset of the states on loops of two or more states of ``inside`` (a mask), as a
        mask: none when no transition between them leads back to a state found no later (along
        a loop, BFS ids cannot only grow); else the states both reached from such a loop and
        reaching one (:func:`_peel`, forwards then backwards)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        if not inside.any():
            return inside.copy()
        src, dst = self.src, self.dst
        moves = src != dst
        moves &= inside[src]
        moves &= inside[dst]
        src, dst = src[moves], dst[moves]
        del moves
        if not np.any(dst < src):
            return np.zeros(self.n, dtype=bool)
        n, alive = self.n, inside.copy()
        _peel(alive, _starts(src, n), dst)
        if alive.any():
            kept = alive[src]
            kept &= alive[dst]
            src, dst = src[kept], dst[kept]
            del kept
            start = _starts(dst, n)
            key = dst.astype(np.int64)  # each transition as one number, target then source,
            del dst
            key *= n
            key += src
            del src
            key.sort()  # sorted in place: the sources grouped by target
            np.remainder(key, n, out=key)
            back = key.astype(self.src.dtype)
            del key
            _peel(alive, start, back)
        return alive

    def between(self, ids: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """The transitions between the states ``ids`` (ascending), in the order recorded, and
        where each leads among ``ids`` (its position there)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        rows = self.rows(ids)
        to = self.dst[rows]
        at = np.searchsorted(ids, to)
        inner = ids[np.minimum(at, len(ids) - 1)] == to
        return rows[inner], at[inner]

    def loops(self, ids: np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
        """The strongly connected components of two or more states of the graph restricted to
        the states ``ids`` (ascending), each as its states in ascending order
        (:func:`components` over the transitions between them, renumbered from 0)."""
        import numpy as np  # here, not at the top: only a liveness pass needs numpy

        if not ids.size:
            return []
        rows, to = self.between(ids)
        first = np.zeros(len(ids) + 1, np.int64)
        np.cumsum(np.bincount(np.searchsorted(ids, self.src[rows]), minlength=len(ids)), out=first[1:])
        found = components(first.data, to.astype(np.int64).data)
        return [np.sort(ids[np.array(comp, np.int64)]) for comp in found]


def _peel(alive: np.ndarray[Any, Any], start: np.ndarray[Any, Any], to: np.ndarray[Any, Any]) -> None:
    """Clear in ``alive`` every state no loop of a graph leads to: state ``v`` steps to
    ``to[start[v]:start[v + 1]]`` (between states ``alive`` keeps). Kahn's algorithm, taking a
    whole frontier of states with no transition left into them at a time, so each transition is
    read once."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    into = np.bincount(to, minlength=len(alive))  # int64: ``subtract.at`` is slow on int32
    frontier = np.flatnonzero(alive & (into == 0))
    place = np.empty(len(alive), np.intp)
    while frontier.size:
        alive[frontier] = False
        first = start[frontier]
        reached = to[_spans(first, start[frontier + 1] - first)].astype(np.intp)  # indexes faster
        np.subtract.at(into, reached, 1)
        free = reached[into[reached] == 0]  # a state reached twice in one round is listed twice
        ranks = np.arange(free.size)
        place[free] = ranks
        frontier = free[place[free] == ranks]


def _starts(src: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """Where each state's row begins among transitions grouped by ``src`` (and, last, where
    the rows end)."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    start = np.zeros(n + 1, src.dtype)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return start


def _spans(first: np.ndarray[Any, Any], count: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The indices ``first[k] .. first[k] + count[k] - 1`` of every row ``k``, row after row."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    return np.repeat(first - np.cumsum(count) + count, count) + np.arange(count.sum())


def _distinct(ids: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The sorted ``ids`` once each (``np.unique`` would import ``numpy.ma``: 50 ms)."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    return ids[np.flatnonzero(np.diff(ids, prepend=-1))]


class _Bits(dict[Any, int]):
    """``bits[action]``: ``make(action)``, computed once per distinct action."""

    def __init__(self, make: Callable[[Any], int]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> int:
        value = self[key] = self.make(key)
        return value


def matches(action: Any, name: Hashable) -> bool:
    """Whether ``action`` is the fair action ``name``, or of the kind ``name`` (its first element)."""
    return action == name or (isinstance(action, tuple) and len(action) > 0 and action[0] == name)


def components(first: Sequence[int], succ: Sequence[int]) -> list[list[int]]:
    """The strongly connected components of two or more states of the graph over the states
    ``0 .. len(first) - 2`` where state ``v`` steps to ``succ[first[v]:first[v + 1]]``: Tarjan's
    algorithm with an explicit stack, its numbers, lowlinks and stacks kept in arrays (a few
    machine words per state, no Python object per state but those of the components found)."""
    n = len(first) - 1
    index, low, on_stack = array("q", [-1]) * n, array("q", [0]) * n, bytearray(n)
    stack, path, resume = array("q"), array("q"), array("q")  # resume: the path's next transition
    out: list[list[int]] = []
    count = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = count
        count += 1
        stack.append(root)
        on_stack[root] = 1
        path.append(root)
        resume.append(first[root])
        while path:
            v = path[-1]
            i, end, lv = resume[-1], first[v + 1], low[v]
            while i < end:
                w = succ[i]
                i += 1
                iw = index[w]
                if iw < 0:
                    break
                if iw < lv and on_stack[w]:
                    lv = iw
            else:  # every transition of v read: v is done
                path.pop()
                resume.pop()
                low[v] = lv
                if path and lv < low[path[-1]]:
                    low[path[-1]] = lv
                if lv == index[v]:
                    _pop_component(v, stack, on_stack, out)
                continue
            low[v], resume[-1] = lv, i  # w is new: enter it
            index[w] = low[w] = count
            count += 1
            stack.append(w)
            on_stack[w] = 1
            path.append(w)
            resume.append(first[w])
    return out


def _pop_component(v: int, stack: array[int], on_stack: bytearray, out: list[list[int]]) -> None:
    """Take the component rooted at ``v`` off Tarjan's ``stack``; keep it when it has two or more
    states."""
    if stack[-1] == v:
        stack.pop()
        on_stack[v] = 0
        return
    comp = []
    while True:
        w = stack.pop()
        on_stack[w] = 0
        comp.append(w)
        if w == v:
            break
    out.append(comp)


def cores(graph: Graph, comp: np.ndarray[Any, Any]) -> Iterator[np.ndarray[Any, Any]]:
    """The fair loops' state sets within the component ``comp`` (ascending) of two or more
    states, each in ascending order (see the module docstring)."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    rows, _to = graph.between(comp)
    taken = int(np.bitwise_or.reduce(graph.codes[rows]))
    enabled = graph.enabled[comp]
    for i in range(len(graph.fair)):
        bit = 1 << i
        if taken & bit:
            continue
        on = (enabled & bit) != 0
        if bit > graph.weak_bits:  # strongly fair: prune the states that enable it
            if on.any():
                for sub in graph.loops(comp[~on]):
                    yield from cores(graph, sub)
                return
        elif on.all():
            return
    yield comp


def waypoints(graph: Graph, core: np.ndarray[Any, Any]) -> list[tuple[int, int | None, Any]]:
    """What a loop through ``core`` (ascending) must visit to be fair: per weakly fair name, a
    state that disables it or else a step taking it; per strongly fair name it enables, a step
    taking it. A state is ``(v, None, None)``, a step ``(v, w, action)`` — the first in order of
    states, then of transitions."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    out: list[tuple[int, int | None, Any]] = []
    enabled = graph.enabled[core]
    rows, _to = graph.between(core)
    codes = graph.codes[rows]
    for i in range(len(graph.fair)):
        bit = 1 << i
        off = np.flatnonzero((enabled & bit) == 0)
        if bit <= graph.weak_bits and off.size:
            out.append((int(core[off[0]]), None, None))
        elif not off.size or np.any(enabled & bit):
            e = int(rows[np.flatnonzero(codes & bit)[0]])
            out.append((int(graph.src[e]), int(graph.dst[e]), graph.edges.actions[e]))
    return out


def _walk(
    graph: Graph,
    start: int,
    allowed: np.ndarray[Any, Any],
    goal: np.ndarray[Any, Any] | int,
    at_least_one: bool,
) -> tuple[list[int], list[Any]]:
    """A shortest path inside ``allowed`` (a mask) from ``start`` to a ``goal`` state (a mask, or
    one state): ``start`` itself when it is one, unless ``at_least_one`` (a loop back to
    ``start`` takes a step). Breadth-first a whole level at a time in the order a queue takes
    the states (each new state reached from the earliest state of the level before, by its
    earliest transition there), so the path is the one a queue would find."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    def is_goal(ids: Any) -> Any:
        return goal[ids] if isinstance(goal, np.ndarray) else ids == goal

    if not at_least_one and is_goal(start):
        return [start], []
    seen = np.zeros(graph.n, dtype=bool)
    seen[start] = True
    frontier = np.array([start], np.int64)
    levels: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []  # states found, and how
    while frontier.size:
        rows = graph.rows(frontier)
        to = graph.dst[rows]
        ok = allowed[to]
        hit = np.flatnonzero(ok & is_goal(to))
        if hit.size:
            break
        fresh = np.flatnonzero(ok & ~seen[to])
        _found, first = np.unique(to[fresh], return_index=True)
        fresh = fresh[np.sort(first)]
        frontier = to[fresh]
        seen[frontier] = True
        levels.append((frontier, rows[fresh]))
    else:
        raise AssertionError("unreachable: the goal lies in the same component")
    e, actions = int(rows[hit[0]]), graph.edges.actions
    ids, acts = [int(graph.dst[e]), int(graph.src[e])], [actions[e]]
    while levels:  # back along the levels to ``start``
        found, via = levels.pop()
        e = int(via[np.flatnonzero(found == ids[-1])[0]])
        ids.append(int(graph.src[e]))
        acts.append(actions[e])
    return ids[::-1], acts[::-1]


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
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    holds, when = prop.holds, prop.when
    cyclic = graph.cyclic
    failing = cyclic.copy()
    failing[cyclic] = np.fromiter(
        (not holds(s) for s in compress(states, cyclic.data)), np.bool_, int(cyclic.sum())
    )
    found = [
        core
        for comp in graph.loops(np.flatnonzero(graph.looping_within(failing)))
        for core in cores(graph, comp)
    ]
    singles = [v for v in graph.single_loops.tolist() if not holds(states[v])]
    if not found and not singles:
        return None
    target = np.zeros(graph.n, dtype=bool)
    for core in found:
        target[core] = True
    target[singles] = True
    if when is None:
        start = int(np.argmax(target))
        reach = target
    else:
        reach = _reaching(graph, lambda v: not holds(states[v]), target)
        start = next((v for v in compress(range(graph.n), reach.data) if when(states[v])), -1)
        if start < 0:
            return None
    ids = path_to(start)
    actions = [via[i] for i in ids[1:]]
    tail, moves = _walk(graph, start, reach, target, at_least_one=False)
    ids += tail[1:]
    actions += moves
    entry = ids[-1]
    if graph.terminal(entry):
        return Lasso(tuple(ids), tuple(actions), len(actions))
    core = next((c for c in found if np.any(c == entry)), np.array([entry], np.int64))
    return _loop(graph, core, ids, actions)


def _loop(graph: Graph, core: np.ndarray[Any, Any], ids: list[int], actions: list[Any]) -> Lasso:
    """The lasso whose prefix ``ids`` by ``actions`` ends in ``core``, closed by a loop through
    ``core`` that visits its :func:`waypoints`."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    inside = np.zeros(graph.n, dtype=bool)
    inside[core] = True
    entry = here = ids[-1]
    loop = len(actions)
    for v, w, a in waypoints(graph, core):
        leg, moves = _walk(graph, here, inside, v, at_least_one=False)
        ids += leg[1:]
        actions += moves
        here = v
        if w is not None:
            ids.append(w)
            actions.append(a)
            here = w
    leg, moves = _walk(graph, here, inside, entry, at_least_one=len(actions) == loop)
    ids += leg[1:]
    actions += moves
    return Lasso(tuple(ids), tuple(actions), loop)


def _reaching(
    graph: Graph, failing: Callable[[int], bool], target: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """The states from which ``target`` (a mask) is reachable through expanded states where
    ``failing``, ``target``'s own included, as a mask: backwards a whole frontier at a time,
    asking ``failing`` once per state."""
    import numpy as np  # here, not at the top: only a liveness pass needs numpy

    sources, start = graph.src[np.argsort(graph.dst, kind="stable")], _starts(graph.dst, graph.n)
    reach, asked = target.copy(), target.copy()
    frontier = np.flatnonzero(target)
    while frontier.size:
        first = start[frontier]
        found = sources[_spans(first, start[frontier + 1] - first)]
        found = _distinct(np.sort(found[~asked[found]]))
        asked[found] = True
        found = found[found < graph.expanded]
        frontier = found[np.fromiter(map(failing, found.tolist()), np.bool_, found.size)]
        reach[frontier] = True
    return reach


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
