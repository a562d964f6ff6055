"""What an exploration found: each property's outcome, the worst case of each metric, and the
search's arrays, from which paths, counterexamples, tables and the state graph are read.

Kept apart from the search (:mod:`sim.explorer`), which builds an :class:`Exploration` once,
at its end: everything here reads the frozen result and never searches again.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from turncheck.models.display import data_frame, esc, html_table
from turncheck.models.errors import TurncheckError
from turncheck.models.protocol import ProtocolModel
from turncheck.sim.liveness import Lasso, Transitions

if TYPE_CHECKING:
    import networkx as nx

    from turncheck.sim.trace import Trace

Status = Literal["holds", "violated", "reached", "unreached"]


@dataclass(frozen=True)
class PropertyOutcome:
    """What the search established about one property.

    ``holds``/``violated`` for ``always`` and ``eventually`` properties, ``reached``/``unreached``
    for ``sometimes`` goals. ``state_id`` is the first (shallowest) state that violates the
    invariant or reaches the goal; ``depth`` its distance from an initial state. A violated
    ``eventually`` property has a lasso: ``state_id`` is where its loop starts, ``depth`` the
    steps to it and ``loop`` the steps around it (0: the run stutters there for ever).
    """

    name: str
    expectation: Literal["always", "sometimes", "eventually"]
    status: Status
    state_id: int | None = None
    depth: int | None = None
    doc: str = ""
    loop: int | None = None

    @property
    def reading(self) -> str:
        """The outcome in a few words: ``violated at depth 4``, ``violated by a lasso: …``."""
        if self.loop is None:
            return self.status + (f" at depth {self.depth}" if self.depth is not None else "")
        around = f"a {self.loop}-step loop" if self.loop else "a state that stutters for ever"
        return f"{self.status}: lasso of {self.depth} steps to {around}"

    @property
    def failed(self) -> bool:
        return self.status == "violated"


@dataclass(frozen=True)
class Worst:
    """The exact maximum of one metric over the visited states and the first state reaching it."""

    metric: str
    value: int
    state_id: int
    depth: int


@dataclass(frozen=True)
class Exploration:
    """The result of one search. Timings (``seconds``) are for display, never for result files."""

    model: str
    params: Mapping[str, Any]
    symmetry: bool
    distinct: int
    generated: int
    max_depth_seen: int
    terminal: int
    exhausted: bool
    bound: str | None
    seconds: float
    properties: tuple[PropertyOutcome, ...]
    worst: tuple[Worst, ...]
    # compact search arrays, kept for paths and the graph
    states: Sequence[Any] = field(repr=False)
    parent: Sequence[int] = field(repr=False)
    via: Sequence[Any] = field(repr=False)
    levels: Sequence[int] = field(repr=False)
    edges: Transitions | None = field(default=None, repr=False)
    lassos: Mapping[str, Lasso] = field(default_factory=dict, repr=False)
    saturation: str | None = None  # what canonical merged beyond a symmetry (ProtocolModel.saturation)

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else float("inf")

    @property
    def violations(self) -> tuple[PropertyOutcome, ...]:
        return tuple(p for p in self.properties if p.status == "violated")

    @property
    def unreached(self) -> tuple[PropertyOutcome, ...]:
        return tuple(p for p in self.properties if p.status == "unreached")

    def outcome(self, name: str) -> PropertyOutcome:
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    def worst_of(self, metric: str) -> int:
        for w in self.worst:
            if w.metric == metric:
                return w.value
        raise KeyError(metric)

    def completeness(self) -> str:
        """One plain sentence on what the numbers cover."""
        if self.exhausted:
            return "exhaustive: every reachable state was visited"
        return f"bounded, not exhaustive: stopped by {self.bound}"

    def lines(self, raw: Exploration | RawStates | None = None) -> list[str]:
        """The search in three lines (states, time, coverage), and with the search without symmetry
        ``raw`` a fourth: the reduction factor — a lower bound when only the raw search was
        bounded — or why there is none."""
        lines = [
            f"states: {self.distinct:,} distinct ({'up to symmetry' if self.symmetry else 'no symmetry'}), "
            f"{self.generated:,} transitions, depth {self.max_depth_seen}, {self.terminal:,} terminal",
            f"time: {self.seconds:.2f} s, {self.states_per_second:,.0f} distinct states/s",
            f"coverage: {self.completeness()}",
        ]
        if self.saturation is not None:
            lines.append(f"saturation: {self.saturation}")
        if raw is not None:
            factor = reduction_factor(self, raw)
            if factor is not None:
                lines.append(
                    f"symmetry: {raw.distinct:,} raw states / {self.distinct:,} classes "
                    f"= reduction ×{factor:.2f}"
                )
            elif self.exhausted and self.distinct:  # each raw state is in one of the classes counted
                lines.append(
                    f"symmetry: ≥ {raw.distinct:,} raw states (raw search {raw.completeness()}) / "
                    f"{self.distinct:,} classes = reduction ≥ ×{raw.distinct / self.distinct:.2f}"
                )
            else:
                lines.append("symmetry: reduction n/a (the search up to symmetry was bounded)")
        return lines

    def depth_of(self, state_id: int) -> int:
        """Distance of a state from the initial states (BFS levels are contiguous id ranges)."""
        return bisect_right(self.levels, state_id) - 1

    def path_to(self, state_id: int) -> list[int]:
        """State ids from an initial state to ``state_id`` along BFS parents (a shortest path)."""
        ids = [state_id]
        while self.parent[ids[-1]] >= 0:
            ids.append(self.parent[ids[-1]])
        ids.reverse()
        return ids

    def canonical_actions(self, state_id: int) -> list[Any]:
        """Actions along the BFS path, as applied to the canonical representatives."""
        return [self.via[i] for i in self.path_to(state_id)[1:]]

    def trace(self, model: ProtocolModel[Any, Any], name: str) -> Trace:
        """The shortest counterexample of the violated property ``name`` as the trace ``turncheck
        check`` saves (with the run as ``model`` tells it), to show or to ``save_trace``.

        Raises ``KeyError`` when ``name`` is no property of this search, :class:`TurncheckError`
        when it was not violated.
        """
        from turncheck.sim.trace import Trace, recording_of

        if self.outcome(name).status != "violated":
            raise TurncheckError(f"{name} was not violated in this search: no counterexample")
        from turncheck.sim.witness import counterexample

        cx = counterexample(model, self, name)
        actions = tuple(tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in cx.actions)
        extra = recording_of(model, cx.init, cx.actions, name, cx.loop)
        return Trace(
            self.model, dict(self.params), actions, name, cx.init, "explore", self.model, extra, cx.loop
        )

    def to_records(self) -> list[dict[str, Any]]:
        """One record per property: what the search established, and where (see
        :class:`PropertyOutcome`)."""
        return [
            {"property": p.name, "expectation": p.expectation, "status": p.status, "depth": p.depth,
             "loop": p.loop, "state_id": p.state_id}
            for p in self.properties
        ]  # fmt: skip

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return data_frame(
            self.to_records(), ("property", "expectation", "status", "depth", "loop", "state_id")
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the search in the lines ``turncheck explore`` prints, each property's
        outcome and the worst case of each metric."""
        head = (
            f"<p><b>exploration of {esc(self.model)}</b><br>"
            + "<br>".join(esc(x) for x in self.lines())
            + "</p>"
        )
        props = html_table(
            ("property", "expectation", "outcome"),
            [(p.name, p.expectation, p.reading) for p in self.properties],
        )
        worst = [(w.metric, w.value, w.depth) for w in self.worst]
        return head + props + (html_table(("metric", "worst", "first at depth"), worst) if worst else "")

    def graph(self) -> nx.DiGraph:
        """The explored state graph (see :func:`sim.state_graph.state_graph`)."""
        from turncheck.sim.state_graph import state_graph

        return state_graph(self)


@dataclass(frozen=True)
class RawStates:
    """The states a search without symmetry visits (or, when not ``exhausted``, at least this
    many): measured by that search (:meth:`searched`) or counted from the classes an exhaustive
    search visited (:func:`counted_raw`) — the same number when the model's class sizes are
    exact, at the cost of one pass instead of a second, larger search."""

    distinct: int
    exhausted: bool
    how: str

    @classmethod
    def searched(cls, raw: Exploration) -> RawStates:
        return cls(raw.distinct, raw.exhausted, raw.completeness())

    def completeness(self) -> str:
        return self.how


def counted_raw(model: ProtocolModel[Any, Any], reduced: Exploration) -> RawStates | None:
    """The raw state count as the sum of the visited classes' sizes
    (:meth:`~models.protocol.ProtocolModel.class_size`), or None when the model cannot size its
    classes or the search up to symmetry was not exhaustive (its classes are not all of them)."""
    if not (reduced.symmetry and reduced.exhausted) or not reduced.states:
        return None
    total = 0
    for n in map(model.class_size, reduced.states):
        if n is None:
            return None
        total += n
    return RawStates(total, True, "counted from the classes")


def reduction_factor(reduced: Exploration, raw: Exploration | RawStates) -> float | None:
    """Raw distinct states per symmetry class; None unless both counts are exhaustive."""
    if not (reduced.exhausted and raw.exhausted) or reduced.distinct == 0:
        return None
    return raw.distinct / reduced.distinct
