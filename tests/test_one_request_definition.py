"""One definition of a request (issue 50 item 6), held by every place that asks where one is.

``models.requests.request_points`` is the definition; ``project --per-request`` and the pytest
fixture (``replay_requests``), the peers scenario (``integrations.peers.requests.replay``) and
``lint --follow`` (``NewRequests``, which reads
a growing file) all ask it. The last one asked it per look and counted: it checked the requests
past the *number* it had checked before. A request pending at the end of one look (``U Ca Ra``:
the loop calls the model after the result) may be none once the file grows (``U Ca Ra Ra T``:
the second result came, the request is after it), so the count skipped the real request and
``lint --follow`` never named its ``answered-twice`` — which a whole read names. Now it checks
every request past the *place* of the last one checked; the test below fails on the old count.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_per_request import log

from turncheck.integrations.peers.requests import replay
from turncheck.models.cost import EstimateCost
from turncheck.models.follow import NewRequests
from turncheck.models.per_request import replay_requests
from turncheck.models.requests import request_points
from turncheck.models.workload import WorkloadParams, generate_events

WORDS = ("U", "T", "S", "Ca", "Cb", "Ra", "Rb")


def names(found: list) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(f.problem, f.where) for f in found}


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS), max_size=12), st.data())
def test_lint_follow_reading_a_growing_log_names_what_a_whole_read_names(words: list[str], data: st.DataObject) -> None:
    events = log(" ".join(words))
    cut = data.draw(st.integers(0, len(events)))
    located = [(i + 1, e) for i, e in enumerate(events)]
    grown = NewRequests(None)
    seen = names(grown.since(located[:cut])) | names(grown.since(located))
    whole = names(NewRequests(None).since(located))
    assert whole <= seen, (words, cut, whole - seen)


def test_the_request_a_growing_log_moved_is_checked() -> None:
    located = [(i + 1, e) for i, e in enumerate(log("U Ca Ra Ra T"))]
    grown = NewRequests(None)
    assert grown.since(located[:3]) == []  # U Ca Ra: a request pending after the result, clean
    assert [f.problem for f in grown.since(located)] == ["answered-twice"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS), max_size=14))
def test_every_caller_sees_the_same_requests(words: list[str]) -> None:
    events, cost = log(" ".join(words)), EstimateCost()
    ours = list(replay_requests("s", events, 500, "M1", cost))
    assert [r.end for r in ours] == request_points(events)
    theirs = replay(events, 500, "M1", cost)  # the peers scenario's: each window over its own prompt
    assert [[e.seq for e in r.window.events] for r in ours] == [[e.seq for e in w.events] for w in theirs]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.sampled_from([0.0, 0.3, 0.6]), st.sampled_from([0.0, 0.2]))
def test_generated_workloads_requests_agree_everywhere(seed: int, parallel: float, late: float) -> None:
    params = WorkloadParams(sessions=3, turns=6, seed=seed, p_result=0.9, p_parallel=parallel, p_late_result=late)
    events, cost = list(generate_events(params)), EstimateCost()
    for name in sorted({e.session for e in events}):
        evs = [e for e in events if e.session == name]
        points = request_points(evs)
        ours = list(replay_requests(name, evs, 2000, "M3", cost))
        assert [r.end for r in ours] == points
        theirs = replay(evs, 2000, "M3", cost)
        assert [[e.seq for e in r.window.events] for r in ours] == [[e.seq for e in w.events] for w in theirs]
        located = [(i + 1, e) for i, e in enumerate(evs)]
        grown, cut = NewRequests(None), len(evs) // 2
        seen = names(grown.since(located[:cut])) | names(grown.since(located))
        assert names(NewRequests(None).since(located)) <= seen
