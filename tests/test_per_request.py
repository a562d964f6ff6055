"""``project --per-request`` and ``--fail-on``: the CI gate over a real Agents SDK database."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.cli.app import main
from turncheck.integrations.peers.requests import replay
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.events import Event, Kind, write_jsonl
from turncheck.models.history import History
from turncheck.models.per_request import Shapes, log_shapes, parse_checks, replay_requests, request_points
from turncheck.models.projector import Window, project
from turncheck.models.summaries import prompt_events
from turncheck.models.workload import WorkloadParams, generate_events

TESTS = Path(__file__).parent


def log(spec: str) -> list[Event]:
    """A session from words: ``U`` user, ``Ca`` call a, ``Ra`` result a, ``T`` reply, ``S`` a
    summary covering every event before it (seqs start at 1: seq 0 was compacted away)."""
    kinds = {"U": Kind.USER, "C": Kind.CALL, "R": Kind.RESULT, "T": Kind.TERM, "S": Kind.SUMMARY}
    out: list[Event] = []
    for seq, word in enumerate(spec.split(), start=1):
        kind, cid = kinds[word[0]], word[1:] or None
        covers = (0, seq - 1) if kind is Kind.SUMMARY else None
        out.append(Event(seq, "s", 0, kind, cid, chars=40, covers=covers))
    return out


@pytest.mark.parametrize(
    ("spec", "points"),
    [
        ("", []),  # an empty log: no request
        ("U Ca Cb Rb Ra Cc Rc T U", [1, 5, 7, 9]),  # parallel batch, sequential call, one pending
        ("U Ca Ra U T", [1, 3, 4]),  # a RESULT then a USER: the loop called the model after the result
        ("U U T", [1, 2]),  # consecutive USERs: a request after each (the first one's may have failed)
        ("U Ca T", [1, 2]),  # a dangling call: the reply proves a request held it
        ("U Ca Cb Ra", [1]),  # ends mid-batch: the agent still waits for b, no request pending
        ("U Ca Cb Ra T", [1, 4]),  # b dangles, the reply proves the request
        ("U Ca Cb Ra U T", [1, 5]),  # mid-batch, then the user writes: no request before the USER
        ("U Ca T U Ra T", [1, 2, 4, 5]),  # a result a turn late: after its USER, and after it
        ("U Ca Ra S Cb Rb T", [1, 4, 6]),  # compaction before the request: the summary is in it
        ("U Ca Ra T S", [1, 3]),  # a summary after the reply: no request pending
        ("U S", [2]),  # a pending request sees the summary written before it
        ("S Ca Ra", [1, 3]),  # a log that opens on a summary: its first request holds it
        ("Ca Ra T", [2]),  # a log cut before its USER: no request before the first event
        ("T T", [1]),  # a reply after a reply: proved by the second
        ("U Ca Ca Ra", [1]),  # a batch reusing an id waits for a RESULT per call
        ("U Ca Ca Ra Ra", [1, 5]),
    ],
)
def test_the_one_definition_of_a_request(spec: str, points: list[int]) -> None:
    events = log(spec)
    assert request_points(events) == points
    assert request_points([int(e.kind) for e in events]) == points  # kinds alone, as History.kind


WORDS = ("U", "T", "S", "Ca", "Cb", "Cc", "Ra", "Rb", "Rc")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS), max_size=14), st.sampled_from(["M0", "M1", "M3", "M5"]))
def test_project_per_request_and_the_peers_replay_see_the_same_requests(
    words: list[str], strategy: str
) -> None:
    """The two former definitions (``project --per-request``'s and the peers scenario's) now
    agree on every history: the same requests, each with the same window."""
    events, cost = log(" ".join(words)), EstimateCost()
    ours = list(replay_requests("s", events, 120, strategy, cost))
    theirs = replay(events, 120, strategy, cost)
    assert [r.end for r in ours] == request_points(events)
    assert [[e.seq for e in r.window.events] for r in ours] == [[e.seq for e in w.events] for w in theirs]


def test_the_generated_workloads_requests_agree_between_the_two_callers() -> None:
    params = WorkloadParams(sessions=6, turns=8, seed=11, p_result=0.9, p_parallel=0.5, p_late_result=0.2)
    events, cost = list(generate_events(params)), EstimateCost()
    for name in sorted({e.session for e in events}):
        evs = [e for e in events if e.session == name]
        ours = [(r.end, r.window.start) for r in replay_requests(name, evs, 2000, "M3", cost)]
        theirs = replay(evs, 2000, "M3", cost)
        assert ours == [(len(w.history), w.start) for w in theirs]


@pytest.mark.parametrize(
    ("spec", "shapes"),
    [
        ("", Shapes()),
        ("U Ca Ra Cb Rb T", Shapes()),  # calls one at a time
        ("U Ca Cb Rb Ra T U Cc T", Shapes(parallel=1, dangling=1)),  # a batch; c never answered
        ("U Ca T U Ra T", Shapes(late=1)),  # answered after the next USER
        ("U Ca Cb Cc Rc Rb Ra T U Cd Ce Rd Re T", Shapes(parallel=2)),
    ],
)
def test_a_log_says_which_shapes_it_holds(spec: str, shapes: Shapes) -> None:
    assert log_shapes(log(spec)) == shapes


def test_a_passing_replay_names_the_shapes_it_covered(cli: Any, tmp_path: Path) -> None:
    """Exit 0 says what the replay covered: a one-call-at-a-time log passes keep-last-4, and the
    OK line says it held no parallel batch and names the check that tries every history."""
    log_file = tmp_path / "sequential.jsonl"
    assert cli("generate", "-q", "--p-parallel", "0", "-o", str(log_file))[0] == 0
    trim = f"messages:{TESTS.parent / 'examples' / 'exec' / 'keep_last.py'}:fn"
    code, out, _ = cli("project", "-q", "-H", str(log_file), "-b", "4", "--strategy", trim,
                       "--per-request", "--fail-on", "orphanRes")  # fmt: skip
    assert code == 0
    assert out.splitlines()[-1] == (
        "OK: no request breaks orphanRes. A replay covers the shapes this log holds (0 parallel batches, "
        f"0 dangling calls, 0 late results) and no others: `turncheck check projector -p strategy={trim}` "
        "tries every small history (orphans, budget, empty windows)."
    )


@pytest.mark.parametrize(("spec", "counted"), [("U T", "1 request in 1 session"), ("U T U T", "2 requests in 1 session")])
def test_the_count_line_agrees_in_number(cli: Any, tmp_path: Path, spec: str, counted: str) -> None:
    """One session is "1 session", not "1 sessions" (the table's last line said so)."""
    log_file = tmp_path / "one.jsonl"
    with log_file.open("w", encoding="utf-8") as out:
        write_jsonl(log(spec), out)
    code, out, _ = cli("project", "-q", "-H", str(log_file), "--per-request")
    assert code == 0 and f"; {counted}\n" in out, out


def test_each_request_sees_only_the_events_before_it() -> None:
    events = [Event(i, "s", 0, k, cid, chars=40) for i, (k, cid) in enumerate(
        [(Kind.USER, None), (Kind.CALL, "a"), (Kind.RESULT, "a"), (Kind.TERM, None)])]  # fmt: skip
    seen = [
        (q.index, q.end, len(q.window.history))
        for q in replay_requests("s", events, 100, "M0", EstimateCost())
    ]
    assert seen == [(0, 1, 1), (1, 3, 3)]  # the history when the request is made (it grows afterwards)


def replayed(window: Window) -> tuple[object, ...]:
    """Everything a reader gets from a window: its type, fields, events and report."""
    made = [(e.seq, e.covers, e.chars) for e in getattr(window, "made", ())]
    return (type(window).__name__, *window[1:], made, [e.seq for e in window.events], window.report)


def fresh_replay(events: list[Event], budget: int, strategy: str) -> list[tuple[object, ...]]:
    """The replay as it was before it grew one history: a new ``History(prompt_events(prefix))``
    per request, read at once (an error ends it, as it ends the generator)."""
    cost, out = EstimateCost(), list[tuple[object, ...]]()
    for end in request_points(events):
        try:
            window = project(History(prompt_events(events[:end]), costs=(cost,)), budget, strategy, cost)
        except TurncheckError as exc:
            return [*out, (type(exc).__name__, str(exc))]
        out.append((end, len(window.history), replayed(window)))
    return out


def grown_replay(events: list[Event], budget: int, strategy: str) -> list[tuple[object, ...]]:
    """The replay, each window read only once the replay is over (its history has grown since):
    a window's report and events stay its request's own."""
    seen: list[tuple[int, int]] = []
    kept: list[Window] = []
    error: list[tuple[object, ...]] = []
    try:
        for r in replay_requests("s", events, budget, strategy, EstimateCost()):
            seen.append((r.end, len(r.window.history)))
            kept.append(r.window)
    except TurncheckError as exc:
        error.append((type(exc).__name__, str(exc)))
    out: list[tuple[object, ...]] = [(*at, replayed(w)) for at, w in zip(seen, kept, strict=True)]
    return out + error


@st.composite
def sessions(draw: st.DrawFn) -> list[Event]:
    """One session: users, replies, parallel batches, dangling and late results, and summaries
    covering any range of the seqs before them (re-compaction, overlaps, a summary of nothing)."""
    out: list[Event] = []
    turn = 0
    for seq in range(1, draw(st.integers(0, 24)) + 1):
        word = draw(st.sampled_from([*WORDS, "U", "T", "Ca", "Ra"]))
        kind, cid = (
            {"U": Kind.USER, "C": Kind.CALL, "R": Kind.RESULT, "T": Kind.TERM, "S": Kind.SUMMARY}[word[0]],
            word[1:] or None,
        )
        turn += kind is Kind.USER
        covers = None
        if kind is Kind.SUMMARY:
            lo = draw(st.integers(0, seq - 1))
            covers = (lo, draw(st.integers(lo, seq - 1)))
        out.append(Event(seq, "s", turn, kind, cid, chars=draw(st.sampled_from([10, 40, 90])), covers=covers))
    return out


@settings(max_examples=400, deadline=None, derandomize=True)
@given(sessions(), st.sampled_from(["M0", "M1", "M2", "M3", "M4", "M5", "REQ", "SUM", "SLIDE"]),
       st.sampled_from([30, 120, 600]))  # fmt: skip
def test_the_grown_history_gives_every_window_a_fresh_one_gives(
    events: list[Event], strategy: str, budget: int
) -> None:
    """Growing one history request by request changes no window: the same requests, each with
    the same fields, events and report (also read after the replay), and the same error."""
    assert grown_replay(events, budget, strategy) == fresh_replay(events, budget, strategy)


@pytest.mark.parametrize("summarised", [False, True])
def test_a_replay_appends_each_event_once(monkeypatch: pytest.MonkeyPatch, summarised: bool) -> None:
    """Per-request replay is linear in the log: 400 USER/TERM turns append 800 events, not a
    prefix per request (the old replay appended 80 200). A summary after every reply, covering
    the log so far (re-compaction), rebuilds the prompt, which it keeps to a few events."""
    appended: list[Event] = []
    append = History.append

    def counted(h: History, e: Event) -> int:
        appended.append(e)
        return append(h, e)

    monkeypatch.setattr(History, "append", counted)
    events: list[Event] = []
    for t in range(400):
        seq = len(events)
        events += [Event(seq + 1, "s", t, Kind.USER, chars=50), Event(seq + 2, "s", t, Kind.TERM, chars=50)]
        if summarised:
            events.append(Event(seq + 3, "s", t, Kind.SUMMARY, chars=20, covers=(1, seq + 2)))
    requests = list(replay_requests("s", events, 200, "M5", EstimateCost()))
    assert len(requests) == 400
    assert len(appended) <= 3 * len(events)


def test_unknown_check_is_refused() -> None:
    with pytest.raises(BadParameter, match="unknown check orphanz"):
        parse_checks("orphanRes,orphanz")


@pytest.fixture(scope="module")
def session_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve conversations written by the real ``agents.SQLiteSession`` into one database."""
    agents = pytest.importorskip("agents", reason="the peers extra (openai-agents) is not installed")
    from turncheck.integrations.peers.agents_session import agent_items

    db = tmp_path_factory.mktemp("agent") / "session.db"
    events = list(generate_events(WorkloadParams(sessions=12, turns=8, seed=7, p_parallel=0.5)))
    by_session: dict[str, list[Event]] = {}
    for e in events:
        by_session.setdefault(e.session, []).append(e)

    async def write() -> None:
        for name, evs in by_session.items():
            session = agents.SQLiteSession(name, db_path=db)
            await session.add_items(agent_items(History(evs)))
            session.close()

    asyncio.run(write())
    return db


def test_import_then_gate_fails_a_mid_turn_cut_and_passes_m5(
    session_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(TESTS / "my_trim.py", tmp_path / "my_trim.py")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.jsonl"
    assert main(["import", "--from", "agents-sqlite", str(session_db), "-o", str(out)]) == 0
    capsys.readouterr()
    gate = ["project", "-H", str(out), "-q", "-b", "2000", "--per-request", "--fail-on", "orphanRes"]
    assert main([*gate, "--strategy", "my_trim:cut"]) == 1
    text = capsys.readouterr().out
    fail = text.strip().splitlines()[-1]
    assert fail.startswith("FAIL: session ") and ", request " in fail and "orphanRes" in fail
    assert "RESULT#" in fail  # the window's first events are shown
    assert main([*gate, "--strategy", "M5"]) == 0
    assert "FAIL" not in capsys.readouterr().out
    assert main([*gate, "--strategy", "M5", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[-1]["session"] == "(total)" and rows[-1]["requests"] == sum(r["requests"] for r in rows[:-1])
    assert rows[-1]["requests"] > 12 * 8  # more than one request per turn: tool results continue turns


def test_per_request_catches_what_end_of_log_misses(
    session_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(TESTS / "my_trim.py", tmp_path / "my_trim.py")
    monkeypatch.chdir(tmp_path)
    common = ["project", "--from", "agents-sqlite", "-H", str(session_db), "-q", "--format", "json",
              "-b", "2000", "--strategy", "my_trim:cut"]  # fmt: skip
    main(common)
    at_end = sum(1 for line in capsys.readouterr().out.splitlines() if json.loads(line)["orphanRes"])
    main([*common, "--per-request"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()][:-1]
    per_request = sum(1 for r in rows if r["orphanRes"])
    assert per_request > at_end


def test_gate_errors_are_one_line_and_json_names_the_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["project", "--example", "-q", "--per-request", "--fail-on", "orphanz"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unknown check orphanz" in err
    code = main(["project", "--example", "-q", "--from", "yaml", "-H", "x"])
    assert code == 2 and "yaml" in capsys.readouterr().err
    assert main(["project", "--example", "-q", "-b", "20", "-s", "M0", "--per-request",
                 "--fail-on", "overBudget,orphanRes", "--format", "json"]) == 1  # fmt: skip
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert set(last["fail"]) == {
        "session",
        "request",
        "after_events",
        "checks",
        "cost",
        "budget",
        "first_events",
    }
