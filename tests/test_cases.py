"""The real-failure corpus (issue 54): ``turncheck cases`` and ``project --per-request --diff``.

Each case's red shape must break what its thread reports and its green shape none of it; a
user's keep-last-N trimmer reproduces the orphan threads; a pair-safe one none; keep-last-4 →
snap-to-user (spring-projects/spring-ai PR #6312) is an ``empty`` regression, and a trimmer
diffed against itself is none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.cases import (
    CASES,
    DATE,
    PENDING,
    RELEASE_SINCE,
    SAYS_RELEASE,
    STATES,
    Case,
    HistoryInput,
    LogInput,
    ModelInput,
    case_threads,
)
from turncheck.models.errors import BadParameter
from turncheck.models.provider_rules import events_of
from turncheck.sim.cases import LONG_SESSION, history_cases, run_against, run_case, sampled, unavailable
from turncheck.testing import check_diff, check_known_failures

KEEP_LAST = "def keep_last_4(messages, budget):\n    return messages[-4:]\n"
KEEP_ALL = "def keep_all(messages, budget):\n    return list(messages)\n"
SNAP = (
    "def snap_to_user(messages, budget):\n    kept = messages[-4:]\n"
    "    while kept and kept[0].get('role') != 'user':\n        kept = kept[1:]\n    return kept\n"
)
ISSUE_THREADS = (
    "spring-projects/spring-ai#5940 #6312 #7029 #3945 #6770 #3149; langchain4j/langchain4j#1966 #5250; "
    "google/adk-python#1733 #4751 #3717 #4740 #7236 #5602; google/adk-go#1234; openai/openai-agents-js#1842 #1668; "
    "openai/openai-agents-python#2317 #3116 #4987; mastra-ai/mastra#24110 #16193 #13984; "
    "microsoft/agent-framework#7212 #8099 #8441 #6972 #4924 #4835 #7744 #7518; letta-ai/letta#2605 #2601 #2541 #3279; "
    "earendil-works/pi#6832 #8667 #4203; google-gemini/gemini-cli#3814 #16543 #21830; "
    "microsoft/semantic-kernel#12708; strands-agents/harness-sdk#1749 #2087 #2173; "
    "langchain-ai/langchain#38352 #34794 #34664; langchain-ai/langgraph#4168; pydantic/pydantic-ai#4728; "
    "crewAIInc/crewAI#4381; aaif-goose/goose#7444 #6336; cline/cline#7225 #14195; vercel/ai#11036 #12504; "
    "anthropics/claude-code#39695 #90036 #37; OpenHands/software-agent-sdk#432"
)


@pytest.fixture
def trimmers(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "trims.py").write_text(KEEP_LAST + SNAP, encoding="utf-8")
    return f"messages:{tmp_path / 'trims.py'}:keep_last_4", f"messages:{tmp_path / 'trims.py'}:snap_to_user"


@pytest.fixture
def keep_all(tmp_path: Path) -> str:
    """A trimmer that sends the whole history: no thread's failure, no API rule broken."""
    (tmp_path / "keep_all.py").write_text(KEEP_ALL, encoding="utf-8")
    return f"messages:{tmp_path / 'keep_all.py'}:keep_all"


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_red_breaks_what_its_thread_reports_and_green_none(name: str) -> None:
    run = run_case(CASES[name])
    if run.skipped is not None:  # a peer's library absent, or at another version than recorded
        pytest.skip(run.skipped)
    assert set(run.red) == set(CASES[name].breaks) and run.green == ()
    assert run.status == "as recorded"


NO_RELEASE_WHY = re.compile(r"no library release: .+, so no library runs")


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.input.kind == "rule"])
def test_a_rule_case_says_why_no_release_runs(name: str) -> None:
    """A provider rule is the API's: its case says so instead of naming a library release."""
    assert NO_RELEASE_WHY.search(CASES[name].release), CASES[name].release


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_names_its_release_or_says_why_there_is_none(name: str) -> None:
    """Issue 54: a case names the library release it was checked against, or why it is a model."""
    assert SAYS_RELEASE.search(CASES[name].release), CASES[name].release


def test_a_release_that_says_nothing_is_caught() -> None:
    assert not SAYS_RELEASE.search("checked, fixed upstream")
    assert SAYS_RELEASE.search("pi 0.84.3 in the report") and SAYS_RELEASE.search("a model of the cut")


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_has_the_date_and_state_read_in_its_thread(name: str) -> None:
    """Issue 54 (the s62 refusal): four rule cases kept the date "not read", so they could not show
    that a thread after 2025-01 names its release. Every case is now dated as read in its thread."""
    case = CASES[name]
    assert DATE.match(case.date) and case.state in STATES, (case.date, case.state)
    if case.date >= RELEASE_SINCE:
        assert SAYS_RELEASE.search(case.release), case.release


def test_a_case_without_a_read_date_or_from_2025_without_a_release_is_refused() -> None:
    spec = HistoryInput("f", None, 1, "M0", "M5")

    def case(date: str, state: str, release: str) -> Case:
        return Case("t", "a/b#1", date, state, "orphan/pairing", spec, ("empty",), "", release)

    refused = (("not read", "not read"), ("2026-02", "open"), ("2026-13-01", "open"), ("2026-02-12", "x"))
    for date, state in refused:
        with pytest.raises(BadParameter, match="not as read in a/b#1"):
            case(date, state, "a model of the cut")
    with pytest.raises(BadParameter, match="from 2025-01-01: its release 'checked, fixed upstream' names no"):
        case("2025-01-01", "closed", "checked, fixed upstream")
    case("2024-12-31", "closed", "checked, fixed upstream")  # before 2025: no release asked of it
    case("2025-01-01", "merged", "langchain-core 1.8.3")
    case("2026-02-12", "open", "a model of the cut")


def test_a_case_whose_red_shape_holds_differs_from_the_record() -> None:
    fixed = CASES["openai-agents-compaction"]
    both_fixed = Case("t", fixed.source, "2024-01-01", "open", "compaction race", ModelInput(fixed.input.model, "fixed", "fixed"),
                      fixed.breaks, "", "")  # fmt: skip
    assert run_case(both_fixed).status == "differs"
    both_red = Case("t", fixed.source, "2024-01-01", "open", "compaction race", ModelInput(fixed.input.model, "buggy", "buggy"),
                    fixed.breaks, "", "")  # fmt: skip
    assert run_case(both_red).status == "differs"


@pytest.mark.parametrize("source", ["spring-ai#5940", "spring-projects/spring-ai", "a/b#x", "a/b#1 "])
def test_a_case_refuses_a_source_that_is_not_owner_repo_number(source: str) -> None:
    with pytest.raises(BadParameter):
        Case(
            "t",
            source,
            "2024-01-01",
            "open",
            "orphan/pairing",
            HistoryInput("f", None, 1, "M0", "M5"),
            ("empty",),
            "",
            "",
        )
    Case("t", "a/b#1", "2024-01-01", "open", "orphan/pairing", HistoryInput("f", None, 1, "M0", "M5"), ("empty",), "", "")


def test_a_case_refuses_an_unknown_class_and_an_empty_breaks() -> None:
    spec = HistoryInput("f", None, 1, "M0", "M5")
    with pytest.raises(BadParameter):
        Case("t", "a/b#1", "2024-01-01", "open", "flaky", spec, ("empty",), "", "")  # type: ignore[arg-type]
    with pytest.raises(BadParameter):
        Case("t", "a/b#1", "2024-01-01", "open", "cost", spec, (), "", "")


def test_every_thread_of_the_issue_is_a_case_or_pending() -> None:
    threads = []
    for group in ISSUE_THREADS.split("; "):
        repo, first, *rest = group.replace("#", " #").split()
        threads += [f"{repo}{n}" for n in (first, *rest)]
    assert len(threads) == 61  # the issue says 54 and names 61
    recorded = set(case_threads()) | set(PENDING)
    assert [t for t in threads if t not in recorded] == []
    assert not set(case_threads()) & set(PENDING)  # a thread is a case or pending, never both


ISSUE_52_THREADS = (
    "langchain-ai/langchain#34664; cline/cline#14195 #13333; crewAIInc/crewAI#4381; letta-ai/letta#2541 #3279; "
    "strands-agents/harness-sdk#2173; microsoft/agent-framework#7518; google/adk-python#4675; "
    "CherryHQ/cherry-studio#18351; elpapi42/pi-observational-memory#40; hydro-project/infinity#74; "
    "openclaw/openclaw#119824 #115309; microsoft/conductor#507; editor-code-assistant/eca#615"
)


def test_every_thread_of_issue_52_is_a_case_or_pending() -> None:
    """Issue 52 item 4: each thread it cites is in the registry; those the cost-trigger model
    expresses (an undercount, a stale count, a compaction that frees nothing) are cases."""
    threads = []
    for group in ISSUE_52_THREADS.split("; "):
        repo, first, *rest = group.replace("#", " #").split()
        threads += [f"{repo}{n}" for n in (first, *rest)]
    assert len(threads) == 16
    recorded = set(case_threads()) | set(PENDING)
    assert [t for t in threads if t not in recorded] == []
    expressed = ("cline/cline#14195", "elpapi42/pi-observational-memory#40", "hydro-project/infinity#74",
                 "openclaw/openclaw#115309", "langchain-ai/langchain#34664", "letta-ai/letta#3279",
                 "openclaw/openclaw#119824")  # fmt: skip
    assert [t for t in expressed if t not in case_threads()] == []
    stale_reason = "usage and the three costs per request in lint, and the cost-trigger model"
    assert [t for t in threads if t in PENDING and PENDING[t].waits_on == stale_reason] == []


def test_cases_list_json_gives_each_case_its_thread(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "list", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cases = [r["case"] for r in rows if "case" in r]
    assert len(cases) == len(CASES) and all("#" in c["source"] for c in cases)
    assert {r["pending"]["source"] for r in rows if "pending" in r} == set(PENDING)


def test_cases_run_exits_0_when_every_case_behaves_as_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "run", "-q"]) == 0
    assert "cases run behave as recorded" in capsys.readouterr().out.splitlines()[-1]


def test_against_a_keep_last_trimmer_exits_1_naming_the_threads(
    trimmers: tuple[str, str], keep_all: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cases", "run", "-q", "--against", trimmers[0]]) == 1
    out = capsys.readouterr().out
    assert "spring-projects/spring-ai#5940" in out.splitlines()[-1] and "FAIL" in out
    for thread in ("langchain4j/langchain4j#585", "langchain4j/langchain4j#3133", "n8n-io/n8n#34166"):
        assert thread in out.splitlines()[-1]  # a count cut of keep-last-4 splits their parallel batches
    assert main(["cases", "run", "-q", "--against", keep_all]) == 0
    assert main(["cases", "run", "-q", "--against", "no-such-strategy"]) == 2


PRUNE_OLD_RESULTS = (
    "def prune_old_results(messages, budget):\n"
    "    calls = [i for i, m in enumerate(messages) if m.get('role') == 'assistant' and m.get('tool_calls')]\n"
    "    last = calls[-1] if calls else len(messages)\n"
    "    return [m for i, m in enumerate(messages) if not (m.get('role') == 'tool' and i < last)]\n"
)


def test_against_checks_each_window_by_its_history_s_api_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trimmer that prunes old tool results and keeps their calls sends no orphan result (the
    cases' own check) but OpenAI refuses every such request ("An assistant message with
    'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"): it used
    to be called clean."""
    (tmp_path / "prune.py").write_text(PRUNE_OLD_RESULTS, encoding="utf-8")
    prune = f"messages:{tmp_path / 'prune.py'}:prune_old_results"
    assert main(["cases", "run", "-q", "--against", prune]) == 1
    out = capsys.readouterr().out
    assert "| spring-ai-count-cut | spring-projects/spring-ai#5940 | orphanRes | the API refuses: openai-chat " \
           "call-not-answered-next |" in out  # fmt: skip
    assert out.splitlines()[-1].startswith(f"FAIL: {prune} breaks 9 of 10 history cases")
    rep = run_against(CASES["langchain4j-bulk-tool-results"], prune)
    assert rep.reproduced == () and rep.refused == ("openai-chat call-not-answered-next",)
    with pytest.raises(AssertionError, match="openai-chat call-not-answered-next"):
        check_known_failures(prune)


DROP_NEWEST_RESULTS = (
    "def drop_newest_results(messages, budget):\n"
    "    out = list(messages)\n"
    "    while out and out[-1].get('role') == 'tool':\n"
    "        out.pop()\n"
    "    return out\n"
)


def test_against_judges_each_window_as_the_request_sent(tmp_path: Path) -> None:
    """A trimmer that drops the newest tool results sends the calls without their answers, which
    OpenAI refuses ("An assistant message with 'tool_calls' must be followed by tool messages
    responding to each 'tool_call_id'"): judged as a log, calls at the end are a batch still
    pending, so every case used to call this trimmer clean."""
    (tmp_path / "drop.py").write_text(DROP_NEWEST_RESULTS, encoding="utf-8")
    drop = f"messages:{tmp_path / 'drop.py'}:drop_newest_results"
    assert run_against(CASES["spring-ai-count-cut"], drop).refused == ("openai-chat call-not-answered-next",)
    assert run_against(CASES["parallel-batch-cut"], drop).refused == ("openai-responses output-missing",)
    assert main(["cases", "run", "-q", "--against", drop]) == 1


def test_against_says_how_long_a_history_it_covered(
    keep_all: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cases", "run", "-q", "--against", keep_all]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    longest = max(run_against(c, keep_all).longest for c in history_cases())
    assert longest >= 20
    assert (
        f"each history (the longest holds {longest} events) was replayed as written and continued to at least "
        f"{LONG_SESSION} events, its turns repeated with fresh call ids: a trimmer keeping more than that sends it "
        "whole; your trimmer ran before every request of the history as written, of its copies 1, 2, 3, 4, 6, 8, 12, "
        "16 and of its last copy"
    ) in last


@pytest.mark.parametrize("keep", [10, 15, 17, 60, 150, 284])
def test_against_any_keep_last_n_exits_1_naming_threads(
    keep: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """keep-last-10, -15 and every N past the longest written history (21 events) used to exit 0:
    no history was long enough to be cut where a batch splits. Each session now goes on (its turns
    repeated, fresh call ids) to 400 events, so a count cut of any N up to that meets the shape."""
    (tmp_path / "keep.py").write_text(
        f"def fn(messages, budget):\n    return messages[-{keep}:]\n", encoding="utf-8"
    )
    assert main(["cases", "run", "-q", "--against", f"messages:{tmp_path / 'keep.py'}:fn"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("FAIL: ") and re.search(r"history's API\): [\w.-]+/[\w.-]+#\d+", last), last


def test_a_continued_session_repeats_its_turns_with_fresh_ids() -> None:
    from turncheck.sim.cases import continued

    events = events_of("U Ca Cb Ra Rb T")
    long = continued(events, 20)
    assert long[:6] == events and len(long) == 24
    assert [e.call_id for e in long[7:11]] == ["a~1", "b~1", "a~1", "b~1"]
    assert [e.seq for e in long] == sorted({e.seq for e in long}) and long[6].turn > events[-1].turn
    assert continued([], 20) == [] and continued(events, 3) == events


def test_the_fixture_names_the_threads_a_trimmer_reproduces(trimmers: tuple[str, str], keep_all: str) -> None:
    with pytest.raises(AssertionError, match="spring-projects/spring-ai#5940"):
        check_known_failures(trimmers[0])
    with pytest.raises(AssertionError, match="spring-projects/spring-ai#6312"):
        check_known_failures("M3")
    check_known_failures(keep_all)


def test_a_pair_safe_window_bedrock_refuses_reproduces_the_strands_thread(keep_all: str) -> None:
    """strands-agents/harness-sdk#2085: a window that opens on an assistant toolUse ("A
    conversation must start with a user message"). M5 never splits a pair, yet its windows open on
    a call; it used to pass every case (no history case was in a format whose API refuses that)."""
    strands = CASES["strands-window-assistant-first"]
    assert strands in history_cases()
    rep = run_against(strands, "M5")
    assert rep.reproduced == ("bedrock first-not-user",) and rep.request is not None
    with pytest.raises(AssertionError, match="strands-agents/harness-sdk#2085"):
        check_known_failures("M5")
    assert run_against(strands, "M3").broke == () and run_against(strands, keep_all).broke == ()
    assert CASES["spring-ai-streaming-memory"] not in history_cases()  # a store's fault, not a window's


def test_against_reports_the_first_offending_request(trimmers: tuple[str, str]) -> None:
    rep = run_against(CASES["spring-ai-count-cut"], trimmers[0])
    assert rep.reproduced == ("orphanRes",) and rep.request is not None
    assert rep.refused == ("openai-chat result-not-next",)  # the orphan, as OpenAI's rule names it


def diff_args(history: Path, new: str, old: str) -> list[str]:
    return [
        "project",
        "-H",
        str(history),
        "--from",
        "openai-chat",
        "--per-request",
        "-s",
        new,
        "--diff",
        old,
        "-q",
    ]


def test_diff_keep_last_to_snap_to_user_names_the_empty_window_regression(
    trimmers: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from turncheck.models.corpus import case_file

    history = case_file("spring-ai-6312.json")
    keep, snap = trimmers
    assert main(diff_args(history, snap, keep)) == 1
    out = capsys.readouterr().out
    assert (
        "| empty | 0 | 3 | 3 |" in out
        and out.splitlines()[-1].startswith("FAIL")
        and "empty" in out.splitlines()[-1]
    )
    assert main(diff_args(history, keep, keep)) == 0
    assert main(diff_args(history, snap, snap)) == 0
    assert "0 of 6 requests differ" in capsys.readouterr().out
    assert main(diff_args(history, keep, snap)) == 0  # back again: nothing keep-last-4 breaks that snap held


def test_a_diff_that_passes_says_what_it_covered_and_what_the_new_trimmer_still_breaks(
    trimmers: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 50: ``--diff`` said ``OK`` for keep-last-4 against itself on a workload it orphans
    results of — a diff judges the change, so its OK names the requests it read, what NEW still
    breaks, the shapes of the log and the command that tries every other."""
    log = tmp_path / "generated.jsonl"
    assert main(["generate", "-o", str(log), "--sessions", "3", "--turns", "6", "--seed", "5", "-q"]) == 0
    keep, _ = trimmers
    args = ["project", "-H", str(log), "--per-request", "-s", keep, "--diff", keep, "-q", "-b", "100000"]
    assert main(args) == 0
    ok = capsys.readouterr().out.splitlines()[-1]
    assert ok.startswith(
        f"OK: no request breaks, under {keep}, a check (orphanRes, orphanCall, overBudget, empty)"
    )
    assert re.search(
        r" in \d+ requests of 3 sessions; it still breaks orphanRes in \d+ requests?, as the old", ok
    ), ok
    assert "(a diff judges the change, not the trimmer: --fail-on judges it)" in ok
    assert re.search(r"A replay covers the shapes this log holds \([1-9]\d* parallel batch(es)?, ", ok), ok
    assert ok.endswith(f"`turncheck check projector -p strategy={keep}` tries every small history.")
    assert main([*args[:5], "M5", *args[6:7], "M5", *args[8:]]) == 0
    assert "; it breaks none of them in any request." in capsys.readouterr().out


def test_diff_needs_per_request_and_refuses_an_unknown_old(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["project", "--example", "--diff", "M1"]) == 2
    assert main(["project", "--example", "--per-request", "--diff", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 2


def test_check_diff_in_python(trimmers: tuple[str, str]) -> None:
    events = events_of("U Ca Ra Cb Rb Cc Rc T")
    with pytest.raises(AssertionError, match="empty"):
        check_diff(trimmers[0], trimmers[1], events, budget=100)
    check_diff(trimmers[0], trimmers[0], events, budget=100)


def test_a_case_recorded_on_another_library_version_is_skipped_with_the_reason() -> None:
    spec = HistoryInput("spring-ai-5940.json", "openai-chat", 40, "M0", "M5", ("langchain-core==0.0.1",))
    assert "the case was recorded on langchain-core==0.0.1" in (unavailable(spec) or "")
    gone = HistoryInput("spring-ai-5940.json", "openai-chat", 40, "M0", "M5", ("no-such-dist==1",))
    assert unavailable(gone) == "no-such-dist is not installed (the case was recorded on no-such-dist==1)"
    case = Case("t", "a/b#1", "2024-01-01", "open", "orphan/pairing", spec, ("orphanRes",), "", "")
    assert run_case(case).status == "skipped"
    assert unavailable(HistoryInput("spring-ai-5940.json", "openai-chat", 40, "M0", "M5")) is None


def test_a_log_case_lints_the_log_the_report_shows_and_the_fixed_one() -> None:
    case = CASES["spring-ai-streaming-memory"]
    assert run_case(case).red == ("call-not-answered-next",) and run_case(case).green == ()
    spec = case.input
    assert isinstance(spec, LogInput)
    swapped = Case("t", case.source, "2024-01-01", "open", "orphan/pairing", LogInput(spec.green, spec.red, spec.fmt, spec.provider),
                   case.breaks, "", "")  # fmt: skip
    assert run_case(swapped).status == "differs"


def test_a_log_case_judges_by_lints_structural_checks_as_well_as_the_provider_rules() -> None:
    """anthropics/claude-code#90036: a compaction over a running call is no provider rule but
    lint's own check (``summary-covers-open-call``); pydantic/pydantic-ai#4728 breaks one of each."""
    assert run_case(CASES["claude-code-compaction-in-flight"]).red == ("summary-covers-open-call",)
    poisoned = run_case(CASES["pydantic-ai-poisoned-history"])
    assert poisoned.red == ("dangling-call", "call-not-answered-next") and poisoned.green == ()


def test_a_model_case_whose_shapes_are_parameters_runs_the_model_with_them() -> None:
    """cost-trigger has no variants: a shape is ``k=v`` parameters, as ``--param`` takes them."""
    case = CASES["langchain-summarization-frame"]
    spec = case.input
    assert isinstance(spec, ModelInput)
    assert spec.command("red") == "turncheck check cost-trigger --param frame=3 --engine explore"
    assert spec.command("green").endswith("--param frame=3 --param threshold=5 --engine explore")
    assert ModelInput.params("buggy") == {"variant": "buggy"}
    assert run_case(case).status == "as recorded"
    swapped = Case("t", case.source, "2024-01-01", "open", "cost", ModelInput(spec.model, spec.green, spec.red),
                   case.breaks, "", "")  # fmt: skip
    assert run_case(swapped).status == "differs"


def test_a_race_side_runs_only_against_the_releases_it_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib.metadata import version

    from turncheck.sim.case_libraries import Unavailable, library_path, repository_file

    monkeypatch.setenv("TURNCHECK_CACHE", str(tmp_path))
    assert library_path((f"typer=={version('typer')}",), install=False) is None  # the environment's own
    with pytest.raises(Unavailable, match="typer==0.0.1 not installed nor in"):
        library_path(("typer==0.0.1",), install=False)
    (tmp_path / "libraries" / "typer-0.0.1").mkdir(parents=True)
    assert library_path(("typer==0.0.1",), install=False) == tmp_path / "libraries" / "typer-0.0.1"
    with pytest.raises(Unavailable, match="is missing from turncheck.s files"):
        repository_file("examples/races/no_such_test.py")


def test_a_race_case_without_its_releases_is_skipped_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNCHECK_CACHE", str(tmp_path))
    run = run_case(CASES["openai-agents-compaction-race"])
    assert run.status == "skipped" and "openai-agents==0.6.6" in (run.skipped or "")


@pytest.mark.parametrize("strategy", ["M0", "M3", "M5"])
def test_a_trimmer_diffed_against_itself_exits_0(strategy: str) -> None:
    assert (
        main(["project", "--example", "--per-request", "-q", "-s", strategy, "--diff", strategy, "-b", "300"])
        == 0
    )


def test_the_known_failures_fixture(known_failures: Any, trimmers: tuple[str, str], keep_all: str) -> None:
    with pytest.raises(AssertionError, match="omnigent-ai/omnigent#2449"):
        known_failures.check(trimmers[0])
    known_failures.check(keep_all)
    with pytest.raises(AssertionError, match="breaks empty"):
        known_failures.diff(trimmers[0], trimmers[1], events_of("U Ca Ra Cb Rb Cc Rc T"), budget=100)


def test_the_shapes_cases_show_prints_run_as_printed_outside_the_checkout(cli, tmp_path, monkeypatch) -> None:
    """From a user's folder, ``cases list``/``show`` printed ``turncheck project -H
    models/corpus/data/…`` and ``turncheck lint models/corpus/data/…``: run as printed, "no such
    file" (exit 2). Each file is now named where it is (the installed package's folder); from the
    checkout's root, relative as before."""
    import shlex

    monkeypatch.chdir(tmp_path)
    ran = 0
    for name, case in CASES.items():
        if case.input.kind not in ("history", "log") or not all(s.startswith("M") or case.input.kind == "log"
                                                                  for s in _sides(case)):  # fmt: skip
            continue  # a peer: side needs its library at the pinned version
        shown = dict(line.split(":", 1) for line in cli("cases", "show", name).out.splitlines())
        for side, want in (("red", 1), ("green", 0)):
            argv = shlex.split(shown[side].strip())
            assert argv[0] == "turncheck" and " models/corpus/data/" not in shown[side], shown[side]
            done = cli(*argv[1:], "-q")
            assert done.code in (0, 1) and done.err == "", (name, side, done)  # it ran: no "no such file"
            assert case.input.kind != "log" or done.code == want, (name, side, done)  # lint: red exits 1
            ran += 1
    assert ran >= 10
    listed = cli("cases", "list").out
    assert " models/corpus/data/" not in listed and str(tmp_path) not in listed
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    shown = cli("cases", "show", "spring-ai-count-cut").out
    assert "red:      turncheck project -H models/corpus/data/spring-ai-5940.json " in shown


def _sides(case) -> tuple[str, ...]:
    spec = case.input
    return (spec.red, spec.green) if spec.kind == "history" else ()


def test_the_repository_files_cases_show_are_named_where_they_are(cli, tmp_path, monkeypatch) -> None:
    """A race test or store of the repository a case runs (``examples/races``, ``examples/stores``):
    from a folder without it, ``cases show`` names the file where turncheck has it (the checkout,
    or the wheel's ``turncheck/examples/…``: tests/test_wheel.py), so the line runs as printed;
    from the checkout's root, relative as before."""
    import shlex

    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    store = shlex.quote(str(root / "examples" / "stores" / "first_open.py"))
    assert (
        f"red:      turncheck stress --store {store}:NoBusyTimeout "
        in cli("cases", "show", "sqlite-first-open-contention").out
    )
    race = shlex.quote(str(root / "examples" / "races" / "agents_compaction.py"))
    assert (
        f"turncheck race {race}:test_runs_compact_safely -n 10"
        in cli("cases", "show", "openai-agents-compaction-race").out
    )
    monkeypatch.chdir(root)
    shown = cli("cases", "show", "sqlite-first-open-contention").out
    assert "red:      turncheck stress --store examples/stores/first_open.py:NoBusyTimeout " in shown


def test_against_projects_the_written_history_some_copies_and_the_last(tmp_path: Path) -> None:
    """The s62 refusal measured ``--against`` at 4-12 s and a user's quadratic drop-newest trimmer
    ran past 5 minutes: every request of the 400-event continuation called the trimmer. It now
    runs before each request of the history as written, of the copies :data:`COPIES` names and of
    the last copy (where a cut of the last N messages meets its shape for any N up to the copy),
    and stops a case at its first offending request."""
    from turncheck.models.messages import message_projector
    from turncheck.models.requests import request_points
    from turncheck.sim.cases import COPIES, continued, history_events

    at = sampled(7, 504)  # 72 copies of a 7-event session
    assert [c for c in range(72) if at(c * 7 + 1)] == [0, *sorted(COPIES), 71]
    assert all(at(e) for e in range(1, 8)) and not at(5 * 7 + 3) and at(71 * 7 + 7)

    seen: list[int] = []

    def counting(messages: list[Any], budget: int) -> list[Any]:
        seen.append(len(messages))
        return list(messages)

    case = CASES["agent-framework-nonadjacent-pair"]
    assert run_against(case, message_projector(counting, name="counting")).broke == ()
    events = continued(history_events(case.input))  # type: ignore[arg-type]
    requests = list(request_points(events))
    assert len(seen) < len(requests) / 3  # not every request of the continuation
    assert max(seen) >= len(events) - 7 and min(seen) <= 3  # the last copy and the written history

    seen.clear()

    def keep_last_2(messages: list[Any], budget: int) -> list[Any]:
        seen.append(len(messages))
        return messages[-2:]

    rep = run_against(case, message_projector(keep_last_2, name="keep_last_2"))
    assert rep.broke == ("orphanRes",) and len(seen) == rep.request + 1  # stopped at its first offending request


@pytest.mark.parametrize("keep", [1, 2, 3, 299, 300])
def test_against_keep_last_n_at_the_ends_of_the_range_exits_1(keep: int) -> None:
    from turncheck.models.messages import message_projector

    trimmer = message_projector(lambda messages, budget: messages[-keep:], name=f"keep-last-{keep}")
    assert [c.source for c in history_cases() if run_against(c, trimmer).broke]
