"""Provider-reported usage per request, and three costs side by side (issue 51 item 3, issue 52 item 1).

Each trace format keeps the input count the provider reported with each request
(:mod:`models.usage`); ``lint`` shows per request what the messages cost, what the provider
counted and the frame between them, flags a request whose *reported* input exceeds ``--budget``
even when its messages are tiny (exit 1; exit 0 with a budget above the reported count), and names
per conversation the first request whose messages fit the budget while the reported count did not
(``estimate-drift``: langchain-ai/langchain#34664, openclaw/openclaw PR #115309). Traces are
recorded by the real SDKs (opentelemetry-sdk, langfuse's and langsmith's own models).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from test_import_otel import answer, console_file, record, user

from turncheck.cli.app import main
from turncheck.models.importers import import_log

TOOLS = [
    {
        "type": "function",
        "name": "search",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
]
SYSTEM = "You are a careful agent. " * 40


def otel_trace(path: Path, reported: list[int | None], conversation: str = "conv-1") -> Path:
    """One tiny question per model call of one conversation, each span carrying the provider's
    ``gen_ai.usage.input_tokens`` (none where ``None``), the system instructions and the tools."""
    calls, sent = [], []
    for i, n in enumerate(reported):
        sent.append(user(f"q{i}"))
        attrs: dict[str, Any] = {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": conversation,
                                 "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
                                 "gen_ai.tool.definitions": json.dumps(TOOLS)}  # fmt: skip
        if n is not None:
            attrs["gen_ai.usage.input_tokens"] = n
        calls.append((list(sent), [answer(f"a{i}")], attrs))
        sent.append(answer(f"a{i}"))
    return console_file(path, record(calls))


def lint(
    path: Path, fmt: str, budget: int | None, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    extra = [] if budget is None else ["--budget", str(budget)]
    code = main(["lint", "--from", fmt, str(path), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_reported_input_over_the_budget_fails_though_the_messages_are_tiny(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = otel_trace(tmp_path / "spans.json", [4100, 4300, 4500])
    code, report = lint(path, "otel", 4000, capsys)
    assert code == 1
    assert report["counts"]["over-budget"] == 3 and report["counts"]["estimate-drift"] == 1
    first = report["examples"]["estimate-drift"][0]
    assert "span " in first and "≤ budget 4000 < reported 4100" in first
    assert "reported 4500 input tokens > budget 4000; its messages" in report["examples"]["over-budget"][2]
    costs = report["costs"]
    assert [c["reported"] for c in costs] == [4100, 4300, 4500]
    assert all(c["messages"] < 20 and c["frame_from"] == "trace" and c["frame"] > 200 for c in costs)
    assert costs[0]["ratio"] == round(costs[0]["messages"] / 4100, 3)
    code, report = lint(path, "otel", 4500, capsys)  # a budget at the reported count
    assert code == 0 and report["clean"]


def test_without_a_frame_in_the_trace_it_is_reported_minus_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attrs: dict[str, Any] = {
        "gen_ai.provider.name": "openai",
        "gen_ai.conversation.id": "c",
        "gen_ai.usage.input_tokens": 900,
    }
    path = console_file(tmp_path / "s.json", record([([user("hello there")], [answer("hi")], attrs)]))
    (cost,) = lint(path, "otel", None, capsys)[1]["costs"]
    assert cost["frame_from"] == "reported" and cost["frame"] == 900 - cost["messages"]
    assert cost["counted_with"] == "estimate" and cost["model"] == "test-model"


def test_a_request_without_usage_is_judged_on_its_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = otel_trace(tmp_path / "spans.json", [None, 5000])
    code, report = lint(path, "otel", 4000, capsys)
    assert code == 1 and report["counts"]["over-budget"] == 1
    assert [c["reported"] for c in report["costs"]] == [None, 5000]
    assert report["costs"][0]["ratio"] is None and report["costs"][0]["frame_from"] == "trace"
    code, report = lint(otel_trace(tmp_path / "none.json", [None, None]), "otel", None, capsys)
    assert code == 0 and "costs" not in report  # no usage, no budget: nothing to set side by side


def test_lint_budget_text_says_which_requests_it_judged_on_messages_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace without usage under ``-b`` is clean on its messages, and the text says so — never a
    clean that reads as the provider's word; with some counts, the three costs of each request
    side by side (messages with the tokenizer named, frame and where it came from, reported)."""
    path = otel_trace(tmp_path / "none.json", [None, None])
    capsys.readouterr()
    assert main(["lint", "--from", "otel", str(path), "-b", "4000"]) == 0
    out = capsys.readouterr().out
    assert (
        "provider usage: none of the 2 requests reports its input tokens; each is judged on its messages only"
        in out
    )
    path = otel_trace(tmp_path / "some.json", [None, 3900, None, 3950])
    assert main(["lint", "--from", "otel", str(path), "-b", "4000"]) == 0
    out = capsys.readouterr().out
    assert (
        "2 of 4 requests report their input tokens" in out
        and "2 without a count judged on their messages only" in out
    )
    rows = [line for line in out.splitlines() if line.startswith("  request ")]
    assert len(rows) == 4 and "no reported count" in rows[0] and rows[1].endswith("reported 3900")
    assert all("(estimate), frame " in r and "(system prompt and tools)" in r for r in rows)


def test_estimate_drift_once_per_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two conversations in one file, each crossing the budget at its second request."""
    a = otel_trace(tmp_path / "a.json", [100, 5000, 6000], "conv-a").read_text()
    b = otel_trace(tmp_path / "b.json", [200, 7000], "conv-b").read_text()
    both = tmp_path / "both.json"
    both.write_text(a + b)
    code, report = lint(both, "otel", 1000, capsys)
    assert code == 1 and report["counts"]["estimate-drift"] == 2 and report["counts"]["over-budget"] == 3
    drifts = report["examples"]["estimate-drift"]
    assert "< reported 5000" in drifts[0] and "< reported 7000" in drifts[1]


@pytest.mark.parametrize(
    ("key", "value"),
    [("gen_ai.usage.input_tokens", {"intValue": "4100"}), ("gen_ai.usage.input_tokens", {"doubleValue": 4100.0}),
     ("gen_ai.usage.prompt_tokens", {"intValue": 4100})],
)  # fmt: skip
def test_otlp_json_counts(
    key: str, value: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The collector's OTLP JSON writes an int attribute as ``{"intValue": "4100"}`` (a string);
    a double holding a whole number and the older conventions' ``gen_ai.usage.prompt_tokens`` count too."""
    attrs = [("gen_ai.operation.name", {"stringValue": "chat"}), ("gen_ai.conversation.id", {"stringValue": "c"}),
             ("gen_ai.input.messages", {"stringValue": json.dumps([user("hi")])}), (key, value)]  # fmt: skip
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "startTimeUnixNano": "1", "name": "chat",
            "attributes": [{"key": k, "value": v} for k, v in attrs]}  # fmt: skip
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    assert lint(path, "otel", 4000, capsys)[0] == 1
    assert lint(path, "otel", 4100, capsys)[0] == 0


def test_langfuse_usage_details_are_the_reported_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    langfuse = pytest.importorskip("langfuse.api")
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    common: dict[str, Any] = {"type": "GENERATION", "model_parameters": {}, "metadata": {}, "level": "DEFAULT",
                              "cost_details": {}, "environment": "default", "model": "gpt-4o-mini"}  # fmt: skip
    inputs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]
    observations = [
        langfuse.ObservationsView(id="g1", start_time=t0, input={"messages": inputs, "tools": TOOLS},
                                  output={"role": "assistant", "content": "hello"},
                                  usage=langfuse.Usage(input=9000, output=2, total=9002),
                                  usage_details={"input": 9000, "output": 2}, **common),
        langfuse.ObservationsView(id="g2", start_time=t0 + dt.timedelta(seconds=1), input=inputs,  # no usage
                                  output={"role": "assistant", "content": "hello"},
                                  usage=langfuse.Usage(input=0, output=0, total=0), usage_details={}, **common),
    ]  # fmt: skip
    trace = langfuse.TraceWithFullDetails(id="t", timestamp=t0, tags=[], public=False, environment="default",
                                          html_path="/t", observations=observations, scores=[])  # fmt: skip
    path = tmp_path / "lf.json"
    path.write_text(trace.json())
    code, report = lint(path, "langfuse", 8000, capsys)
    assert code == 1 and report["counts"]["over-budget"] == 1
    assert [c["reported"] for c in report["costs"]] == [9000, None]  # a 0 recorded is no count
    assert report["costs"][0]["frame_from"] == "trace" and report["costs"][0]["frame"] > 200
    assert lint(path, "langfuse", 9000, capsys)[0] == 0


def test_langsmith_runs_keep_the_usage_the_wrapper_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    """The committed export (``python -m docs.tools.trace_exports``: ``wrap_openai`` tracing replies
    that carry ``usage``): each llm run's ``usage_metadata`` is its request's reported count."""
    runs = Path(__file__).parent.parent / "examples" / "traces" / "langsmith-runs.jsonl"
    recorded = [run["outputs"]["usage_metadata"]["input_tokens"] for run in map(json.loads, runs.read_text().splitlines())
                if run["run_type"] == "llm"]  # fmt: skip
    assert [s.reported for s in import_log("langsmith", runs).sent] == recorded
    code, report = lint(runs, "langsmith", None, capsys)
    assert code == 0 and [c["reported"] for c in report["costs"]] == recorded
    assert all(0 < c["ratio"] < 1 for c in report["costs"])  # the tool schemas and system prompt ride along


def test_each_apis_usage_shape(capsys: pytest.CaptureFixture[str]) -> None:
    """The usage objects of the real SDKs: Anthropic's cache counts are added (its input_tokens
    excludes them); OpenAI's and Gemini's prompt counts already hold theirs."""
    anthropic = pytest.importorskip("anthropic.types")
    openai = pytest.importorskip("openai.types")
    responses = pytest.importorskip("openai.types.responses")
    genai = pytest.importorskip("google.genai.types")
    from turncheck.integrations.formats.usage import reported_input

    assert reported_input(anthropic.Usage(input_tokens=10, output_tokens=3, cache_read_input_tokens=5000,
                                          cache_creation_input_tokens=20).model_dump()) == 5030  # fmt: skip
    assert (
        reported_input(
            openai.CompletionUsage(prompt_tokens=12, completion_tokens=3, total_tokens=15).model_dump()
        )
        == 12
    )
    usage = responses.ResponseUsage(input_tokens=70, output_tokens=1, total_tokens=71,
                                    input_tokens_details={"cached_tokens": 64, "cache_write_tokens": 0},
                                    output_tokens_details={"reasoning_tokens": 0})  # fmt: skip
    assert reported_input(usage.model_dump()) == 70
    gemini = genai.GenerateContentResponseUsageMetadata(prompt_token_count=40, candidates_token_count=2)
    assert reported_input(gemini.model_dump(by_alias=True)) == 40 == reported_input(gemini.model_dump())
    for no_count in (
        None,
        {},
        {"input_tokens": -1},
        {"input_tokens": True},
        {"prompt_tokens": "many"},
        {"input": 0},
    ):
        assert reported_input(no_count) is None, no_count


def test_langsmith_runs_of_a_langchain_model_keep_its_usage_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LangSmith's ``LangChainTracer`` records the generated message in ``dumpd`` form, its
    ``usage_metadata`` inside: that is the run's reported count."""
    from test_import_traces import langchain_runs

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(r + "\n" for r in langchain_runs(reported=7000)))
    code, report = lint(path, "langsmith", 6000, capsys)
    assert code == 1 and [c["reported"] for c in report["costs"]] == [7000] * 4
    assert report["counts"]["estimate-drift"] == 1
    assert lint(path, "langsmith", 7000, capsys)[0] == 0


def test_langfuse_input_usage_types_are_summed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Langfuse "summarizes all usage types that include the string input as input usage types":
    cached input counted apart is input too."""
    langfuse = pytest.importorskip("langfuse.api")
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    obs = langfuse.ObservationsView(id="g1", type="GENERATION", start_time=t0, model_parameters={}, metadata={},
                                    level="DEFAULT", cost_details={}, environment="default",
                                    input=[{"role": "user", "content": "hi"}], output={"role": "assistant", "content": "yo"},
                                    usage=langfuse.Usage(input=100, output=3, total=4103),
                                    usage_details={"input": 100, "input_cached_tokens": 4000, "output": 3})  # fmt: skip
    path = tmp_path / "obs.json"
    path.write_text(f"[{obs.json()}]")  # GET /api/public/observations: a list
    assert [s.reported for s in import_log("langfuse", path).sent] == [4100]
    assert lint(path, "langfuse", 4099, capsys)[0] == 1
    assert lint(path, "langfuse", 4100, capsys)[0] == 0


@pytest.mark.parametrize(
    ("cached", "reported"),
    [({"gen_ai.usage.cache_read.input_tokens": 18000, "gen_ai.usage.cache_creation.input_tokens": 900}, 18904),
     ({"gen_ai.usage.cache_read_input_tokens": 9000}, 9004),  # the deprecated spelling
     ({"gen_ai.usage.cache_read.input_tokens": 3}, 4)],  # the conventions' rule: already in input_tokens
)  # fmt: skip
def test_an_anthropic_span_whose_input_tokens_leave_the_cache_out(
    cached: dict[str, int], reported: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The GenAI conventions count cached tokens inside ``gen_ai.usage.input_tokens``; an
    instrumentation copying Anthropic's ``usage.input_tokens`` (which excludes them) reports 4
    input tokens of a request that read 18 000 from the cache. A count smaller than its own cache
    parts cannot hold them: they are added, and a request over the budget is no longer clean."""
    attrs: dict[str, Any] = {"gen_ai.provider.name": "anthropic", "gen_ai.conversation.id": "c",
                             "gen_ai.usage.input_tokens": 4, **cached}  # fmt: skip
    path = console_file(tmp_path / "s.json", record([([user("hi")], [answer("yo")], attrs)]))
    code, report = lint(path, "otel", 5000, capsys)
    assert report["costs"][0]["reported"] == reported
    assert code == (1 if reported > 5000 else 0)
    from turncheck.integrations.formats.otel import WANTED
    from turncheck.integrations.formats.usage import OTEL_CACHED

    assert set(OTEL_CACHED) <= set(WANTED)  # every cache count is read off the span


def claude_code_session(
    path: Path, usages: list[tuple[int, int, int]], compact_after: int | None = None
) -> Path:
    """A Claude Code session file: a tiny question and answer per turn, each assistant record
    with the usage Anthropic returned (``input_tokens``, cache reads, cache writes); a compaction
    (its boundary and summary) after turn ``compact_after``."""
    out, parent = [], None
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": "s-1", "version": "2.1.0"}
    for i, (fresh, read, written) in enumerate(usages):
        if i == compact_after:
            out.append({**base, "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                        "uuid": f"b{i}", "parentUuid": None, "logicalParentUuid": parent,
                        "compactMetadata": {"trigger": "auto", "preTokens": 9000}})  # fmt: skip
            out.append({**base, "type": "user", "isCompactSummary": True, "uuid": f"s{i}", "parentUuid": f"b{i}",
                        "message": {"role": "user", "content": "Summary: said hi."}})  # fmt: skip
            parent = f"s{i}"
        out.append({**base, "type": "user", "uuid": f"u{i}", "parentUuid": parent,
                    "message": {"role": "user", "content": f"hi {i}"}})  # fmt: skip
        usage = {"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
                 "output_tokens": 2}  # fmt: skip
        out.append({**base, "type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}", "requestId": f"r{i}",
                    "message": {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                "content": [{"type": "text", "text": "yo"}], "usage": usage}})  # fmt: skip
        parent = f"a{i}"
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    return path


def test_a_claude_code_session_is_judged_on_the_usage_it_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 52 item 1: a session file carries Anthropic's usage per assistant message, the input
    of the request that produced it (cache reads and writes added). Tiny messages, 15 203 tokens
    reported: ``-b`` fails below it, passes at it; the messages are what that request sent, the
    summary standing for what a compaction hid."""
    path = claude_code_session(tmp_path / "s.jsonl", [(3, 15000, 200), (4, 9000, 100), (5, 200, 0)], 2)
    code, report = lint(path, "claude-code", 10000, capsys)
    assert code == 1 and report["counts"]["over-budget"] == 1 and report["counts"]["estimate-drift"] == 1
    assert "reported 15203 input tokens > budget 10000" in report["examples"]["over-budget"][0]
    costs = report["costs"]
    assert [c["reported"] for c in costs] == [15203, 9104, 205]
    assert costs[0]["messages"] < costs[1]["messages"]
    windows = import_log("claude-code", path).reported
    assert [[e.text for e in w.window.events] for w in windows] == [
        ["hi 0"], ["hi 0", "yo", "hi 1"], ["Summary: said hi.", "hi 2"]]  # fmt: skip
    assert all(c["frame_from"] == "reported" and c["model"] == "claude-sonnet-4-5" for c in costs)
    code, report = lint(path, "claude-code", 15203, capsys)
    assert code == 0 and report["clean"]
    capsys.readouterr()
    assert main(["lint", "--from", "claude-code", str(path)]) == 0
    assert "provider usage" not in capsys.readouterr().out  # without --budget the lint is as before


def test_a_pi_session_is_judged_on_the_usage_it_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi's assistant messages carry ``usage`` with ``input`` apart from ``cacheRead`` and
    ``cacheWrite`` (pi adds them up for its context count): their sum is the request's input."""
    entries: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "sess", "cwd": "/w",
                                      "timestamp": "2026-01-01T00:00:00.000Z"}]  # fmt: skip
    parent = None
    for i, (fresh, read) in enumerate([(3, 12000), (6, 400)]):
        entries.append({"type": "message", "id": f"u{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                        "message": {"role": "user", "content": f"hi {i}", "timestamp": 1}})  # fmt: skip
        usage = {
            "input": fresh,
            "output": 2,
            "cacheRead": read,
            "cacheWrite": 50,
            "totalTokens": fresh + read + 52,
        }
        entries.append({"type": "message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": "2026-01-01T00:00:02.000Z",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "yo"}],
                                    "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
                                    "stopReason": "stop", "timestamp": 2}})  # fmt: skip
        parent = f"a{i}"
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    code, report = lint(path, "pi", 10000, capsys)
    assert code == 1 and [c["reported"] for c in report["costs"]] == [12053, 456]
    assert "reported 12053 input tokens > budget 10000" in report["examples"]["over-budget"][0]
    assert lint(path, "pi", 12053, capsys)[0] == 0


def test_cache_counts_kept_apart_are_added_only_beside_the_key_that_excludes_them() -> None:
    """Anthropic's ``input_tokens``, Bedrock's ``inputTokens`` and pi's ``input`` leave the prompt
    cache out (a cached request reads as 5 tokens); OpenAI's and LiteLLM's ``prompt_tokens`` hold it
    — LiteLLM's usage of an Anthropic call keeps ``cache_read_input_tokens`` beside a
    ``prompt_tokens`` already summed with it, which must not be counted twice. Pydantic AI's
    ``RequestUsage`` holds its cache in ``input_tokens`` (and wrote ``request_tokens`` before)."""
    from turncheck.integrations.formats.usage import reported_input

    bedrock = {"inputTokens": 5, "outputTokens": 1, "totalTokens": 9006, "cacheReadInputTokens": 8000,
               "cacheWriteInputTokens": 1000}  # fmt: skip  # Converse's TokenUsage, as the API reference names it
    assert reported_input(bedrock) == 9005
    assert reported_input({"inputTokens": 9000, "outputTokens": 1}) == 9000
    assert (
        reported_input({"inputTokens": 5, "cacheReadInputTokenCount": 9000}) == 9005
    )  # strands' older spelling
    assert reported_input({"request_tokens": 9000, "response_tokens": 1, "total_tokens": 9001}) == 9000
    pydantic_usage = pytest.importorskip("pydantic_ai.usage")
    usage = pydantic_usage.RequestUsage(input_tokens=9000, cache_read_tokens=8000, cache_write_tokens=900)
    assert reported_input(usage.model_dump() if hasattr(usage, "model_dump") else vars(usage)) == 9000
    anthropic_chat = pytest.importorskip("litellm.llms.anthropic.chat.transformation")
    litellm_usage = anthropic_chat.AnthropicConfig().calculate_usage(
        {
            "input_tokens": 5,
            "output_tokens": 1,
            "cache_read_input_tokens": 9000,
            "cache_creation_input_tokens": 0,
        },
        None,
    )
    dumped = litellm_usage.model_dump()
    assert dumped["cache_read_input_tokens"] == 9000  # kept beside the prompt count that holds it
    assert reported_input(dumped) == 9005


@pytest.mark.parametrize(
    ("fmt", "document"),
    [("langsmith", {"id": "r1", "trace_id": "r1", "name": "llm", "run_type": "llm", "start_time": "2026-01-01T00:00:01",
                    "inputs": {"messages": [{"role": "user", "content": "hi"}]},
                    "outputs": {"choices": [{"message": {"role": "assistant", "content": "yo"}}]},
                    "extra": {"metadata": {"usage_metadata": {"input_tokens": 9000, "output_tokens": 1}}}}),
     ("langsmith", {"id": "r1", "trace_id": "r1", "name": "llm", "run_type": "llm", "start_time": "2026-01-01T00:00:01",
                    "inputs": {"messages": [{"role": "user", "content": "hi"}]},
                    "outputs": {"choices": [{"message": {"role": "assistant", "content": "yo"}}],
                                "usage": {"inputTokens": 5, "cacheReadInputTokens": 8995, "outputTokens": 1}}}),
     ("langfuse", [{"id": "g1", "traceId": "t", "type": "GENERATION", "startTime": "2026-01-01T00:00:01Z",
                    "input": [{"role": "user", "content": "hi"}], "output": {"role": "assistant", "content": "yo"},
                    "usageDetails": {"prompt_tokens": 9000, "completion_tokens": 1}}])],
    ids=["langsmith-run-tree-metadata", "langsmith-bedrock-usage", "langfuse-openai-usage-details"],
)  # fmt: skip
def test_usage_in_the_other_places_a_trace_keeps_it(
    fmt: str, document: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tiny messages, 9 000 input tokens reported where the SDK put them: LangSmith's
    ``RunTree.set(usage_metadata=…)`` (``extra.metadata``), a Bedrock completion's ``usage``, a
    Langfuse generation ingested with OpenAI's usage schema. Each was read as no count — a clean
    ``lint -b 8999``."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(document))
    code, report = lint(path, fmt, 8999, capsys)
    assert code == 1 and [c["reported"] for c in report["costs"]] == [9000]
    assert lint(path, fmt, 9000, capsys)[0] == 0


def test_a_strands_span_with_its_cache_writes_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """strands-agents copies Bedrock's ``inputTokens`` (cache excluded) and writes the cache writes
    as ``gen_ai.usage.cache_write_input_tokens``: 5 input tokens beside 9 000 written."""
    attrs = {"gen_ai.provider.name": "aws.bedrock", "gen_ai.conversation.id": "c", "gen_ai.usage.input_tokens": 5,
             "gen_ai.usage.cache_read_input_tokens": 0, "gen_ai.usage.cache_write_input_tokens": 9000}  # fmt: skip
    path = console_file(tmp_path / "s.json", record([([user("hi")], [answer("yo")], attrs)]))
    code, report = lint(path, "otel", 9004, capsys)
    assert code == 1 and report["costs"][0]["reported"] == 9005
    assert lint(path, "otel", 9005, capsys)[0] == 0


def test_pydantic_ai_and_langchain_histories_are_judged_on_the_usage_they_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each answer of a Pydantic AI history (``RequestUsage``) or of LangChain's
    ``messages_to_dict`` (``usage_metadata``) carries the input count of the request that produced
    it. Tiny messages, 9 100 tokens reported on the second answer: ``-b 9099`` fails there (the
    first, 9 000, fits), ``-b 9100`` passes; both were refused ("holds none") before. The system
    prompt the history keeps is each request's frame (costed, not reported − messages)."""
    messages = pytest.importorskip("pydantic_ai.messages")
    usage = pytest.importorskip("pydantic_ai.usage")
    lc = pytest.importorskip("langchain_core.messages")
    history = []
    for i, n in enumerate((9000, 9100)):
        first = [messages.SystemPromptPart(SYSTEM)] if i == 0 else []
        history += [messages.ModelRequest(parts=[*first, messages.UserPromptPart(f"q{i}")]),
                    messages.ModelResponse(parts=[messages.TextPart("a")], model_name="claude-sonnet-4-5",
                                           usage=usage.RequestUsage(input_tokens=n, cache_read_tokens=n - 10))]  # fmt: skip
    pyd = tmp_path / "pyd.json"
    pyd.write_bytes(messages.ModelMessagesTypeAdapter.dump_json(history))
    chain = [lc.SystemMessage(SYSTEM), lc.HumanMessage("q0"), lc.AIMessage("a", usage_metadata={"input_tokens": 9000, "output_tokens": 1, "total_tokens": 9001}),
             lc.HumanMessage("q1"), lc.AIMessage("a", usage_metadata={"input_tokens": 9100, "output_tokens": 1, "total_tokens": 9101})]  # fmt: skip
    langchain = tmp_path / "lc.json"
    langchain.write_text(json.dumps(lc.messages_to_dict(chain)))
    for path, fmt in ((pyd, "pydantic-ai"), (langchain, "langchain")):
        code, report = lint(path, fmt, 9099, capsys)
        assert code == 1 and [c["reported"] for c in report["costs"]] == [9000, 9100], fmt
        assert report["counts"]["over-budget"] == 1
        assert ("record 4" if fmt == "pydantic-ai" else "record 5") in report["examples"]["over-budget"][0]
        second = report["costs"][1]
        assert second["messages"] < 10 and second["frame_from"] == "trace" and 200 < second["frame"] < 400
        assert lint(path, fmt, 9100, capsys)[0] == 0
        assert lint(path, fmt, None, capsys)[0] == 0  # the usage shown, no budget judged


@pytest.mark.parametrize("by_alias", [False, True])
def test_an_adk_session_is_judged_on_the_usage_its_model_events_carry(
    by_alias: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real ADK ``Session``: the model's event carries Gemini's ``usage_metadata``, whose
    ``prompt_token_count`` already holds the cached content (8 000 of 9 000 here, not added)."""
    adk = pytest.importorskip("google.adk.events")
    sessions = pytest.importorskip("google.adk.sessions")
    genai = pytest.importorskip("google.genai.types")
    events = [
        adk.Event(author="user", invocation_id="i1", content=genai.Content(role="user", parts=[genai.Part(text="hi")])),
        adk.Event(author="agent", invocation_id="i1", model_version="gemini-2.5-flash",
                  content=genai.Content(role="model", parts=[genai.Part(text="yo")]),
                  usage_metadata=genai.GenerateContentResponseUsageMetadata(
                      prompt_token_count=9000, cached_content_token_count=8000, candidates_token_count=1)),
    ]  # fmt: skip
    path = tmp_path / "session.json"
    path.write_text(
        sessions.Session(id="s1", app_name="a", user_id="u", events=events).model_dump_json(by_alias=by_alias)
    )
    code, report = lint(path, "adk", 8999, capsys)
    assert code == 1 and [c["reported"] for c in report["costs"]] == [9000]
    assert report["costs"][0]["model"] == "gemini-2.5-flash"
    assert lint(path, "adk", 9000, capsys)[0] == 0
