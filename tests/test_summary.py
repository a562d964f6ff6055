"""SUMMARY events: the JSONL format, the coverage findings of ``lint``, and projection over them."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.events import Event, EventFormatError, Kind, dumps_event, parse_events, write_jsonl
from turncheck.models.lint import lint_events
from turncheck.models.summaries import COVERAGE_PROBLEMS, coverage_faults


def summary(seq: int, first: int, last: int, turn: int = 9, text: str = "so far") -> Event:
    return Event(
        seq, "s", turn, Kind.SUMMARY, ts=float(seq), text=text, chars=len(text), covers=(first, last)
    )


def test_a_summary_line_reads_back_as_written_on_both_paths() -> None:
    e = summary(5, 0, 3)
    line = dumps_event(e)
    assert (
        line
        == '{"seq":5,"session":"s","turn":9,"kind":"SUMMARY","covers":[0,3],"ts":5,"writer":"0","text":"so far","cjk":false}'
    )
    assert list(parse_events([line])) == [e]  # msgspec's path
    assert list(parse_events([line.replace('"writer":"0",', '"writer":0,')])) == [e]  # the reader's own
    out = io.StringIO()
    write_jsonl([e], out)
    assert out.getvalue() == line + "\n"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('"kind":"SUMMARY"', "a SUMMARY needs 'covers': [first_seq, last_seq]"),
        ('"kind":"SUMMARY","covers":[3]', "a SUMMARY needs 'covers': [first_seq, last_seq]"),
        (
            '"kind":"SUMMARY","covers":[3,1]',
            "a SUMMARY's covers [3, 1] must run forward and end before its own seq 5",
        ),
        (
            '"kind":"SUMMARY","covers":[0,5]',
            "a SUMMARY's covers [0, 5] must run forward and end before its own seq 5",
        ),
        ('"kind":"SUMMARY","covers":[0,"2"]', "field 'covers' must be an integer"),
        ('"kind":"SUMMARY","covers":[0,2],"call_id":"c"', "a SUMMARY must not carry a 'call_id'"),
        ('"kind":"USER","covers":[0,2]', "a USER must not carry 'covers' (only a SUMMARY does)"),
    ],
)
def test_a_bad_summary_is_one_line_naming_the_fault(fields: str, message: str) -> None:
    with pytest.raises(EventFormatError, match="^log:1: " + re.escape(message)):
        list(parse_events(['{"seq":5,"session":"s","turn":0,' + fields + "}"], "log"))


def turn(first: int, number: int, call: str, ts: float | None = None) -> list[Event]:
    """A whole turn at seqs ``first .. first+3``: USER, CALL, RESULT, TERM (``ts`` = seq unless given)."""
    t = float(first) if ts is None else ts
    return [
        Event(first, "s", number, Kind.USER, ts=t, chars=40),
        Event(first + 1, "s", number, Kind.CALL, call, ts=t + 1, chars=20),
        Event(first + 2, "s", number, Kind.RESULT, call, ts=t + 2, chars=400),
        Event(first + 3, "s", number, Kind.TERM, ts=t + 3, chars=40),
    ]


def findings(events: list[Event]) -> dict[str, list[str]]:
    report = lint_events(list(enumerate(events, start=1)))
    return {p: report.examples[p] for p in COVERAGE_PROBLEMS if report.counts[p]}


def test_lint_names_the_summary_and_the_open_call_it_covers(cli: Any, tmp_path: Path) -> None:
    """Done when: a SUMMARY covering a CALL whose RESULT comes after it exits 1 naming both; a
    correct summary lints clean."""
    log = tmp_path / "open.jsonl"
    events = [*turn(0, 0, "c1")]
    events.insert(2, summary(2, 0, 1, turn=0))
    events = [replace(e, seq=i) for i, e in enumerate(events)]  # USER, CALL, SUMMARY, RESULT, TERM
    log.write_text("".join(dumps_event(e) + "\n" for e in events))
    code, out, _ = cli("lint", str(log))
    assert code == 1
    assert ("line 3: seq 2 session s turn 0 SUMMARY covers [0, 1]; line 2: seq 1 session s turn 0 CALL c1: "
            "the call gets its RESULT at seq 3, after the summary") in out  # fmt: skip
    good = tmp_path / "good.jsonl"
    good.write_text("".join(dumps_event(e) + "\n" for e in [*turn(0, 0, "c1"), summary(4, 0, 3, turn=1)]))
    code, out, _ = cli("lint", str(good))
    assert code == 0 and "clean" in out


def test_recompaction_over_an_earlier_summary_is_exact_only_when_it_takes_its_whole_range() -> None:
    first = [*turn(0, 0, "a"), summary(4, 0, 3, turn=0)]
    assert findings([*first, *turn(5, 1, "b"), summary(9, 0, 8, turn=1)]) == {}
    lost = findings([*first, *turn(5, 1, "b"), summary(9, 4, 8, turn=1)])
    assert list(lost) == ["lost-in-recompaction"] and len(lost["lost-in-recompaction"]) == 4
    assert "SUMMARY seq 4 covering it was replaced" in lost["lost-in-recompaction"][0]


def test_two_live_summaries_over_one_event_and_a_split_pair_are_found() -> None:
    twice = findings([*turn(0, 0, "a"), *turn(4, 1, "b"), summary(8, 0, 3), summary(9, 2, 7)])
    assert list(twice) == ["covered-twice", "summary-splits-pair"]
    assert [w.rsplit(": ", 1)[1] for w in twice["covered-twice"]] == ["also covered by SUMMARY seq 8"] * 2
    split = findings([*turn(0, 0, "a"), summary(4, 0, 1)])
    assert list(split) == ["summary-splits-pair"]
    assert "CALL a: its partner RESULT seq 2 is not covered" in split["summary-splits-pair"][0]
    assert list(findings([*turn(0, 0, "a"), replace(summary(4, 0, 3), session="t")])) == [
        "summary-covers-nothing"
    ]


def test_a_skewed_clock_finding_says_which_events_a_timestamp_range_would_hide() -> None:
    skewed = [*turn(0, 0, "a"), Event(4, "s", 1, Kind.USER, ts=2.5, chars=40), summary(5, 0, 3)]
    found = findings(skewed)
    assert list(found) == ["clock-skew-coverage"]
    assert found["clock-skew-coverage"] == [
        "line 6: seq 5 session s turn 9 SUMMARY covers [0, 3]; line 5: seq 4 session s turn 1 USER: "
        "ts 2.5 lies in the summary's ts 0..3: hidden, summarised by nothing"
    ]
    assert coverage_faults(skewed)[0].event == skewed[4]  # the same rule, as a model's property reads it
