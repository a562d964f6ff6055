"""SUMMARY events: the JSONL format, the coverage findings of ``lint``, and projection over them."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.cost import EstimateCost, Utf8JsonCost
from turncheck.models.events import Event, EventFormatError, Kind, dumps_event, parse_events, write_jsonl
from turncheck.models.history import History
from turncheck.models.lint import lint_events
from turncheck.models.per_request import check_value, replay_requests
from turncheck.models.projector import project
from turncheck.models.summaries import (
    COVERAGE_PROBLEMS,
    coverage_faults,
    exact_coverage,
    prompt_events,
    sent_beside,
)
from turncheck.models.summarising import RATIO, SummaryWindow, coverage_by_rule, coverage_errors
from turncheck.models.window_panel import window_panel


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
    assert not exact_coverage([*first, *turn(5, 1, "b"), summary(9, 4, 8, turn=1)])
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
    assert exact_coverage(skewed)  # a skewed clock misleads a reader by ts, not the coverage


def test_the_prompt_keeps_what_no_summary_covers_and_the_live_summaries() -> None:
    log = [
        *turn(0, 0, "a"),
        summary(4, 0, 3, turn=0),
        *turn(5, 1, "b"),
        summary(9, 0, 8, turn=1),
        *turn(10, 2, "c"),
    ]
    assert [e.seq for e in prompt_events(log)] == [9, 10, 11, 12, 13]  # the first summary was replaced
    assert [e.seq for e in prompt_events(log[:9])] == [4, 5, 6, 7, 8]  # before the re-compaction
    assert prompt_events(log[:4]) == log[:4]
    late = [*turn(0, 0, "a"), Event(4, "s", 1, Kind.USER, ts=4.0, chars=9), summary(5, 0, 3, turn=1)]
    assert prompt_events(late) == late[4:]  # a summary stays where it was written, in seq order


STRATEGIES = ("M0", "M1", "M2", "M3", "M4", "M5", "REQ", "SUM", "SLIDE")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_strategy_sends_a_summary_beside_what_it_covers(strategy: str) -> None:
    """Per request, over the prompt each request's log implied: a summary is never sent with an
    event it covers nor with part of its range."""
    log: list[Event] = []
    for t in range(8):
        log += turn(len(log), t, f"c{t}")
        if t % 3 == 2:  # the turns before this one, and the summary before them: re-compaction
            log.append(summary(len(log), 0, len(log) - 5, turn=t))
    assert findings(log) == {}
    cost = EstimateCost()
    for budget in (30, 120, 400):
        for req in replay_requests("s", log, budget, strategy, cost):
            sent = req.window.events
            assert coverage_errors(req.window) == 0, (budget, req.index)
            assert sent_beside(sent) == 0
            kept = {e.seq for e in sent}
            for e in sent:
                if e.kind is Kind.SUMMARY and e.covers is not None and e.seq < len(log):
                    assert not kept & set(range(e.covers[0], e.covers[1] + 1)), (budget, req.index)


def test_a_raw_history_that_keeps_a_summary_with_its_range_counts_coverage_errors() -> None:
    log = [*turn(0, 0, "a"), summary(4, 0, 3, turn=1), *turn(5, 1, "b")]
    w = project(History(log), 10_000, "M0", EstimateCost())  # the log as it is, not its prompt
    assert coverage_errors(w) == 4 and check_value(w, "coverage") == 4
    w = project(History(prompt_events(log)), 10_000, "M0", EstimateCost())
    assert coverage_errors(w) == 0 and [e.seq for e in w.events] == [4, 5, 6, 7, 8]
    assert window_panel(w).items[0].label == "seq 4: SUMMARY of seq 0–3 (turn 1)"
    assert window_panel(w).items[0].marks == ("summary",)


def test_a_summarised_call_makes_its_later_result_an_orphan_per_request(cli: Any, tmp_path: Path) -> None:
    events = [*turn(0, 0, "c1")]
    events.insert(2, summary(2, 0, 1, turn=0))
    log = tmp_path / "open.jsonl"
    log.write_text("".join(dumps_event(replace(e, seq=i)) + "\n" for i, e in enumerate(events)))
    code, out, _ = cli("project", "-H", str(log), "-b", "1000", "-s", "M5", "--cost", "estimate",
                       "--per-request", "--fail-on", "orphanRes,coverage")  # fmt: skip
    assert code == 1 and "orphanRes" in out and "SUMMARY#2 RESULT#3(c1)" in out


def manifold(p_result: float) -> list[History]:
    from turncheck.models.workload import WorkloadParams, generate_events

    sessions: dict[str, list[Event]] = {}
    for e in generate_events(WorkloadParams(sessions=12, turns=20, p_result=p_result, seed=7)):
        sessions.setdefault(e.session, []).append(e)
    return [History(evs) for evs in sessions.values()]


@pytest.mark.parametrize("strategy", ["SUM", "SLIDE"])
def test_coverage_read_off_the_index_is_the_rule_s_count(strategy: str) -> None:
    cost = EstimateCost()
    seen = 0
    for h in manifold(0.9):
        for budget in (400, 1600, 4000):
            w = project(h, budget, strategy, cost)
            assert coverage_errors(w) == coverage_by_rule(w)
            seen += coverage_errors(w)
    assert seen > 0  # dangling calls summarised away (and SLIDE's overlap turns, covered twice)


def test_summarising_strategies_send_summaries_that_cost_what_the_window_says() -> None:
    cost = Utf8JsonCost(current="next?")
    for h in manifold(1.0)[:3]:
        for strategy, budget in (("SUM", 4000), ("SLIDE", 400)):
            w = project(h, budget, strategy, cost)
            assert isinstance(w, SummaryWindow) and w.events[0].kind is Kind.SUMMARY
            assert len(w.payload(cost).encode("utf-8")) == w.cost
            made = w.made
            assert [m.covers for m in made] == [
                (h.events[lo].seq, h.events[hi - 1].seq) for lo, hi in w.spans
            ]
            assert all(
                m.chars == round(RATIO * sum(e.size for e in h.events[lo:hi]))
                for m, (lo, hi) in zip(made, w.spans, strict=True)
            )
    sum_clean = project(manifold(1.0)[0], 4000, "SUM", EstimateCost())
    assert coverage_errors(sum_clean) == 0 and sum_clean.report.orphanRes == 0
    slide = project(manifold(1.0)[0], 4000, "SLIDE", EstimateCost())
    faults = coverage_faults([*slide.history.events, *slide.made])
    assert {f.problem for f in faults} == {"covered-twice"}  # ADK's overlap turn is in two summaries


PEERS_WITH_USER_MESSAGES = ("peer:langchain", "peer:pydantic-ai", "peer:openai-agents", "peer:llamaindex",
                            "peer:semantic-kernel", "peer:autogen-buffered", "peer:litellm")  # fmt: skip


@pytest.mark.parametrize("peer", PEERS_WITH_USER_MESSAGES)
def test_a_peer_library_takes_a_log_with_a_summary_per_request(peer: str) -> None:
    """The library receives the live summary as a user message, and never with what it covers."""
    import importlib.util

    from turncheck.models.peer import PEERS

    if importlib.util.find_spec(PEERS[peer].module) is None:
        pytest.skip(f"{PEERS[peer].module} is not installed (turncheck[{PEERS[peer].extra}])")
    log = [*turn(0, 0, "a"), summary(4, 0, 3, turn=0, text="asked, searched, answered"), *turn(5, 1, "b")]
    log = [e if e.text else replace(e, text=f"{e.kind.name.lower()} {e.seq}", chars=len(f"{e.kind.name} {e.seq}"))
           for e in log]  # fmt: skip
    requests = list(replay_requests("s", log, 400, peer, EstimateCost()))
    assert len(requests) == 4
    last = requests[-1].window
    assert [e.seq for e in last.events][:1] == [4] and coverage_errors(last) == 0


# last in the file: the module's browser keeps an event loop running, where a peer's asyncio.run fails
def test_the_viewer_shows_a_made_summary_and_its_range(open_page: Any, tmp_path: Path) -> None:
    from turncheck.models.catalog import build_model
    from turncheck.reports.viewer import write_trace_page
    from turncheck.sim.trace import Trace

    model = build_model("projector", {"strategy": "SUM", "budget": 4})
    actions = (("user",), ("call", 0), ("result", 0, 1), ("term",), ("user",))
    trace = Trace("projector", dict(model.params), actions, "within-budget")
    opened = open_page(write_trace_page(trace, tmp_path / "s.html"))
    page = opened.page
    page.click("button[data-act=last]")
    items = page.locator(".tcv-win li")
    assert items.count() == 2
    assert (
        page.locator(".tcv-win li.summary")
        .inner_text()
        .startswith("SUMMARY of seq 0–3 (made by SUM) — cost 0")
    )
    assert items.nth(1).inner_text().startswith("seq 4: USER (turn 2)")
    page.screenshot(path=str(tmp_path / "summary.png"), full_page=True)
    assert opened.errors == []
    page.close()
