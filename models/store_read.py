"""Reading a turn store: committed turns decoded on first use, checked, cached.

The store (:mod:`turncheck.models.store`) owns the file and appends; this half only reads what
recovery indexed (``_refs``: id, number, start, end per record). Every turn is decoded at most
once and checked against the store's own rules on the way (one whole turn, seqs after the
previous turn's); a record whose checksum holds but which does not decode or breaks those
rules costs only itself: refused under policy ``stop``, skipped and reported under ``resync``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from operator import attrgetter, itemgetter
from pathlib import Path

from turncheck.models.cost import CostModel
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, EventFormatError
from turncheck.models.history import History
from turncheck.models.log_file import read_all
from turncheck.models.log_format import BadTurn, LogCorrupt, Ref, StoredTurn, StoreError, check_turn
from turncheck.models.recovery import Recovery, Skipped


class RecordUndecodable(LogCorrupt):
    """A record whose checksum holds but whose turn does not decode or breaks the log's rules
    (an older file, another writer's bug). Refused under ``stop``; skipped under ``resync``."""


class TurnReading:
    """The read side of :class:`~turncheck.models.store.TurnStore` (which sets these fields)."""

    path: Path
    recovery: Recovery
    last_seq: int
    _refs: list[Ref]
    _cache: list[StoredTurn | None]
    _ids: dict[bytes, int] | None
    _dead_ids: set[bytes]
    _size: int

    def _live_fd(self) -> int:
        raise NotImplementedError

    @staticmethod
    def _decode(record: bytes) -> tuple[Event, ...]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._refs)

    @property
    def size(self) -> int:
        """Bytes of the log file."""
        return self._size

    @property
    def next_seq(self) -> int:
        return self.last_seq + 1

    def turn_ids(self) -> tuple[str, ...]:
        return tuple(r[0].decode("utf-8", "replace") for r in self._refs)

    def __contains__(self, turn_id: object) -> bool:
        return isinstance(turn_id, str) and turn_id.encode("utf-8", "replace") in self._index()

    def get(self, turn_id: str) -> StoredTurn:
        i = self._index().get(turn_id.encode("utf-8", "replace"))
        if i is None:
            raise StoreError(f"{self.path}: no turn {turn_id!r} in the log")
        try:
            return self._turn_at(i)
        except RecordUndecodable as exc:
            self._skip_undecodable(i, exc)
            raise StoreError(
                f"{self.path}: turn {turn_id!r} was skipped (its record does not decode)"
            ) from None

    def turns(self, progress: Callable[[int, int], None] | None = None) -> tuple[StoredTurn, ...]:
        """Every committed turn in commit order, decoded (and cached) from the file.

        Each turn is also checked against the store's own rules (one whole turn, seqs after
        the previous turn's): a record that does not decode or breaks them is refused under
        policy ``stop`` (:class:`RecordUndecodable`, naming its offset) and, under ``resync``,
        skipped and reported in :attr:`recovery` — it costs only itself. Decoding is the slow
        part of reading a large log (recovery only scans), so ``progress(done, total)`` is
        called after each turn decoded by this call.
        """
        fd = self._live_fd()
        missing = sum(1 for t in self._cache if t is None)
        data = read_all(fd, self._size) if missing else None
        done, prev, i = 0, -1, 0
        while i < len(self._refs):
            turn = self._cache[i]
            try:
                if turn is None:
                    done += 1
                    turn = self._decode_ref(i, data)
                    if progress is not None:
                        progress(done, missing)
                self._check_rules(i, turn, prev)
            except RecordUndecodable as exc:
                self._skip_undecodable(i, exc)
                continue
            self._cache[i] = turn
            prev = turn.events[-1].seq
            i += 1
        return tuple(t for t in self._cache if t is not None)

    def _check_rules(self, i: int, turn: StoredTurn, prev: int) -> None:
        try:
            check_turn(turn.events, prev)
        except BadTurn as exc:
            start = self._refs[i][2]
            raise RecordUndecodable(
                f"{self.path}: record at byte {start} breaks the log's rules ({exc})", start
            ) from None

    def _skip_undecodable(self, i: int, exc: RecordUndecodable) -> None:
        """Under ``resync`` drop record ``i`` and report it; under ``stop`` refuse with ``exc``."""
        if self.recovery.policy != "resync":
            raise RecordUndecodable(f"{exc} — reopen with policy resync to skip it", exc.offset) from None
        raw_id, _, start, end = self._refs.pop(i)
        self._cache.pop(i)
        self._ids = None
        self._dead_ids.add(raw_id)
        reason = str(exc).split(": ", 1)[-1]
        rec = self.recovery
        skipped = tuple(
            sorted((*rec.skipped, Skipped(start, end - start, reason, 1)), key=attrgetter("offset"))
        )
        self.recovery = replace(rec, records=rec.records - 1, skipped=skipped)

    def __iter__(self) -> Iterator[StoredTurn]:
        return iter(self.turns())

    def events(self, session: str | None = None) -> list[Event]:
        """All committed events in log order, or only those of one session (the read order)."""
        return [e for t in self.turns() for e in t.events if session is None or e.session == session]

    def sessions(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for t in self.turns():
            seen.setdefault(t.session, None)
        return tuple(seen)

    def history(self, session: str | None = None, costs: Iterable[CostModel] = ()) -> History:
        """One session's committed events as a :class:`~models.history.History` to project.

        The history is a copy: projecting it (any strategy, any budget, a refused REQ) reads
        the log and never writes to it. ``session`` may be omitted when the log holds one.
        """
        if session is None:
            names = self.sessions()
            if len(names) > 1:
                raise BadParameter(
                    f"{self.path}: log holds {len(names)} sessions ({', '.join(names[:5])}…); name one"
                )
            session = names[0] if names else ""
        return History(self.events(session), costs=costs)

    def _index(self) -> dict[bytes, int]:
        """Turn id → position among the records (ids are unique: recovery guarantees it)."""
        if self._ids is None:
            self._ids = dict(zip(map(itemgetter(0), self._refs), range(len(self._refs)), strict=True))
        return self._ids

    def _turn_at(self, i: int) -> StoredTurn:
        """Turn ``i``, decoded on first use (:class:`RecordUndecodable` when it does not decode)."""
        t = self._cache[i]
        if t is None:
            _, _, start, end = self._refs[i]
            t = self._cache[i] = self._decode_ref(i, None, os.pread(self._live_fd(), end - start, start))
        return t

    def _decode_ref(self, i: int, data: bytes | None, record: bytes | None = None) -> StoredTurn:
        raw_id, _, start, end = self._refs[i]
        if record is None:
            assert data is not None
            record = data[start:end]
        where = f"{self.path}: record at byte {start}"
        try:
            tid = raw_id.decode("utf-8")
            events = self._decode(record)
        except RecursionError:
            raise RecordUndecodable(
                f"{where} passed its check but does not decode (nested too deeply)", start
            ) from None
        except (ValueError, KeyError, TypeError, EventFormatError) as exc:
            detail = re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], str(exc))[:200]  # one line
            raise RecordUndecodable(
                f"{where} passed its check but does not decode ({detail})", start
            ) from None
        return StoredTurn(tid, events, start)


def highest_seq(data: bytes, refs: list[Ref]) -> int:
    """The highest last seq of any record, read from the bytes without decoding: a writer
    continues after it even when another program wrote seqs going back (the reader then
    skips those records), so a writer never repeats a seq. Every record's events JSON
    spells each event as ``{"seq":N,…`` and no string can hold that unescaped."""
    best = -1
    mark = b'{"seq":'
    for _, _, start, end in refs:
        at = data.rfind(mark, start, end)
        if at >= 0:
            stop = data.find(b",", at, end)
            digits = data[at + len(mark) : stop]
            if digits.isdigit() and len(digits) <= 19 and int(digits) > best:
                best = int(digits)
    return best
