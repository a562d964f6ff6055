"""Per-request replay: the window a peer sends at every point a running agent calls its model.

A session's log is what an agent wrote while it ran; the requests of ``events`` are the
prefixes ``events[:p]`` at every point the agent called its model
(:func:`models.requests.request_points`, the one definition ``project --per-request`` and
the pytest fixture use too), in order, and a trimmer must be judged on each of them, not only
on the whole session: the window a library sends mid-turn, right after a tool result, is the
one a provider rejects.

:func:`replay` projects each prefix with the strategy (a fresh ``History`` per request, so a
peer sees exactly what the agent had). A peer that keeps state between requests, as an agent's
memory object does, can register an incremental replayer in :data:`REPLAYERS`; it must return
the same windows as projecting each prefix afresh would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from turncheck.models.cost import CostModel
from turncheck.models.events import Event
from turncheck.models.history import History
from turncheck.models.projector import Window, project
from turncheck.models.requests import request_points
from turncheck.models.summaries import prompt_events

Replayer = Callable[[Sequence[Event], Sequence[int], int, CostModel], list[Window]]
REPLAYERS: dict[str, tuple[str, str]] = {
    "peer:llamaindex": ("llamaindex_memory", "memory_requests"),
    "peer:adk-compaction": ("adk_compaction", "compaction_requests"),
}
"""peer id → (module in :mod:`integrations.peers`, function): incremental replayers."""


def replay(events: Sequence[Event], budget: int, strategy: str, cost: CostModel,
           points: Sequence[int] | None = None) -> list[Window]:  # fmt: skip
    """The window of each request of ``events`` (``points``, default :func:`request_points`)."""
    at = request_points(events) if points is None else list(points)
    if strategy in REPLAYERS:
        import importlib

        module, function = REPLAYERS[strategy]
        replayer: Replayer = getattr(
            importlib.import_module(f"turncheck.integrations.peers.{module}"), function
        )
        return replayer(events, at, budget, cost)
    return [project(History(prompt_events(events[:p]), costs=(cost,)), budget, strategy, cost) for p in at]
