"""A JSON-file chat store whose read runs in a thread and takes real time (issue 50).

``append`` reads the session file in a worker thread (``asyncio.to_thread``: a slow disk, a
network filesystem — here 25 ms of ``time.sleep``), adds the message, and writes the file back.
The user's append starts at once; the tool's result arrives 10 ms later (``asyncio.sleep``) and
appends without a thread. In production the tool's write lands while the user's read is still
in its thread, and the user's write-back, made from what it read before, drops the tool's
message — plain ``asyncio.run`` loses it every time::

    python examples/races/json_store.py                                       # exit 1: lost
    turncheck race examples/races/json_store.py:test_no_lost_append          # exit 1, a token
    turncheck race examples/races/json_store.py:test_no_lost_append_locked   # exit 0

Up to turncheck 0.2.0, ``turncheck race`` said every schedule passed (random, pct, exhaustive):
the thread's work took no virtual time and the timer fired only when nothing else could run.
Now a job's effects and its delivery are two steps and time may pass between them.
"""

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

READ_SECONDS = 0.025  # the read's real duration, in its thread
TOOL_DELAY = 0.01  # when the tool's result arrives, while the user's read is still running


class JsonFileStore:
    """One session per JSON file; ``append`` is read (in a thread), add, write back."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> list[str]:
        messages: list[str] = json.loads(self.path.read_text()) if self.path.exists() else []
        time.sleep(READ_SECONDS)
        return messages

    def _write(self, messages: list[str]) -> None:
        self.path.write_text(json.dumps(messages))

    async def append(self, message: str) -> None:
        messages = await asyncio.to_thread(self._read)
        messages.append(message)
        self._write(messages)

    def append_now(self, message: str) -> None:
        """The same append, read and write both in the caller's thread."""
        messages = json.loads(self.path.read_text()) if self.path.exists() else []
        self._write([*messages, message])

    def messages(self) -> list[str]:
        return json.loads(self.path.read_text()) if self.path.exists() else []


class LockedJsonFileStore(JsonFileStore):
    """The same store, every append (threaded or not) under one ``asyncio.Lock``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.lock = asyncio.Lock()

    async def append(self, message: str) -> None:
        async with self.lock:
            await super().append(message)

    async def append_later(self, message: str) -> None:
        async with self.lock:
            self.append_now(message)


async def tool_result(store: JsonFileStore) -> None:
    """The tool's result: it arrives after ``TOOL_DELAY`` and is appended at once."""
    await asyncio.sleep(TOOL_DELAY)
    if isinstance(store, LockedJsonFileStore):
        await store.append_later("tool: 21°C")
    else:
        store.append_now("tool: 21°C")


async def check_both_kept(store_type: type[JsonFileStore]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = store_type(Path(folder) / "session.json")
        await asyncio.gather(store.append("user: weather?"), tool_result(store))
        kept = store.messages()
    assert len(kept) == 2, f"an append was lost: the session holds {kept}"


async def test_no_lost_append() -> None:
    await check_both_kept(JsonFileStore)


async def test_no_lost_append_locked() -> None:
    await check_both_kept(LockedJsonFileStore)


if __name__ == "__main__":
    lost = 0
    for _ in range(50):
        try:
            asyncio.run(test_no_lost_append())
        except AssertionError:
            lost += 1
    print(f"plain asyncio: an append was lost in {lost} of 50 runs")
    sys.exit(1 if lost else 0)
