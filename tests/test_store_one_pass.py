"""A commit reads its turn back only when msgspec could not write it.

:func:`models.log_format.encode_turn` returns, besides the bytes, whether msgspec wrote them
(``plain``): every value had the type the reader returns, so the store skips
:func:`~models.log_format.check_readback`. The flag must never claim more than that check
would: a ``plain`` turn that :func:`~models.log_format.check_turn` accepts always reads back
as committed. And it must not be idle: a turn of
plain values is ``plain``. Either way the store runs :func:`~models.log_format.check_turn`,
the one validator of a turn's shape, and keeps the caller's events when ``as_stored`` would
not change them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models.events import MAX_CHARS, MAX_INT, Event, Kind
from turncheck.models.log_format import (
    MAX_ID_BYTES,
    BadTurn,
    StoredTurn,
    as_stored,
    check_readback,
    check_turn,
    check_turn_id,
    encode_turn,
    stored_turn,
)
from turncheck.models.store import TurnLog
from turncheck.models.turn_wire import plain_turn

ODD = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(), st.text(max_size=2))


@st.composite
def turns(draw: Any) -> list[Event]:
    """Turns near the rules' edges: kinds in any order (a SUMMARY with a range before it), call ids paired or not, a second
    session or turn number, seqs that repeat or go back, turn and seq at the integer limit,
    text with a stale ``chars``, ``source`` equal to the session, now and then an odd value."""
    size = draw(st.integers(0, 6))
    kinds = draw(st.lists(st.sampled_from(list(Kind)), min_size=size, max_size=size))
    if size >= 2 and draw(st.booleans()):
        kinds[0], kinds[-1] = Kind.USER, Kind.TERM
    seq = draw(st.sampled_from([0, 5, MAX_INT - 8]))
    number = draw(st.sampled_from([0, 3, MAX_INT, MAX_INT + 1, -1]))
    ids = draw(st.lists(st.sampled_from(["a", "b"]), min_size=size, max_size=size))
    events = []
    for k, kind in enumerate(kinds):
        seq += draw(st.sampled_from([1, 1, 1, 0, -1, 9]))
        call_id = ids[k] if kind in (Kind.CALL, Kind.RESULT) or draw(st.integers(0, 9)) == 0 else None
        if kind in (Kind.CALL, Kind.RESULT) and draw(st.integers(0, 9)) == 0:
            call_id = None
        session = "s" if draw(st.integers(0, 9)) else draw(st.sampled_from(["t", "".join(["", "s"])]))
        text = draw(st.one_of(st.none(), st.text(max_size=3)))
        chars = len(text) if text is not None and draw(st.booleans()) else draw(st.integers(0, 4))
        source = draw(st.sampled_from([None, None, "s", "u"]))
        fields: dict[str, Any] = {
            "seq": seq, "session": session, "turn": number + (draw(st.integers(0, 9)) == 0), "kind": kind,
            "call_id": call_id, "ts": float(seq), "writer": "0", "text": text, "chars": chars,
            "cjk": False, "source": source,
        }  # fmt: skip
        if draw(st.integers(0, 14)) == 0:
            fields[draw(st.sampled_from(sorted(fields)))] = draw(ODD)
        if kind is Kind.SUMMARY and draw(st.booleans()):  # a range, or none (the reader refuses)
            fields["covers"] = (0, max(0, seq - 1))
        events.append(Event(**fields))
    return events


def passes(check: Any, *args: Any) -> bool:
    try:
        check(*args)
    except BadTurn:
        return False
    return True


@settings(deadline=None, max_examples=1500)
@given(events=turns())
def test_the_plain_flag_never_claims_more_than_the_readback(events: list[Event]) -> None:
    turn = tuple(events)
    try:
        body, plain = encode_turn(turn)
    except BadTurn:
        return  # not serializable at all: refused before anything else
    if plain and passes(check_turn, turn, -1):  # what commit checks first
        check_readback(body, turn)  # the reader reads back exactly these events
    values = all(
        type(e.seq) is int and type(e.turn) is int and type(e.kind) is Kind and e.kind is not Kind.SUMMARY
        and type(e.session) is str
        and type(e.writer) is str and (e.cjk is True or e.cjk is False)
        and (e.text is not None or (type(e.chars) is int and 0 <= e.chars <= MAX_CHARS))
        and all(v is None or type(v) is str for v in (e.call_id, e.text, e.source))
        and type(e.ts) is float and (e.ts.is_integer() or 1e-4 <= abs(e.ts) < 1e16)
        for e in turn
    )  # fmt: skip
    assert plain == values  # plain values take msgspec's path; nothing else does


@settings(deadline=None, max_examples=1500)
@given(events=turns(), after=st.sampled_from([-1, 0, 4, MAX_INT - 6]))
def test_the_one_pass_answers_exactly_when_the_three_accept_a_plain_turn(events: list[Event], after: int) -> None:
    """``plain_turn`` (what commit runs first) against ``encode_turn`` + ``check_turn`` +
    ``as_stored``: the same bytes and events when they accept a turn msgspec writes, ``None``
    whenever they refuse or read back — and never ``None`` for a turn they accept plainly
    (a ``covers`` outside a SUMMARY is the one plain value it leaves to them)."""
    turn = tuple(events)
    expected = None
    try:
        body, plain = encode_turn(turn)
        check_turn(turn, after)
    except BadTurn:
        plain = False
    if plain and all(e.covers is None for e in turn):
        expected = (body, tuple(map(as_stored, turn)))
    found = plain_turn(turn, after)
    assert found == expected
    if found is not None and expected is not None:  # every field (== leaves some out), not only the compared ones
        assert [list(map(e.__getattribute__, Event.__slots__)) for e in found[1]] == [
            list(map(e.__getattribute__, Event.__slots__)) for e in expected[1]
        ]


def test_a_refused_turn_gets_the_one_validator_s_message(tmp_path: Path) -> None:
    """The commit asks ``check_turn`` for the refusal, so its words do not depend on the pass."""
    bad = {
        "a RESULT before its CALL": [
            Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.RESULT, call_id="c"), Event(2, "s", 0, Kind.TERM),
        ],
        "two sessions": [Event(0, "s", 0, Kind.USER), Event(1, "t", 0, Kind.TERM)],
        "seqs going back": [Event(3, "s", 0, Kind.USER), Event(2, "s", 0, Kind.TERM)],
        "a USER inside": [Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.USER), Event(2, "s", 0, Kind.TERM)],
        "seq not after the log's": [Event(1, "s", 1, Kind.USER), Event(2, "s", 1, Kind.TERM)],
    }  # fmt: skip
    with TurnLog.open(tmp_path / "log", create=True) as log:
        log.commit([Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.TERM)])
        before = (tmp_path / "log").read_bytes()
        for events in bad.values():
            try:
                check_turn(events, log.last_seq)
            except BadTurn as exc:
                expected = str(exc)
            with pytest.raises(BadTurn, match=re.escape(expected)):
                log.commit(events, turn_id="other")
        assert (tmp_path / "log").read_bytes() == before


def test_a_committed_turn_keeps_the_caller_s_events_only_when_they_read_back_so(tmp_path: Path) -> None:
    plain = [Event(0, "s", 0, Kind.USER, chars=2), Event(1, "s", 0, Kind.TERM, text="ok", chars=2)]
    stale = [Event(2, "s", 1, Kind.USER, text="hi", chars=7), Event(3, "s", 1, Kind.TERM, source="s")]
    with TurnLog.open(tmp_path / "log", create=True) as log:
        kept = log.commit(plain)
        fixed = log.commit(stale)
    assert all(a is b for a, b in zip(kept.events, plain, strict=True))
    assert fixed.events[0].chars == 2 and fixed.events[1].source is None
    with TurnLog.open(tmp_path / "log", readonly=True) as log:
        assert log.turns() == (kept, fixed)


def test_stored_turn_builds_the_same_frozen_value() -> None:
    events = (Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.TERM))
    made = stored_turn("s/0", events, 16)
    assert made == StoredTurn("s/0", events, 16) and hash(made) == hash(StoredTurn("s/0", events, 16))
    assert (made.turn_id, made.events, made.offset, made.session, made.turn) == ("s/0", events, 16, "s", 0)
    with pytest.raises(AttributeError):
        made.offset = 17  # type: ignore[misc]


def reference_id(turn_id: str) -> bytes | None:
    """The id rule as docs/store.md states it: UTF-8, 1..MAX_ID_BYTES bytes, no control character."""
    if any(c < " " or c == "\x7f" for c in turn_id):
        return None
    try:
        raw = turn_id.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return raw if 0 < len(raw) <= MAX_ID_BYTES else None


@settings(deadline=None, max_examples=600)
@given(
    turn_id=st.one_of(
        st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8),
        st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=250, max_size=260),
        st.text(max_size=8),
        st.sampled_from(
            ["s1/0", " ", "a\x7f", "\x7f", "x" * MAX_ID_BYTES, "x" * (MAX_ID_BYTES + 1), "é" * 128]
        ),
    )
)
def test_printable_ascii_ids_take_a_shortcut_to_the_same_rule(turn_id: str) -> None:
    try:
        got: bytes | None = check_turn_id(turn_id)
    except BadTurn:
        got = None
    assert got == reference_id(turn_id)
