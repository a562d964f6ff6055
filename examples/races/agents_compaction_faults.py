"""openai-agents-python#3116 against the real SDK: ``run_compaction`` clears, then re-adds.

``OpenAIResponsesCompactionSession.run_compaction()`` cleared the underlying session and then
wrote the compacted items with ``add_items``; when that write failed, the history was gone
(issue #3116). PR #3117 snapshots the history first and restores it when the replacement
fails. The underlying session here is an in-memory store whose every call is one round trip,
and ``responses.compact`` is scripted (offline)::

    turncheck race examples/races/agents_compaction_faults.py:test_compaction_keeps_history --faults --fault-kinds error

A release before the fix loses the history when ``add_items`` raises; one with it restores it.
No restore survives a crash of the compacting task between the two writes (``--fault-kinds
crash``): only a store that replaces the items in one write does.
"""

import asyncio
from typing import Any

from agents import set_tracing_disabled
from agents.memory.openai_responses_compaction_session import OpenAIResponsesCompactionSession

from turncheck.sim.race.faults import Acknowledged

set_tracing_disabled(True)  # offline: no trace export
SUMMARY = "summary of: "


class MemorySession:
    """The SDK's ``Session`` protocol over a list; every call is one round trip (one await)."""

    session_settings = None

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._items: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        await asyncio.sleep(0)
        return list(self._items[-limit:] if limit else self._items)

    async def add_items(self, items: list[Any]) -> None:
        await asyncio.sleep(0)
        self._items.extend(items)

    async def pop_item(self) -> Any:
        await asyncio.sleep(0)
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        await asyncio.sleep(0)
        self._items.clear()


class CompactAPI:
    """``client.responses.compact``, offline: one message summarising the session's texts."""

    def __init__(self, store: MemorySession) -> None:
        self.store = store

    @property
    def responses(self) -> "CompactAPI":
        return self

    async def compact(self, **_: Any) -> Any:
        texts = [item["content"] for item in self.store._items]
        await asyncio.sleep(0)  # the round trip
        summary = {"type": "message", "role": "user", "content": SUMMARY + " | ".join(texts)}
        return type("Compacted", (), {"output": [summary]})()


def covered(stored: list[Any]) -> list[str]:
    """The texts the session holds, a summary standing for the ones it replaced."""
    texts = [item["content"] for item in stored]
    return [
        part for t in texts for part in (t[len(SUMMARY) :].split(" | ") if t.startswith(SUMMARY) else [t])
    ]


async def test_compaction_keeps_history() -> None:
    store = MemorySession("s")
    session = OpenAIResponsesCompactionSession(
        session_id="s",
        underlying_session=store,  # type: ignore[arg-type]
        client=CompactAPI(store),  # type: ignore[arg-type]
        should_trigger_compaction=lambda context: False,
    )
    history = Acknowledged(store.get_items, lambda stored: covered(stored))
    for text in ("user: weather in Paris?", "assistant: 21°C"):
        await session.add_items([{"type": "message", "role": "user", "content": text}])
        history.ack(text)
    try:
        await session.run_compaction({"response_id": "resp_1", "force": True})
    except OSError:
        pass  # the compaction failed: the agent goes on with the session it has
    await history.check()
