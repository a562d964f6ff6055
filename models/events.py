"""Events of the append-only conversation log and their JSONL interchange format.

An event is one line of the log: a user message, a tool call, a tool result, the final reply
(TERM) that closes a turn, or a SUMMARY that stands for the events whose seq lies in its
``covers`` range (inclusive, all before the summary itself: compaction by summary). The JSONL
format is one object per line with the field names of the SPEC; ``text`` wins over ``chars``
when both are present. Errors name the line, so a user can fix a real log without reading our
code.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import msgspec

from turncheck.models.errors import TurncheckError


class Kind(IntEnum):
    """What an event is. An ``IntEnum``: each member equals its code, the integer the columnar
    arrays and :attr:`History.kind <turncheck.History>` hold, so ``history.kind[i] == Kind.RESULT``
    reads a position's kind.

    ``USER = 0`` a user message (starts a turn) · ``CALL = 1`` a tool call · ``RESULT = 2`` the
    result of the call with the same ``call_id`` · ``TERM = 3`` the final reply that closes the turn ·
    ``SUMMARY = 4`` a compaction summary standing for the seqs in its ``covers`` range.
    """

    USER = 0
    CALL = 1
    RESULT = 2
    TERM = 3
    SUMMARY = 4


CALL_CODE = int(Kind.CALL)
RESULT_CODE = int(Kind.RESULT)
"""The CALL and RESULT codes as plain ints, for the hot loops over columnar arrays (the one
definition ``history``, ``columns`` and ``projector`` read)."""


class EventFormatError(TurncheckError, ValueError):
    """A JSONL line (or an in-memory event) that does not describe a valid event."""


class TextEncodingError(EventFormatError):
    """A text that cannot be encoded as UTF-8 (a lone surrogate); rejected at append time."""


_CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x20000, 0x2FA1F),
)


_CJK_CLASS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")
_SPACE = re.compile(r"\s")


def has_cjk(text: str) -> bool:
    """True when any character of the text is CJK."""
    return _CJK_CLASS.search(text) is not None


def detect_cjk(text: str) -> bool:
    """A text counts as CJK when at least half of its non-space characters are CJK.

    Regular expressions keep this linear and fast: it runs on every text event appended. An
    ASCII text (most of them) holds no CJK character, so it is answered without them.
    """
    if text.isascii():
        return False
    letters = _SPACE.sub("", text)
    return bool(letters) and 2 * len(_CJK_CLASS.findall(letters)) >= len(letters)


def check_encodable(text: str, where: str = "text") -> None:
    """Reject a text that has no UTF-8 encoding (lone surrogates), naming the position. ASCII
    always has one: checked without encoding."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TextEncodingError(
            f"{where} cannot be encoded as UTF-8: lone surrogate U+{ord(text[exc.start]):04X} "
            f"at character {exc.start}"
        ) from None


@dataclass(frozen=True, slots=True)
class Event:
    """One appended record.

    ``seq`` is the append order (unique, strictly increasing per log); ``session`` is the key
    the log is stored under; ``source`` is the true session that wrote it (equal to ``session``
    unless keys collide); ``turn`` counts turns within the session. CALL and RESULT carry the
    ``call_id`` that pairs them. ``ts`` is the writer's wall-clock stamp, which may be skewed or
    tied. The size is ``text`` when present, else ``chars`` characters (``cjk`` marking CJK).
    A SUMMARY, and only a SUMMARY, carries ``covers = (first_seq, last_seq)``: the seqs of its
    session it stands for, inclusive, all before its own ``seq``.

    ``tied_to`` (a CALL read from an OpenAI Responses log) names the call that carries the
    ``reasoning`` item both were generated after: the API refuses a request holding this call
    without that one (:mod:`models.provider_rules`). It is what the provider's request holds, not
    the log's, kept in our JSONL as the CALL's optional ``tied_to``; equality ignores it.

    ``caller`` (a CALL read from an Anthropic log) names the server tool use whose code made the
    call: programmatic tool calling's ``tool_use`` ``caller`` ``{"type": "code_execution_…",
    "tool_id": …}``. The API refuses a request holding the call without that server tool use
    (vercel/ai#12504, ``caller-not-sent``). Like ``tied_to``, it is what the request holds, kept
    in our JSONL as the CALL's optional ``caller`` (``turncheck import`` writes both, so a log
    converted once is judged by the rules they carry); equality ignores it.
    """

    seq: int
    session: str
    turn: int
    kind: Kind
    call_id: str | None = None
    ts: float = 0.0
    writer: str = "0"
    text: str | None = None
    chars: int = 0
    cjk: bool = False
    source: str | None = None
    covers: tuple[int, int] | None = None
    tied_to: str | None = field(default=None, compare=False)
    caller: str | None = field(default=None, compare=False)

    @property
    def true_session(self) -> str:
        return self.session if self.source is None else self.source

    @property
    def size(self) -> int:
        """Characters of the content: the text when present, else ``chars``."""
        return len(self.text) if self.text is not None else self.chars


class _EventDraft:
    """An :class:`Event` being filled in by :func:`new_event`: the same slots in the same order
    (so the same layout), without the frozen ``__setattr__``; once filled it becomes an Event."""

    __slots__ = Event.__slots__


def new_event(
    seq: int, session: str, turn: int, kind: Kind, call_id: str | None, ts: float, writer: str,
    text: str | None, chars: int, cjk: bool, source: str | None, covers: tuple[int, int] | None,
    tied_to: str | None, caller: str | None = None,
) -> Event:  # fmt: skip
    """``Event(seq, …, caller)`` (every field, in order) for a reader that has checked them: the
    importers build tens of thousands a second. The frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__``, a generic lookup per field; this fills an
    :class:`_EventDraft` with plain slot stores and then makes it an ``Event`` (``__class__``
    assignment, which CPython allows between classes of the same slots: it refuses otherwise),
    a quarter of the time. It is the same value only while ``Event`` has no ``__post_init__``
    and these slots (tests/test_import_typed.py keeps both, and pins the two to each other on
    generated fields)."""
    e: Any = _EventDraft()
    e.seq = seq
    e.session = session
    e.turn = turn
    e.kind = kind
    e.call_id = call_id
    e.ts = ts
    e.writer = writer
    e.text = text
    e.chars = chars
    e.cjk = cjk
    e.source = source
    e.covers = covers
    e.tied_to = tied_to
    e.caller = caller
    e.__class__ = Event
    return e  # type: ignore[no-any-return]


MAX_INT = 2**63 - 1
"""Largest ``seq``, ``turn`` and ``chars`` an event may carry (a signed 64-bit integer): every
column and every store holds it, and no tiny file can name a size past it."""

MAX_CHARS = 1 << 24
"""Largest ``chars`` of one event without text (16 Mi characters, more than any model context): sizes drive allocations in the
projector and the columns, so a 124-byte JSONL line cannot ask for tens of GB."""

_FIELDS = ("seq", "session", "turn", "kind", "call_id", "covers", "ts", "writer", "text", "chars", "cjk", "source",
           "tied_to", "caller")  # fmt: skip
_REQUIRED = ("seq", "session", "turn", "kind")


def _as_int(value: Any, name: str, where: str, limit: int = MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        shown = json.dumps(value, ensure_ascii=True, default=repr)
        raise EventFormatError(f"{where}: field '{name}' must be an integer, got {shown[:40]}")
    if not 0 <= value <= limit:
        raise EventFormatError(f"{where}: field '{name}' must be between 0 and {limit}")
    return value


def _as_name(value: Any, name: str, where: str) -> str:
    """A text field other than ``text`` (session, call_id, writer, source): str or int, UTF-8."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise EventFormatError(f"{where}: field '{name}' must be a string or integer")
    if isinstance(value, int):
        if not -MAX_INT <= value <= MAX_INT:
            raise EventFormatError(f"{where}: field '{name}' is an integer past {MAX_INT}")
        return str(value)
    check_encodable(value, f"{where}: {name}")
    return value


def event_from_dict(obj: Any, where: str = "event") -> Event:
    """Validate one decoded JSON object and build the event it describes."""
    if not isinstance(obj, dict):
        raise EventFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise EventFormatError(
            f"{where}: unknown field {json.dumps(unknown[0])} (fields: {', '.join(_FIELDS)})"
        )
    missing = [f for f in _REQUIRED if f not in obj]
    if missing:
        raise EventFormatError(f"{where}: missing field '{missing[0]}'")
    seq = _as_int(obj["seq"], "seq", where)
    turn = _as_int(obj["turn"], "turn", where)
    session = _as_name(obj["session"], "session", where)
    raw_kind = obj["kind"]
    try:
        kind = Kind[raw_kind] if isinstance(raw_kind, str) else None
    except KeyError:
        kind = None
    if kind is None:
        shown = json.dumps(raw_kind, ensure_ascii=True, default=repr)
        raise EventFormatError(
            f"{where}: unknown kind {shown[:40]} (expected USER, CALL, RESULT, TERM or SUMMARY)"
        )
    call_id = obj.get("call_id")
    if kind in (Kind.CALL, Kind.RESULT):
        if call_id is None or isinstance(call_id, bool) or not isinstance(call_id, (str, int)):
            raise EventFormatError(f"{where}: a {kind.name} needs a string 'call_id'")
        call_id = _as_name(call_id, "call_id", where)
    elif call_id is not None:
        raise EventFormatError(f"{where}: a {kind.name} must not carry a 'call_id'")
    covers = _as_covers(obj.get("covers"), kind, seq, where)
    raw_ts = obj.get("ts", 0.0)
    if isinstance(raw_ts, bool) or not isinstance(raw_ts, (int, float)):
        raise EventFormatError(f"{where}: field 'ts' must be a number")
    try:
        ts = float(raw_ts)
    except OverflowError:
        ts = math.inf
    if not math.isfinite(ts):
        raise EventFormatError(f"{where}: field 'ts' must be a finite number (at most ~1.8e308)")
    text = obj.get("text")
    if text is not None:
        if not isinstance(text, str):
            raise EventFormatError(f"{where}: field 'text' must be a string")
        check_encodable(text, f"{where}: text")
    chars = _as_int(obj.get("chars", 0), "chars", where, MAX_CHARS)
    cjk_raw = obj.get("cjk")
    if cjk_raw is not None and not isinstance(cjk_raw, bool):
        raise EventFormatError(f"{where}: field 'cjk' must be true or false")
    if text is not None:
        chars = len(text)
        cjk = detect_cjk(text) if cjk_raw is None else cjk_raw
    else:
        cjk = bool(cjk_raw)
    source = obj.get("source")
    if source is not None:
        source = _as_name(source, "source", where)
    writer = _as_name(obj.get("writer", "0"), "writer", where)
    tied_to, caller = (_as_tie(obj.get(name), name, kind, where) for name in ("tied_to", "caller"))
    return Event(
        seq=seq,
        session=session,
        turn=turn,
        kind=kind,
        call_id=call_id,
        ts=ts,
        writer=writer,
        text=text,
        chars=chars,
        cjk=cjk,
        source=source,
        covers=covers,
        tied_to=tied_to,
        caller=caller,
    )


def _as_tie(value: Any, name: str, kind: Kind, where: str) -> str | None:
    """A CALL's ``tied_to`` (the call its reasoning or thinking rides with) or ``caller`` (the
    server tool use whose code made it): a call id; none on any other kind."""
    if value is None:
        return None
    if kind is not Kind.CALL:
        raise EventFormatError(f"{where}: a {kind.name} must not carry '{name}' (only a CALL does)")
    return _as_name(value, name, where)


def _as_covers(value: Any, kind: Kind, seq: int, where: str) -> tuple[int, int] | None:
    """A SUMMARY's ``covers``: two seqs, first ≤ last < the summary's own seq; none elsewhere."""
    if kind is not Kind.SUMMARY:
        if value is not None:
            raise EventFormatError(f"{where}: a {kind.name} must not carry 'covers' (only a SUMMARY does)")
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise EventFormatError(f"{where}: a SUMMARY needs 'covers': [first_seq, last_seq]")
    first, last = (_as_int(v, "covers", where) for v in value)
    if not first <= last < seq:
        raise EventFormatError(
            f"{where}: a SUMMARY's covers [{first}, {last}] must run forward and end before its own seq {seq}"
        )
    return first, last


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSONL object of an event; optional fields are left out when they carry nothing."""
    out: dict[str, Any] = {
        "seq": event.seq,
        "session": event.session,
        "turn": event.turn,
        "kind": event.kind.name,
    }
    if event.call_id is not None:
        out["call_id"] = event.call_id
    if event.covers is not None:
        out["covers"] = list(event.covers)
    out["ts"] = int(event.ts) if float(event.ts).is_integer() else event.ts
    out["writer"] = event.writer
    if event.text is not None:
        out["text"] = event.text
    else:
        out["chars"] = event.chars
    out["cjk"] = event.cjk
    if event.source is not None and event.source != event.session:
        out["source"] = event.source
    if event.tied_to is not None:
        out["tied_to"] = event.tied_to
    if event.caller is not None:
        out["caller"] = event.caller
    return out


def reference_json(obj: object) -> str:
    """The format's spelling, by definition: compact ``json.dumps`` with UTF-8 kept as is."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class WireEvent(msgspec.Struct, omit_defaults=True):
    """:func:`event_to_dict`'s object in its field order, for msgspec: a field left at ``None``
    is left out, as the format leaves out a field that carries nothing (:func:`wire` never
    leaves a required one at ``None``)."""

    seq: int | None = None
    session: str | None = None
    turn: int | None = None
    kind: str | None = None
    call_id: str | None = None
    covers: tuple[int, int] | None = None
    ts: float | None = None
    writer: str | None = None
    text: str | None = None
    chars: int | None = None
    cjk: bool | None = None
    source: str | None = None
    tied_to: str | None = None
    caller: str | None = None


KIND_NAME = {k: k.name for k in Kind}
_ENCODER = msgspec.json.Encoder()
encode_wire = _ENCODER.encode


def wire(events: Iterable[Event]) -> list[WireEvent] | None:
    """The events for msgspec, or ``None`` when one holds a value msgspec would spell otherwise
    than :func:`reference_json` (a float other than a plain ``ts``, a str subclass, a type the
    reader does not return, ``chars`` out of range) — the caller then takes the reference path.

    msgspec writes an integral float as ``1e16`` where ``json`` writes ``1e+16``, and small ones
    as ``0.00001`` or ``1.5e-7`` where ``json`` writes ``1e-05`` and ``1.5e-07``; from 1e-4 up to
    1e16 the two agree digit for digit (both the shortest repr). The format writes an integral
    ``ts`` as the integer, so only a ``ts`` below 1e-4 (or NaN, ±inf) leaves msgspec's path.
    Everything that passes has the types the reader returns: a turn of such events reads back
    as written (:func:`~models.log_format.check_readback` is not needed).
    """
    out: list[WireEvent] = []
    add = out.append
    for e in events:
        seq, session, turn, kind, call_id, ts, writer, text, chars, cjk, source, covers = (
            e.seq, e.session, e.turn, e.kind, e.call_id, e.ts, e.writer, e.text, e.chars, e.cjk, e.source, e.covers
        )  # fmt: skip
        if type(ts) is not float:
            return None
        if ts.is_integer():
            ts = int(ts)
        elif not 1e-4 <= abs(ts) < 1e16:
            return None
        if (
            type(seq) is not int or type(turn) is not int or type(session) is not str
            or type(writer) is not str or type(kind) is not Kind or (cjk is not True and cjk is not False)
            or (call_id is not None and type(call_id) is not str) or (source is not None and type(source) is not str)
            or (e.tied_to is not None and type(e.tied_to) is not str) or (e.caller is not None and type(e.caller) is not str)
            or (covers is not None and (type(covers) is not tuple or len(covers) != 2
                                        or any(type(c) is not int for c in covers)))
        ):  # fmt: skip
            return None
        size: int | None = None  # written only without text
        if text is None:
            if type(chars) is not int or not 0 <= chars <= MAX_CHARS:
                return None
            size = chars
        elif type(text) is not str:
            return None
        add(WireEvent(seq, session, turn, KIND_NAME[kind], call_id, covers, ts, writer, text, size, cjk,
                 None if source == session else source, e.tied_to, e.caller))  # fmt: skip
    return out


def dumps_event(event: Event) -> str:
    """One compact JSONL line (no newline); stable key order so files are byte-reproducible."""
    out = wire((event,))
    try:
        if out is not None:
            return encode_wire(out[0]).decode("utf-8")
    except ValueError:  # a lone surrogate (the reference keeps it in the str) or a huge int
        pass
    return reference_json(event_to_dict(event))


def load_json_line(line: str | bytes, where: str) -> Any:
    """``json.loads`` of one line of a data file, every way it can fail as one
    :class:`EventFormatError`: malformed JSON, an integer of over 4300 digits (Python's limit),
    nesting too deep for the parser (``RecursionError``), a leading UTF-8 BOM is skipped."""
    if isinstance(line, bytes):
        line = line.removeprefix(b"\xef\xbb\xbf")
    else:
        line = line.removeprefix("\ufeff")
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise EventFormatError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:  # int over the digit limit, bytes that are not UTF-8
        raise EventFormatError(f"{where}: unreadable JSON ({str(exc).splitlines()[0][:80]})") from None


_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]


class _In(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An event object the way most files spell it (names as strings), for msgspec to check in
    one pass; anything else is left to :func:`event_from_dict`, whose messages name the fault."""

    seq: _Count
    session: str
    turn: _Count
    kind: Literal["USER", "CALL", "RESULT", "TERM", "SUMMARY"]
    call_id: str | None = None
    covers: tuple[_Count, _Count] | None = None
    ts: float = 0.0
    writer: str = "0"
    text: str | None = None
    chars: Annotated[int, msgspec.Meta(ge=0, le=MAX_CHARS)] = 0
    cjk: bool | None = None
    source: str | None = None
    tied_to: str | None = None
    caller: str | None = None


_PAIRED = (Kind.CALL, Kind.RESULT)
_DECODE_ONE = msgspec.json.Decoder(_In).decode
_DECODE_MANY = msgspec.json.Decoder(list[_In]).decode
_NOT_ON_THE_FAST_PATH = (msgspec.DecodeError, msgspec.ValidationError, KeyError, RecursionError, UnicodeError)


def _from_in(obj: _In) -> Event:
    """:func:`event_from_dict`'s event for what msgspec has checked (``KeyError`` for a
    ``call_id`` or ``covers`` on the wrong kind or out of order, left to it to name)."""
    kind = Kind[obj.kind]
    if (obj.call_id is None) is (kind in _PAIRED):
        raise KeyError("call_id")
    if (obj.tied_to is not None or obj.caller is not None) and kind is not Kind.CALL:
        raise KeyError("tied_to")
    covers = obj.covers
    if (covers is None) is (kind is Kind.SUMMARY) or (
        covers is not None and not covers[0] <= covers[1] < obj.seq
    ):
        raise KeyError("covers")
    text = obj.text
    if text is None:
        chars, cjk = obj.chars, bool(obj.cjk)
    else:
        chars, cjk = len(text), detect_cjk(text) if obj.cjk is None else obj.cjk
    return Event(
        obj.seq, obj.session, obj.turn, kind, obj.call_id, obj.ts, obj.writer, text, chars, cjk, obj.source, covers,
        obj.tied_to, obj.caller,
    )  # fmt: skip


def events_from_json(body: bytes) -> tuple[Event, ...]:
    """The events of a JSON array of event objects (a durable log record's), at least one;
    ``ValueError`` (malformed JSON, no events), ``RecursionError`` or :class:`EventFormatError`
    naming ``event k`` otherwise — msgspec's pass when it accepts, as in :func:`parse_events`."""
    try:
        objs = _DECODE_MANY(body)
        if objs:
            return tuple(map(_from_in, objs))
    except _NOT_ON_THE_FAST_PATH:
        pass
    return events_from_objects(json.loads(body))


def events_from_objects(objs: Any) -> tuple[Event, ...]:
    """:func:`events_from_json` of the array ``json.loads`` returned, the messages' own path."""
    if not isinstance(objs, list) or not objs:
        raise ValueError("no events")
    return tuple(event_from_dict(o, f"event {k}") for k, o in enumerate(objs))


def parse_events(lines: Iterable[str], name: str = "<input>") -> Iterator[Event]:
    """Parse JSONL lines; blank lines are skipped, any other bad line raises naming its number.

    msgspec checks a line in one pass; what it refuses goes to :func:`load_json_line` and
    :func:`event_from_dict`, for the same event or their message (msgspec takes only valid
    UTF-8, finite numbers and no lone surrogate, so a line it reads ``json`` reads the same).
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = _from_in(_DECODE_ONE(line))
        except _NOT_ON_THE_FAST_PATH:
            where = f"{name}:{number}"
            event = event_from_dict(load_json_line(line, where), where)
        yield event


def read_jsonl(path: str | Path, progress: Callable[[int, int], None] | None = None) -> list[Event]:
    """Read and validate a whole JSONL history; seq must be unique across the file.

    ``progress(bytes_read, total_bytes)`` is called line by line, for long files.
    """
    p = Path(path)
    if not p.exists():
        raise EventFormatError(f"{p}: no such file")
    if p.is_dir():
        raise EventFormatError(f"{p}: is a directory, not a JSONL file")
    if not p.is_file():  # a FIFO or device would block or never end
        raise EventFormatError(f"{p}: not a regular file")
    total = p.stat().st_size

    def lines(fh: IO[bytes]) -> Iterator[str]:
        done = 0
        for number, raw in enumerate(fh, start=1):
            done += len(raw)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise EventFormatError(f"{p}:{number}: not UTF-8 text (byte {exc.start})") from None
            if progress is not None:
                progress(done, total)

    with p.open("rb") as fh:
        events = list(parse_events(lines(fh), str(p)))
    seen: set[int] = set()
    for e in events:
        if e.seq in seen:
            raise EventFormatError(f"{p}: duplicate seq {e.seq}")
        seen.add(e.seq)
    return events


def write_jsonl(events: Iterable[Event], out: IO[str]) -> int:
    """Write events as JSONL; returns how many were written."""
    n = 0
    for e in events:
        out.write(dumps_event(e))
        out.write("\n")
        n += 1
    return n
