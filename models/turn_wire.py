"""A commit's turn checked, serialized and made "as stored" in one pass over its events.

:meth:`~models.store.TurnStore.commit` needs three things of a turn: that it is one whole turn
after the log's last seq (:func:`~models.log_format.check_turn`), its bytes
(:func:`~models.log_format.encode_turn`, msgspec's path when every value has the type the reader
returns), and its events as reading them back yields them (:func:`~models.log_format.as_stored`).
Done separately, each walks the events and reads their fields again: three passes that cost
more than the serialization itself. :func:`plain_turn` does all three in one loop for the turn
almost every agent commits — USER, CALL/RESULT pairs, TERM, plain values — and answers ``None``
for anything else (a SUMMARY, a value off msgspec's path, a turn a check would refuse). The
caller then runs the three separate functions, which name the refusal: a turn is refused or
accepted, and its bytes are the same, whichever path ran (tests/test_store_one_pass.py draws turns
of every shape and compares the two).
"""

from __future__ import annotations

from turncheck.models.events import KIND_NAME, MAX_CHARS, MAX_INT, Event, Kind, WireEvent, encode_wire
from turncheck.models.log_format import as_stored

_USER, _TERM, _CALL, _RESULT = Kind.USER, Kind.TERM, Kind.CALL, Kind.RESULT


def plain_turn(events: tuple[Event, ...], after_seq: int) -> tuple[bytes, tuple[Event, ...]] | None:
    """The turn's JSON array and its events as stored, or ``None`` (take the separate path).

    Accepts exactly what ``check_turn`` accepts and ``wire`` admits to msgspec's path, less
    SUMMARY turns (their rules live in the reader's validator, so they are read back first).
    ``wire``'s type tests are repeated inline, not called: a call per event would cost what the
    one pass saves.
    """
    if len(events) < 2:
        return None
    first, last = events[0], events[-1]
    session, number = first.session, first.turn
    if (
        first.kind is not _USER or last.kind is not _TERM or first.call_id is not None
        or last.call_id is not None or type(number) is not int or not 0 <= number <= MAX_INT
        or type(after_seq) is not int or type(session) is not str
    ):  # fmt: skip
        return None
    out: list[WireEvent] = []
    add = out.append
    open_calls: set[str] = set()
    prev = after_seq
    unchanged = True  # every event already reads back as itself
    for e in events:  # the same object as the first event's session or turn needs no other test
        seq, sess, turn, kind, call_id, ts, writer, text, chars, cjk, source, tied, caller = (
            e.seq, e.session, e.turn, e.kind, e.call_id, e.ts, e.writer, e.text, e.chars, e.cjk, e.source, e.tied_to, e.caller
        )  # fmt: skip
        if (
            type(seq) is not int or seq <= prev or type(ts) is not float or type(writer) is not str
            or (turn is not number and (type(turn) is not int or turn != number))
            or (sess is not session and (type(sess) is not str or sess != session))
            or (cjk is not True and cjk is not False) or e.covers is not None
            or (source is not None and type(source) is not str)
            or (tied is not None and type(tied) is not str) or (caller is not None and type(caller) is not str)
        ):  # fmt: skip
            return None
        prev = seq
        if kind is _CALL:
            if type(call_id) is not str:
                return None
            open_calls.add(call_id)
        elif kind is _RESULT:
            if call_id not in open_calls:
                return None
            open_calls.discard(call_id)
        elif e is not first and e is not last:
            return None
        if ts.is_integer():
            ts = int(ts)
        elif not 1e-4 <= abs(ts) < 1e16:
            return None
        size: int | None = None
        if text is None:
            if type(chars) is not int or not 0 <= chars <= MAX_CHARS:
                return None
            size = chars
        elif type(text) is not str:
            return None
        elif chars != len(text):
            unchanged = False
        if source is not None and source == session:
            unchanged, source = False, None
        add(WireEvent(seq, session, number, KIND_NAME[kind], call_id, None, ts, writer, text, size, cjk, source,
                      tied, caller))  # fmt: skip
    if prev > MAX_INT:
        return None
    try:
        body = encode_wire(out)
    except ValueError:  # a lone surrogate or a huge int: the separate path names it
        return None
    if unchanged:
        return body, events
    return body, tuple(map(as_stored, events))
