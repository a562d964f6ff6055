"""The ``agents-sqlite`` store: the OpenAI Agents SDK's own ``SQLiteSession``, through its public API.

The SDK's session offers ``add_items``, ``get_items``, ``pop_item`` and ``clear_session`` — no
transaction, no count, no "delete the oldest n", no version. So this adapter is what a user
running that class would write: a turn is four items (user message, function call, function
call output, assistant message) added in one ``add_items``; counting reads every item; deleting
the oldest turns reads every item, clears the session and adds the rest back. The trigger's
header, the lock and the journal live in a side-car SQLite file beside the session
(:mod:`turncheck.integrations.stores.sidecar`, which says what that costs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from turncheck.integrations.stores.sidecar import SidecarStore
from turncheck.sim.stress.stores import Store, register_store

SESSION_ID = "turncheck-stress"
_PREFIX = "tc:"


def turn_items(turn: int) -> list[Any]:
    """One whole turn as the SDK's input items, each tagged ``tc:TURN:KIND``."""
    call = f"call_{turn}"
    return [
        {"role": "user", "content": f"{_PREFIX}{turn}:U"},
        {"type": "function_call", "call_id": call, "name": "lookup", "arguments": f"{_PREFIX}{turn}:C"},
        {"type": "function_call_output", "call_id": call, "output": f"{_PREFIX}{turn}:R"},
        {"role": "assistant", "content": f"{_PREFIX}{turn}:A"},
    ]


def item_tag(item: Any) -> tuple[int, str]:
    """(turn, kind) of an item written by :func:`turn_items`."""
    for key in ("content", "arguments", "output"):
        text = item.get(key) if isinstance(item, dict) else None
        if isinstance(text, str) and text.startswith(_PREFIX):
            turn, kind = text[len(_PREFIX) :].split(":")
            return int(turn), kind
    return -1, "?"


class AgentsSqliteStore(SidecarStore):
    """``SQLiteSession(SESSION_ID, PATH)`` plus the side-car ``PATH.turncheck``."""

    name = "agents-sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._session: Any = None

    @property
    def session(self) -> Any:
        if self._session is None:
            from agents import SQLiteSession

            self._session = SQLiteSession(SESSION_ID, self.path)
        return self._session

    def items(self) -> list[Any]:
        return list(self.call(self.session.get_items()))

    def tag(self, item: Any) -> tuple[int, str]:
        return item_tag(item)

    def add_turn(self, turn: int) -> None:
        self.call(self.session.add_items(turn_items(turn)))

    def remove(self, items: list[Any], turns: set[int]) -> None:
        """The SDK deletes no item but the last: clear the session and add the rest back."""
        keep = [i for i in items if item_tag(i)[0] not in turns]
        self.call(self.session.clear_session())
        if keep:
            self.call(self.session.add_items(keep))

    def clear(self) -> None:
        self.call(self.session.clear_session())

    def release(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


register_store(Store("agents-sqlite", AgentsSqliteStore, "openai-agents", "#2ca02c",
                     "the Agents SDK's SQLiteSession through its public API, lock and journal in a side-car"))  # fmt: skip
