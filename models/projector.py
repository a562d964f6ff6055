"""The projector core: one implementation of every strategy, used by every engine and command.

A strategy is a plain function ``(history, budget, cost) -> Window``, registered by id. Each
finds ``i0`` — the start of the longest suffix whose cost fits the budget — by bisection over
the history's prefix sums, moves the start by its rule, and returns the window; the window's
structural report is computed in O(log n) when first read (a request needs the selection, a
study reads the report). Projection never mutates the history.

| id  | rule |
|-----|------|
| M0  | start at ``i0`` |
| M1  | back to the start of the turn containing ``i0`` (may exceed the budget) |
| M2  | M1, drop leading RESULTs whose CALL is absent, add a placeholder RESULT for each CALL of the first turn that has none |
| M3  | forward to the first turn start ≥ ``i0`` (may be empty) |
| M4  | M3; if that is empty and the history is not, fall back to M0 |
| M5  | forward to the first cut ≥ ``i0`` that splits no CALL/RESULT pair |
| REQ | mandatory part (the cost model's frame: system prompt + current question) + newest whole turns; refuse when the mandatory part alone exceeds the budget |
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from turncheck.models.cost import CostModel, Utf8JsonCost, message_of, placeholder_event
from turncheck.models.display import data_frame, esc, html_table
from turncheck.models.errors import BadParameter, TurncheckError, UnknownName
from turncheck.models.events import CALL_CODE, RESULT_CODE, Event
from turncheck.models.history import History
from turncheck.models.registry import Registry
from turncheck.models.report import Report
from turncheck.models.user_code import is_reference, load_object, projector_signature

_CALL = CALL_CODE
_RESULT = RESULT_CODE


class MandatoryInputExceedsBudget(TurncheckError):
    """REQ refuses, rather than truncate the system prompt or the current question."""

    def __init__(self, mandatory: int, budget: int) -> None:
        super().__init__(
            f"mandatory input (system prompt + current question) needs {mandatory} but the budget is "
            f"{budget}; refusing instead of truncating"
        )
        self.mandatory = mandatory
        self.budget = budget


class _Report:
    """The structural report of a window, computed on first read and kept in the instance.

    Selection is what every request needs; the report is what a study reads. Computing it
    costs more than the selection itself, so a window computes it only when asked — still in
    O(log n), and from nothing but the window's own fields, so the value never depends on when
    it is read. The descriptor writes the instance's ``__dict__`` directly: the window stays
    immutable to everyone else (``__setattr__`` refuses).
    """

    def __get__(self, window: Window | None, owner: type | None = None) -> Any:
        if window is None:
            return self
        report = _structural_report(
            window[0], window[3], window[5], window[2], window[7], window[8], len(window[6])
        )
        window.__dict__["report"] = report
        return report


_new = tuple.__new__  # builds a window from a tuple, without a Python-level constructor frame


class Window(tuple):  # type: ignore[type-arg]
    """The part of a history sent with one request: ``history.events[start:end]`` plus, for M2,
    a placeholder RESULT after each CALL listed in ``placeholders`` (positions).

    An immutable value (equal fields, equal windows). A tuple rather than a frozen dataclass:
    one is built for every request, and a frozen dataclass's ``__init__`` alone costs more than
    the selection (≈ 1.5 µs against ≈ 0.2 µs for a tuple). ``report`` — the window's
    structural counters — is computed on first access (see :class:`_Report`).
    """

    __match_args__ = ("history", "strategy", "budget", "start", "end", "cost")
    _fields = ("history", "strategy", "budget", "start", "end", "cost", "placeholders",
               "dropped_partial", "fallback")  # fmt: skip

    def __new__(
        cls,
        history: History,
        strategy: str,
        budget: int,
        start: int,
        end: int,
        cost: int,
        placeholders: tuple[int, ...] = (),
        dropped_partial: int = 0,
        fallback: int = 0,
    ) -> Window:
        return _new(
            cls, (history, strategy, budget, start, end, cost, placeholders, dropped_partial, fallback)
        )

    history: History = property(itemgetter(0))  # type: ignore[assignment]
    strategy: str = property(itemgetter(1))  # type: ignore[assignment]
    budget: int = property(itemgetter(2))  # type: ignore[assignment]
    start: int = property(itemgetter(3))  # type: ignore[assignment]
    end: int = property(itemgetter(4))  # type: ignore[assignment]
    cost: int = property(itemgetter(5))  # type: ignore[assignment]
    placeholders: tuple[int, ...] = property(itemgetter(6))  # type: ignore[assignment]
    dropped_partial: int = property(itemgetter(7))  # type: ignore[assignment]
    fallback: int = property(itemgetter(8))  # type: ignore[assignment]
    report: Report = _Report()  # type: ignore[assignment]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), tuple(self)))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(strategy={self.strategy!r}, budget={self.budget}, start={self.start}, "
            f"end={self.end}, cost={self.cost}, placeholders={self.placeholders})"
        )

    @property
    def events(self) -> list[Event]:
        """The kept events in read order, M2's placeholders right after their CALLs."""
        kept = self.history.events[self.start : self.end]
        if not self.placeholders:
            return kept
        marks = set(self.placeholders)
        out: list[Event] = []
        for pos, e in enumerate(kept, start=self.start):
            out.append(e)
            if pos in marks:
                out.append(placeholder_event(e))
        return out

    @property
    def empty(self) -> bool:
        return self.start >= self.end and not self.placeholders

    def payload(self, cost: Utf8JsonCost) -> str:
        """The exact request text; its UTF-8 length equals ``self.cost`` under ``cost``."""
        return cost.request(message_of(e) for e in self.events)

    def to_records(self) -> list[dict[str, Any]]:
        """One record per event sent, in read order: its fields (``kind`` by name, ``size`` in
        characters) and whether it is one of M2's placeholder RESULTs."""
        marks = set(self.placeholders)
        out = []
        for pos in range(self.start, self.end):
            e = self.history.events[pos]
            out.append(_event_record(e, False))
            if pos in marks:
                out.append(_event_record(placeholder_event(e), True))
        return out

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return data_frame(self.to_records(), EVENT_COLUMNS)

    def _repr_html_(self) -> str:
        """A notebook's view: the trace viewer's window panel (events, estimated cost, orphans)."""
        from turncheck.models.window_panel import window_panel

        panel = window_panel(self)
        rows = [(i.label, ", ".join(i.marks), i.cost) for i in panel.items]
        head = f"{panel.title}: {self.end - self.start} of {len(self.history)} events, from position {self.start}"
        return f"<p><b>{esc(head)}</b><br>{esc(panel.summary)}</p>" + html_table(
            ("event", "marks", "estimated cost"), rows
        )


EVENT_COLUMNS = ("seq", "session", "turn", "kind", "call_id", "size", "placeholder")


def _event_record(e: Event, placeholder: bool) -> dict[str, Any]:
    return dict(
        zip(
            EVENT_COLUMNS,
            (e.seq, e.session, e.turn, e.kind.name, e.call_id, e.size, placeholder),
            strict=True,
        )
    )


def _rebuild(cls: type[Window], fields: tuple[Any, ...]) -> Window:
    return _new(cls, fields)


Strategy = Callable[[History, int, CostModel], Window]


def fit_start(history: History, budget: int, cost: CostModel) -> int:
    """``i0``: start of the longest suffix whose cost is within the budget (``n`` if none fits)."""
    return _fit(history, budget, cost)[0]


def _fit(history: History, budget: int, cost: CostModel) -> tuple[int, list[int], int]:
    """``(i0, prefix sums, frame)``: the selection and what building its window needs."""
    hot = history._hot  # the cost model used last, by identity: its prefix sums and frame
    if hot[0] is not cost:
        history.prefix(cost)
        hot = history._hot
    _, p, frame = hot
    room = budget - frame
    if room < 0:
        return len(p) - 1, p, frame
    return bisect_left(p, p[-1] - room), p, frame


def structural_report(
    h: History,
    s: int,
    cost_value: int,
    budget: int,
    *,
    dropped_partial: int = 0,
    fallback: int = 0,
    placeholders: int = 0,
) -> Report:
    """The counters of the window ``[s, n)`` in O(log n) (see :mod:`models.history`)."""
    return _structural_report(h, s, cost_value, budget, dropped_partial, fallback, placeholders)


def _structural_report(
    h: History, s: int, cost_value: int, budget: int, dropped_partial: int, fallback: int, placeholders: int
) -> Report:
    """:func:`structural_report` with positional arguments (a window's first read of its report
    calls it; keyword arguments cost more than the lookups), building the report as a tuple
    without the NamedTuple's constructor frame; a list with no position at or after ``s``
    (no open CALL, the common case) needs no bisection."""
    n = len(h.kind)
    if s >= n:
        return _new(Report, (0, 0, 0, int(cost_value > budget), cost_value, int(n > 0), dropped_partial,
                             fallback, placeholders, 0, 0, 0, 0, 0, 0))  # fmt: skip
    oc, ores = h.open_calls, h.open_results
    open_first_calls = len(oc) - bisect_left(oc, s) if oc and oc[-1] >= s else 0
    open_first_results = len(ores) - bisect_left(ores, s) if ores and ores[-1] >= s else 0
    first_results, first_calls, calls = h.first_results, h.first_calls, h.calls
    mispair = first_results[n] - first_results[s] - open_first_results
    inside_pairs = first_calls[n] - first_calls[s] - open_first_calls + mispair
    calls = calls[n] - calls[s]
    orphan_res = h.results[n] - h.results[s] - inside_pairs
    orphan_call = calls - inside_pairs - placeholders
    pair_split = int(s > 0 and h.kind[s - 1] == _CALL and h.partner[s - 1] >= s)
    last = h.last_calls
    dup = calls - (len(last) - bisect_left(last, s))
    s1 = s + 1
    seg = h.seg_idx[s] + 1
    starts = h.seg_starts
    x = starts[seg] if seg < len(starts) else n
    first_changes, src_change = h.seg_first_change, h.src_change
    partial_mixed = int(
        h.seg_src_change[x] - h.seg_src_change[s1] > 0 and first_changes[x] - first_changes[s1] == 0
    )
    return _new(Report, (
        orphan_res, orphan_call, pair_split, int(cost_value > budget), cost_value, 0, dropped_partial,
        fallback, placeholders, h.tie_inv[n] - h.tie_inv[s1], h.seq_inv[n] - h.seq_inv[s1], mispair,
        int(src_change[n] - src_change[s1] > 0), first_changes[n] - first_changes[s1] + partial_mixed, dup,
    ))  # fmt: skip


def _window(
    h: History,
    name: str,
    budget: int,
    p: list[int],
    frame: int,
    s: int,
    placeholders: tuple[int, ...] = (),
    dropped_partial: int = 0,
    fallback: int = 0,
    extra_cost: int = 0,
) -> Window:
    """The window ``[s, n)``: its cost from the prefix sums; its report computed when read."""
    n = len(p) - 1
    return _new(
        Window,
        (h, name, budget, s, n, frame + p[n] - p[s] + extra_cost, placeholders, dropped_partial, fallback),
    )


def _turn_start_at_or_after(h: History, i: int) -> int:
    starts = h.seg_starts
    if i >= len(h.kind):
        return i
    seg = h.seg_idx[i]
    if starts[seg] == i:
        return i
    seg += 1
    return starts[seg] if seg < len(starts) else len(h.kind)


def _unanswered_call_in(h: History, s: int, end: int) -> bool:
    """Whether ``[s, end)`` may hold a CALL whose RESULT is not at or after ``s`` — only an open
    CALL (no RESULT) or a late one (its RESULT read before it) can be; both lists are sorted, so
    M2 skips its scan of the first turn in O(log n) when neither has a position in the range
    (and in O(1) when the history has neither, as a well-formed log of answered calls)."""
    oc, late = h.open_calls, h.late_calls
    return bool(
        (oc and oc[-1] >= s and oc[bisect_left(oc, s)] < end)
        or (late and late[-1] >= s and late[bisect_left(late, s)] < end)
    )


def m0(history: History, budget: int, cost: CostModel) -> Window:
    """Naive: the longest suffix within the budget, cut anywhere."""
    i0, p, frame = _fit(history, budget, cost)
    n = len(p) - 1
    return _new(Window, (history, "M0", budget, i0, n, frame + p[n] - p[i0], (), 0, 0))


def m1(history: History, budget: int, cost: CostModel) -> Window:
    """Turn-aware: back to the start of the turn containing ``i0``; may exceed the budget."""
    i0, p, frame = _fit(history, budget, cost)
    n = len(p) - 1
    s = history.seg_starts[history.seg_idx[i0]] if i0 < n else i0
    return _new(Window, (history, "M1", budget, s, n, frame + p[n] - p[s], (), 0, 0))


def m2(history: History, budget: int, cost: CostModel) -> Window:
    """Turn-aware with head repair: M1, then drop leading orphan RESULTs and add a placeholder
    RESULT (costed like any event) for each CALL of the first turn whose RESULT is not kept."""
    h = history
    i0, p, frame = _fit(h, budget, cost)
    n = len(p) - 1
    s = h.seg_starts[h.seg_idx[i0]] if i0 < n else i0
    kind, partner = h.kind, h.partner
    while s < n and kind[s] == _RESULT and partner[s] < s:
        s += 1
    if s < n and (h.open_calls or h.late_calls):
        end = h.segment_end(s)
        if _unanswered_call_in(h, s, end):
            placeholders: list[int] = []
            extra = 0
            for pos in range(s, end):
                if kind[pos] == _CALL and partner[pos] < s:
                    placeholders.append(pos)
                    extra += cost.event_cost(placeholder_event(h.events[pos]))
            return _window(h, "M2", budget, p, frame, s, tuple(placeholders), extra_cost=extra)
    return _new(Window, (h, "M2", budget, s, n, frame + p[n] - p[s], (), 0, 0))


def m3(history: History, budget: int, cost: CostModel) -> Window:
    """Complete turns only: forward to the first turn start ≥ ``i0``; may be empty."""
    i0, p, frame = _fit(history, budget, cost)
    s = _turn_start_at_or_after(history, i0)
    n = len(p) - 1
    return _new(Window, (history, "M3", budget, s, n, frame + p[n] - p[s], (), int(s > i0), 0))


def m4(history: History, budget: int, cost: CostModel) -> Window:
    """Whole turns with fallback: M3, or M0 when M3 is empty and the history is not."""
    i0, p, frame = _fit(history, budget, cost)
    n = len(p) - 1
    s = _turn_start_at_or_after(history, i0)
    if s >= n and n > 0:
        return _new(Window, (history, "M4", budget, i0, n, frame + p[n] - p[i0], (), 0, 1))
    return _new(Window, (history, "M4", budget, s, n, frame + p[n] - p[s], (), int(s > i0), 0))


def m5(history: History, budget: int, cost: CostModel) -> Window:
    """Pair-safe: forward to the first cut ≥ ``i0`` that splits no CALL/RESULT pair."""
    i0, p, frame = _fit(history, budget, cost)
    cuts = history.safe_cuts
    s = cuts[bisect_left(cuts, i0)]
    n = len(p) - 1
    return _new(Window, (history, "M5", budget, s, n, frame + p[n] - p[s], (), 0, 0))


def req(history: History, budget: int, cost: CostModel) -> Window:
    """Seed 000's request budget: the mandatory part plus the newest whole turns that fit.

    Raises :class:`MandatoryInputExceedsBudget` when the mandatory part alone is over budget;
    the system prompt and the question are never truncated.
    """
    if cost.frame > budget:
        raise MandatoryInputExceedsBudget(cost.frame, budget)
    i0, p, frame = _fit(history, budget, cost)
    s = _turn_start_at_or_after(history, i0)
    return _window(history, "REQ", budget, p, frame, s, (), int(s > i0))


@dataclass(frozen=True)
class NamedStrategy:
    """A registered strategy: its function and how it is drawn wherever it appears.

    ``colour`` is the strategy's colour in every plot; a strategy that declares none gets the
    next free colour of the one palette for unnamed series (``reports.plots.canvas``).
    ``compared`` strategies are the ones the comparisons run by default (the testbench, the
    token estimate, the peers); ``REQ`` is not one (it refuses rather than trims).
    Calling it calls the function.
    """

    name: str
    project: Strategy
    colour: str | None = None
    marker: str | None = None
    linestyle: str = "-"
    hollow: bool = False
    compared: bool = True

    @property
    def strategy_id(self) -> str:
        return self.name

    def __call__(self, history: History, budget: int, cost: CostModel) -> Window:
        return self.project(history, budget, cost)


STRATEGIES: Registry[NamedStrategy] = Registry("strategy")
"""Every strategy by id, in registration order; built-ins are registered below, extensions with
``turncheck.register_strategy``."""


def register_strategy(
    name: str,
    project: Strategy | None = None,
    *,
    colour: str | None = None,
    marker: str | None = None,
    linestyle: str = "-",
    hollow: bool = False,
    compared: bool = True,
) -> Any:
    """Register ``project`` as strategy ``name`` (or use as ``@register_strategy(name, ...)``);
    returns the function unchanged. See :class:`NamedStrategy` for the rest. Refused
    (:class:`~turncheck.models.registry.DuplicateRegistration`, naming the holder) when the name
    or the colour is taken: one colour draws one strategy in every plot."""

    def add(fn: Strategy) -> Strategy:
        STRATEGIES.register(name, NamedStrategy(name, fn, colour, marker, linestyle, hollow, compared))
        return fn

    return add if project is None else add(project)


register_strategy("M0", m0, colour="#d62728", marker="o")
register_strategy("M1", m1, colour="#ff7f0e", marker="s", hollow=True)
register_strategy("M2", m2, colour="#bcbd22", marker="^", linestyle="--")
register_strategy("M3", m3, colour="#1f77b4", marker="D")
register_strategy("M4", m4, colour="#9467bd", marker="v", linestyle="-.")
register_strategy("M5", m5, colour="#2ca02c", marker="P", linestyle=":", hollow=True)
register_strategy("REQ", req, colour="#7f7f7f", marker="x", compared=False)


def compared_strategies() -> tuple[str, ...]:
    """The strategies the comparisons run by default, in registration order (M0–M5, then any
    extension's)."""
    return tuple(name for name, s in STRATEGIES.items() if s.compared)


MESSAGES_PREFIX = "messages:"
EXEC_PREFIX = "exec:"

Resolver = Callable[[str], Strategy]
RESOLVERS: Registry[Resolver] = Registry(
    "strategy prefix",
    home=("turncheck.models.exec_protocol", "turncheck.models.messages", "turncheck.models.peer"),
)
"""Strategy prefix (``peer:``, ``exec:``, ``messages:``) → the function that turns a whole spec with
that prefix into a projector. Each resolver is registered by the module that knows its kind
(:mod:`models.peer`, :mod:`models.exec_protocol`, :mod:`models.messages`), the registry's homes;
an extension may register a prefix of its own (``RESOLVERS.register("mine:", fn)``)."""


def resolve_strategy(spec: str | Strategy) -> Strategy:
    """A strategy by id, a peer library's trimmer ``peer:NAME`` (:mod:`models.peer`), a user's
    message-level trimmer ``messages:package.module:function`` (:mod:`models.messages`) or
    ``exec:COMMAND`` in any language (:mod:`models.exec_protocol`) — each prefix resolved by its
    entry in :data:`RESOLVERS` — or a user's projector ``package.module:function`` /
    ``path/file.py:function`` (:mod:`models.user_code`: the one resolver every command and
    scenario shares).

    A user's projector has the same signature, ``(history, budget, cost) -> Window``; it may
    build its window with :func:`window_from_start` so the structural report is ours.
    """
    if type(spec) is NamedStrategy:  # resolved already: a replay calls it for every request
        return spec
    if callable(spec):
        return projector_signature(spec)
    if not isinstance(spec, str):
        raise UnknownName(f"a strategy is an id or a function, got {type(spec).__name__}")
    named = STRATEGIES.lookup(spec)
    if named is not None:
        return named.project
    prefix, colon, _ = spec.partition(":")
    resolver = RESOLVERS.lookup(prefix + colon) if colon else None
    if resolver is not None:
        return resolver(spec)
    if is_reference(spec):
        return projector_signature(load_object(spec, "projector"), spec)
    raise UnknownName(
        f"unknown strategy {spec!r} (known: {', '.join(STRATEGIES)}, peer:NAME, "
        f"package.module:function, file.py:function, messages:package.module:function, or exec:COMMAND)"
    )


def check_strategy(spec: str, parameter: str = "strategy") -> str:
    """``spec`` unchanged when it resolves; else :class:`BadParameter` naming the parameter."""
    try:
        resolve_strategy(spec)
    except TurncheckError as exc:
        raise BadParameter(f"parameter {parameter}: {exc}") from None
    return spec


def strategy_name(spec: str | Strategy) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(getattr(spec, "strategy_id", None), str):
        return spec.strategy_id  # type: ignore[attr-defined,no-any-return]
    return f"{spec.__module__}:{getattr(spec, '__qualname__', repr(spec))}"


def window_from_start(
    history: History, budget: int, cost: CostModel, start: int, name: str = "custom"
) -> Window:
    """The window ``[start, n)`` with its cost and structural report, for users' projectors."""
    if not 0 <= start <= len(history):
        raise BadParameter(f"window start {start} is outside the history (0..{len(history)})")
    p = history.prefix(cost)
    return _window(history, name, budget, p, cost.frame, start)


def check_budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise BadParameter(f"budget must be a whole number, got {budget!r}")
    if budget <= 0:
        raise BadParameter(f"budget must be positive, got {budget}")
    return budget


def project(history: History, budget: int, strategy: str | Strategy, cost: CostModel) -> Window:
    """Project ``history`` under ``budget`` with ``strategy`` and ``cost``.

    Parameters
    ----------
    history : History
        One session's events in read order.
    budget : int
        Positive budget in the cost model's unit (tokens or bytes).
    strategy : str or callable
        ``'M0'``–``'M5'``, ``'REQ'``, ``'package.module:function'`` or a function.
    cost : CostModel
        :class:`~models.cost.EstimateCost`, :class:`~models.cost.Utf8JsonCost`, …

    Returns
    -------
    Window
        The kept suffix (plus M2 placeholders), its cost and structural report.

    Raises
    ------
    BadParameter
        For a non-positive budget. UnknownName for an unknown strategy.
    MandatoryInputExceedsBudget
        For REQ when the system prompt and current question alone exceed the budget.
    """
    check_budget(budget)
    fn = resolve_strategy(strategy)
    window = fn(history, budget, cost)
    if not isinstance(window, Window):
        raise TurncheckError(
            f"projector {strategy_name(strategy)} returned {type(window).__name__}, not a Window"
        )
    return window


def turn_counts(window: Window) -> tuple[int, int]:
    """``(kept_turns, dropped_turns)``: turn segments intersecting the window, and those wholly
    before it (a turn cut in the middle counts as kept)."""
    h = window.history
    total = len(h.seg_starts)
    if window.start >= window.end:
        return 0, total
    first = h.seg_idx[window.start]
    return h.seg_idx[window.end - 1] - first + 1, first


from turncheck.models import summarising as _summarising  # noqa: E402, F401  (registers SUM and SLIDE)
