"""``peer:adk-compaction``: Google ADK's events compaction over ADK's own events, per request.

The fixed history of ``tests/test_peers.py`` plus four short turns (seven invocations), so both
triggers fire: the sliding window (``compaction_interval=3, overlap_size=1``) after invocations
3 and 6, and the token threshold (``token_threshold=budget``) before a request once a model
response reported a prompt of at least the budget. The exact window of every request is pinned
(under the google-adk version of constraints.txt); a summary is a SUMMARY event made after every
event of the request's history (its seq is the history's next), covering its compaction's range.
"""

from __future__ import annotations

import sys

import pytest
from test_peers import COST, EVENTS, ev

from turncheck.integrations.peers.requests import replay, request_points
from turncheck.models.events import Kind
from turncheck.models.history import History
from turncheck.models.message_spans import spans
from turncheck.models.peer import PEERS
from turncheck.models.projector import project
from turncheck.models.summarising import coverage_errors
from turncheck.models.tokenizer import MissingExtra

PEER = "peer:adk-compaction"
LONGER = [
    *EVENTS,
    *(e for t in range(3, 7)
      for e in (ev(7 + 2 * t, t, Kind.USER, f"And on day {t}?"),
                ev(8 + 2 * t, t, Kind.TERM, f"Day {t}: " + "dry with a light wind, " * 6))),
]  # fmt: skip
# budget -> per request (at 1, 5, 7, 10, 12, 14, 16, 18, 20): sent seqs, over budget
PINNED = {
    200: [
        ([0], 0), ([0, 1, 2, 3, 4], 0), ([0, 1, 2, 3, 4, 5, 6], 0),
        ([0, 1, 2, 3, 4, 5, 6, 8, 9], 0),  # the unanswered call 7 is dropped by ADK itself
        ([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11], 0),
        ([14, 13], 0),  # invocations 1-3 (events 0-12) became one summary after invocation 3
        ([16, 13, 14, 15], 0), ([18, 13, 14, 15, 16, 17], 0),
        ([20, 21, 19], 1),  # invocations 3-6 (overlap 1) summarized after 6: two overlapping summaries
    ],
    10: [
        ([0], 1), ([0, 1, 2, 3, 4], 1), ([0, 1, 2, 3, 4, 5, 6], 1),
        ([10, 1, 2, 3, 4, 5, 6, 8, 9], 1),  # all but the newest 5 ADK events, split before the calls
        ([12, 6, 8, 9, 10, 11], 1), ([14, 8, 9, 10, 11, 12, 13], 1), ([16, 11, 12, 13, 14, 15], 1),
        ([18, 13, 14, 15, 16, 17], 1), ([20, 15, 16, 17, 18, 19], 1),
    ],
}  # fmt: skip
# budget -> coverage errors per request: the unanswered call 7 summarised (an open call), and at
# the last request of budget 200 events 11 and 12 covered by both overlapping summaries
COVERAGE = {200: [0, 0, 0, 0, 0, 1, 1, 1, 3], 10: [0, 0, 0, 0, 0, 0, 1, 1, 1]}


needs_adk = pytest.mark.skipif(
    PEERS["peer:adk-compaction"].missing() is not None, reason="google-adk is not installed (turncheck[adk])"
)


@needs_adk
def test_every_request_is_pinned() -> None:
    assert request_points(LONGER) == [1, 5, 7, 10, 12, 14, 16, 18, 20]
    for budget, expected in PINNED.items():
        windows = replay(LONGER, budget, PEER, COST)
        got = [([e.seq for e in w.events], w.report.overBudget) for w in windows]
        assert got == expected, f"budget {budget}"
        assert [len(w.history) for w in windows] == request_points(LONGER)
        assert all(w.report.orphanRes == w.report.orphanCall == 0 for w in windows)
        assert [getattr(w, "invented", 0) for w in windows] == [
            sum(e.kind is Kind.SUMMARY for e in w.events) for w in windows
        ]
        assert [coverage_errors(w) for w in windows] == COVERAGE[budget]


@needs_adk
def test_the_incremental_replay_equals_a_fresh_session_per_request() -> None:
    for budget in (10, 200):
        incremental = replay(LONGER, budget, PEER, COST)
        fresh = [
            project(History(LONGER[:p], costs=(COST,)), budget, PEER, COST) for p in request_points(LONGER)
        ]
        assert [(tuple(w)[1:], [e.text for e in w.events]) for w in incremental] == [
            (tuple(w)[1:], [e.text for e in w.events]) for w in fresh
        ]


@needs_adk
def test_the_summary_is_what_adks_summarizer_asked_the_offline_model_for() -> None:
    first, second = replay(LONGER, 200, PEER, COST)[-1].events[:2]
    # LlmEventSummarizer's own rendering of the events; the offline model keeps its head and tail
    assert first.text.startswith("user: What is the weather in Paris and Berlin right now?\n"
                                 "turncheck called tool: tool({'city': 'Paris'})\n")  # fmt: skip
    assert first.text.endswith("turncheck: Today: Paris sunny 15C, Berlin cloudy 12C; tomorrow: Berlin rain 14C, "
                               "Paris unknown.")  # fmt: skip
    assert " … " in first.text and len(first.text) == 400 + 3
    assert second.text.startswith("user: Thanks. Summarise both days in one line.\n")  # overlap: invocation 3
    assert first.kind is second.kind is Kind.SUMMARY
    assert (first.covers, second.covers) == ((0, 12), (11, 18))


@needs_adk
def test_our_events_become_adk_events() -> None:
    from turncheck.integrations.peers.adk_compaction import TAG, adk_event

    h = History(EVENTS, costs=(COST,))
    calls, results = spans(h, group_results=True)[1:3]
    call = adk_event(h, calls, "i1", 54)
    assert [(p.function_call.id, p.function_call.args, p.__dict__[TAG]) for p in call.content.parts] == [
        ("a", {"city": "Paris"}, 1), ("b", {"city": "Berlin"}, 2),
    ]  # fmt: skip
    assert (call.author, call.content.role, call.timestamp, call.usage_metadata.prompt_token_count) == (
        "turncheck", "model", 2.0, 54,
    )  # fmt: skip
    result = adk_event(h, results, "i1", None)
    assert [p.function_response.id for p in result.content.parts] == ["b", "a"]  # one event per batch
    assert result.content.role == "user" and result.usage_metadata is None
    assert TAG not in result.content.model_dump_json()  # the tag is invisible to ADK's size estimates


def test_without_google_adk_it_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.adk.sessions", None)
    with pytest.raises(MissingExtra, match=r"^peer:adk-compaction needs google-adk .*'google-adk<3,>=2.13' .*\(turncheck's adk extra\)$"):
        project(History(EVENTS, costs=(COST,)), 40, PEER, COST)
