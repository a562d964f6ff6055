"""``--from langfuse``: Langfuse trace exports — a trace with its ``observations`` (``GET
/api/public/traces/{id}``, the UI's JSON export), a list of them or ``{"data": […]}``, or JSON
lines of traces; the shapes of the ``langfuse`` SDK's ``TraceWithFullDetails`` and
``ObservationsView`` (camelCase, as the API writes them). Bare observations (``GET
/api/public/observations``: no ``sessionId`` on them) make one conversation per ``traceId``.

Every ``GENERATION`` observation is one model call: its ``input`` the Chat Completions messages
sent (a list, or ``{"messages": […], "tools": …}`` as Langfuse's OpenAI integration records a
call with tools), its ``output`` the reply. The traces of one ``sessionId`` (else each trace
alone) are one conversation, its calls in ``startTime`` order; each call is checked as sent and
the log is rebuilt from the last one (:mod:`models.sent_windows`). Other observations (spans,
events, tools) are the agent's own bookkeeping and skipped. A generation's ``usageDetails`` input
types, summed (:func:`usage_types_input`; else its older ``usage`` ``input``, else the ``usage``
of an output that is a whole completion) are the input the provider reported; its system messages and
``tools`` are the request's frame (:class:`~models.sent_windows.RequestCost`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.anthropic import add_anthropic_message
from turncheck.integrations.formats.openai_chat import add_openai_message
from turncheck.integrations.formats.otel import documents
from turncheck.integrations.formats.usage import count_of, first_reported
from turncheck.models.chat_log import ImportFormatError, SessionBuilder
from turncheck.models.importers import AddRecord, Imported, LogFormat, read_text, register_format
from turncheck.models.sent_windows import (
    SentRequest,
    TraceRecords,
    frame_text,
    model_of,
    sent_log,
    system_texts,
)

Timed = tuple[datetime, SentRequest]


def iso_time(value: Any, where: str, field: str) -> datetime:
    """An ISO 8601 time as an aware datetime (naive ones are UTC), to order the calls by."""
    if not isinstance(value, str):
        raise ImportFormatError(f"{where}: {field} must be an ISO 8601 time string")
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise ImportFormatError(f"{where}: {field} {value[:40]!r} is not an ISO 8601 time") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def chat_reply(output: Any, where: str) -> list[Any]:
    """A call's output as Chat Completions messages: a message, a list of them, a completion
    (``choices``: the first is the one an agent goes on with), or plain text; none for none."""
    if output is None:
        return []
    if isinstance(output, str):
        return [{"role": "assistant", "content": output}]
    if isinstance(output, list):
        return output
    if isinstance(output, Mapping) and isinstance(output.get("choices"), list):
        first = output["choices"][0] if output["choices"] else None
        if not isinstance(first, Mapping) or not isinstance(first.get("message"), Mapping):
            raise ImportFormatError(f"{where}: output choices without a message")
        return [first["message"]]
    if isinstance(output, Mapping) and "role" in output:
        return [output]
    raise ImportFormatError(f"{where}: output is not a chat message, a completion or text")


ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "server_tool_use", "mcp_tool_use", "thinking", "redacted_thinking"}
)
"""Content blocks only the Messages API has: a message holding one was recorded as Anthropic's."""


def anthropic_shaped(message: Any) -> bool:
    """Whether a recorded message is a Messages API one (its content blocks name ``tool_use``,
    ``tool_result``, …), as a tracer records an Anthropic call's ``messages`` as they were passed."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") in ANTHROPIC_BLOCKS for p in content
    )


def add_chat_message(b: SessionBuilder, message: Any, where: str) -> None:
    """A recorded model call's message: Chat Completions', or the Messages API's when it is shaped
    so (:func:`anthropic_shaped`) — its ``tool_use`` / ``tool_result`` blocks paired, never opaque."""
    if anthropic_shaped(message):
        add_anthropic_message(b, message, where)
    else:
        add_openai_message(b, message, where)


def request_provider(inputs: list[Any]) -> str:
    """The rules a recorded request answers to: Anthropic's when its messages are the Messages API's."""
    return "anthropic" if any(anthropic_shaped(m) for m in inputs) else "openai-chat"


def in_send_order(calls: list[Timed], where: str, add: AddRecord = add_chat_message) -> Imported:
    """The log of ``calls`` sorted by start time (file order breaking ties)."""
    if not calls:
        raise ImportFormatError(f"{where}: no model call in the export")
    calls.sort(key=lambda c: c[0])
    return sent_log([c[1] for c in calls], add)


def usage_types_input(details: Any) -> int | None:
    """A generation's input as Langfuse counts it: the sum of its ``usageDetails`` whose usage type
    names ``input`` (its docs: "Langfuse summarizes all usage types that include the string input
    as input usage types" — ``input``, ``input_cached_tokens``…, or an ingested Anthropic usage's
    ``input_tokens`` and ``cache_read_input_tokens``); ``None`` when none does."""
    if not isinstance(details, Mapping):
        return None
    counts = [count_of(v) for k, v in details.items() if isinstance(k, str) and "input" in k]
    total = sum(n for n in counts if n is not None)
    return total or None


def reply_usage(output: Any) -> Any:
    """The ``usage`` of a call's output when it is a whole response body (a completion)."""
    return output.get("usage") if isinstance(output, Mapping) else None


def traces_of(value: Any, where: str) -> list[Any]:
    if isinstance(value, Mapping) and "observations" in value:
        return [value]
    if isinstance(value, Mapping) and isinstance(value.get("data"), list):
        return value["data"]
    if isinstance(value, list):
        return value
    raise ImportFormatError(
        f"{where}: expected a Langfuse trace with 'observations', a list of traces, or {{'data': […]}}"
    )


def input_messages(value: Any, where: str) -> list[Any]:
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        return value["messages"]
    if not isinstance(value, list):
        raise ImportFormatError(f"{where}: input is not a list of chat messages")
    return value


def read_langfuse(path: Path) -> Imported:
    calls: list[Timed] = []
    for line, value in documents(path, read_text(path)):
        one = isinstance(value, Mapping) and "observations" in value
        for n, trace in enumerate(traces_of(value, f"{path}:{line}"), start=1):
            at = f"{path}:{line}" + ("" if one else f": trace {n}")
            if not isinstance(trace, Mapping) or not isinstance(trace.get("id"), str):
                raise ImportFormatError(f"{at}: expected a trace object with a string 'id'")
            if "type" in trace and "observations" not in trace:  # GET /api/public/observations
                trace = {"id": str(trace.get("traceId") or trace["id"]), "observations": [trace]}
                at = f"{path}:{line}"  # the observation id names it
            if not isinstance(trace.get("observations"), list):
                raise ImportFormatError(f"{at}: trace {trace['id']!r} has no 'observations' list")
            session = trace.get("sessionId") or trace["id"]
            if not isinstance(session, str):
                raise ImportFormatError(f"{at}: sessionId must be a string")
            for obs in trace["observations"]:
                if isinstance(obs, str):
                    raise ImportFormatError(
                        f"{at}: observations are ids only (the trace list); export each trace with "
                        "GET /api/public/traces/{id}"
                    )
                if not isinstance(obs, Mapping) or not isinstance(obs.get("id"), str):
                    raise ImportFormatError(f"{at}: an observation without a string 'id'")
                read = generation(obs, session, f"{at}: observation {obs['id']!r}")
                if read is not None:
                    calls.append(read)
    return in_send_order(calls, str(path))


def generation(obs: Mapping[str, Any], session: str, call: str) -> Timed | None:
    """One observation, read at ``call``: its start time and the request it records; ``None``
    unless it is a ``GENERATION`` (a model call)."""
    if obs.get("type") != "GENERATION":
        return None
    inputs = input_messages(obs.get("input"), call)
    tools = obs["input"].get("tools") if isinstance(obs.get("input"), Mapping) else None
    usage = usage_types_input(obs.get("usageDetails"))
    if usage is None:  # an API's own shape, as ingested (OpenAI's prompt_tokens), or the output's
        usage = first_reported(obs.get("usageDetails"), obs.get("usage"), reply_usage(obs.get("output")))
    sent = SentRequest(session, call, request_provider(inputs), inputs, chat_reply(obs.get("output"), call),
                       model_of(obs.get("model")), usage, frame_text(system_texts(inputs), tools))  # fmt: skip
    return iso_time(obs.get("startTime"), call, "startTime"), sent


def observation_records(document: Any, where: str) -> list[Any]:
    """The observations one document holds (a trace's, each trace's of a list, or an observation
    as ``GET /api/public/observations`` lists it), for ``lint --follow``."""
    out: list[Any] = []
    for trace in traces_of(document, where):
        observations = trace.get("observations") if isinstance(trace, Mapping) else None
        out += observations if isinstance(observations, list) else [trace]
    return out


def trace_observations(record: Any) -> list[Any] | None:
    """A trace's observations in start order (``None`` for an observation): the records
    ``lint_request`` reads when handed a whole trace."""
    if not (isinstance(record, Mapping) and isinstance(record.get("observations"), list)):
        return None
    trace = record.get("id")
    observations = [  # each read as its trace's conversation: an export may omit its traceId
        {**obs, "traceId": trace}
        if isinstance(obs, Mapping) and "traceId" not in obs and isinstance(trace, str)
        else obs
        for obs in record["observations"]
    ]
    return sorted(observations, key=lambda o: str(o.get("startTime", "")) if isinstance(o, Mapping) else "")


def observation_request(obs: Any, where: str) -> SentRequest | None:
    """One observation as Langfuse's API returns it, alone: its conversation is its trace."""
    if not isinstance(obs, Mapping) or not isinstance(obs.get("id"), str):
        raise ImportFormatError(f"{where or 'observation'}: an observation without a string 'id'")
    read = generation(obs, str(obs.get("traceId") or obs["id"]), where or f"observation {obs['id']!r}")
    return None if read is None else read[1]


register_format(
    LogFormat(
        "langfuse",
        read_langfuse,
        "Langfuse traces with their observations (each GENERATION a model call, checked as sent): "
        'a trace, a list of traces, {"data": […]}, or JSON lines of traces',
        provider="openai-chat",
        requests=TraceRecords(
            observation_request, add_chat_message, split=observation_records, holds=trace_observations
        ),
    )
)
