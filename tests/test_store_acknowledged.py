"""Whatever ``commit`` acknowledges, every way of reading the log gives back identical turns.

Issue 17, class 2: commit once accepted turns the reader later refused (``turn=-1``,
``chars=-3``, a CALL without ``call_id``, a USER with one, ``cjk=1``, ``text=123`` — the last
raised *after* the write), and one such record made the whole log unreachable. Now one
validator (the reader's) serves both paths before a byte is written, and an undecodable record
that still gets into a file (an older writer, another program) costs only itself under
``resync``.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.store_lines import LineTurnLog
from turncheck.cli.app import main
from turncheck.models.events import MAX_CHARS, Event, Kind, dumps_event
from turncheck.models.log_format import BadTurn, encode_frame, events_json
from turncheck.models.store import RecordUndecodable, StoreError, TurnLog, TurnStore

STORES: tuple[type[TurnStore], ...] = (TurnLog, LineTurnLog)

# -- the examples of the issue, each refused before a byte is written ---------------------------
BAD_TURNS: dict[str, list[Event]] = {
    "turn -1": [Event(0, "s", -1, Kind.USER), Event(1, "s", -1, Kind.TERM)],
    "chars -3": [Event(0, "s", 0, Kind.USER, chars=-3), Event(1, "s", 0, Kind.TERM)],
    "chars past the limit": [Event(0, "s", 0, Kind.USER, chars=MAX_CHARS + 1), Event(1, "s", 0, Kind.TERM)],
    "CALL without call_id": [
        Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.CALL), Event(2, "s", 0, Kind.TERM),
    ],
    "USER with call_id": [Event(0, "s", 0, Kind.USER, call_id="c"), Event(1, "s", 0, Kind.TERM)],
    "TERM with call_id": [Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.TERM, call_id="c")],
    "cjk=1": [Event(0, "s", 0, Kind.USER, cjk=1), Event(1, "s", 0, Kind.TERM)],  # type: ignore[arg-type]
    "text=123": [Event(0, "s", 0, Kind.USER, text=123), Event(1, "s", 0, Kind.TERM)],  # type: ignore[arg-type]
    "ts=nan": [Event(0, "s", 0, Kind.USER, ts=math.nan), Event(1, "s", 0, Kind.TERM)],
    "ts=inf": [Event(0, "s", 0, Kind.USER, ts=math.inf), Event(1, "s", 0, Kind.TERM)],
    "ts=10**400": [Event(0, "s", 0, Kind.USER, ts=10**400), Event(1, "s", 0, Kind.TERM)],  # type: ignore[arg-type]
    "seq 5000 digits": [Event(0, "s", 0, Kind.USER), Event(10**5000, "s", 0, Kind.TERM)],
    "seq 2**63": [Event(0, "s", 0, Kind.USER), Event(2**63, "s", 0, Kind.TERM)],
    "int session": [Event(0, 5, 0, Kind.USER), Event(1, 5, 0, Kind.TERM)],  # type: ignore[arg-type]
    "surrogate session": [Event(0, "s\ud800", 0, Kind.USER), Event(1, "s\ud800", 0, Kind.TERM)],
    "surrogate call_id": [
        Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.CALL, call_id="\udfff"), Event(2, "s", 0, Kind.TERM),
    ],
    "surrogate writer": [Event(0, "s", 0, Kind.USER, writer="\ud800"), Event(1, "s", 0, Kind.TERM)],
    "str seq": [Event("0", "s", 0, Kind.USER), Event("1", "s", 0, Kind.TERM)],  # type: ignore[arg-type]
    "int kind": [Event(0, "s", 0, 0), Event(1, "s", 0, Kind.TERM)],  # type: ignore[arg-type]
}  # fmt: skip


@pytest.mark.parametrize("cls", STORES)
@pytest.mark.parametrize("name", sorted(BAD_TURNS))
def test_a_turn_the_reader_would_refuse_is_refused_before_a_byte_is_written(
    tmp_path: Path, cls: type[TurnStore], name: str
) -> None:
    path = tmp_path / "log"
    good = [Event(0, "s", 0, Kind.USER, chars=3), Event(1, "s", 0, Kind.TERM, chars=2)]
    with cls.open(path, create=True) as log:
        log.commit(good)
        before = path.read_bytes()
        with pytest.raises(BadTurn) as info:
            log.commit([e for e in BAD_TURNS[name]], turn_id="bad")
        assert "\n" not in str(info.value)
        assert path.read_bytes() == before
        log.commit([Event(2, "s", 1, Kind.USER), Event(3, "s", 1, Kind.TERM)])  # the log goes on
    for policy in ("stop", "resync"):
        with cls.open(path, readonly=True, policy=policy) as log:
            assert [t.turn for t in log.turns()] == [0, 1] and log.recovery.clean


# -- the property --------------------------------------------------------------------------------
ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**62, 2**64), st.floats(), st.text(max_size=3)
)
NAMES = st.one_of(st.text(max_size=5), st.sampled_from(["s", "\ud800", "\x1b[31m", "a\nb", ""]), ODD)


@st.composite
def hostile_turn(draw: Any, seq: int, turn: int) -> list[Event]:
    """A turn that is usually well formed, with any field sometimes replaced by an odd value."""

    def maybe(good: object, odd: Any = ODD) -> Any:
        return draw(odd) if draw(st.integers(0, 9)) == 0 else good

    session = maybe("s", NAMES)
    kinds = [Kind.USER, *draw(st.lists(st.sampled_from([Kind.CALL, Kind.RESULT]), max_size=3)), Kind.TERM]
    events = []
    open_ids: list[str] = []
    for k, kind in enumerate(kinds):
        call_id = None
        if kind is Kind.CALL:
            call_id = f"c{seq + k}"
            open_ids.append(call_id)
        elif kind is Kind.RESULT:
            call_id = open_ids.pop() if open_ids else "nope"
        text = draw(st.one_of(st.none(), st.text(max_size=8)))
        events.append(
            Event(
                maybe(seq + k), session, maybe(turn), maybe(kind, st.sampled_from([*Kind, 0, None])),
                maybe(call_id, NAMES), maybe(float(seq + k), st.one_of(st.floats(), st.integers(-9, 9))),
                maybe("0", NAMES), maybe(text, ODD), maybe(draw(st.integers(0, 50)), ODD), maybe(False, ODD),
                maybe(None, NAMES),
            )
        )  # fmt: skip
    return events


def read_back(path: Path, cls: type[TurnStore], readonly: bool, policy: str) -> list[Event]:
    with cls.open(path, readonly=readonly, policy=policy) as log:
        assert log.recovery.clean, log.recovery.summary()
        return [e for t in log.turns() for e in t.events]


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("cls", STORES)
def test_whatever_commit_acknowledges_every_open_mode_reads_back_identical(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    cls: type[TurnStore],
    data: Any,
) -> None:
    path = tmp_path_factory.mktemp("ack") / "log"
    acknowledged: list[Event] = []
    with cls.open(path, create=True, fsync="never") as log:
        for turn in range(data.draw(st.integers(1, 5))):
            events = data.draw(hostile_turn(log.next_seq, turn))
            size = path.stat().st_size
            try:
                stored = log.commit(events, turn_id=f"t{turn}")
            except StoreError:
                assert path.stat().st_size == size  # refused: nothing written
                continue
            acknowledged.extend(stored.events)
    for readonly in (True, False):
        for policy in ("stop", "resync"):
            assert read_back(path, cls, readonly, policy) == acknowledged, (readonly, policy)
    if cls is not TurnLog:
        return  # the command line reads the framed log only (the line log is the benchmarks')
    assert main(["log", "verify", str(path), "-q"]) == 0
    capsys.readouterr()
    assert main(["log", "export", str(path), "-q"]) == 0
    out = capsys.readouterr().out
    assert out == "".join(dumps_event(e) + "\n" for e in acknowledged)
    for line in out.split("\n")[:-1]:  # not splitlines: U+0085 and U+2028 are valid inside JSON strings
        json.loads(line, parse_constant=lambda c: pytest.fail(f"export wrote {c}, which is not JSON"))


# -- a record that does decode costs only itself --------------------------------------------------
def _frame(number: int, tid: bytes, events: list[object]) -> bytes:
    return encode_frame(number, tid, json.dumps(events, separators=(",", ":")).encode())


def _turn_objs(seq: int, turn: int) -> list[object]:
    return [
        {"seq": seq, "session": "s", "turn": turn, "kind": "USER", "chars": 1},
        {"seq": seq + 1, "session": "s", "turn": turn, "kind": "TERM", "chars": 1},
    ]


UNDECODABLE: dict[str, list[object]] = {
    "turn -1": [{"seq": 2, "session": "s", "turn": -1, "kind": "USER"}, {"seq": 3, "session": "s", "turn": -1, "kind": "TERM"}],
    "CALL without call_id": [{"seq": 2, "session": "s", "turn": 1, "kind": "CALL"}],
    "ts 1e400": [{"seq": 2, "session": "s", "turn": 1, "kind": "USER", "ts": 1e400}],
    "only a TERM": [{"seq": 2, "session": "s", "turn": 1, "kind": "TERM"}],
    "seqs going back": _turn_objs(0, 1),
    "not a list": {"seq": 2},  # type: ignore[dict-item]
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(UNDECODABLE))
def test_an_undecodable_record_costs_only_itself_under_resync(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / "log"
    with TurnLog.open(path, create=True):
        pass
    body = (
        _frame(0, b"a", _turn_objs(0, 0))
        + _frame(1, b"b", UNDECODABLE[name])
        + _frame(2, b"c", _turn_objs(4, 2))
    )
    with path.open("ab") as fh:
        fh.write(body)
    before = path.read_bytes()
    with TurnLog.open(path, readonly=True) as log, pytest.raises(RecordUndecodable, match="resync"):
        log.turns()
    for readonly in (True, False):
        with TurnLog.open(path, readonly=readonly, policy="resync") as log:
            assert [t.turn_id for t in log.turns()] == ["a", "c"]
            assert log.recovery.skipped and not log.recovery.clean
    assert path.read_bytes() == before  # skipping never rewrites the file
    assert (
        main(["log", "verify", str(path), "-q"]) == 1
    )  # damage refused under stop: exit 1, as the help says
    out, err = capsys.readouterr()
    assert err == "" and out.count("\n") == 1 and out.startswith("damaged:")
    assert main(["log", "verify", str(path), "--policy", "resync", "-q"]) == 1
    out, _ = capsys.readouterr()
    assert "skipped" in out
    assert main(["log", "export", str(path), "--policy", "resync", "-q"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4


def test_an_undecodable_last_record_does_not_stop_a_writer_under_resync(tmp_path: Path) -> None:
    path = tmp_path / "log"
    with TurnLog.open(path, create=True) as log:
        log.commit([Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.TERM)])
    with path.open("ab") as fh:
        fh.write(_frame(1, b"bad", [{"seq": 2}]))
    with pytest.raises(RecordUndecodable):
        TurnLog.open(path)
    with TurnLog.open(path, policy="resync") as log:
        assert log.next_seq == 2
        with pytest.raises(StoreError, match="undecodable"):
            log.commit([Event(2, "s", 1, Kind.USER), Event(3, "s", 1, Kind.TERM)], turn_id="bad")
        log.commit([Event(2, "s", 1, Kind.USER), Event(3, "s", 1, Kind.TERM)])
    with TurnLog.open(path, readonly=True, policy="resync") as log:
        assert [t.turn_id for t in log.turns()] == ["s/0", "s/1"]


def test_events_json_length_prefix_is_unchanged() -> None:
    """The frame layout the tests above build by hand is the writer's."""
    events = [Event(0, "s", 0, Kind.USER, chars=1), Event(1, "s", 0, Kind.TERM, chars=1)]
    frame = encode_frame(0, b"s/0", events_json(events))
    assert struct.unpack_from("<I", frame)[0] == len(frame) - 8


def test_a_writer_never_repeats_a_seq_after_records_whose_seqs_go_back(tmp_path: Path) -> None:
    """``log verify`` no longer calls such a log clean, and a writer continues after the highest seq."""
    path = tmp_path / "log"
    with TurnLog.open(path, create=True):
        pass
    with path.open("ab") as fh:
        fh.write(_frame(0, b"a", _turn_objs(8, 0)) + _frame(1, b"b", _turn_objs(0, 1)))
    with TurnLog.open(path, readonly=True) as log, pytest.raises(RecordUndecodable, match="rules"):
        log.turns()
    with TurnLog.open(path, policy="resync") as log:
        assert log.next_seq == 10
        with pytest.raises(BadTurn):
            log.commit([Event(2, "s", 2, Kind.USER), Event(3, "s", 2, Kind.TERM)])
        log.commit([Event(10, "s", 2, Kind.USER), Event(11, "s", 2, Kind.TERM)])
    with TurnLog.open(path, readonly=True, policy="resync") as log:
        assert log.turn_ids() == ("a", "b", "s/2") and [t.turn_id for t in log.turns()] == ["a", "s/2"]
