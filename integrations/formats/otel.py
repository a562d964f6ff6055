"""``--from otel``: OpenTelemetry GenAI spans — OTLP JSON as the collector's file exporter writes
it (``{"resourceSpans": [{"scopeSpans": [{"spans": […]}]}]}``, one document per line or one
document), or spans as ``opentelemetry-sdk`` writes them (``ReadableSpan.to_json``, which its
``ConsoleSpanExporter`` prints one after another; or a JSON list of them). A request whose
messages are on the ``gen_ai.client.inference.operation.details`` event instead reads the same:
a span event of that name, or a log record with that event name (an OTLP ``{"resourceLogs": …}``
document, or the SDK's ``LogRecord.to_json``), its attributes the span's (:func:`log_as_span`).

A span whose ``gen_ai.operation.name`` is a model call (``chat``, ``generate_content``,
``text_completion``) and that carries ``gen_ai.input.messages`` is one request: that attribute
(a JSON string, as the GenAI semantic conventions record it) is the exact window sent, and
``gen_ai.output.messages`` what the model answered (its first choice is the one kept). Messages are ``{"role", "parts"}``; parts are
``text``, ``tool_call`` (a CALL; its ``id`` is optional, so an id-less call pairs by name and
order as Gemini's do) and ``tool_call_response`` (a RESULT, in a ``tool`` or ``user`` message,
where it stands among the message's text parts);
``reasoning`` / ``thinking`` parts are the model's own and skipped, ``system`` messages are the
frame (with ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions``: a request's frame,
costed beside ``gen_ai.usage.input_tokens`` — the older conventions' ``gen_ai.usage.prompt_tokens`` —
the input the provider reported). A ``compaction`` part (semantic-conventions-genai PR #162: ``{"type": "compaction", "id",
"content"}`` in the message the provider returned it in; its ``content`` usually absent, the
provider's opaque continuity value) is a SUMMARY covering every earlier event of the conversation,
as Anthropic's block is. Any other part — ``blob``, ``file``, ``uri``, ``server_tool_call``, a type
the conventions add later — is opaque content
(:meth:`~models.chat_log.SessionBuilder.keep_opaque`), never a refusal; a ``tool_call`` outside an
assistant message or a ``tool_call_response`` inside one is refused by name (kept opaque, it would
hide an unpaired call or result: a false clean). ``gen_ai.conversation.id`` (else the trace id) is the session. Spans are taken in start
time order, then span id, so the same file always reads the same; other spans (agents, tools)
are not requests and are skipped. The requests are checked as sent and the log rebuilt from each
conversation's last call (:mod:`models.sent_windows`); ``gen_ai.provider.name`` (or the older
``gen_ai.system``) chooses each request's provider rules.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import string
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.usage import otel_input
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import Imported, LogFormat, read_text, register_format
from turncheck.models.sent_windows import (
    SentRequest,
    TraceRecords,
    frame_text,
    model_of,
    sent_log,
    system_texts,
)

MODEL_CALLS = ("chat", "generate_content", "text_completion")
SKIPPED_PARTS = ("reasoning", "thinking")
PROVIDERS = {"openai": "openai-chat", "azure.ai.openai": "openai-chat", "az.ai.openai": "openai-chat",
             "anthropic": "anthropic", "gcp.gemini": "gemini", "gcp.vertex_ai": "gemini",
             "gcp.gen_ai": "gemini", "gemini": "gemini", "vertex_ai": "gemini",
             "aws.bedrock": "bedrock"}  # fmt: skip
"""``gen_ai.provider.name`` / ``gen_ai.system`` values → the provider rules a request answers to."""
WANTED = ("gen_ai.operation.name", "gen_ai.conversation.id", "gen_ai.provider.name", "gen_ai.system",
          "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.request.model",
          "gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
          "gen_ai.system_instructions", "gen_ai.tool.definitions", "gen_ai.usage.cache_read.input_tokens",
          "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_read_input_tokens",
          "gen_ai.usage.cache_creation_input_tokens", "gen_ai.usage.cache_write_input_tokens")  # fmt: skip
NOT_OTEL = 'expected OTLP JSON {"resourceSpans": […]} or opentelemetry-sdk spans (to_json)'
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def documents(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The JSON documents of ``text`` one after another (JSON lines, one document, or the SDK's
    pretty-printed spans back to back), each with the line it starts on."""
    decoder = json.JSONDecoder()
    pos, line, counted = 0, 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos == len(text):
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{path}:{line}: malformed JSON ({exc.msg})") from None
        except RecursionError:
            raise ImportFormatError(f"{path}:{line}: JSON nested too deeply") from None
        except ValueError as exc:
            raise ImportFormatError(
                f"{path}:{line}: unreadable JSON ({str(exc).splitlines()[0][:80]})"
            ) from None
        yield line, value


def listed(value: Any, key: str, where: str) -> list[Any]:
    items = value.get(key, [])
    if not isinstance(items, list):
        raise ImportFormatError(f"{where}: {key!r} must be a list, got {type(items).__name__}")
    return items


DETAILS = "gen_ai.client.inference.operation.details"
"""The GenAI event holding a request's messages when they are not on its span's attributes: a span
event of that name, or a log record (the Events API) — its attributes are the span's."""


def log_as_span(record: Mapping[str, Any], otlp: bool, where: str) -> Mapping[str, Any]:
    """A ``gen_ai.client.inference.operation.details`` log record (OTLP ``logRecords`` item, or the
    SDK's ``to_json``) as the span it records: its ids, its time, its attributes. Without a trace id
    (emitted outside a span) its ids are a digest of the record, so each is its own conversation
    unless ``gen_ai.conversation.id`` joins them; without a span id it is zero, so records of one
    time keep their order in the file."""
    own = hashlib.blake2b(
        json.dumps(record, sort_keys=True, default=str).encode(), digest_size=16
    ).hexdigest()
    if otlp:
        time = record.get("timeUnixNano") or record.get("observedTimeUnixNano")
        return {"traceId": valid_id(record.get("traceId")) or own[:32], "spanId": valid_id(record.get("spanId")) or "0" * 16,
                "startTimeUnixNano": time, "attributes": record.get("attributes")}  # fmt: skip
    context = {
        "trace_id": valid_id(record.get("trace_id")) or own[:32],
        "span_id": valid_id(record.get("span_id")) or "0" * 16,
    }
    time = record.get("timestamp") or record.get("observed_timestamp")
    return {"context": context, "start_time": time, "attributes": record.get("attributes")}


def valid_id(value: Any) -> Any:
    """A log record's trace or span id, or ``None`` for an absent or all-zero one (the SDK writes
    ``0x000…`` for a record emitted outside a span: OTel's invalid id, no trace to join)."""
    if not value or isinstance(value, str) and not value.removeprefix("0x").strip("0=A"):
        return None
    return value


def is_details_log(value: Any) -> bool:
    """Whether ``value`` is one log record of :data:`DETAILS` (OTLP JSON's or the SDK's)."""
    return isinstance(value, Mapping) and DETAILS in (value.get("eventName"), value.get("event_name"))


def logs_of(value: Mapping[str, Any], where: str) -> Iterator[tuple[Mapping[str, Any], bool]]:
    """An OTLP logs document's :data:`DETAILS` records, as spans (other log records are skipped)."""
    for resource in listed(value, "resourceLogs", where):
        for scope in listed(resource if isinstance(resource, Mapping) else {}, "scopeLogs", where):
            for record in listed(scope if isinstance(scope, Mapping) else {}, "logRecords", where):
                if not isinstance(record, Mapping):
                    raise ImportFormatError(
                        f"{where}: a log record must be an object, got {type(record).__name__}"
                    )
                if is_details_log(record):
                    yield log_as_span(record, True, where), True


def spans_of(value: Any, where: str) -> Iterator[tuple[Mapping[str, Any], bool]]:
    """The spans of one document, each with whether it is OTLP-shaped (else the SDK's); a
    :data:`DETAILS` log record is the span it records (:func:`log_as_span`)."""
    if isinstance(value, Mapping) and "resourceLogs" in value:
        yield from logs_of(value, where)
    elif is_details_log(value) and "event_name" in value:
        yield log_as_span(value, False, where), False
    elif isinstance(value, Mapping) and "event_name" in value and "observed_timestamp" in value:
        return  # another log record of the SDK's: not a request
    elif isinstance(value, list) and all(
        isinstance(v, Mapping) and isinstance(v.get("context"), Mapping) for v in value
    ):
        yield from ((v, False) for v in value)
    elif isinstance(value, Mapping) and "resourceSpans" in value:
        for resource in listed(value, "resourceSpans", where):
            for scope in listed(resource if isinstance(resource, Mapping) else {}, "scopeSpans", where):
                for span in listed(scope if isinstance(scope, Mapping) else {}, "spans", where):
                    if not isinstance(span, Mapping):
                        raise ImportFormatError(
                            f"{where}: a span must be an object, got {type(span).__name__}"
                        )
                    yield span, True
    elif isinstance(value, Mapping) and isinstance(value.get("context"), Mapping):
        yield value, False
    else:
        raise ImportFormatError(f"{where}: {NOT_OTEL}")


def hex_id(value: Any, size: int, what: str, where: str) -> str:
    """A trace or span id as lowercase hex: OTLP JSON writes hex, the SDK ``0x``-prefixed hex,
    protobuf's JSON mapping base64."""
    if value is None or value == "":
        raise ImportFormatError(f"{where}: a span without a {what}")
    if isinstance(value, str):
        digits = value.removeprefix("0x").lower()
        if len(digits) == 2 * size and all(c in string.hexdigits for c in digits):
            return digits
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            return raw.hex()
    raise ImportFormatError(f"{where}: a span's {what} is not a {2 * size}-digit hex id: {str(value)[:40]!r}")


def start_ns(span: Mapping[str, Any], otlp: bool, where: str) -> int:
    value = span.get("startTimeUnixNano" if otlp else "start_time")
    try:
        if otlp and (isinstance(value, int) or isinstance(value, str) and value.isdigit()):
            return int(value)
        if not otlp and isinstance(value, str):
            return (datetime.fromisoformat(value) - EPOCH) // timedelta(microseconds=1) * 1000
    except (ValueError, TypeError):
        pass
    raise ImportFormatError(f"{where}: a span without a readable start time, got {str(value)[:40]!r}")


def any_value(value: Any, key: str, where: str) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": …}`` …) as a plain value."""
    if not isinstance(value, Mapping) or len(value) > 1:
        raise ImportFormatError(f"{where}: attribute {key!r} is not an OTLP AnyValue")
    kind, inner = next(iter(value.items()), ("", None))
    if kind in ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue", ""):
        return inner
    if kind == "arrayValue" and isinstance(inner, Mapping):
        return [any_value(v, key, where) for v in listed(inner, "values", where)]
    if kind == "kvlistValue" and isinstance(inner, Mapping):
        return {str(kv.get("key")): any_value(kv.get("value"), key, where) for kv in listed(inner, "values", where)
                if isinstance(kv, Mapping)}  # fmt: skip
    raise ImportFormatError(f"{where}: attribute {key!r} holds an unknown OTLP value {kind!r}")


def attributes(span: Mapping[str, Any], otlp: bool, where: str) -> dict[str, Any]:
    """The GenAI attributes of a span (the others are not read), with those of its
    :data:`DETAILS` event when the span's own hold no ``gen_ai.input.messages``."""
    attrs = own_attributes(span, otlp, where)
    events = span.get("events")
    if "gen_ai.input.messages" not in attrs and isinstance(events, list):
        for event in events:
            if isinstance(event, Mapping) and event.get("name") == DETAILS:
                attrs.update(own_attributes(event, otlp, f"{where}: event {DETAILS}"))
    return attrs


def own_attributes(span: Mapping[str, Any], otlp: bool, where: str) -> dict[str, Any]:
    """The GenAI attributes a span (or one of its events) holds itself."""
    raw = span.get("attributes")
    raw = ([] if otlp else {}) if raw is None else raw
    if otlp and isinstance(raw, list):
        pairs = [(kv.get("key"), kv.get("value")) for kv in raw if isinstance(kv, Mapping)]
        try:
            return {k: any_value(v, k, where) for k, v in pairs if k in WANTED}
        except RecursionError:
            raise ImportFormatError(f"{where}: an attribute nested too deeply") from None
    if not otlp and isinstance(raw, Mapping):
        return {k: raw[k] for k in WANTED if k in raw}
    raise ImportFormatError(f"{where}: a span's attributes must be {'a list' if otlp else 'an object'}")


def messages(attrs: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages``: a JSON string (or, structured, a list)."""
    value = attrs.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except RecursionError:
            raise ImportFormatError(f"{where}: {key} nested too deeply") from None
        except ValueError as exc:
            raise ImportFormatError(f"{where}: {key} is not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(value, list):
        raise ImportFormatError(f"{where}: {key} must be a JSON list of messages, got {type(value).__name__}")
    return value


def otel_request(span: Mapping[str, Any], otlp: bool, here: str) -> tuple[int, str, SentRequest] | None:
    """One span (OTLP-shaped, else the SDK's), read at ``here``: its start time, span id and the
    request it records; ``None`` for a span that is not a model call with its messages."""
    trace = hex_id(span.get("traceId") if otlp else span["context"].get("trace_id"), 16, "trace id", here)
    sid = hex_id(span.get("spanId") if otlp else span["context"].get("span_id"), 8, "span id", here)
    where = f"{here}: trace {trace} span {sid}" if here else f"trace {trace} span {sid}"
    attrs = attributes(span, otlp, where)
    if attrs.get("gen_ai.operation.name") not in MODEL_CALLS or "gen_ai.input.messages" not in attrs:
        return None
    provider = attrs.get("gen_ai.provider.name", attrs.get("gen_ai.system"))
    inputs = messages(attrs, "gen_ai.input.messages", where)
    sent = SentRequest(str(attrs.get("gen_ai.conversation.id") or trace), where,
                       PROVIDERS.get(provider) if isinstance(provider, str) else None,
                       inputs, messages(attrs, "gen_ai.output.messages", where)[:1],
                       model_of(attrs.get("gen_ai.request.model", attrs.get("gen_ai.response.model"))),
                       otel_input(attrs), otel_frame(attrs, inputs))  # fmt: skip
    return start_ns(span, otlp, where), sid, sent


def span_records(document: Any, where: str) -> list[Mapping[str, Any]]:
    """The spans one document holds (an OTLP export line holds many), for ``lint --follow``."""
    return [span for span, _ in spans_of(document, where)]


def document_spans(record: Any) -> list[Any] | None:
    """The spans of a whole OTLP document (or a list of the SDK's spans) in start order; ``None``
    for one span (what ``lint_request`` reads alone)."""
    if not (isinstance(record, Mapping) and ("resourceSpans" in record or "resourceLogs" in record)
            or isinstance(record, list)):  # fmt: skip
        return None
    read = [(span, otlp) for span, otlp in spans_of(record, "document")]
    return [
        span for _, _, span in sorted((start_ns(s, o, "document"), i, s) for i, (s, o) in enumerate(read))
    ]


def span_request(span: Any, where: str) -> SentRequest | None:
    """One span as a tracing back-end holds it (OTLP JSON or the SDK's ``to_json``), alone."""
    if not isinstance(span, Mapping):
        raise ImportFormatError(f"{where or 'span'}: a span must be an object, got {type(span).__name__}")
    if is_details_log(span):
        span = log_as_span(span, "eventName" in span, where)
    read = otel_request(span, not isinstance(span.get("context"), Mapping), where)
    return None if read is None else read[2]


def read_otel(path: Path) -> Imported:
    calls: list[tuple[int, str, SentRequest]] = []
    record = 0
    for line, value in documents(path, read_text(path)):
        for span, otlp in spans_of(value, f"{path}:{line}"):
            record += 1
            read = otel_request(span, otlp, f"{path}:{line}: record {record}")
            if read is not None:
                calls.append(read)
    if not calls:
        raise ImportFormatError(
            f"{path}: no model-call span (gen_ai.operation.name {' / '.join(MODEL_CALLS)}) "
            "with gen_ai.input.messages (is message content capture on?)"
        )
    calls.sort(key=lambda c: c[:2])
    return sent_log([c[2] for c in calls], add_otel_message)


def otel_frame(attrs: Mapping[str, Any], inputs: list[Any]) -> str | None:
    """The frame a span shows: ``system`` messages and ``gen_ai.system_instructions`` (parts),
    then ``gen_ai.tool.definitions``; each a JSON string or structured. Unreadable: not shown."""
    extra: list[Any] = []
    for key in ("gen_ai.system_instructions", "gen_ai.tool.definitions"):
        value = attrs.get(key)
        try:
            extra.append(json.loads(value) if isinstance(value, str) else value)
        except (ValueError, RecursionError):
            extra.append(None)
    instructions, tools = extra
    system = system_texts(inputs)
    if isinstance(instructions, list):
        system += system_texts([{"role": "system", "parts": instructions}])
    return frame_text(system, tools)


def add_otel_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One GenAI message: ``role`` (system, user, assistant, tool) and its ``parts``."""
    if not isinstance(message, Mapping) or not isinstance(message.get("parts"), list):
        raise ImportFormatError(f"{where}: expected a message object with a 'parts' list")
    role = message.get("role")
    if role == "system":
        return
    if role not in ("user", "assistant", "tool"):
        raise ImportFormatError(
            f"{where}: unknown message role {role!r} (expected system, user, assistant or tool)"
        )
    texts: list[str] = []
    calls = False
    for part in message["parts"]:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(kind, str):
            raise ImportFormatError(f"{where}: a part without a 'type'")
        if kind == "compaction":
            content = part.get("content")
            b.summary(content if isinstance(content, str) else arguments_text(content or ""), where)
        elif kind == "text" and role != "tool":
            content = part.get("content") or ""  # absent when the instrumentation keeps no content
            if not isinstance(content, str):
                raise ImportFormatError(f"{where}: a text part's content must be a string")
            texts.append(content)
        elif kind == "tool_call" and role == "assistant":
            name, call_id = part.get("name"), part.get("id") or ""
            if not isinstance(name, str) or not isinstance(call_id, str):
                raise ImportFormatError(f"{where}: a tool_call part needs a string 'name' (and 'id')")
            b.call_by_name(name, call_id, arguments_text(part.get("arguments") or {}), where)
            calls = True
        elif kind == "tool_call_response" and role != "assistant":
            name, call_id = part.get("name"), part.get("id") or ""
            if not isinstance(call_id, str) or not call_id and not isinstance(name, str):
                raise ImportFormatError(f"{where}: a tool_call_response without an id")
            reply = part.get("response", part.get("result", ""))
            b.user_text(texts, where)  # text before a response stays before it
            b.result_by_name(
                str(name), call_id, reply if isinstance(reply, str) else arguments_text(reply), where
            )
        elif kind in ("tool_call", "tool_call_response"):  # opaque, it would hide its unpaired call or result
            raise ImportFormatError(
                f"{where}: a {kind} part in a{'n' if role == 'assistant' else ''} {role} message"
            )
        elif kind not in SKIPPED_PARTS:
            b.keep_opaque(kind, part, texts)
    if role == "assistant" and not calls:
        b.answer("".join(texts), where)
    elif role == "user":
        b.user_text(texts, where)


register_format(
    LogFormat(
        "otel",
        read_otel,
        "OpenTelemetry GenAI spans (gen_ai.input.messages / gen_ai.output.messages): OTLP JSON "
        "(collector file exporter) or opentelemetry-sdk to_json spans; every model call checked as sent",
        requests=TraceRecords(span_request, add_otel_message, split=span_records, holds=document_spans),
    )
)
