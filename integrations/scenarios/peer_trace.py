"""A peer's shortest pairing break as a counterexample trace the viewer steps through.

:mod:`integrations.scenarios.peer_repro` finds the shortest *clean history* that makes a library send an
orphan result or an unmatched call and saves it as a log. This module gives the same finding the
form every other counterexample has — a ``turncheck-trace/1`` file of the ``projector`` model
with the library as its strategy — so ``turncheck replay FILE --html`` and the report's embedded
viewer show it step by step: each append, the window the library would send after it, and the
step where pairing breaks.

The search is breadth-first over the model's histories (fresh call ids, ``reuse=False``, so a
RESULT always pairs with its own CALL and any orphan is the library's doing; ``pairing=True``
adds the ``no-orphan-calls`` property), shortest first, at the first of :data:`BUDGETS` where the
property breaks within ``events`` appends. Only the properties asked for are searched (the
``peers`` scenario asks for those its clean-history search found broken), and the search stops
as soon as they are found. The order of the model's actions is fixed, so the trace is the same
on every run. A library that cannot run on the model's text-less events is reported, not hidden
(:class:`NoTrace`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from turncheck.models.errors import TurncheckError
from turncheck.models.invariants import NO_ORPHAN_RESULTS
from turncheck.models.projector_model import NO_ORPHAN_CALLS, ProjectorModel
from turncheck.sim.trace import Trace

BUDGETS = (4, 8)
PROPERTIES = (NO_ORPHAN_RESULTS, NO_ORPHAN_CALLS)
ENGINE = "breadth-first (scenarios.peer_trace)"


@dataclass(frozen=True)
class PeerTrace:
    """The shortest trace on which ``strategy`` breaks ``violated`` (a projector property)."""

    strategy: str
    violated: str
    trace: Trace

    @property
    def file(self) -> str:
        return f"{self.strategy.replace(':', '-')}-{self.violated}.trace.json"


def _search(
    strategy: str, budget: int, events: int, wanted: Iterable[str]
) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """Breadth-first: the shortest action path breaking each wanted property, at one budget."""
    model = ProjectorModel(strategy=strategy, budget=budget, events=events, reuse=False, pairing=True)
    props = [p for p in model.properties() if p.name in set(wanted)]
    found: dict[str, tuple[tuple[Any, ...], ...]] = {}
    start = next(iter(model.init_states()))
    seen = {model.canonical(start)}
    queue: deque[tuple[Any, tuple[tuple[Any, ...], ...]]] = deque([(start, ())])
    while queue and len(found) < len(props):
        state, path = queue.popleft()
        for p in props:
            if p.name not in found and not p.holds(state):
                found[p.name] = path
        for action in model.actions(state):
            nxt = model.step(state, action)
            key = model.canonical(nxt)
            if key not in seen:
                seen.add(key)
                queue.append((nxt, (*path, tuple(action))))
    return found


class NoTrace(TurncheckError):
    """The library failed on the model's histories (its own error, named), so no trace was made."""


def peer_traces(strategy: str, events: int = 6, properties: Iterable[str] = PROPERTIES) -> list[PeerTrace]:
    """The shortest trace per wanted pairing property ``strategy`` breaks within ``events`` appends.

    Raises
    ------
    NoTrace
        The library raised on one of the model's histories.
    """
    best: dict[str, tuple[int, int, tuple[tuple[Any, ...], ...]]] = {}
    for budget in BUDGETS:
        wanted = [p for p in properties if p not in best]
        if not wanted:
            break
        try:
            found = _search(strategy, budget, events, wanted)
        except TurncheckError as exc:
            raise NoTrace(f"{strategy} fails on the projector model's histories: {exc}") from None
        for prop, path in found.items():
            best[prop] = (len(path), budget, path)
    out = []
    for prop in PROPERTIES:
        if prop not in best:
            continue
        _, budget, path = best[prop]
        model = ProjectorModel(strategy=strategy, budget=budget, events=events, reuse=False, pairing=True)
        trace = Trace("projector", dict(model.params), path, prop, 0, ENGINE, "projector", {"peer": strategy})
        out.append(PeerTrace(strategy, prop, trace))
    return out


TRACE_COLUMNS = ("strategy", "violated", "steps", "budget", "history", "file")
TRACE_DIR = "peers.traces"
# the reproductions' counters → the projector model's properties
BY_COUNTER = {"orphanRes": NO_ORPHAN_RESULTS, "orphanCall": NO_ORPHAN_CALLS}


def history_text(trace: Trace) -> str:
    """The appends of a trace in short: ``U C0 R0[3] T`` (a RESULT with its size in tokens)."""
    words = []
    for a in trace.actions:
        verb = a[0]
        if verb == "user":
            words.append("U")
        elif verb == "call":
            words.append(f"C{a[1]}")
        elif verb == "result":
            words.append(f"R{a[1]}[{a[2]}]")
        else:
            words.append("T")
    return " ".join(words)


def trace_rows(
    strategy: str, counters: Iterable[str], attachments: dict[str, Any], events: int = 6
) -> list[tuple[str | int, ...]]:
    """The ``traces`` table's rows for one peer; each trace is added to ``attachments`` as
    ``peers.traces/FILE`` (its JSON text)."""
    wanted = [BY_COUNTER[c] for c in counters if c in BY_COUNTER]
    try:
        found = {t.violated: t for t in peer_traces(strategy, events, wanted)}
    except NoTrace as exc:
        return [(strategy, prop, 0, 0, str(exc), "") for prop in wanted]
    rows: list[tuple[str | int, ...]] = []
    for prop in wanted:
        t = found.get(prop)
        if t is None:
            rows.append((strategy, prop, 0, 0, f"none within {events} appends at budgets {BUDGETS}", ""))
            continue
        path = f"{TRACE_DIR}/{t.file}"
        attachments[path] = t.trace.dumps()
        rows.append(
            (strategy, prop, len(t.trace.actions), int(t.trace.params["budget"]), history_text(t.trace), path)
        )
    return rows
