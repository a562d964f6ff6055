"""A compaction that clears the session, then writes the summary back: openai-agents-python#3116.

``run_compaction`` there cleared the session and then called ``add_items``; when that call
failed, the history was gone. No schedule of a fault-free run shows it — nothing fails between
the two writes — so plain ``turncheck race`` passes it; ``turncheck race --faults`` injects an
error (or a cancellation, or a crash) at each ``await`` and finds it, naming the fault point::

    turncheck race examples/races/compaction_faults.py:test_compaction_clear_then_add --faults

The same compaction written as one write — the summary replaces the items in one step — keeps
either the old history or the new one, whatever fails::

    turncheck race examples/races/compaction_faults.py:test_compaction_swap --faults
"""

import asyncio

from turncheck.sim.race.faults import Acknowledged

SUMMARY = "summary of: "


class Session:
    """An async session store: every call is one round trip (one await) to its server."""

    def __init__(self) -> None:
        self._items: list[str] = []

    async def get_items(self) -> list[str]:
        await asyncio.sleep(0)
        return list(self._items)

    async def add_items(self, items: list[str]) -> None:
        await asyncio.sleep(0)
        self._items.extend(items)

    async def clear_session(self) -> None:
        await asyncio.sleep(0)
        self._items.clear()

    async def replace_items(self, items: list[str]) -> None:
        """One write: the new items take the old ones' place at once."""
        await asyncio.sleep(0)
        self._items = list(items)


def summary(items: list[str]) -> str:
    return SUMMARY + " | ".join(items)


def covered(stored: list[str]) -> list[str]:
    """The items the session holds, a summary standing for the ones it replaced."""
    return [
        part
        for item in stored
        for part in (item[len(SUMMARY) :].split(" | ") if item.startswith(SUMMARY) else [item])
    ]


async def compact_clear_then_add(session: Session) -> None:
    items = await session.get_items()
    await session.clear_session()
    await session.add_items([summary(items)])


async def compact_swap(session: Session) -> None:
    items = await session.get_items()
    await session.replace_items([summary(items)])


async def check_compaction(compact) -> None:
    session = Session()
    history = Acknowledged(session.get_items, covered)
    for item in ("user: weather?", "assistant: 21°C"):
        await session.add_items([item])
        history.ack(item)
    try:
        await compact(session)
    except OSError:
        pass  # the compaction failed: the agent goes on with the session it has
    await history.check()


async def test_compaction_clear_then_add() -> None:
    await check_compaction(compact_clear_then_add)


async def test_compaction_swap() -> None:
    await check_compaction(compact_swap)
