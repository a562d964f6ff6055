"""The record serialization's fast path spells every event exactly as the JSON encoder does.

:func:`models.log_format.events_json` writes common events field by field and hands anything
unusual to ``json`` over :func:`models.events.event_to_dict`; the bytes must not depend on which
path ran, for odd values too (NaN, huge floats, bools where ints go, non-str names, …).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models.events import Event, Kind, dumps_event, event_to_dict
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
