"""The window a reader would send, as the trace viewer's panel: the events, their cost, orphans.

Models that project a window (:class:`models.projector_model.ProjectorModel`,
:class:`models.clock.ClockModel`: one window; :class:`models.keys.KeysModel`: one per stored key)
answer their ``window_panels`` hook with these two functions, so the viewer only pages through
plain :class:`models.protocol.WindowPanel` values. Costs are the ``estimate`` cost model's, as the
models' own projections use.
"""

from __future__ import annotations

from collections.abc import Iterable

from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, Kind
from turncheck.models.projector import Window
from turncheck.models.protocol import WindowItem, WindowPanel

_COST = EstimateCost()


def covered(summary: Event) -> str:
    """A SUMMARY in words: the range of seqs it stands for."""
    first, last = summary.covers or (0, -1)
    return f"SUMMARY of seq {first}–{last}"


def _window_items(w: Window) -> tuple[list[WindowItem], list[str]]:
    """One window's events (cost each, orphan RESULTs and summaries marked, the summaries a
    strategy made first) and its summary notes."""
    items = [WindowItem(f"{covered(e)} (made by {w.strategy})", ("summary",), int(_COST.event_cost(e)))
             for e in getattr(w, "made", ())]  # fmt: skip
    calls: set[str] = set()
    marks = set(w.placeholders)
    for pos in range(w.start, w.end):
        e = w.history.events[pos]
        tags: list[str] = []
        if e.kind == Kind.CALL and e.call_id is not None:
            calls.add(e.call_id)
        if e.kind == Kind.RESULT and e.call_id not in calls:
            tags.append("orphan")
        if e.kind == Kind.SUMMARY:
            tags.append("summary")
        call = f" {e.call_id}" if e.call_id else ""
        source = f", from {e.source}" if e.source is not None and e.source != e.session else ""
        label = f"seq {e.seq}: {covered(e) if e.covers else e.kind.name + call} (turn {e.turn}{source})"
        items.append(WindowItem(label, tuple(tags), int(_COST.event_cost(e))))
        if pos in marks:
            items.append(WindowItem(f"placeholder RESULT{call}", ("placeholder",)))
    r = w.report
    budget = getattr(w, "budget", None)  # a peer's window may carry no budget
    notes = [f"cost {w.cost}" + (f" of budget {budget}" if budget is not None else "")]
    notes.append(f"{r.orphanRes} orphan RESULT(s)")
    for flag, words in (
        ("overBudget", "over budget"),
        ("fallback", "fell back to M0"),
        ("empty", "empty window"),
        ("mixedSources", "events of more than one session"),
    ):
        if getattr(r, flag, 0):
            notes.append(words)
    return items, notes


def window_panel(w: Window) -> WindowPanel:
    """One window: the events sent, their cost, the RESULTs whose CALL is missing."""
    items, notes = _window_items(w)
    title = f"window {getattr(w, 'strategy', '')} would send".replace("  ", " ")
    if not items:
        return WindowPanel(title, (), "nothing is sent: " + ", ".join(notes))
    return WindowPanel(title, tuple(items), ", ".join(notes))


def keyed_panel(windows: Iterable[Window]) -> WindowPanel:
    """One window per stored key: each window's events, under its key."""
    items: list[WindowItem] = []
    summaries: list[str] = []
    for w in windows:
        key = w.history.events[0].session if len(w.history) else "?"
        its, notes = _window_items(w)
        items += [WindowItem(f"{key} · {i.label}", i.marks, i.cost) for i in its]
        summaries.append(f"{key}: " + ", ".join(notes))
    return WindowPanel(
        "windows the reader would send, one per key",
        tuple(items),
        "; ".join(summaries) or "nothing stored yet",
    )
