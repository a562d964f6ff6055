"""``turncheck.lint_request``: one span, observation or run checked where traces arrive (issue 51,
item 5), and the evaluators docs/your-agent.md shows (``examples/evaluators/``), each run on
payloads the real SDKs recorded, offline: the Langfuse and LangSmith exports of
``docs.tools.trace_exports`` and spans recorded by ``opentelemetry-sdk``.

Its findings are exactly those ``lint --from FORMAT`` reports for the same request of a file."""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from test_import_otel import answer, calls, record, user

import turncheck
from turncheck.cli.app import main
from turncheck.models import request_lint
from turncheck.models.chat_log import ImportFormatError
from turncheck.models.importers import import_log
from turncheck.models.sent_windows import lint_imported

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "examples" / "traces"
SESSION = re.compile(r" session \S+")
TRACE_FILES = [("langfuse", "langfuse-session.json"), ("langfuse", "langfuse-trimmed.json"),
               ("langsmith", "langsmith-runs.jsonl"), ("langsmith", "langsmith-trimmed.jsonl"),
               ("otel", "../your-agent/trace.jsonl")]  # fmt: skip


def example(name: str) -> ModuleType:
    """``examples/evaluators/NAME.py``, imported as a user's module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "evaluators" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def records(fmt: str, path: Path) -> list[Any]:
    """Each record of an exported file, as its back-end hands it to an evaluator."""
    if fmt == "langsmith":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if fmt == "langfuse":
        return [obs for trace in json.loads(path.read_text()) for obs in trace["observations"]]
    return [span for line in path.read_text().splitlines() for resource in json.loads(line)["resourceSpans"]
            for scope in resource["scopeSpans"] for span in scope["spans"]]  # fmt: skip


def test_the_docstring_example_runs() -> None:
    result = doctest.testmod(request_lint, verbose=False)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize(("fmt", "name"), TRACE_FILES)
def test_findings_are_lints_per_request(fmt: str, name: str) -> None:
    """Record by record, the same findings ``lint --from`` makes of the file's requests (the file's
    naming the record by its place in the file, the evaluator's by its ids)."""
    path = (TRACES / name).resolve()
    report = lint_imported(import_log(fmt, path), keep=1000)
    in_file = sorted((p, w) for p, ws in report.examples.items() for w in ws if w.startswith("request "))
    found = [f for r in records(fmt, path) for f in turncheck.lint_request(r, format=fmt)]
    assert len(found) == len(in_file)
    for f, (problem, where) in zip(sorted(found, key=lambda f: (f.problem, f.where)), in_file, strict=True):
        alone = SESSION.sub("", f.where.removeprefix("request "))  # a Langfuse observation's is its trace
        assert f.problem == problem and SESSION.sub("", where).endswith(alone), (f, where)
    assert bool(found) == ("trimmed" in name or "trace.jsonl" in name)


def test_the_langfuse_evaluator_scores_each_generation() -> None:
    """``langfuse.api.trace.get`` answers with the export, parsed as the SDK parses the API's JSON."""
    langfuse_api = pytest.importorskip("langfuse.api")
    from langfuse.api.core.pydantic_utilities import parse_obj_as

    evaluator = example("langfuse_evaluator")
    for name, zeros in (("langfuse-session.json", []), ("langfuse-trimmed.json", ["gen-3"])):
        exported = json.loads((TRACES / name).read_text())
        traces = {t["id"]: parse_obj_as(langfuse_api.TraceWithFullDetails, t) for t in exported}
        scored: list[dict[str, Any]] = []

        def create_score(scored: list[dict[str, Any]] = scored, **score: Any) -> None:
            scored.append(score)

        client = SimpleNamespace(api=SimpleNamespace(trace=SimpleNamespace(get=traces.__getitem__)),
                                 create_score=create_score)  # fmt: skip
        for trace_id in traces:
            evaluator.score_trace(client, trace_id)
        assert [s["observation_id"] for s in scored] == ["gen-1", "gen-2", "gen-3", "gen-4"]
        assert [s["observation_id"] for s in scored if s["value"] == 0] == zeros
        assert all(s["data_type"] == "BOOLEAN" and s["name"] == "context-structure" for s in scored)
        assert all("orphan-result" in s["comment"] for s in scored if s["value"] == 0)


def test_the_langsmith_evaluator_scores_each_run() -> None:
    schemas = pytest.importorskip("langsmith.schemas")
    evaluator = example("langsmith_evaluator")
    for name, zeros in (("langsmith-runs.jsonl", 0), ("langsmith-trimmed.jsonl", 1)):
        runs = [schemas.Run.model_validate_json(line) for line in (TRACES / name).read_text().splitlines()]
        results = [evaluator.context_structure.evaluate_run(run) for run in runs]
        assert [r.key for r in results] == ["context_structure"] * len(runs)
        assert sum(r.score == 0 for r in results) == zeros
        assert all("result-not-next" in (r.comment or "") for r in results if r.score == 0)


def nested_root(name: str) -> dict[str, Any]:
    """The export's root run holding its other runs as ``child_runs``, as ``read_run(…,
    load_child_runs=True)`` returns it and ``evaluate`` hands an evaluator the root run."""
    runs = [json.loads(line) for line in (TRACES / name).read_text().splitlines() if line.strip()]
    (root,) = [r for r in runs if not r.get("parent_run_id")]
    return {**root, "child_runs": [r for r in runs if r is not root]}


@pytest.mark.parametrize(("fmt", "name"), TRACE_FILES)
def test_a_container_is_each_model_call_it_holds(fmt: str, name: str) -> None:
    """Found with held-out payloads (issue 51): a whole Langfuse trace, a LangSmith root run with
    its child runs, an OTLP document handed to ``lint_request`` was no model call and came back
    ``[]`` — clean — whatever its calls held. Now each is the findings of the calls inside."""
    path = (TRACES / name).resolve()
    if fmt == "langsmith":
        containers = [nested_root(name)]
    elif fmt == "langfuse":
        containers = json.loads(path.read_text())
    else:
        containers = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    whole = sorted(str(f) for c in containers for f in turncheck.lint_request(c, format=fmt))
    alone = sorted(str(f) for r in records(fmt, path) for f in turncheck.lint_request(r, format=fmt))
    assert whole == alone
    assert bool(whole) == ("trimmed" in name or "trace.jsonl" in name)


def test_the_langsmith_evaluator_scores_the_root_run_evaluate_hands_it(tmp_path: Path) -> None:
    """``evaluate`` gives a run evaluator the root run, its model calls in ``child_runs``: the
    trimmed conversation scores 0 (it scored 1: a chain run is no model call), and ``lint --from
    langsmith`` reads the same nested export (it refused it: no model call)."""
    schemas = pytest.importorskip("langsmith.schemas")
    evaluator = example("langsmith_evaluator")
    for name, score in (("langsmith-runs.jsonl", 1), ("langsmith-trimmed.jsonl", 0)):
        root = schemas.Run.model_validate(nested_root(name))
        assert root.child_runs and root.run_type == "chain"
        result = evaluator.context_structure.evaluate_run(root)
        assert result.score == score, result
        path = tmp_path / name
        path.write_text(json.dumps(nested_root(name)))
        assert main(["lint", "--from", "langsmith", str(path), "-q"]) == 1 - score


def test_the_otel_exporter_reports_a_broken_span_and_passes_every_span_on() -> None:
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    processor = example("otel_processor")
    attrs = {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": "weather-1"}
    turn = [user("weather in Oslo?"), calls(("call_1", "Oslo")),
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rain"}]}]  # fmt: skip
    spans = record([(turn[:1], [turn[1]], attrs), (turn, [answer("rain")], attrs),
                    (turn[2:], [answer("rain")], attrs)])  # the last window opens on the result  # fmt: skip
    downstream = InMemorySpanExporter()
    reported: list[tuple[str, list[str]]] = []
    check = processor.ContextCheck(
        downstream, lambda span, found: reported.append((span.name, [f.problem for f in found]))
    )
    check.export(spans)
    assert reported == [("chat test-model", ["orphan-result", "result-not-next"])]
    assert len(downstream.get_finished_spans()) == len(spans) == 4  # the agent span too


def broken_turn() -> list[tuple[list[Any], list[Any], dict[str, str]]]:
    """Three model calls of one conversation; the last window opens on a tool result (its call
    trimmed away): an orphan the provider refuses."""
    attrs = {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": "weather-1"}
    turn = [user("weather in Oslo?"), calls(("call_1", "Oslo")),
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rain"}]}]  # fmt: skip
    return [
        (turn[:1], [turn[1]], attrs),
        (turn, [answer("rain")], attrs),
        (turn[2:], [answer("rain")], attrs),
    ]


def test_the_otel_span_processor_reports_a_broken_span_as_it_ends() -> None:
    """The SDK itself calls ``on_end``: a real ``TracerProvider`` with the example processor
    added, spans started and ended as an instrumented agent does."""
    pytest.importorskip(
        "opentelemetry.sdk.trace", reason="opentelemetry-sdk (the formats extra) is not installed"
    )
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import SpanKind
    from test_import_otel import INPUT, OUTPUT

    processor = example("otel_span_processor")
    reported: list[tuple[str, list[str]]] = []
    provider = TracerProvider()
    provider.add_span_processor(
        processor.ContextCheckProcessor(
            lambda span, found: reported.append((span.name, [f.problem for f in found]))
        )
    )
    tracer = provider.get_tracer("weather-agent")
    ended_before: list[int] = []
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for inputs, outputs, attrs in broken_turn():
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "test-model",
                          INPUT: json.dumps(inputs), OUTPUT: json.dumps(outputs), **attrs}  # fmt: skip
            with tracer.start_as_current_span("chat test-model", kind=SpanKind.CLIENT, attributes=attributes):
                pass
            ended_before.append(len(reported))  # reported when the span ended, not at shutdown
    provider.shutdown()
    assert reported == [("chat test-model", ["orphan-result", "result-not-next"])]
    assert ended_before == [0, 0, 1]


def test_the_otel_span_processor_on_recorded_spans() -> None:
    """Spans the SDK recorded (``ReadableSpan``), each handed to ``on_end``: a clean run reports
    nothing, the broken one its orphan, as ``lint_request`` names it."""
    pytest.importorskip(
        "opentelemetry.sdk.trace", reason="opentelemetry-sdk (the formats extra) is not installed"
    )
    processor = example("otel_span_processor")
    for calls_, expected in (
        (broken_turn()[:2], []),
        (broken_turn(), [["orphan-result", "result-not-next"]]),
    ):
        reported: list[list[str]] = []
        check = processor.ContextCheckProcessor(
            lambda span, found, into=reported: into.append([f.problem for f in found])
        )
        for span in record(calls_):
            check.on_start(span)
            check.on_end(span)
        assert check.force_flush() is True
        check.shutdown()
        assert reported == expected


def test_a_conversation_state_names_estimate_drift_once(tmp_path: Path) -> None:
    attrs: dict[str, Any] = {"gen_ai.conversation.id": "c", "gen_ai.usage.input_tokens": 5000}
    spans = record(
        [([user("hi")], [answer("a")], attrs), ([user("hi"), answer("a"), user("b")], [answer("c")], attrs)]
    )
    chat = [s for s in spans if s.name.startswith("chat")]
    alone = [[f.problem for f in turncheck.lint_request(s, budget=4000)] for s in chat]
    assert alone == [["over-budget", "estimate-drift"]] * 2
    state = turncheck.Conversations()
    shared = [[f.problem for f in turncheck.lint_request(s, budget=4000, state=state)] for s in chat]
    assert shared == [["over-budget", "estimate-drift"], ["over-budget"]]
    assert state.requests["c"] == 2
    state.close("c")
    assert [f.problem for f in turncheck.lint_request(chat[1], budget=4000, state=state)][
        -1
    ] == "estimate-drift"
    assert turncheck.lint_request(chat[0], budget=5000, state=state) == []


def test_what_is_not_a_model_call_or_not_the_format() -> None:
    agent_span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "startTimeUnixNano": "1",
                  "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}  # fmt: skip
    assert turncheck.lint_request(agent_span) == []
    assert turncheck.lint_request({"id": "t1", "run_type": "tool"}, format="langsmith") == []
    for bad, fmt, says in ((3, "otel", "a span must be an object"), ({"spanId": "x"}, "otel", "span"),
                              ({"type": "GENERATION"}, "langfuse", "without a string 'id'"),
                              ({"id": "r"}, "langsmith", "has no 'run_type'"),
                              ([], "openai-chat", "reads whole files")):  # fmt: skip
        with pytest.raises(ImportFormatError, match=says) as caught:
            turncheck.lint_request(bad, format=fmt)
        assert "\n" not in str(caught.value)


def compaction(summary: str) -> dict[str, Any]:
    """The message a provider returns its compaction in (semantic-conventions-genai PR #162)."""
    return {"role": "assistant", "parts": [{"type": "compaction", "id": "cmp_1", "content": summary}]}


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": text}]}


COMPACTED = compaction("The user asked for Oslo's weather; a lookup was started.")
OPEN_THEN_COMPACTED = [  # the call c1 is still running when the next request's history is compacted
    ([user("weather in Oslo?")], [calls(("c1", "Oslo"))]),
    ([COMPACTED, user("and Rome?")], [answer("Rome: sun")]),
]
LATE_ANSWER = [  # the compaction dropped c1, its answer comes after it: an orphan too
    ([user("weather in Oslo?")], [calls(("c1", "Oslo"))]),
    ([COMPACTED, tool("c1", "rain")], [answer("Oslo: rain")]),
]
ANSWERED_THEN_COMPACTED = [  # the same, c1 answered before the compaction: clean
    ([user("weather in Oslo?")], [calls(("c1", "Oslo"))]),
    ([user("weather in Oslo?"), calls(("c1", "Oslo")), tool("c1", "rain")], [answer("Oslo: rain")]),
    ([COMPACTED, user("and Rome?")], [answer("Rome: sun")]),
]
NO_COMPACTION = [  # c1 trimmed away without a summary: a trimmer's drop, no summary to blame
    ([user("weather in Oslo?")], [calls(("c1", "Oslo"))]),
    ([user("and Rome?")], [answer("Rome: sun")]),
]


@pytest.mark.parametrize(
    ("calls_", "expected"),
    [
        (OPEN_THEN_COMPACTED, [[], ["summary-covers-open-call"]]),
        (LATE_ANSWER, [[], ["orphan-result", "result-not-next", "summary-covers-open-call"]]),
        (ANSWERED_THEN_COMPACTED, [[], [], []]),
        (NO_COMPACTION, [[], []]),
    ],
)
def test_a_compaction_that_summarises_an_open_call_away_across_spans(
    calls_: list[tuple[list[Any], list[Any]]], expected: list[list[str]], tmp_path: Path
) -> None:
    """Left open by the last audit (issue 51 item 5, "a conversation-state object for multi-span
    use"): a call the model made in one request, summarised away by the next request's compaction
    while unanswered (claude-code#90036's in-flight subagents), was no finding at all — not from
    ``lint_request`` with a state, not from ``lint --from otel`` (each window alone holds no call).
    The state keeps each conversation's open calls; the file lint checks its requests the same way,
    and the two agree. Answered before the compaction, or dropped with no summary: nothing."""
    attrs = {"gen_ai.conversation.id": "conv-7", "gen_ai.provider.name": "anthropic"}
    spans = [s for s in record([(i, o, attrs) for i, o in calls_]) if s.name.startswith("chat")]
    state = turncheck.Conversations()
    found = [sorted(f.problem for f in turncheck.lint_request(s, state=state)) for s in spans]
    assert found == expected
    assert [f.problem for f in turncheck.lint_request(spans[-1])] == [
        p for p in expected[-1] if p != "summary-covers-open-call"
    ]  # alone, a span cannot know what the one before left open
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(s.to_json(indent=None) + "\n" for s in spans))
    report = lint_imported(import_log("otel", path), keep=1000)
    in_file = sorted(p for p, ws in report.examples.items() for w in ws if w.startswith("request "))
    assert in_file == sorted(p for ps in expected for p in ps)
    state.close("conv-7")
    assert state.open_calls == {} and turncheck.lint_request(spans[-1], state=state) == [
        f for f in turncheck.lint_request(spans[-1])
    ]


def test_a_compaction_inside_one_request_is_named_as_lint_names_it() -> None:
    """One span whose input holds a call, then the compaction, then the call's result: ``lint``
    names ``summary-covers-open-call`` from the request's rebuilt log; ``lint_request`` named only
    the window's pairing rules."""
    spans = record([([user("weather?"), calls(("c1", "Oslo")), COMPACTED, tool("c1", "rain")], [answer("rain")],
                     {"gen_ai.provider.name": "anthropic"})])  # fmt: skip
    chat = [s for s in spans if s.name.startswith("chat")][0]
    assert "summary-covers-open-call" in [f.problem for f in turncheck.lint_request(chat)]
    clean = record([([user("weather?"), calls(("c1", "Oslo")), tool("c1", "rain"), COMPACTED, user("more")],
                     [answer("ok")], {"gen_ai.provider.name": "anthropic"})])  # fmt: skip
    assert turncheck.lint_request([s for s in clean if s.name.startswith("chat")][0]) == []
