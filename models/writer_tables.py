"""The trigger model's memo tables over its per-writer records (``(appended this slot, turns
left)`` per writer): pure functions of a small tuple that recurs in nearly every state, kept apart
from the model's rules so each reads on its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Action = tuple[Any, ...]
Writers = tuple[tuple[int, int], ...]


class WriterTables:
    """Memo tables over the per-writer records: what an append by writer ``w``, a tick and the
    canonical order make of a ``writers`` tuple, and which actions it enables.

    Why: these are pure functions of a small tuple that recurs in nearly every state, and a dict
    hit costs less than rebuilding or sorting it. Results are interned (one object per value),
    so states share their writer tuples — less memory, and equal states compare by identity
    first. Invariant: an entry is always exactly the function's value for its key; a table that
    reaches ``limit`` entries is emptied, which bounds memory and changes nothing else.

    The append and tick tables also exist keyed by the tuple's identity, for the model's
    :meth:`~turncheck.models.trigger.TriggerModel.stepper` functions: a caller that meets the same interned tuples again
    and again (the SimPy runner) looks an ``int`` up where the plain tables hash a tuple of
    records, record by record. Each such entry holds ``(key tuple, value)``: it keeps the tuple
    alive, so no other object can have its id while the entry exists — a hit for a live tuple's
    id is that tuple's own entry, with no need to compare.
    There an append's value is ``None`` when the writer's own record forbids it.
    """

    def __init__(self, writers: int, limit: int = 1 << 17) -> None:
        self.limit = limit
        self.interned: dict[Writers, Writers] = {}
        self.appended: list[dict[Writers, Writers]] = [{} for _ in range(writers)]
        self.ticked: dict[Writers, Writers] = {}
        self.ordered: dict[Writers, Writers] = {}
        self.enabled: dict[Writers, list[Action]] = {}
        self.appended_by_id: list[dict[int, tuple[Writers, Writers | None]]] = [{} for _ in range(writers)]
        self.ticked_by_id: dict[int, tuple[Writers, Writers]] = {}

    def _store(self, table: dict[Any, Any], key: Any, value: Any) -> Any:
        if len(table) >= self.limit:
            table.clear()
        table[key] = value
        return value

    def _intern(self, writers: Writers) -> Writers:
        interned = self.interned.get(writers)
        if interned is None:
            interned = self._store(self.interned, writers, writers)
        return interned

    def remember_appended(self, writers: Writers, w: int) -> Writers:
        records = list(writers)
        _used, left = records[w]
        records[w] = (1, left - 1 if left > 0 else left)
        after: Writers = self._store(self.appended[w], writers, self._intern(tuple(records)))
        return after

    def remember_ticked(self, writers: Writers) -> Writers:
        after: Writers = self._store(
            self.ticked, writers, self._intern(tuple((0, left) for _u, left in writers))
        )
        return after

    def learn_appended(self, writers: Writers, w: int) -> Writers | None:
        """What an append by ``w`` makes of ``writers`` — ``None`` when ``w``'s record lets it
        append no more (appended in this slot, or no turns left) — remembered by identity."""
        used, left = writers[w]
        after = None
        if not used and left:
            after = self.appended[w].get(writers)
            if after is None:
                after = self.remember_appended(writers, w)
        self._store(self.appended_by_id[w], id(writers), (writers, after))
        return after

    def learn_ticked(self, writers: Writers) -> Writers:
        """What a tick makes of ``writers``, remembered by the tuple's identity too."""
        after = self.ticked.get(writers)
        if after is None:
            after = self.remember_ticked(writers)
        self._store(self.ticked_by_id, id(writers), (writers, after))
        return after

    def remember_ordered(self, writers: Writers) -> Writers:
        ordered: Writers = self._store(self.ordered, writers, self._intern(tuple(sorted(writers))))
        return ordered

    def remember_enabled(self, writers: Writers, appends: Sequence[Action], tick: Action) -> list[Action]:
        enabled = [a for a, (used, left) in zip(appends, writers, strict=True) if not used and left]
        enabled.append(tick)
        stored: list[Action] = self._store(self.enabled, writers, enabled)
        return stored
