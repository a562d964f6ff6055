"""``--from langchain``: ``langchain_core.messages.messages_to_dict`` output (a list), or an object
of such lists by session.

An ``ai`` message's ``tool_calls`` are its CALLs (its content is not kept beside them), but a
``thinking`` or ``redacted_thinking`` block in that content — ``ChatAnthropic`` with extended
thinking — ties the later calls of the turn to the first call after it, as the Anthropic importer
does, so ``--provider anthropic`` sees a window that cut it (langchain-ai/langchain#34794). In an
answer without calls, those blocks are skipped; any other block that is not text (an image…) is
opaque content (:mod:`models.chat_log`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.usage import Request, UsageWindows, first_reported
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import Imported, LogFormat, json_or_jsonl, register_format
from turncheck.models.sent_windows import frame_text, model_of

THINKING = ("thinking", "redacted_thinking")


def add_langchain_message(b: SessionBuilder, record: Any, where: str) -> None:
    """One ``messages_to_dict`` record: ``{"type": "human"|"ai"|"tool"|"system", "data": {…}}``."""
    if not isinstance(record, Mapping) or not isinstance(record.get("data"), Mapping):
        raise ImportFormatError(f"{where}: expected {{'type': …, 'data': {{…}}}} (messages_to_dict output)")
    kind, data = record.get("type"), record["data"]
    if kind == "system":
        return
    if kind == "human":
        b.user(text_of(data.get("content"), where, b), where)
    elif kind == "ai":
        calls = data.get("tool_calls") or []
        content = data.get("content")
        blocks = content if isinstance(content, list) else []
        if not calls:  # the model's own thinking is no text it is sent back as
            kept = [x for x in blocks if not (isinstance(x, Mapping) and x.get("type") in THINKING)]
            b.answer(text_of(kept if blocks else content, where, b), where)
        thinking = any(isinstance(x, Mapping) and x.get("type") in THINKING for x in blocks)
        for i, call in enumerate(calls):
            b.turn_call(
                str(call.get("id") or ""), arguments_text(call.get("args", {})), where, thinking and not i
            )
    elif kind == "tool":
        b.result(str(data.get("tool_call_id") or ""), text_of(data.get("content"), where, b), where)
    else:
        raise ImportFormatError(
            f"{where}: unknown message type {kind!r} (expected human, ai, tool or system)"
        )


def read_langchain(path: Path) -> Imported:
    """The messages; an ``ai`` message's ``usage_metadata`` (LangChain's ``input_tokens`` holds the
    cache reads and writes, ``input_token_details`` breaks them out), else the provider's own
    count in its ``response_metadata``, is the input of the request that produced it — the
    messages before it, its frame the system messages before it — judged by ``lint --budget`` as a
    trace's request is."""
    asked: dict[str, tuple[SessionBuilder, list[Request]]] = {}
    system: dict[str, list[str]] = {}  # per session, the system messages so far: each request's frame

    def add(b: SessionBuilder, record: Any, where: str) -> None:
        kind = record.get("type") if isinstance(record, Mapping) else None
        data = record.get("data") if isinstance(record, Mapping) else None
        if kind == "system" and isinstance(data, Mapping):
            system.setdefault(b.session, []).append(text_of(data.get("content"), where, b))
        if kind == "ai" and isinstance(data, Mapping):
            meta = data.get("response_metadata")
            meta = meta if isinstance(meta, Mapping) else {}
            n = first_reported(data.get("usage_metadata"), meta.get("token_usage"), meta.get("usage"))
            if n is not None:
                model = model_of(meta.get("model_name") or meta.get("model"))
                frame = frame_text(system.get(b.session, []), None)
                asked.setdefault(b.session, (b, []))[1].append((len(b.events), where, model, n, frame))
        add_langchain_message(b, record, where)

    imported = json_or_jsonl(path, "messages", add)
    return dataclasses.replace(imported, reported=UsageWindows(asked.values(), None))


register_format(
    LogFormat(
        "langchain",
        read_langchain,
        "langchain_core.messages.messages_to_dict output (a list), or an object of such lists by session",
    )
)
