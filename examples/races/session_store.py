"""A session store of openai-agents' ``Session`` protocol whose ``add_items`` reads, awaits, then
writes back — and the same store with a lock. Race both against the reported store failures::

    turncheck cases run --against store:examples/races/session_store.py:ReadModifyWriteSession  # exit 1
    turncheck cases run --against store:examples/races/session_store.py:LockedSession           # exit 0

``turncheck`` calls the factory with a session id, as ``SQLiteSession("s")`` is called.
"""

import asyncio


class ReadModifyWriteSession:
    """The session's items behind one round trip (one await) per call."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._items: list = []

    async def get_items(self, limit: int | None = None) -> list:
        await asyncio.sleep(0)
        return list(self._items[-limit:] if limit else self._items)

    async def add_items(self, items: list) -> None:
        stored = await self.get_items()
        await asyncio.sleep(0)  # the write's round trip
        self._items = [*stored, *items]

    async def pop_item(self):
        await asyncio.sleep(0)
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        await asyncio.sleep(0)
        self._items = []


class LockedSession(ReadModifyWriteSession):
    """The same store, each append's read and write in one critical section."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.lock = asyncio.Lock()

    async def add_items(self, items: list) -> None:
        async with self.lock:
            await super().add_items(items)
