"""``--from openai-chat``: OpenAI Chat Completions messages (``role``, ``content``, ``tool_calls``,
``tool_call_id``) — a JSON list, a request body ``{"messages": […]}``, or JSONL of request bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format


def add_openai_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One Chat Completions message (``role``, ``content``, ``tool_calls``, ``tool_call_id``)."""
    if not isinstance(message, Mapping):
        raise ImportFormatError(f"{where}: expected a message object, got {type(message).__name__}")
    role = message.get("role")
    if role in ("system", "developer"):
        return
    if role == "user":
        b.user(text_of(message.get("content"), where, b), where)
    elif role == "assistant":
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ImportFormatError(f"{where}: tool_calls must be a list")
        if not calls:
            b.answer(text_of(message.get("content"), where, b), where)
        for call in calls:
            fn = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(fn, Mapping):
                raise ImportFormatError(f"{where}: a tool call without a function")
            b.call(str(call.get("id") or ""), arguments_text(fn.get("arguments", "")), where)
    elif role == "tool":
        b.result(str(message.get("tool_call_id") or ""), text_of(message.get("content"), where, b), where)
    else:
        raise ImportFormatError(
            f"{where}: unknown message role {role!r} (expected system, developer, user, assistant or tool)"
        )


register_format(
    LogFormat(
        "openai-chat",
        lambda path: json_or_jsonl(path, "messages", add_openai_message),
        'a JSON list of Chat Completions messages, a request body {"messages": […]}, or JSONL of request bodies',
        provider="openai-chat",
    )
)
