"""``--from otel`` on traces the real ``opentelemetry-sdk`` writes: an agent loop records each
model call as a span with the GenAI semantic conventions' attributes (``gen_ai.input.messages``
/ ``gen_ai.output.messages`` as JSON strings, ``gen_ai.conversation.id``), a TracerProvider
exports them in memory, and the SDK's ``ConsoleSpanExporter`` (its ``to_json`` spans) or the OTLP
encoder (the collector's ``resourceSpans`` JSON) writes the file. Every request is checked as it
was sent. Skipped without ``opentelemetry-sdk``."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from turncheck.cli.app import main
from turncheck.models.events import Event, read_jsonl
from turncheck.models.history import History
from turncheck.models.importers import import_events, import_log
from turncheck.models.message_spans import openai_message, spans
from turncheck.testing import well_formed

pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk is not installed")
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"
PARALLEL_LOG = ["USER", "CALL", "RESULT", "TERM", "USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]
TOOL = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}
Call = tuple[Sequence[Any], Sequence[Any], dict[str, str]]
"""One model call: the messages sent, the messages answered, its other attributes."""


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}


def calls(*cities: tuple[str, str]) -> dict[str, Any]:
    parts = [
        {"type": "tool_call", "id": cid, "name": "weather", "arguments": {"city": c}} for cid, c in cities
    ]
    return {"role": "assistant", "parts": parts, "finish_reason": "tool_call"}


def record(model_calls: Sequence[Call]) -> list[ReadableSpan]:
    """The spans of one agent run: an ``invoke_agent`` span around one ``chat`` span per call."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("weather-agent")
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for inputs, outputs, attrs in model_calls:
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "test-model",
                          INPUT: json.dumps(inputs), OUTPUT: json.dumps(outputs), **attrs}  # fmt: skip
            with tracer.start_as_current_span("chat test-model", kind=SpanKind.CLIENT, attributes=attributes):
                pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


def agent(questions: list[str], replies: list[dict[str, Any]], attrs: dict[str, str]) -> list[Call]:
    """The agent loop: send the conversation so far, run each tool_call, answer them all in one
    ``tool`` message, until the model answers in text."""
    messages: list[dict[str, Any]] = [{"role": "system", "parts": [{"type": "text", "content": "be brief"}]}]
    out: list[Call] = []
    for question in questions:
        messages.append(user(question))
        while True:
            reply = replies.pop(0)
            out.append((list(messages), [reply], attrs))
            messages.append(reply)
            uses = [p for p in reply["parts"] if p["type"] == "tool_call"]
            if not uses:
                break
            messages.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": p["id"], "response": TOOL[p["arguments"]["city"]]}
                for p in uses]})  # fmt: skip
    return out


def console_file(path: Path, spans_: Sequence[ReadableSpan]) -> Path:
    """What the SDK's ConsoleSpanExporter writes: each span's ``to_json``, one after another."""
    with path.open("w") as fh:
        ConsoleSpanExporter(out=fh).export(spans_)
    return path


def otlp_tools() -> Any:
    """docs.tools.otel_trace (the OTLP JSON writer), when the SDK's OTLP encoder is installed."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder",
                        reason="opentelemetry-exporter-otlp-proto-common is not installed")  # fmt: skip
    from docs.tools import otel_trace

    return otel_trace


PARALLEL_CALLS = agent(
    ["weather in Oslo?", "and Rome and Paris?"],
    [calls(("call_1", "Oslo")), answer("rain in Oslo"), calls(("call_2", "Rome"), ("call_3", "Paris")),
     answer("sun and fog")],
    {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": "conv-1"},
)  # fmt: skip


@pytest.fixture(scope="module")
def parallel_spans() -> list[ReadableSpan]:
    return record(PARALLEL_CALLS)


def test_clean_trace_with_a_parallel_call(
    parallel_spans: list[ReadableSpan], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = console_file(tmp_path / "trace.json", parallel_spans)
    out = tmp_path / "trace.jsonl"
    assert main(["import", "--from", "otel", str(src), "-o", str(out)]) == 0
    events = read_jsonl(out)
    assert [e.kind.name for e in events] == PARALLEL_LOG
    assert {e.session for e in events} == {"conv-1"}
    assert [e.call_id for e in events if e.call_id] == [
        "call_1",
        "call_1",
        "call_2",
        "call_3",
        "call_2",
        "call_3",
    ]
    assert events[2].text == "rain" and events[9].text == "sun and fog"
    capsys.readouterr()
    assert main(["lint", "--from", "otel", str(src)]) == 0
    assert f"{src}: 10 events in 1 sessions, 4 model requests checked as sent" in capsys.readouterr().out


@pytest.mark.parametrize("hex_ids", [True, False], ids=["collector-hex", "protobuf-base64"])
def test_otlp_json_reads_as_the_sdk_spans_do(
    parallel_spans: list[ReadableSpan], hex_ids: bool, tmp_path: Path
) -> None:
    otlp = tmp_path / "otlp.jsonl"
    otlp.write_text(otlp_tools().otlp_json(parallel_spans, hex_ids))
    sdk = console_file(tmp_path / "sdk.json", parallel_spans)
    got, want = import_log("otel", otlp), import_log("otel", sdk)
    assert got.events == want.events and len(got.sent) == 4
    assert [w.where.split(": ", 2)[2] for w in got.sent] == [w.where.split(": ", 2)[2] for w in want.sent]


def test_spans_are_read_in_start_time_order(parallel_spans: list[ReadableSpan], tmp_path: Path) -> None:
    """An exporter writes a span when it ends (the agent span last); a file may be merged in any order."""
    shuffled = list(parallel_spans)
    random.Random(7).shuffle(shuffled)
    a = console_file(tmp_path / "a.json", parallel_spans)
    b = tmp_path / "b.json"
    b.write_text(json.dumps([json.loads(s.to_json()) for s in shuffled]))
    assert import_events("otel", a) == import_events("otel", b)


def test_a_request_that_started_on_an_orphaned_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trimmer kept the newest messages and sent a window opening on a tool result whose call it dropped."""
    sent = agent(
        ["weather in Oslo?"], [calls(("call_1", "Oslo")), answer("rain")], {"gen_ai.conversation.id": "c"}
    )
    (first, _, attrs), (window, output, _) = sent
    trimmed = record([(first, [calls(("call_1", "Oslo"))], attrs), (window[3:], output, attrs)])
    src = console_file(tmp_path / "trace.json", trimmed)
    assert main(["lint", "--from", "otel", str(src)]) == 1
    out = capsys.readouterr().out
    chat = [s for s in trimmed if s.name.startswith("chat")][1]
    span = f"trace {chat.context.trace_id:032x} span {chat.context.span_id:016x}"
    assert (
        f"request {src}:" in out and f"{span}: input message 1: seq 0 session c turn 0 RESULT call_1" in out
    )
    assert "orphan-result" in out and "result-not-next" in out
    log = tmp_path / "log.jsonl"
    assert main(["import", "--from", "otel", str(src), "-o", str(log)]) == 0
    assert [e.kind.name for e in read_jsonl(log)] == ["RESULT", "TERM"]  # the last call's window, as sent
    assert "orphan-result" in capsys.readouterr().err


def test_each_request_is_held_to_its_providers_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemini pairs id-less responses by order and refuses a turn with fewer responses than
    calls; the older ``gen_ai.system`` attribute names the provider as well."""
    call = {"role": "assistant", "parts": [{"type": "tool_call", "name": "weather", "arguments": {"city": c}} for c in ("Rome", "Paris")]}  # fmt: skip
    short = {"role": "user", "parts": [{"type": "tool_call_response", "name": "weather", "response": {"forecast": "sun"}}]}  # fmt: skip
    window = [user("Rome and Paris?"), call, short]
    src = console_file(
        tmp_path / "trace.json", record([(window, [answer("sun")], {"gen_ai.system": "gemini"})])
    )
    assert main(["lint", "--from", "otel", str(src)]) == 1
    out = capsys.readouterr().out
    assert "response-count-mismatch" in out and "input message 3: seq 3 session" in out
    assert main(["lint", "--from", "otel", "--provider", "openai-responses", str(src)]) == 1
    assert (
        "response-count-mismatch" not in capsys.readouterr().out
    )  # --provider holds every request to one API


def test_a_bedrock_span_is_held_to_bedrocks_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``aws.bedrock`` is the conventions' ``gen_ai.provider.name`` for Amazon Bedrock: a window that
    starts with the model's own message (a sliding window's cut, strands-agents harness-sdk#1749)
    is ``first-not-user`` under Bedrock's rules. Found with a held-out span (issue 51): the name
    was not mapped, so no Bedrock rule was applied to it."""
    window = [answer("Earlier I said hi."), user("go on")]
    attrs = {"gen_ai.provider.name": "aws.bedrock"}
    src = console_file(tmp_path / "trace.json", record([(window, [answer("ok")], attrs)]))
    assert main(["lint", "--from", "otel", str(src)]) == 1
    out = capsys.readouterr().out
    assert "first-not-user" in out and "Bedrock refuses it" in out, out


SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def genai_messages(history: History) -> list[dict[str, Any]]:
    """A drawn history as GenAI messages (results in ``tool`` messages, calls side by side)."""
    out: list[dict[str, Any]] = []
    for s in spans(history):
        m = openai_message(history, s)
        if m["role"] == "tool":
            out.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}]})  # fmt: skip
        elif m["role"] == "user":
            out.append(user(m["content"]))
        elif m.get("tool_calls"):
            out.append({"role": "assistant", "parts": [{"type": "tool_call", "id": t["id"], "name": "weather",
                        "arguments": t["function"]["arguments"]} for t in m["tool_calls"]]})  # fmt: skip
        else:
            out.append(answer(m["content"]))
    return out


def structure(events: list[Event]) -> list[tuple[str, str | None, int]]:
    firsts: dict[int, int] = {}
    for e in events:
        firsts.setdefault(e.turn, len(firsts))
    return [(e.kind.name, e.call_id, firsts[e.turn]) for e in events]


@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_round_trips_the_structure(events: list[Event], tmp_path: Path) -> None:
    """One span per assistant message (its input all the messages before it): the log rebuilt
    from the last call is the history drawn."""
    messages = genai_messages(History(events))
    asked: list[tuple[list[Any], list[Any], dict[str, str]]] = [
        (messages[:k], [m], {}) for k, m in enumerate(messages) if m["role"] == "assistant"
    ]
    if not asked or asked[-1][0] + asked[-1][1] != messages:
        asked.append((messages, [], {}))
    src = console_file(tmp_path / "trace.json", record(asked))
    assert structure(import_events("otel", src)) == structure(events)


def test_the_example_trace_is_what_its_generator_records(tmp_path: Path) -> None:
    """examples/your-agent/trace.jsonl (docs/your-agent.md lints it) is regenerated byte for byte."""
    tools = otlp_tools()
    assert tools.main(["--out", str(tmp_path / "trace.jsonl")]) == 0
    assert (tmp_path / "trace.jsonl").read_bytes() == tools.TRACE.read_bytes()
