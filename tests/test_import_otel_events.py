"""``--from otel`` reads a request whose messages are on the GenAI event
``gen_ai.client.inference.operation.details`` instead of its span's attributes (semantic-conventions
gen-ai-events.md: "Chat history is reported on gen_ai.input.messages attribute on spans or
gen_ai.client.inference.operation.details event"): a span event of that name, or a log record
emitted with that ``event_name`` — written here by the real opentelemetry-sdk (span events through
the OTLP trace encoder, log records through the OTLP log encoder and the SDK's ``to_json``), with
messages as a JSON string and as structured values. Found auditing issue 51's held-out classes:
the event form was "no model-call span", exit 2, for a well-formed trace."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_import_otel import answer, calls, user

import turncheck
from turncheck.cli.app import main
from turncheck.models.importers import import_log

pytest.importorskip("opentelemetry.sdk._logs", reason="opentelemetry-sdk is not installed")
from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

DETAILS = "gen_ai.client.inference.operation.details"
Call = tuple[list[Any], list[Any]]


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": text}]}


CLEAN: list[Call] = [
    ([user("weather in Oslo?")], [calls(("c1", "Oslo"))]),
    ([user("weather in Oslo?"), calls(("c1", "Oslo")), tool("c1", "rain")], [answer("rain")]),
]
ORPHAN: list[Call] = [([user("weather in Oslo?"), tool("c1", "rain")], [answer("rain")])]


def details(inputs: list[Any], outputs: list[Any], structured: bool) -> dict[str, Any]:
    encode = (lambda v: v) if structured else json.dumps
    return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.conversation.id": "conv-e",
            "gen_ai.input.messages": encode(inputs), "gen_ai.output.messages": encode(outputs)}  # fmt: skip


def span_events(model_calls: Sequence[Call]) -> list[Any]:
    """Each call a ``chat`` span whose messages are on its DETAILS span event (as JSON strings: a
    span event's attributes take primitives and sequences of them only)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for inputs, outputs in model_calls:
        with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT,
                                          attributes={"gen_ai.operation.name": "chat"}) as span:  # fmt: skip
            attrs = details(inputs, outputs, False)
            span.add_event(DETAILS, {k: v for k, v in attrs.items() if k != "gen_ai.operation.name"})
    provider.shutdown()
    return list(exporter.get_finished_spans())


def log_records(model_calls: Sequence[Call], structured: bool) -> list[Any]:
    """Each call a DETAILS log record (the Events API), structured values as the SDK keeps them."""
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("agent")
    for i, (inputs, outputs) in enumerate(model_calls):
        logger.emit(event_name=DETAILS, attributes=details(inputs, outputs, structured), timestamp=1000 + i)
    provider.shutdown()
    return list(exporter.get_finished_logs())


def write(path: Path, form: str, model_calls: Sequence[Call]) -> Path:
    if form == "otlp-span-events":
        text = json.dumps(MessageToDict(encode_spans(span_events(model_calls))))
    elif form in ("otlp-logs", "otlp-logs-structured"):
        text = json.dumps(MessageToDict(encode_logs(log_records(model_calls, form.endswith("structured")))))
    else:  # the SDK's ConsoleLogRecordExporter: each record's to_json
        text = "\n".join(
            r.to_json(indent=None) for r in log_records(model_calls, form.endswith("structured"))
        )
    path.write_text(text + "\n", encoding="utf-8")
    return path


FORMS = ["otlp-span-events", "otlp-logs", "otlp-logs-structured", "sdk-logs", "sdk-logs-structured"]


@pytest.mark.parametrize("form", FORMS)
def test_the_event_form_lints_as_the_attribute_form(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Clean: exit 0, each request checked; an orphan result: exit 1, named as for the attribute
    form; ``lint_request`` on one record of each gives the same."""
    clean = write(tmp_path / "clean.json", form, CLEAN)
    assert main(["lint", "--from", "otel", str(clean)]) == 0
    out = capsys.readouterr().out
    assert "2 model requests checked as sent" in out and "clean:" in out, out
    broken = write(tmp_path / "broken.json", form, ORPHAN)
    assert main(["lint", "--from", "otel", str(broken)]) == 1
    out, err = capsys.readouterr()
    assert "orphan-result" in out and err == "", (out, err)
    assert {e.session for e in import_log("otel", broken).events} == {"conv-e"}
    document = json.loads(broken.read_text().splitlines()[0])
    assert "orphan-result" in [f.problem for f in turncheck.lint_request(document, format="otel")]


def test_other_log_records_are_not_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    provider.get_logger("agent").emit(
        event_name="gen_ai.evaluation.result", attributes={"gen_ai.evaluation.name": "x"}
    )
    provider.shutdown()
    path = tmp_path / "other.json"
    path.write_text(json.dumps(MessageToDict(encode_logs(list(exporter.get_finished_logs())))) + "\n")
    assert main(["lint", "--from", "otel", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no model-call span" in err, err


def test_lint_request_takes_the_sdk_objects_of_the_event_form() -> None:
    """What a log record processor or a span processor hands over: the SDK's own objects."""
    assert [f.problem for f in turncheck.lint_request(log_records(ORPHAN, True)[0])] == [
        "orphan-result",
        "result-not-next",
    ]
    assert [turncheck.lint_request(r) for r in log_records(CLEAN, False)] == [[], []]
    assert [f.problem for f in turncheck.lint_request(span_events(ORPHAN)[0])] == [
        "orphan-result",
        "result-not-next",
    ]


@pytest.mark.parametrize("form", ["otlp-logs", "sdk-logs"])
def test_records_outside_a_span_are_each_their_own_conversation(form: str, tmp_path: Path) -> None:
    """The SDK writes an all-zero trace id for a record emitted outside a span (OTel's invalid id):
    without ``gen_ai.conversation.id`` such records were one conversation, trace ``000…``."""
    calls_ = [([user("one?")], [answer("1")]), ([user("two?")], [answer("2")])]
    path = write(tmp_path / "logs.json", form, calls_)
    text = path.read_text()
    path.write_text(text.replace('"gen_ai.conversation.id"', '"x.unrelated"'))
    sessions = {e.session for e in import_log("otel", path).events}
    assert len(sessions) == 2 and not any(set(s) <= {"0"} for s in sessions), sessions
