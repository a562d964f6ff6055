"""The record serialization's fast path spells every event exactly as the JSON encoder does.

:func:`models.log_format.events_json` writes common events field by field and hands anything
unusual to ``json`` over :func:`models.events.event_to_dict`; the bytes must not depend on which
path ran, for odd values too (NaN, huge floats, bools where ints go, non-str names, …).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models.events import (
    Event,
    EventFormatError,
    Kind,
    dumps_event,
    event_from_dict,
    event_to_dict,
    events_from_json,
    events_from_objects,
    load_json_line,
    parse_events,
    read_jsonl,
    write_jsonl,
)
from turncheck.models.log_format import BadTurn, events_json


def reference(events: list[Event]) -> bytes:
    """The serialization as specified: one compact ``json.dumps`` of the list of JSONL objects."""
    objs = [event_to_dict(e) for e in events]
    return json.dumps(objs, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Name(str):
    """A str subclass (the encoder prints it as a string)."""


ODD_EVENTS = [
    Event(0, "s", 0, Kind.USER),
    Event(1, "s", 0, Kind.USER, ts=-0.0),
    Event(2, "s", 0, Kind.USER, ts=0.1),
    Event(3, "s", 0, Kind.USER, ts=1e300),
    Event(4, "s", 0, Kind.USER, ts=1e16 + 0.5),
    Event(5, "s", 0, Kind.USER, ts=2.5e-310),
    Event(6, "s", 0, Kind.USER, ts=math.inf),
    Event(7, "s", 0, Kind.USER, ts=-math.inf),
    Event(8, "s", 0, Kind.USER, ts=math.nan),
    Event(9, "s", 0, Kind.USER, ts=7),  # type: ignore[arg-type]
    Event(True, "s", False, Kind.USER),  # type: ignore[arg-type]
    Event(10, 5, 0, Kind.USER),  # type: ignore[arg-type]
    Event(11, Name("n"), 0, Kind.CALL, call_id=Name('c"1'), writer=Name("w")),
    Event(12, "s", 0, Kind.RESULT, call_id=7, chars=True),  # type: ignore[arg-type]
    Event(13, "s", 0, Kind.TERM, cjk=1),  # type: ignore[arg-type]
    Event(14, "s", 0, Kind.TERM, cjk=None),  # type: ignore[arg-type]
    Event(15, "s", 0, Kind.TERM, source="s"),
    Event(16, "s", 0, Kind.TERM, source="t\u2028", text='\x00\x1f\x7f"\\ 中文 😀'),
    Event(17, "s", 0, Kind.TERM, source=3),  # type: ignore[arg-type]
    Event(18, "s", 0, Kind.TERM, writer=2, text=""),  # type: ignore[arg-type]
    Event(2**70, "s", -1, Kind.TERM, chars=-3),
    Event(19, None, -1, Kind.USER),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("event", ODD_EVENTS, ids=lambda e: str(e.seq))
def test_odd_values_serialize_as_the_encoder_spells_them(event: Event) -> None:
    assert events_json([event]) == reference([event])
    assert events_json([event]) == ("[" + dumps_event(event) + "]").encode("utf-8")


def test_a_turn_spells_each_event_s_own_session_and_turn() -> None:
    """The session/turn part is shared along a turn only while it really is the same."""
    a, a2 = "séance", "".join(["sé", "ance"])
    events = [
        Event(0, a, 0, Kind.USER),
        Event(1, a2, 0, Kind.CALL, call_id="c"),
        Event(2, a, 1, Kind.RESULT, call_id="c"),
        Event(3, "b", 1, Kind.TERM),
        Event(4, 5, 1, Kind.TERM),
        Event(5, "b", 1, Kind.TERM),  # type: ignore[arg-type]
        Event(6, None, -1, Kind.TERM),
        Event(7, "b", -1, Kind.TERM, ts=math.nan),
        Event(8, "b", -1, Kind.TERM),  # type: ignore[arg-type]
    ]
    for k in range(len(events)):
        turn = events[k:] + events[:k]
        assert events_json(turn) == reference(turn)


def test_a_lone_surrogate_is_refused_on_either_path() -> None:
    for event in (
        Event(0, "s", 0, Kind.USER, text="\ud800"),
        Event(0, "s", 0, Kind.USER, ts=7, text="\ud800"),
    ):
        with pytest.raises(BadTurn, match="lone surrogate"):
            events_json([event])


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=6),
    st.builds(Name, st.text(max_size=4)),
)


@settings(deadline=None, max_examples=300)
@given(
    seq=st.one_of(st.integers(0, 2**64), scalars),
    session=st.one_of(st.text(max_size=6), scalars),
    turn=st.one_of(st.integers(-2, 2), scalars),
    kind=st.sampled_from(list(Kind)),
    call_id=scalars,
    ts=st.one_of(st.floats(), st.integers(-(2**60), 2**60)),
    text=st.one_of(st.none(), st.text(max_size=20)),
    chars=st.one_of(st.integers(0, 10**9), scalars),
    cjk=st.one_of(st.booleans(), scalars),
    source=scalars,
)
def test_any_field_values_serialize_as_the_encoder_spells_them(
    seq: object,
    session: object,
    turn: object,
    kind: Kind,
    call_id: object,
    ts: object,
    text: str | None,
    chars: object,
    cjk: object,
    source: object,
) -> None:
    event = Event(seq, session, turn, kind, call_id, ts, "0", text, chars, cjk, source)  # type: ignore[arg-type]
    first = Event(0, "s", 0, Kind.USER)  # the event follows another: the session/turn part is not reused
    try:
        expected: bytes | type[BaseException] = reference([first, event, event])
    except (TypeError, ValueError, OverflowError):
        expected = BadTurn  # what the encoder cannot spell is refused as a bad turn, nothing written
    try:
        got: bytes | type[BaseException] = events_json([first, event, event])
    except BadTurn:
        got = BadTurn
    assert got == expected


def slow_parse(line: str, where: str = "x:1") -> Event | str:
    """The reader's own path (``json`` and :func:`event_from_dict`): the event or its message."""
    try:
        return event_from_dict(load_json_line(line, where), where)
    except EventFormatError as exc:
        return str(exc)


def fast_parse(line: str) -> Event | str:
    try:
        return next(parse_events([line], "x"))
    except EventFormatError as exc:
        return str(exc)


small_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e-3, 1e-3),
    st.sampled_from(
        [1e16, 1e22, -1e16, 1e-4, 9.99e-5, 1e-5, 1.5e-7, 5e-324, 1.7976931348623157e308, 2.0**53 + 2]
    ),
)
texts = st.one_of(
    st.none(),
    st.text(max_size=12),  # lone surrogates, control characters, non-BMP, U+2028 …
    st.text(alphabet='中文한국어 ab\x00\x1f\x7f"\\\u2028', max_size=8),
)


@settings(deadline=None, max_examples=600)
@given(
    seq=st.integers(0, 2**64),
    session=st.text(max_size=6),
    kind=st.sampled_from(list(Kind)),
    call_id=st.one_of(st.none(), st.text(max_size=4)),
    ts=small_floats,
    writer=st.text(max_size=3),
    text=texts,
    chars=st.integers(0, 2**25),
    cjk=st.booleans(),
    source=st.one_of(st.none(), st.text(max_size=3)),
    covers=st.one_of(st.none(), st.tuples(st.integers(0, 2**64), st.integers(0, 2**64))),
)
def test_msgspec_writes_and_reads_events_as_the_reference_does(
    seq: int,
    session: str,
    kind: Kind,
    call_id: str | None,
    ts: float,
    writer: str,
    text: str | None,
    chars: int,
    cjk: bool,
    source: str | None,
    covers: tuple[int, int] | None,
) -> None:
    """Big and small floats (``1e+16`` vs msgspec's ``1e16``), non-ASCII, lone surrogates and
    control characters: the line, a JSONL file and a turn's array are the reference's bytes, and
    the line reads back through msgspec as through the reader's own path, event or message."""
    event = Event(seq, session, 3, kind, call_id, ts, writer, text, chars, cjk, source, covers)
    line = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
    assert dumps_event(event) == line
    out = io.StringIO()
    assert write_jsonl([event, Event(0, "s", 0, Kind.USER), event], out) == 3
    assert out.getvalue() == "".join(
        dumps_event(e) + "\n" for e in (event, Event(0, "s", 0, Kind.USER), event)
    )
    try:
        assert events_json([event]) == reference([event])
    except BadTurn:
        with pytest.raises(UnicodeEncodeError):
            reference([event])
        return  # a lone surrogate: nothing to read back
    assert fast_parse(line) == slow_parse(line)
    body = reference([event, event])
    try:
        got: tuple[Event, ...] | str = events_from_json(body)
    except EventFormatError as exc:
        got = str(exc)
    try:
        expected: tuple[Event, ...] | str = events_from_objects(json.loads(body))
    except EventFormatError as exc:
        expected = str(exc)
    assert got == expected


FIELD = st.sampled_from(
    ["seq", "session", "turn", "kind", "call_id", "covers", "ts", "writer", "text", "chars", "cjk", "source"]
)
VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([0, 1, 2**63 - 1, 2**63, -(2**63), 1 << 24, (1 << 24) + 1, 10**400]),
    st.floats(),
    st.text(max_size=4),
    st.sampled_from(["USER", "CALL", "RESULT", "TERM", "SUMMARY", "user", "中文", "\ud800"]),
    st.lists(st.integers(), max_size=2),
    st.lists(st.integers(-1, 3), min_size=2, max_size=2),
)
RAW = st.sampled_from(
    ["NaN", "Infinity", "1e400", "-1e400", "1.00000000000000011102230246251565404236316680908203125",
     "0.1e1", "1E2", "-0", "1" + "0" * 30, "1" + "0" * 4400, '"\\ud800"', '"\\u00e9\\ud83d\\ude00"', "[[[1]]]"]
)  # fmt: skip


@settings(deadline=None, max_examples=1500)
@given(
    fields=st.dictionaries(FIELD, VALUE, max_size=12),
    extra=st.one_of(st.none(), st.tuples(FIELD | st.just("other"), RAW)),
    valid=st.booleans(),
    ascii_only=st.booleans(),
    prefix=st.sampled_from(["", " ", "\ufeff", "\t"]),
)
def test_any_line_reads_as_the_reader_s_own_path_reads_it(
    fields: dict[str, object], extra: tuple[str, str] | None, valid: bool, ascii_only: bool, prefix: str
) -> None:
    """msgspec's checks take a line only when the reader would take it as the same event: every
    other line (wrong types, ranges, kinds, call ids, NaN, huge numbers, BOMs, duplicate keys)
    gets the reader's own message, line number and field name included."""
    obj: dict[str, object] = {"seq": 1, "session": "s", "turn": 0, "kind": "USER"} if valid else {}
    obj.update(fields)
    try:
        line = json.dumps(obj, ensure_ascii=ascii_only)
    except ValueError:
        return  # an int past the digit limit cannot even be written
    if extra is not None:
        line = line[:-1] + ("," if obj else "") + f'"{extra[0]}":{extra[1]}}}'
    line = prefix + line
    assert fast_parse(line) == slow_parse(line)
    try:
        raw = line.encode("utf-8")
    except UnicodeEncodeError:
        return
    body = b"[" + raw.removeprefix(b"\xef\xbb\xbf") + b"]"
    try:
        got: tuple[Event, ...] | str = events_from_json(body)
    except (EventFormatError, ValueError, RecursionError) as exc:
        got = f"{type(exc).__name__}: {exc}"
    try:
        expected: tuple[Event, ...] | str = events_from_objects(json.loads(body))
    except (EventFormatError, ValueError, RecursionError) as exc:
        expected = f"{type(exc).__name__}: {exc}"
    assert got == expected


def test_read_jsonl_names_the_line_as_before(tmp_path: Path) -> None:
    lines = [
        dumps_event(Event(0, "s", 0, Kind.USER)),
        "",
        '{"seq":1,"session":"s","turn":0,"kind":"TERM","ts":NaN}',
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EventFormatError, match=r"h\.jsonl:3: field 'ts' must be a finite number"):
        read_jsonl(path)
    path.write_bytes(b'{"seq":0,"session":"s\xff","turn":0,"kind":"USER"}\n')
    with pytest.raises(EventFormatError, match=r"h\.jsonl:1: not UTF-8 text \(byte 21\)"):
        read_jsonl(path)
    path.write_text(
        dumps_event(Event(4, "s", 0, Kind.USER)) + "\n" + dumps_event(Event(4, "s", 0, Kind.TERM)) + "\n"
    )
    with pytest.raises(EventFormatError, match="duplicate seq 4"):
        read_jsonl(path)
