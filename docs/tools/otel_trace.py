"""``examples/your-agent/trace.jsonl``: the OpenTelemetry trace docs/your-agent.md lints with
``--from otel``, recorded by the real ``opentelemetry-sdk`` and written as the collector's file
exporter writes OTLP JSON (one export request per line, hex ids).

A weather agent instrumented with the GenAI semantic conventions: one ``chat`` span per model
call, its ``gen_ai.input.messages`` the window sent. Its trimmer keeps the newest
:data:`KEEP` messages, so the last request opens on a tool result whose call it dropped. Ids come
from a counter and times are fixed, so the file is a pure function of this script:
``tests/test_import_otel.py`` regenerates it and compares bytes; ``python -m
docs.tools.otel_trace`` rewrites it (``--out FILE`` elsewhere).
"""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, use_span

TRACE = Path(__file__).resolve().parent.parent.parent / "examples" / "your-agent" / "trace.jsonl"
KEEP = 6
"""The trimmer's window: the newest messages, whatever they are."""
START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in ns
TOOL = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}


class CountingIds(IdGenerator):
    """Trace and span ids 1, 2, 3 … (the SDK's default is random)."""

    def __init__(self) -> None:
        self.last = 0

    def generate_span_id(self) -> int:
        self.last += 1
        return self.last

    def generate_trace_id(self) -> int:
        self.last += 1
        return self.last


def otlp_json(spans: Sequence[ReadableSpan], hex_ids: bool = True) -> str:
    """The spans as one OTLP export request in JSON, on one line: protobuf's JSON mapping, with
    ids in hex as OTLP/JSON (and the collector) write them unless ``hex_ids`` is false (base64)."""
    from google.protobuf.json_format import MessageToDict

    doc = MessageToDict(encode_spans(spans))
    for span in (s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]):
        for key in ("traceId", "spanId", "parentSpanId"):
            if hex_ids and key in span:
                span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def weather_agent() -> list[ReadableSpan]:
    """Two questions, the second answered by two parallel calls; every request sends the
    newest :data:`KEEP` messages."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource({"service.name": "weather-agent"}), id_generator=CountingIds()
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("weather-agent")
    replies = [
        [("call_1", "Oslo")],
        "Rain in Oslo.",
        [("call_2", "Rome"), ("call_3", "Paris")],
        "Sun and fog.",
    ]
    clock = iter(range(START, START + 10**12, 10**9))
    agent = tracer.start_span("invoke_agent weather", start_time=next(clock),
                              attributes={"gen_ai.operation.name": "invoke_agent"})  # fmt: skip
    messages: list[dict[str, Any]] = []
    with use_span(agent, end_on_exit=False):
        for question in ("Weather in Oslo?", "And in Rome and Paris?"):
            messages.append(text("user", question))
            while True:
                reply = replies.pop(0)
                if isinstance(reply, str):
                    answer = {**text("assistant", reply), "finish_reason": "stop"}
                else:
                    parts = [
                        {"type": "tool_call", "id": i, "name": "weather", "arguments": {"city": c}}
                        for i, c in reply
                    ]
                    answer = {"role": "assistant", "parts": parts, "finish_reason": "tool_call"}
                span = tracer.start_span("chat weather-model", kind=SpanKind.CLIENT, start_time=next(clock), attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "weather-model", "gen_ai.conversation.id": "weather-1",
                    "gen_ai.input.messages": json.dumps(messages[-KEEP:]),
                    "gen_ai.output.messages": json.dumps([answer])})  # fmt: skip
                span.end(end_time=next(clock))
                messages.append(answer)
                if isinstance(reply, str):
                    break
                messages += [{"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": TOOL[c]}]}
                             for i, c in reply]  # fmt: skip
    agent.end(end_time=next(clock))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=TRACE, help="where to write the trace")
    args = parser.parse_args(argv)
    args.out.write_text(otlp_json(weather_agent()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
