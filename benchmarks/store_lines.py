"""The same turn log over newline-delimited JSON, kept (in the benchmarks, not the package) for
comparison with the framed store: ``turncheck bench store`` and the store tests run both.

One header line, then one ``{"id":…,"events":[…]}`` line per committed turn; the newline is the
commit mark. Ownership, limits, turn ids and fsync policies are the shared ones of
:class:`models.store.TurnStore`. What this format cannot do is the point of keeping it: it has
no checksum, so a flipped digit inside a record reads back as a different, valid-looking turn,
and only a JSON parse (not the framing) tells a torn half-line from a record.
"""

from __future__ import annotations

import json

from turncheck.models.events import Event, events_from_objects
from turncheck.models.log_format import LINE_HEADER, Ref, encode_line
from turncheck.models.recovery import Recovery, scan_lines
from turncheck.models.store import TurnStore


class LineTurnLog(TurnStore):
    """Newline-delimited JSON turn log with the interface of :class:`models.store.TurnLog`.

    Recovery (:func:`models.recovery.scan_lines`) cuts an unterminated last line, and tells a
    torn half-line followed by more appends from ordinary corruption instead of silently
    accepting or dropping the merged line.
    """

    format_name = "lines"

    @staticmethod
    def _scan(data: bytes, policy: str, where: str) -> tuple[list[Ref], Recovery]:
        return scan_lines(data, policy, where)

    @staticmethod
    def _header() -> bytes:
        return LINE_HEADER

    @staticmethod
    def _encode(number: int, turn_id: bytes, events_json: bytes) -> bytes:
        return encode_line(turn_id, events_json)

    @staticmethod
    def _content(record: bytes) -> bytes:
        return record

    @staticmethod
    def _decode(record: bytes) -> tuple[Event, ...]:
        """The events of a record line (parsed whole: the line format has no fixed byte layout)."""
        return events_from_objects(json.loads(record)["events"])
