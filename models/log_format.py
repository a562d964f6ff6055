"""One record of the durable log: a whole turn, validated, serialized, and laid out as bytes.

The writer (:mod:`models.store`) and the reader (:mod:`models.recovery`) share this module, so
the two cannot drift apart. A record holds exactly one whole turn — USER, CALL/RESULT pairs,
TERM of one (session, turn) — whose events are serialized once: a JSON array of their JSONL
objects (:func:`models.events.event_to_dict`, compact, UTF-8), the same bytes as the
:func:`~models.events.dumps_event` lines joined by ``,`` inside ``[…]``.

Framed (``frames``), all integers little-endian::

    header  16 B   magic b"\\x89TCL\\r\\n\\x1a\\n" | version u16 | flags u16 (0) | crc32(bytes 0..11) u32
    frame          length L u32 | crc32(body) u32 | body (L bytes)
    body           frame number u32 | id length k u8 (1..255) | turn id (k B, UTF-8) | events JSON

Lines (``lines``): a header line ``{"format":"turncheck-lines","version":1}`` then one line
``{"id":…,"events":[…]}`` per turn; the newline is the commit mark.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from zlib import crc32

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.events import (
    MAX_INT,
    Event,
    EventFormatError,
    Kind,
    encode_wire,
    event_from_dict,
    event_to_dict,
    events_from_json,
    reference_json,
    wire,
)

FRAME_MAGIC = b"\x89TCL\r\n\x1a\n"
FRAME_VERSION = 1
HEADER = struct.Struct("<8sHHI")
HEADER_SIZE = HEADER.size  # 16
FRAME_HEAD = struct.Struct("<IIIB")  # length, crc32(body), frame number, id length
MAX_ID_BYTES = 255

LINE_FORMAT = "turncheck-lines"
LINE_VERSION = 1
LINE_HEADER = b'{"format":"turncheck-lines","version":1}\n'
LINE_START = b'{"id":'
_PLAIN_ID = re.compile(rb"[ !#-\[\]-~]+")  # printable ASCII without quote or backslash
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


Ref = tuple[bytes, int, int, int]
"""A recovered record: (turn id as UTF-8, record number, start offset, end offset)."""


class StoreError(TurncheckError):
    """Base of every error the durable log raises; the message is one line naming the file."""


class NotALog(StoreError):
    """The file is not a turncheck log of the expected format (wrong magic or header)."""


class NewerFormat(StoreError):
    """The log was written by a newer turncheck (format version above the one we read)."""


class LogCorrupt(StoreError):
    """Damage that is not a torn tail, found under policy ``stop`` (or a damaged header).

    ``offset`` is the byte where the damage starts (0 for the header).
    """

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


class BadTurn(StoreError, BadParameter):
    """A turn that is not one whole turn (USER … TERM of one session), or a bad turn id."""


@dataclass(frozen=True)
class StoredTurn:
    """A committed turn as read back from the log: its id, its events, where its record starts."""

    turn_id: str
    events: tuple[Event, ...]
    offset: int

    @property
    def session(self) -> str:
        return self.events[0].session

    @property
    def turn(self) -> int:
        return self.events[0].turn


_new_object = object.__new__
_set_attribute = object.__setattr__


def stored_turn(turn_id: str, events: tuple[Event, ...], offset: int) -> StoredTurn:
    """``StoredTurn(turn_id, events, offset)``, the same frozen value, built without the generated
    ``__init__``'s three ``object.__setattr__`` calls (≈ 0.7 µs, a few per cent of a commit)."""
    turn = _new_object(StoredTurn)
    _set_attribute(turn, "__dict__", {"turn_id": turn_id, "events": events, "offset": offset})
    return turn


def default_turn_id(events: Sequence[Event]) -> str:
    """``session/turn`` of the turn's first event: a retry of the same turn gets the same id."""
    return f"{events[0].session}/{events[0].turn}"


def check_turn_id(turn_id: str) -> bytes:
    """The id as UTF-8 (1..255 bytes, no control characters), or :class:`BadTurn`."""
    if (
        type(turn_id) is str
        and turn_id.isascii()
        and turn_id.isprintable()
        and 0 < len(turn_id) <= MAX_ID_BYTES
    ):
        return turn_id.encode("ascii")  # printable ASCII (0x20..0x7e): no control character
    if not isinstance(turn_id, str) or not turn_id:
        raise BadTurn(f"turn id must be a non-empty string, got {turn_id!r}")
    if _CONTROL.search(turn_id):
        raise BadTurn(f"turn id {turn_id!r} contains a control character")
    try:
        raw = turn_id.encode("utf-8")
    except UnicodeEncodeError:
        raise BadTurn(f"turn id {turn_id!r} cannot be encoded as UTF-8") from None
    if len(raw) > MAX_ID_BYTES:
        raise BadTurn(f"turn id is {len(raw)} B long; the limit is {MAX_ID_BYTES} B")
    return raw


def check_turn(events: Sequence[Event], after_seq: int) -> None:
    """Refuse anything but one whole turn: USER, CALL/RESULT, TERM of one (session, turn).

    A SUMMARY may stand inside the turn (compaction by summary is appended as the turn goes:
    Anthropic's ``compaction`` block opens an assistant message); its ``covers`` is checked by
    the reader's validator, and whether it covers rightly is ``lint``'s (:mod:`models.summaries`).
    Seqs increase strictly within the turn and start after ``after_seq`` (the log's last seq);
    every RESULT answers a CALL earlier in the turn. Dangling CALLs are allowed (the data's
    fault, kept as written). ``turn`` and the last seq are at most
    :data:`~models.events.MAX_INT`; only CALL/RESULT carry a ``call_id``. Values of the wrong
    type are refused here or by :func:`check_readback` (one validator: the reader's).
    """
    try:
        _check_turn(events, after_seq)
    except TypeError:  # a seq or turn that does not compare with integers
        raise BadTurn(f"turn {_turn_name(events)}: seq and turn must be integers") from None


def _turn_name(events: Sequence[Event]) -> str:
    try:
        return f"{events[0].session}/{events[0].turn}"
    except Exception:  # noqa: BLE001 - only a name for the message
        return "?"


def _check_turn(events: Sequence[Event], after_seq: int) -> None:
    if not events:
        raise BadTurn("a turn needs at least a USER and a TERM event; got none")
    first, last = events[0], events[-1]
    if first.kind is not Kind.USER or last.kind is not Kind.TERM or len(events) < 2:
        raise BadTurn(
            f"turn {_turn_name(events)} must start with USER and end with TERM "
            f"(got {getattr(first.kind, 'name', first.kind)} … {getattr(last.kind, 'name', last.kind)})"
        )
    session, number = first.session, first.turn
    if not 0 <= number <= MAX_INT or not last.seq <= MAX_INT:
        raise BadTurn(f"turn {_turn_name(events)}: turn and seq must be between 0 and {MAX_INT}")
    if first.call_id is not None or last.call_id is not None:
        raise BadTurn(f"turn {_turn_name(events)}: a USER or TERM must not carry a call_id")
    open_calls: set[str | None] = set()
    prev = after_seq
    call, result = Kind.CALL, Kind.RESULT
    for e in events:
        if e.session != session or e.turn != number:
            raise BadTurn(
                f"turn {first.session}/{first.turn} holds an event of {e.session}/{e.turn} (seq {e.seq})"
            )
        if e.seq <= prev:
            raise BadTurn(f"turn {first.session}/{first.turn}: seq {e.seq} does not follow {prev}")
        prev = e.seq
        kind = e.kind
        if kind is call:
            if e.call_id is None:
                raise BadTurn(f"turn {first.session}/{first.turn}: CALL at seq {e.seq} has no call_id")
            open_calls.add(e.call_id)
        elif kind is result:
            if e.call_id not in open_calls:
                raise BadTurn(f"turn {first.session}/{first.turn}: RESULT {e.call_id} has no CALL before it")
            open_calls.discard(e.call_id)
        elif e is not first and e is not last and kind is not Kind.SUMMARY:
            raise BadTurn(
                f"turn {first.session}/{first.turn}: {getattr(kind, 'name', kind)} at seq {e.seq} inside the turn"
            )


def check_readback(body: bytes, events: Sequence[Event]) -> None:
    """Refuse a turn whose serialization the reader would refuse or read back differently.

    This is the reader's own validator (:func:`~models.events.event_from_dict` over the bytes
    about to be written), so commit and every read share one rule. :meth:`TurnStore.commit`
    runs it only for turns msgspec did not write (:func:`encode_turn`'s ``plain`` is false: the
    types msgspec's path admits are the reader's); it runs before a byte is written.
    """
    try:
        back = events_from_json(body)
        stored = [as_stored(e) for e in events]
    except EventFormatError as exc:
        raise BadTurn(f"turn {_turn_name(events)}: {exc}; nothing written") from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise BadTurn(
            f"turn {_turn_name(events)} cannot be read back ({type(exc).__name__}); nothing written"
        ) from None
    for k, (mine, theirs) in enumerate(zip(stored, back, strict=True)):
        if mine != theirs:
            raise BadTurn(
                f"turn {_turn_name(events)}: event {k} would not read back as committed "
                f"(a field of the wrong type?); nothing written"
            )


def events_json(events: Iterable[Event]) -> bytes:
    """The events of a turn as one JSON array (see :func:`encode_turn`)."""
    return encode_turn(tuple(events))[0]


def encode_turn(events: Sequence[Event]) -> tuple[bytes, bool]:
    """The events of a turn as one JSON array of their JSONL objects (the one serialization:
    the same bytes as ``[`` + :func:`~models.events.dumps_event` lines joined by ``,`` + ``]``),
    and whether msgspec wrote it.

    msgspec writes the events whose values it spells as the format does and the reader reads
    back unchanged (:func:`~models.events.wire`): then ``plain`` is true and
    :func:`check_readback` is not needed. Any other turn is spelled by ``json`` over
    :func:`~models.events.event_to_dict` (the bytes never depend on which path ran). A value that
    cannot be serialized at all (a lone surrogate, an integer past Python's digit limit, a
    non-number ``ts``) is :class:`BadTurn`. A turn holding a SUMMARY is never plain: the rules of
    a summary (``covers``, no call id) live in the reader's validator alone, so its bytes are read
    back before they are written.
    """
    out = None if any(e.kind is Kind.SUMMARY for e in events) else wire(events)
    try:
        if out is not None:
            return encode_wire(out), True
    except ValueError:  # a lone surrogate or a huge int: the reference path names it
        pass
    try:
        return reference_json([event_to_dict(e) for e in events]).encode("utf-8"), False
    except UnicodeEncodeError as exc:
        raise BadTurn(
            f"a field of the turn cannot be encoded as UTF-8 (lone surrogate at character {exc.start}); "
            f"nothing written"
        ) from None
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        raise BadTurn(
            f"an event of the turn cannot be serialized ({type(exc).__name__}); nothing written"
        ) from None


def as_stored(event: Event) -> Event:
    """The event as reading it back yields it (``text`` fixes ``chars``; ``source`` equal to
    ``session`` is not stored), without paying for a decode when nothing would change."""
    if (event.text is None or event.chars == len(event.text)) and event.source != event.session:
        return event
    return event_from_dict(event_to_dict(event))


def encode_frame_header(version: int = FRAME_VERSION) -> bytes:
    head = struct.pack("<8sHH", FRAME_MAGIC, version, 0)
    return head + struct.pack("<I", crc32(head))


def encode_frame(number: int, turn_id: bytes, events_json: bytes) -> bytes:
    """One frame; the CRC covers the body (number, id, events), the length is checked by it."""
    body = struct.pack("<IB", number, len(turn_id)) + turn_id + events_json
    return struct.pack("<II", len(body), crc32(body)) + body


def frame_content(record: bytes) -> bytes:
    """The number-independent part of a frame (id length, id, events): equal for equal turns."""
    return record[12:]


def frame_events_json(record: bytes) -> bytes:
    return record[13 + record[12] :]


def encode_line(turn_id: bytes, events_json: bytes) -> bytes:
    if _PLAIN_ID.fullmatch(turn_id):
        tid = b'"' + turn_id + b'"'
    else:
        tid = json.dumps(turn_id.decode("utf-8"), ensure_ascii=False).encode("utf-8")
    return LINE_START + tid + b',"events":' + events_json + b"}\n"


def check_frame_header(data: bytes, where: str) -> int | None:
    """Header length, or ``None`` when the file is empty or a strict prefix of a header."""
    n = len(data)
    if n < HEADER_SIZE:
        if encode_frame_header().startswith(data) or (n < 8 and FRAME_MAGIC.startswith(data)):
            return None
        raise NotALog(f"{where}: not a turncheck log (wrong magic, {n} B file)")
    magic, version, flags, check = HEADER.unpack_from(data, 0)
    if magic != FRAME_MAGIC:
        raise NotALog(f"{where}: not a turncheck log (wrong magic {data[:8]!r})")
    if crc32(data[:12]) != check:
        raise LogCorrupt(f"{where}: log header is damaged (checksum mismatch in bytes 0..15)")
    if version > FRAME_VERSION:
        raise NewerFormat(
            f"{where}: log format version {version} is newer than this turncheck reads "
            f"({FRAME_VERSION}); upgrade turncheck"
        )
    if version < 1 or flags != 0:
        raise NotALog(f"{where}: unsupported log format version {version} (flags {flags})")
    return HEADER_SIZE


def check_line_header(data: bytes, where: str) -> int | None:
    nl = data.find(b"\n")
    if nl < 0:
        if LINE_HEADER.startswith(data):
            return None
        raise NotALog(f"{where}: not a turncheck line log (no header line)")
    try:
        head = json.loads(data[:nl])
    except (ValueError, RecursionError):
        head = None
    if not isinstance(head, dict) or head.get("format") != LINE_FORMAT:
        raise NotALog(f"{where}: not a turncheck line log (first line is not its header)")
    version = head.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise NotALog(f"{where}: unsupported line log version {version!r}")
    if version > LINE_VERSION:
        raise NewerFormat(
            f"{where}: line log version {version} is newer than this turncheck reads ({LINE_VERSION})"
        )
    return nl + 1
