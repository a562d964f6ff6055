"""Exhaustive breadth-first exploration of a protocol model: a proof over a bounded space.

The explorer visits every state reachable from a model's initial states through every
interleaving of its actions, once per symmetry class: a successor is deduplicated by the hash
of ``model.canonical(state)``, so states that differ only by renaming interchangeable writers
or call ids are explored once. Because the search is breadth-first, the first state found to
break an ``always`` property lies at the smallest depth, and the path of BFS parents back to an
initial state is a *shortest* counterexample. The exact worst case of every named metric is the
maximum over all visited states.

The hot loop keeps only compact arrays (the states in BFS order, which double as the queue, the
parallel action array, and the first id of each depth level) and one dict from each state to its
BFS parent — in discovery order, so the parent array is its values, read once at the end. Per
transition it does what a minimal BFS does (``successors``; ``canonical`` unless the model's
symmetry is structural, :meth:`ProtocolModel.successors_are_canonical`; one lookup), and when
liveness needs the graph it appends the target's id and the action to two flat arrays;
the level, clock and progress checks run once per batch of states. The networkx graph is
built after the search, on demand, so the search itself does not pay for it. The cyclic garbage
collector is paused during the search: states are acyclic tuples, and rescanning millions of
them on every collection would otherwise cost more than the search; after it they join the
oldest generation directly (``gc.freeze``/``unfreeze``), not through a young-generation scan
of every one of them (a tenth of the search's time). Bounds (``max_states``,
``max_depth``, ``timeout``) stop the search early; the result then says plainly that it is
bounded, not exhaustive.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from turncheck.models.protocol import Property, ProtocolModel, as_model
from turncheck.sim.liveness import Graph, Lasso, Transitions, find_lasso

if TYPE_CHECKING:
    pass

from turncheck.sim.exploration import Exploration, PropertyOutcome, RawStates, Status, Worst, counted_raw

ProgressLine = Callable[[int, int, int, int, float], None]


class StderrProgress:
    """A live one-line progress display on stderr: generated, distinct, queue, depth, states/s.

    Quiet for searches shorter than ``after`` seconds, so small checks print nothing. On a
    terminal the line redraws in place; into a file or pipe nothing is redrawn and
    :meth:`finish` writes the last line once.
    """

    def __init__(self, stream: TextIO | None = None, after: float = 0.5) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.shown = False
        self._live = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = ""

    def __call__(self, generated: int, distinct: int, queue: int, depth: int, elapsed: float) -> None:
        if elapsed < self.after:
            return
        rate = distinct / elapsed if elapsed > 0 else 0.0
        self._last = (
            f"explore: {generated:,} generated  {distinct:,} distinct  {queue:,} queued  "
            f"depth {depth}  {rate:,.0f} states/s"
        )
        self.shown = True
        if self._live:
            self.stream.write(f"\r{self._last}   ")
            self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\n" if self._live else f"{self._last}\n")
            self.stream.flush()
            self.shown = False


BATCH_SECONDS = 0.05  # longest run between two clock reads when states are costly to expand


def explore(
    model: ProtocolModel[Any, Any],
    *,
    properties: Sequence[Property[Any]] | None = None,
    symmetry: bool = True,
    max_states: int | None = 1_000_000,
    max_depth: int | None = None,
    timeout: float | None = None,
    record_edges: bool = False,
    progress: ProgressLine | None = None,
    progress_every: float = 0.25,
) -> Exploration:
    """Breadth-first search over every interleaving of ``model``.

    Parameters
    ----------
    model
        Any :class:`models.protocol.ProtocolModel`.
    properties
        The properties to check (default: all of the model's). ``always`` ones are checked on
        every distinct state; ``sometimes`` goals are marked reached at the first state where
        they hold.
    symmetry
        Deduplicate by ``model.canonical(state)`` (default) or by the raw state. Comparing the
        two counts gives the symmetry reduction factor.
    max_states, max_depth, timeout
        Bounds. When one stops the search, ``exhausted`` is False and ``bound`` names it.
    record_edges
        Keep every transition (for DOT/GraphML export of the full graph); off by default,
        the BFS tree is always available.
    progress
        Called about every ``progress_every`` seconds as
        ``progress(generated, distinct, queued, depth, elapsed)``, and once at the end.

    Returns
    -------
    Exploration
        Counts, per-property outcomes, exact worst cases and the arrays behind paths.

    Examples
    --------
    >>> result = explore(model)                            # doctest: +SKIP
    >>> result.outcome("bounded-peak-turns").status        # doctest: +SKIP
    'violated'
    """
    model = as_model(model)
    props = tuple(model.properties()) if properties is None else tuple(properties)
    live = tuple(p for p in props if p.expectation == "eventually")
    canon: Callable[[Any], Hashable] = model.canonical if symmetry else _identity
    search = _Search(
        model,
        canon,
        expansion(model, symmetry),
        max_states if max_states is not None else sys.maxsize,
        max_depth if max_depth is not None else sys.maxsize,
        timeout,
        record_edges or bool(live),  # liveness needs every transition; without it, none is kept
        progress,
        progress_every,
    )
    gc_was_enabled = gc.isenabled()
    gc.disable()  # states are acyclic tuples; rescanning millions of them costs more than the search
    started = time.perf_counter()
    try:
        search.run(started)
        lassos = _lassos(model, live, search)
        outcomes = _judge(props, search.states, search.depth_of, lassos)
        worst = _worst(model, search.states, search.depth_of)
    finally:
        if gc_was_enabled:
            if not gc.get_freeze_count():  # (a caller's frozen objects stay frozen)
                gc.freeze()  # the search's objects join the oldest generation unscanned
                gc.unfreeze()
            gc.enable()
    seconds = time.perf_counter() - started
    n = len(search.states)
    if progress is not None:
        progress(search.generated, n, n - search.head, search.depth_of(n - 1) if n else 0, seconds)
    return _exploration(model, symmetry, search, seconds, (outcomes, worst, lassos))


def _exploration(
    model: ProtocolModel[Any, Any],
    symmetry: bool,
    search: _Search,
    seconds: float,
    judged: tuple[Any, Any, Any],
) -> Exploration:
    """The search's arrays and counts with the properties' outcomes, worst cases and lassos."""
    outcomes, worst, lassos = judged
    n = len(search.states)
    return Exploration(
        model=model.name,
        params=dict(model.params),
        symmetry=symmetry,
        distinct=n,
        generated=search.generated,
        max_depth_seen=search.depth_of(n - 1) if n else 0,
        terminal=search.terminal,
        exhausted=search.bound is None,
        bound=search.bound,
        seconds=seconds,
        properties=outcomes,
        worst=worst,
        states=search.states,
        parent=search.parent,
        via=search.via,
        levels=tuple(search.levels),
        edges=search.edges,
        lassos=lassos,
        saturation=model.saturation() if symmetry else None,
    )


class _Search:
    """The BFS itself: compact arrays and one tight loop, nothing per state but the search.

    BFS order doubles as the queue (``states[head:]`` wait to be expanded) and depth is implicit
    (``levels[d]`` is the id of the first state at depth ``d``). ``index`` maps each state to its
    parent's id (its own id when edges are recorded, which need the target's id), so a new state
    costs one dict entry and one list append, as in a minimal BFS.

    :meth:`run` binds locals only, and does nothing per state but the search: the level, clock and
    progress checks run once per batch of states (a batch never crosses a level), and a batch holds
    about 2048 transitions (at most 1024 states) and lasts at most about BATCH_SECONDS, so a wide
    model (1000 writers, ~1000 actions a state) or one with huge states (each transition costing
    milliseconds) still reads the clock often: a timeout is honoured within about one state's
    expansion.
    """

    def __init__(
        self,
        model: ProtocolModel[Any, Any],
        canon: Callable[[Any], Hashable],
        expand: Callable[[Any], list[tuple[Any, Any]]],
        max_states: int,
        max_depth: int,
        timeout: float | None,
        record_edges: bool,
        progress: ProgressLine | None,
        progress_every: float,
    ) -> None:
        self.model = model
        self.expand: Callable[[Any], Any] = expand  # a list of successors, or _Moves
        self.max_states = max_states
        self.max_depth = max_depth
        self.timeout = timeout
        self.progress = progress
        self.progress_every = progress_every
        self.states: list[Any] = []
        # state -> its BFS parent's id (-1 for an initial state), in discovery order, so the
        # parent array is the values at the end; with edges recorded, state -> its own id
        self.index: dict[Any, int] = {}
        self.parent = array("q")
        self.via: list[Any] = []
        self.levels = [0]
        self.edges = Transitions(array("q"), [], array("q")) if record_edges else None
        self.generated = 0
        self.terminal = 0
        self.head = 0
        self.bound: str | None = None
        for s in model.init_states():
            c = canon(s)
            if c not in self.index:
                self.index[c] = len(self.states) if record_edges else -1
                self.states.append(c)
                self.parent.append(-1)
                self.via.append(None)
        if self.states and len(model.actions(self.states[0])) > WIDE:
            self.expand = functools.partial(_Moves, model, canon)

    def depth_of(self, i: int) -> int:
        return bisect_right(self.levels, i) - 1

    def run(self, started: float) -> None:
        actions_of, successors = self.model.actions, self.expand
        states, index, parent, via, levels = self.states, self.index, self.parent, self.via, self.levels
        edges = self.edges
        append_state, append_parent, append_via = states.append, parent.append, via.append
        if edges is not None:
            append_out, append_dst, append_action = edges.out.append, edges.dst.append, edges.actions.append
        setdefault = index.setdefault
        limit_states, limit_depth, progress = self.max_states, self.max_depth, self.progress
        next_tick = started + self.progress_every
        deadline = started + self.timeout if self.timeout is not None else float("inf")
        generated = terminal = head = d = 0
        batch = 1
        n = level_end = len(states)
        bound: str | None = None
        while head < n:
            if head == level_end:
                d += 1
                levels.append(head)
                level_end = n
                if d >= limit_depth:
                    # every state left is at the depth bound: bounded if any of them can move
                    if any(any(True for _ in actions_of(states[i])) for i in range(head, n)):
                        bound = f"max depth ({limit_depth})"
                    break
            now = time.perf_counter()
            if now >= deadline:
                bound = f"timeout ({self.timeout:g} s)"
                break
            if progress is not None and now >= next_tick:
                progress(generated, n, n - head, d, now - started)
                next_tick = now + self.progress_every
            first, stop, before, batch_started = head, min(level_end, head + batch), generated, now
            for head in range(first, stop):  # noqa: B020 - head is the search's cursor
                moves = successors(states[head])
                if not moves:
                    terminal += 1
                    if edges is not None:
                        append_out(0)
                    continue
                generated += len(moves)
                if edges is None:
                    for action, c in moves:
                        if c not in index:
                            if n >= limit_states:
                                break
                            index[c] = head
                            append_state(c)
                            append_via(action)
                            n += 1
                    else:
                        continue
                else:
                    append_out(len(moves))
                    for action, c in moves:
                        sid = setdefault(c, n)
                        if sid == n:
                            if n >= limit_states:
                                break
                            append_state(c)
                            append_parent(head)
                            append_via(action)
                            n += 1
                        append_dst(sid)
                        append_action(action)
                    else:
                        continue
                    del index[c]
                    edges.out[-1] = len(edges.dst) - (generated - len(moves))  # recorded before the bound
                bound = f"max states ({limit_states:,})"
                break
            else:
                head = stop
                batch = _next_batch(stop - first, generated - before, time.perf_counter() - batch_started)
                continue
            break
        self._finish(n, (generated, terminal, head), bound)

    def _finish(self, n: int, counts: tuple[int, int, int], bound: str | None) -> None:
        if self.levels[-1] >= n:
            self.levels.pop()
        if self.edges is None:
            self.parent = array("q", self.index.values())
        (self.generated, self.terminal, self.head), self.bound = counts, bound


def _next_batch(states: int, transitions: int, took: float) -> int:
    """States in the next batch: about 2048 transitions at the last batch's fan-out (at most 1024
    states), and no more than fit in BATCH_SECONDS at its pace."""
    batch = min(1024, max(1, 2048 * states // max(1, transitions)))
    if took > 0:
        batch = max(1, min(batch, int(states * BATCH_SECONDS / took)))
    return batch


def _lassos(
    model: ProtocolModel[Any, Any], live: Sequence[Property[Any]], search: _Search
) -> dict[str, Lasso]:
    """A lasso for each violated ``eventually`` property, over the graph the search recorded
    (nothing is built when the model has none)."""
    if not live or search.edges is None:
        return {}
    search.index.clear()  # read by the search alone: its table goes back before the pass's arrays
    graph = Graph(
        len(search.states), search.head, search.edges, model.fair_actions(), model.strongly_fair_actions()
    )
    parent, via = search.parent, search.via

    def path_to(i: int) -> list[int]:
        ids = [i]
        while parent[ids[-1]] >= 0:
            ids.append(parent[ids[-1]])
        return ids[::-1]

    found = {p.name: find_lasso(p, search.states, graph, path_to, via) for p in live}
    return {name: lasso for name, lasso in found.items() if lasso is not None}


def _judge(
    props: Sequence[Property[Any]],
    states: Sequence[Any],
    depth_of: Callable[[int], int],
    lassos: Mapping[str, Lasso],
) -> tuple[PropertyOutcome, ...]:
    """Properties read in BFS order after the search (``eventually`` ones from their lassos).

    The first state (lowest id) that breaks an invariant is a shallowest one, so its BFS path is
    a shortest counterexample; scanning stops there.
    """
    outcomes = []
    for p in props:
        holds = p.holds
        if p.expectation == "eventually":
            lasso = lassos.get(p.name)
            if lasso is None:
                outcomes.append(PropertyOutcome(p.name, p.expectation, "holds", doc=p.doc))
            else:
                at, steps = lasso.ids[lasso.loop], len(lasso.actions) - lasso.loop
                outcomes.append(
                    PropertyOutcome(p.name, p.expectation, "violated", at, lasso.loop, p.doc, steps)
                )
            continue
        if p.expectation == "always":
            sid = next((i for i, st in enumerate(states) if not holds(st)), None)
            status: Status = "holds" if sid is None else "violated"
        else:
            sid = next((i for i, st in enumerate(states) if holds(st)), None)
            status = "unreached" if sid is None else "reached"
        depth = None if sid is None else depth_of(sid)
        outcomes.append(PropertyOutcome(p.name, p.expectation, status, sid, depth, p.doc))
    return tuple(outcomes)


def _worst(
    model: ProtocolModel[Any, Any], states: Sequence[Any], depth_of: Callable[[int], int]
) -> tuple[Worst, ...]:
    """The exact maximum of each metric over the visited states, and its shallowest witness:
    the first state (lowest id) reaching it. With the model's :meth:`metric_columns`, each
    metric's column is built by ``map`` and its first maximum found by ``max`` and ``index`` —
    the same value and state as the loop over ``metrics`` below, without a mapping per state."""
    columns = model.metric_columns()
    if columns is not None:
        return _worst_by_column(columns, states, depth_of)
    metrics_of = model.metrics
    worst: dict[str, int] = {}
    worst_at: dict[str, int] = {}
    floor = -sys.maxsize
    for i, st in enumerate(states):
        for name, value in metrics_of(st).items():
            if value > worst.get(name, floor):
                worst[name] = value
                worst_at[name] = i
    return tuple(
        Worst(name, int(worst[name]), worst_at[name], depth_of(worst_at[name])) for name in sorted(worst)
    )


def _worst_by_column(
    columns: Mapping[str, Callable[[Any], int]], states: Sequence[Any], depth_of: Callable[[int], int]
) -> tuple[Worst, ...]:
    """:func:`_worst` over metric columns (one column in memory at a time)."""
    found = []
    for name, column in columns.items():
        if not states:
            break
        values = list(map(column, states))
        value = max(values)
        if value > -sys.maxsize:  # the loop's floor: a value at or under it is never a worst case
            at = values.index(value)
            found.append(Worst(name, int(value), at, depth_of(at)))
        del values
    return tuple(sorted(found, key=lambda w: w.metric))


def _identity(state: Any) -> Any:
    return state


WIDE = 4096
"""Actions of an initial state past which the search steps each action only when it gets to
it (:class:`_Moves`): one state of a model with 131 072 sessions has 131 072 successors of 1 MB
each, and building them all at once took tens of GB whatever ``max_states`` said (issue 57)."""


class _Moves:
    """A state's successors stepped one at a time as the search takes them, so a search stopped
    by ``max_states`` in the middle of one state never builds the rest. ``len`` is the number of
    actions, as for the list :meth:`ProtocolModel.successors` returns."""

    def __init__(self, model: ProtocolModel[Any, Any], canon: Callable[[Any], Hashable], state: Any) -> None:
        self.model, self.canon, self.state = model, canon, state
        self.actions = model.actions(state)

    def __len__(self) -> int:
        return len(self.actions)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        step, canon, state = self.model.step, self.canon, self.state
        return ((a, canon(step(state, a))) for a in self.actions)


def expansion(
    model: ProtocolModel[Any, Any], symmetry: bool = True
) -> Callable[[Any], list[tuple[Any, Any]]]:
    """What the search calls on each state: ``model.successors``, each next state replaced by its
    class's representative when there is a symmetry the successors do not already keep
    (:meth:`~turncheck.models.protocol.ProtocolModel.successors_are_canonical`). The benchmarks'
    model floor and minimal BFS call it too, so they ask the model exactly what the explorer does."""
    if not symmetry or model.successors_are_canonical():
        return model.successors
    successors, canon = model.successors, model.canonical

    def expand(state: Any) -> list[tuple[Any, Any]]:
        return [(action, canon(after)) for action, after in successors(state)]

    return expand


RAW_SEARCH_STATES = 100_000
"""Where ``turncheck explore`` stops the second search without symmetry unless ``--reduction``
is given (issue 58): on the seed's row that search took 21 of the run's 28 s and 2 GB, to print
one factor; past this bound the factor printed is a lower bound, and says so."""


def raw_states(
    model: ProtocolModel[Any, Any],
    reduced: Exploration,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
) -> RawStates | None:
    """How many states the model has without its symmetry, to measure the reduction of the
    exhaustive search ``reduced``: counted from its classes when the model sizes them
    (:func:`~sim.exploration.counted_raw`), else by a second search that checks nothing and
    keeps no transition, within the bounds given (``timeout``: what is left of the run's). None
    after a bounded search (no class count to divide by) or with no time left."""
    if not reduced.exhausted:
        return None
    counted = counted_raw(model, reduced)
    if counted is not None or (timeout is not None and timeout <= 0):
        return counted
    searched = explore(model, properties=(), symmetry=False, max_states=max_states, max_depth=max_depth,
                       timeout=timeout)  # fmt: skip
    return RawStates.searched(searched)
