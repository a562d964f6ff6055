"""A chat store whose append reads the session, awaits, then writes it back.

Run it under plain asyncio and both messages are always there: asyncio runs ready tasks first
in, first out, and the tool's round trip puts its append after the user's. Under
``turncheck race`` another order is tried, the tool's read lands between the user's read and
write, and one message is lost::

    turncheck race examples/races/store.py:test_no_lost_append          # exit 1
    turncheck race examples/races/store.py:test_no_lost_append_locked   # exit 0
"""

import asyncio


class KeyValue:
    """An async key-value client: every call is one round trip (one await) to its server."""

    def __init__(self) -> None:
        self._data: dict[str, list[str]] = {}

    async def get(self, key: str) -> list[str]:
        await asyncio.sleep(0)
        return list(self._data.get(key, []))

    async def put(self, key: str, value: list[str]) -> None:
        await asyncio.sleep(0)
        self._data[key] = list(value)


class ChatStore:
    """The session's messages under one key: append is read, add, write back."""

    def __init__(self, db: KeyValue) -> None:
        self.db = db

    async def append(self, session: str, message: str) -> None:
        messages = await self.db.get(session)
        messages.append(message)
        await self.db.put(session, messages)

    async def messages(self, session: str) -> list[str]:
        return await self.db.get(session)


class LockedChatStore(ChatStore):
    """The same store, with the read and the write in one critical section."""

    def __init__(self, db: KeyValue) -> None:
        super().__init__(db)
        self.lock = asyncio.Lock()

    async def append(self, session: str, message: str) -> None:
        async with self.lock:
            await super().append(session, message)


async def tool_result(store: ChatStore, session: str) -> None:
    """A tool call: one round trip of its own, then its result goes into the session."""
    await asyncio.sleep(0)
    await store.append(session, "tool: 21°C")


async def check_both_kept(store: ChatStore) -> None:
    await asyncio.gather(store.append("s1", "user: weather?"), tool_result(store, "s1"))
    kept = await store.messages("s1")
    assert len(kept) == 2, f"an append was lost: the session holds {kept}"


async def test_no_lost_append() -> None:
    await check_both_kept(ChatStore(KeyValue()))


async def test_no_lost_append_locked() -> None:
    await check_both_kept(LockedChatStore(KeyValue()))


if __name__ == "__main__":
    asyncio.run(test_no_lost_append())
    print("plain asyncio: both messages kept")
