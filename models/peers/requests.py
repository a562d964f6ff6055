"""Per-request replay: the window a peer sends at every point a running agent calls its model.

A session's log is what an agent wrote while it ran; the agent called its model before each
assistant output — before a TERM, and before a run of CALLs (parallel calls come from one
model response) — and the request it sent held everything written before that output. A
history that ends on a USER or RESULT event has one more request pending. So the requests of
``events`` are the prefixes ``events[:p]`` for every such ``p`` (:func:`request_points`), in
order, and a trimmer must be judged on each of them, not only on the whole session: the
window a library sends mid-turn, right after a tool result, is the one a provider rejects.

:func:`replay` projects each prefix with the strategy (a fresh ``History`` per request, so a
peer sees exactly what the agent had). A peer that keeps state between requests, as an agent's
memory object does, can register an incremental replayer in :data:`REPLAYERS`; it must return
the same windows as projecting each prefix afresh would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from turncheck.models.cost import CostModel
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import Window, project
from turncheck.models.summaries import prompt_events

Replayer = Callable[[Sequence[Event], Sequence[int], int, CostModel], list[Window]]
REPLAYERS: dict[str, tuple[str, str]] = {
    "peer:llamaindex": ("llamaindex_memory", "memory_requests"),
    "peer:adk-compaction": ("adk_compaction", "compaction_requests"),
}
"""peer id → (module in :mod:`models.peers`, function): incremental replayers."""


def request_points(events: Sequence[Event]) -> list[int]:
    """Every ``p`` such that the agent called its model with ``events[:p]``, in order.

    Invariant: ``0 < p ≤ len(events)``; ``p < len(events)`` exactly when event ``p`` is a TERM or
    the first CALL of a run of CALLs; ``len(events)`` is included when the last event is a USER,
    or a RESULT that completes the newest batch of calls (a request is pending).
    """
    out: list[int] = []
    for p in range(1, len(events)):
        k = events[p].kind
        if k is Kind.TERM or (k is Kind.CALL and events[p - 1].kind is not Kind.CALL):
            out.append(p)
    if events and (
        events[-1].kind is Kind.USER or (events[-1].kind is Kind.RESULT and batch_answered(events))
    ):
        out.append(len(events))
    return out


def batch_answered(events: Sequence[Event]) -> bool:
    """Whether every call of the newest run of CALLs has a RESULT after it (the agent has all
    the tool results it waits for, so its next step is a model call)."""
    q = len(events)
    answered: set[str | None] = set()
    while q and events[q - 1].kind is Kind.RESULT:
        q -= 1
        answered.add(events[q].call_id)
    calls: set[str | None] = set()
    while q and events[q - 1].kind is Kind.CALL:
        q -= 1
        calls.add(events[q].call_id)
    return calls <= answered


def replay(events: Sequence[Event], budget: int, strategy: str, cost: CostModel,
           points: Sequence[int] | None = None) -> list[Window]:  # fmt: skip
    """The window of each request of ``events`` (``points``, default :func:`request_points`)."""
    at = request_points(events) if points is None else list(points)
    if strategy in REPLAYERS:
        import importlib

        module, function = REPLAYERS[strategy]
        replayer: Replayer = getattr(importlib.import_module(f"turncheck.models.peers.{module}"), function)
        return replayer(events, at, budget, cost)
    return [project(History(prompt_events(events[:p]), costs=(cost,)), budget, strategy, cost) for p in at]
