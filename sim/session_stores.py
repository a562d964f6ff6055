"""Reference session stores of openai-agents' ``Session`` protocol, the red and green shapes of
the corpus's store cases (:mod:`sim.store_cases`).

The protocol (``agents.memory.session.Session``, openai-agents v0.24.0) is four coroutines —
``get_items(limit=None)``, ``add_items(items)``, ``pop_item()``, ``clear_session()`` — and a
``session_id``. Each store here keeps its items on an in-memory "server" reached by one
round trip (one ``await``) per call, as a remote or persistent store is, so the race scheduler
can interleave other tasks between a read and the write that follows it:

* :class:`ReadModifyWriteSession` — ``add_items`` reads the list, awaits, writes it back: two
  concurrent appends can lose one (the shape of lucianfialho/effect-gates#64);
* :class:`ClearThenAddSession` — appends are atomic, but the replacement the SDK's compaction
  hands it (``_atomic_replace_items``, the hook openai-agents' compaction session calls instead of
  clear → add when a store defines it) clears, then adds: a fault between the two leaves the
  history empty (openai/openai-agents-python#3116's shape, inside the store);
* :class:`LockedSession` — every call under one ``asyncio.Lock``: the green shape.

Invariant: each call is atomic on the server except where the docstring says it is not.
"""

from __future__ import annotations

import asyncio
from typing import Any


class _Server:
    """The stored items of every session: one round trip (``await``) per request."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def read(self) -> list[Any]:
        await asyncio.sleep(0)
        return list(self.items)

    async def write(self, items: list[Any]) -> None:
        await asyncio.sleep(0)
        self.items = list(items)

    async def extend(self, items: list[Any]) -> None:
        await asyncio.sleep(0)
        self.items.extend(items)

    async def pop(self) -> Any:
        await asyncio.sleep(0)
        return self.items.pop() if self.items else None


class LockedSession:
    """Every call one server request, each under the session's lock: appends never interleave
    with a read-then-write, and a replacement is one write."""

    session_settings = None

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.server = _Server()
        self.lock = asyncio.Lock()

    async def get_items(self, limit: int | None = None) -> list[Any]:
        async with self.lock:
            items = await self.server.read()
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Any]) -> None:
        async with self.lock:
            await self.server.extend(items)

    async def pop_item(self) -> Any:
        async with self.lock:
            return await self.server.pop()

    async def clear_session(self) -> None:
        async with self.lock:
            await self.server.write([])


class ReadModifyWriteSession(LockedSession):
    """``add_items`` reads the stored list, awaits, then writes the list back, unlocked."""

    async def add_items(self, items: list[Any]) -> None:
        stored = await self.server.read()
        await self.server.write([*stored, *items])


class ClearThenAddSession(LockedSession):
    """Atomic appends; the compaction's replacement (``_atomic_replace_items``) clears, then adds
    — two writes the SDK trusts to be one."""

    async def _atomic_replace_items(self, items: list[Any]) -> bool:
        await self.clear_session()
        await self.add_items(items)
        return True
