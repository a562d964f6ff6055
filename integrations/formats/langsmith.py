"""``--from langsmith``: LangSmith runs as JSON lines (one ``Run`` per line, as
``Client.list_runs`` yields them and ``Run.model_dump_json()`` writes them), or a JSON list.

Every ``llm`` run is one model call: ``inputs["messages"]`` the messages sent — Chat Completions
dicts as ``wrap_openai`` records them, or a LangChain chat model's batch ``[[…]]`` of one prompt
in ``dumpd`` form (``{"lc": 1, "id": [… "AIMessage"], "kwargs": {…}}``) as its tracer does —
and ``outputs`` the reply (a completion's ``choices``, LangChain's ``generations``, a message,
or ``{"messages": […]}``). A run's thread is
its conversation — the ``thread_id``, ``session_id`` or ``conversation_id`` of its metadata, the
keys LangSmith groups threads by — else its ``trace_id``; its calls are in ``start_time`` order.
Each call is checked as sent and the log is rebuilt from the last one
(:mod:`models.sent_windows`). Chains, tools and retrievers are skipped; a run's ``child_runs``
(``read_run(…, load_child_runs=True)``, the root run an evaluator gets) are read as runs. A run's ``prompt_tokens``
(else the usage its outputs hold) is the input the provider reported; its system messages and
``inputs["tools"]`` are the request's frame (:class:`~models.sent_windows.RequestCost`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.langchain import add_langchain_message
from turncheck.integrations.formats.langfuse import (
    Timed,
    add_chat_message,
    chat_reply,
    in_send_order,
    iso_time,
    request_provider,
)
from turncheck.integrations.formats.otel import documents
from turncheck.integrations.formats.usage import first_reported
from turncheck.models.chat_log import ImportFormatError, SessionBuilder
from turncheck.models.importers import Imported, LogFormat, read_text, register_format
from turncheck.models.sent_windows import SentRequest, TraceRecords, frame_text, model_of, system_texts

THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
LC_TYPES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool", "SystemMessage": "system"}


def add_run_message(b: SessionBuilder, message: Any, where: str) -> None:
    """A message a run holds: LangChain's ``dumpd`` form, else a Chat Completions dict."""
    if isinstance(message, Mapping) and message.get("lc") and isinstance(message.get("kwargs"), Mapping):
        kwargs, path = message["kwargs"], message.get("id")
        kind = kwargs.get("type") or (LC_TYPES.get(path[-1]) if isinstance(path, list) and path else None)
        add_langchain_message(b, {"type": kind, "data": kwargs}, where)
    else:
        add_chat_message(b, message, where)


def thread_of(run: Mapping[str, Any]) -> str:
    extra = run.get("extra")
    meta = extra.get("metadata") if isinstance(extra, Mapping) else None
    for key in THREAD_KEYS:
        if isinstance(meta, Mapping) and meta.get(key):
            return str(meta[key])
    return str(run.get("trace_id") or run["id"])


def run_model(run: Mapping[str, Any]) -> Any:
    """The model asked: the metadata's ``ls_model_name`` (LangSmith's own key), else the
    ``model`` the inputs were called with (``wrap_openai`` records the call's arguments)."""
    extra, inputs = run.get("extra"), run.get("inputs")
    meta = extra.get("metadata") if isinstance(extra, Mapping) else None
    if isinstance(meta, Mapping) and meta.get("ls_model_name"):
        return meta["ls_model_name"]
    return inputs.get("model") if isinstance(inputs, Mapping) else None


def run_reported(run: Mapping[str, Any], replies: list[Any]) -> int | None:
    """The input tokens a run reports: the server's ``prompt_tokens``, else the usage its outputs
    hold (``usage_metadata`` as LangSmith's wrappers record it, else as ``RunTree.set(usage_metadata=…)``
    keeps it in ``extra.metadata``, a completion's ``usage``, the
    ``usage_metadata`` of the message a LangChain chat model generated — ``replies[0]``, in
    ``dumpd`` form —, LangChain's ``llm_output.token_usage``)."""
    outputs = run.get("outputs")
    outputs = outputs if isinstance(outputs, Mapping) else {}
    llm_output = outputs.get("llm_output")
    message = replies[0] if replies and isinstance(replies[0], Mapping) else {}
    message = message.get("kwargs", message)
    generated = message.get("usage_metadata") if isinstance(message, Mapping) else None
    token_usage = llm_output.get("token_usage") if isinstance(llm_output, Mapping) else None
    extra = run.get("extra")
    meta = extra.get("metadata") if isinstance(extra, Mapping) else None
    noted = meta.get("usage_metadata") if isinstance(meta, Mapping) else None
    return first_reported(
        {"prompt_tokens": run.get("prompt_tokens")}, outputs.get("usage_metadata"), noted, outputs.get("usage"),
        generated, token_usage,
    )  # fmt: skip


def sent_messages(inputs: Any, where: str) -> list[Any]:
    messages = inputs.get("messages") if isinstance(inputs, Mapping) else None
    if isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], list):
        messages = messages[0]
    if not isinstance(messages, list):
        raise ImportFormatError(f"{where}: inputs hold no 'messages' list")
    return messages


def reply_of(outputs: Any, where: str) -> list[Any]:
    if isinstance(outputs, Mapping) and isinstance(outputs.get("messages"), list):
        return outputs["messages"]
    generations = outputs.get("generations") if isinstance(outputs, Mapping) else None
    if isinstance(generations, list):
        first = (
            generations[0][0] if generations and isinstance(generations[0], list) and generations[0] else None
        )
        if not isinstance(first, Mapping) or not isinstance(first.get("message"), Mapping):
            raise ImportFormatError(f"{where}: outputs' generations without a message")
        return [first["message"]]
    if outputs is not None and not isinstance(outputs, Mapping):
        raise ImportFormatError(f"{where}: outputs must be an object, got {type(outputs).__name__}")
    return chat_reply(outputs or None, where)


def read_langsmith(path: Path) -> Imported:
    runs: list[tuple[str, Any]] = []
    for line, value in documents(path, read_text(path)):
        if isinstance(value, list):
            runs += [(f"{path}:{line}: record {n}", one) for n, run in enumerate(value, start=1)
                     for one in with_children(run)]  # fmt: skip
        else:
            runs += [(f"{path}:{line}", one) for one in with_children(value)]
    calls: list[Timed] = []
    for where, run in runs:
        read = llm_run(run, where)
        if read is not None:
            calls.append(read)
    return in_send_order(calls, str(path), add_run_message)


def llm_run(run: Any, where: str) -> Timed | None:
    """One run, read at ``where``: its start time and the request it records; ``None`` unless
    it is an ``llm`` run (a model call)."""
    if not isinstance(run, Mapping) or not isinstance(run.get("id"), str):
        raise ImportFormatError(f"{where or 'run'}: expected a LangSmith run object with a string 'id'")
    if not isinstance(run.get("run_type"), str):
        raise ImportFormatError(f"{where or 'run'}: run {run['id']!r} has no 'run_type'")
    if run["run_type"] != "llm":
        return None
    call = f"{where}: run {run['id']!r}" if where else f"run {run['id']!r}"
    inputs = sent_messages(run.get("inputs"), call)
    tools = run["inputs"].get("tools") if isinstance(run.get("inputs"), Mapping) else None
    replies = reply_of(run.get("outputs"), call)
    sent = SentRequest(thread_of(run), call, request_provider(inputs), inputs, replies, model_of(run_model(run)),
                       run_reported(run, replies), frame_text(system_texts(inputs), tools))  # fmt: skip
    return iso_time(run.get("start_time"), call, "start_time"), sent


def with_children(run: Any) -> list[Any]:
    """A run and its descendants, depth first, each without its ``child_runs`` (a run as
    ``Client.read_run(…, load_child_runs=True)`` returns it, or the root run ``evaluate`` hands an
    evaluator, holds its model calls there); a run without children is itself."""
    out: list[Any] = []
    stack = [run]
    while stack:
        one = stack.pop()
        children = one.get("child_runs") if isinstance(one, Mapping) else None
        if isinstance(children, list) and children:
            one = {k: v for k, v in one.items() if k != "child_runs"}
            stack.extend(reversed(children))
        out.append(one)
    return out


def run_children(record: Any) -> list[Any] | None:
    """The runs a run with child runs holds, its own first, in start order; ``None`` for a run
    without children (what ``lint_request`` reads alone)."""
    if not (
        isinstance(record, Mapping) and isinstance(record.get("child_runs"), list) and record["child_runs"]
    ):
        return None
    return sorted(
        with_children(record), key=lambda r: str(r.get("start_time", "")) if isinstance(r, Mapping) else ""
    )


def run_records(document: Any, where: str) -> list[Any]:
    """The runs one document holds (a run, or a list of runs, with their child runs), for
    ``lint --follow``."""
    return [
        one for run in (document if isinstance(document, list) else [document]) for one in with_children(run)
    ]


def run_request(run: Any, where: str) -> SentRequest | None:
    """One run as LangSmith holds it, alone."""
    read = llm_run(run, where)
    return None if read is None else read[1]


register_format(
    LogFormat(
        "langsmith",
        read_langsmith,
        "LangSmith runs as JSON lines or a JSON list (each llm run a model call, checked as sent)",
        provider="openai-chat",
        requests=TraceRecords(run_request, add_run_message, split=run_records, holds=run_children),
    )
)
