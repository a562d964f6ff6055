"""``commit_many``: the commits of its turns in one write, all or nothing.

Each turn is checked as :meth:`~models.store.TurnStore.commit` checks it (against the seqs and
ids of the turns before it in the call as well as the log's), so a batch leaves the same bytes and
returns the same turns as one commit per turn; a refusal anywhere leaves the file and the open log
as they were, with the message the lone commit of that turn would give.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.store_lines import LineTurnLog
from tests.test_store import make_turn
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.log_format import BadTurn, StoreError
from turncheck.models.store import LogFull, TurnConflict, TurnLog

STORES = [TurnLog, LineTurnLog]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@st.composite
def batches(draw: Any) -> list[list[Event]]:
    """Turns in order, now and then a repeat of an earlier one, a changed repeat (a conflict),
    a turn whose seqs do not follow, or one with a RESULT before its CALL."""
    out: list[list[Event]] = []
    seq = 0
    for t in range(draw(st.integers(0, 6))):
        what = draw(st.sampled_from(["new", "new", "new", "repeat", "conflict", "behind", "orphan"]))
        if what in ("repeat", "conflict") and out:
            earlier = draw(st.sampled_from(out))
            out.append(
                earlier if what == "repeat" else make_turn("s", earlier[0].turn, earlier[0].seq, text="x")
            )
        elif what == "behind":
            out.append(make_turn("s", 100 + t, max(seq - 3, 0), calls=0))
        elif what == "orphan":
            out.append([Event(seq, "s", 200 + t, Kind.USER), Event(seq + 1, "s", 200 + t, Kind.RESULT, call_id="z"),
                        Event(seq + 2, "s", 200 + t, Kind.TERM)])  # fmt: skip
            seq += 3
        else:
            calls = draw(st.integers(0, 2))
            out.append(make_turn("s", t, seq, calls=calls))
            seq += 2 + 2 * calls
    return out


def _one_by_one(log: TurnLog, turns: list[list[Event]]) -> list[Any] | type[Exception]:
    """What a commit per turn gives: every turn as stored, or the first refusal's type (the log
    then holds the turns before it — which a batch must not)."""
    out = []
    for turn in turns:
        try:
            out.append(log.commit(turn))
        except StoreError as exc:
            return type(exc)
    return out


@pytest.mark.parametrize("cls", STORES)
@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=batches(), first=st.booleans())
def test_a_batch_is_its_commits_or_nothing(tmp_path_factory: Any, cls: type[TurnLog], turns: list[list[Event]],
                                            first: bool) -> None:  # fmt: skip
    d = tmp_path_factory.mktemp("many")
    one, many = d / "one", d / "many"
    with cls.open(one, create=True) as a, cls.open(many, create=True) as b:
        if first:  # a log that already holds a turn the batch may repeat or conflict with
            a.commit(make_turn("s", 0, 0, calls=0)), b.commit(make_turn("s", 0, 0, calls=0))
        before, size, last = _digest(many), b.size, b.last_seq
        expected = _one_by_one(a, turns)
        if isinstance(expected, list):
            assert b.commit_many(turns) == expected
            assert _digest(many) == _digest(one) and b.turns() == a.turns()
        else:
            with pytest.raises(expected):
                b.commit_many(turns)
            assert _digest(many) == before and (b.size, b.last_seq) == (size, last)
        b.commit(make_turn("s", 999, b.next_seq, calls=0))  # the open log goes on where it was
    with cls.open(many, readonly=True) as b:
        assert b.turns()[-1].turn_id == "s/999"


def test_refusals_name_the_turn_as_a_lone_commit_would(tmp_path: Path) -> None:
    with TurnLog.open(tmp_path / "log", create=True, max_bytes=2000) as log:
        log.commit(make_turn("s", 0, 0, calls=0))
        with pytest.raises(TurnConflict, match=r"turn 's/1' is already committed with different content "
                                               r"\(turn 0 of this call\)"):  # fmt: skip
            log.commit_many([make_turn("s", 1, 2, calls=0), make_turn("s", 1, 4, calls=0, text="other")])
        with pytest.raises(TurnConflict, match=r"\(record at byte 16\); refusing"):
            log.commit_many([make_turn("s", 0, 2, calls=0, text="other")])
        with pytest.raises(BadTurn, match="seq 2 does not follow 3"):
            log.commit_many([make_turn("s", 1, 2, calls=0), make_turn("s", 2, 2, calls=0)])
        with pytest.raises(
            LogFull, match=r"2 new turns \(\d+ B\) would grow the log to \d+ B, past its limit"
        ):
            log.commit_many(
                [make_turn("s", 1, 2, calls=0, text="y" * 900), make_turn("s", 2, 4, calls=0, text="y" * 900)]
            )
        with pytest.raises(BadParameter, match="commit_many: 1 turn ids for 2 turns"):
            log.commit_many([make_turn("s", 1, 2, calls=0), make_turn("s", 2, 4, calls=0)], ["a"])
        assert len(log) == 1 and log.last_seq == 1
        assert log.commit_many([]) == []
        named = log.commit_many([make_turn("s", 1, 2, calls=0), make_turn("s", 2, 4, calls=0)], ["a", "b"])
        assert [t.turn_id for t in named] == ["a", "b"] and log.turn_ids() == ("s/0", "a", "b")
