"""``--from langchain``: ``langchain_core.messages.messages_to_dict`` output (a list), or an object
of such lists by session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format


def add_langchain_message(b: SessionBuilder, record: Any, where: str) -> None:
    """One ``messages_to_dict`` record: ``{"type": "human"|"ai"|"tool"|"system", "data": {…}}``."""
    if not isinstance(record, Mapping) or not isinstance(record.get("data"), Mapping):
        raise ImportFormatError(f"{where}: expected {{'type': …, 'data': {{…}}}} (messages_to_dict output)")
    kind, data = record.get("type"), record["data"]
    if kind == "system":
        return
    if kind == "human":
        b.user(text_of(data.get("content"), where), where)
    elif kind == "ai":
        calls = data.get("tool_calls") or []
        if not calls:
            b.answer(text_of(data.get("content"), where), where)
        for call in calls:
            b.call(str(call.get("id") or ""), arguments_text(call.get("args", {})), where)
    elif kind == "tool":
        b.result(str(data.get("tool_call_id") or ""), text_of(data.get("content"), where), where)
    else:
        raise ImportFormatError(
            f"{where}: unknown message type {kind!r} (expected human, ai, tool or system)"
        )


register_format(
    LogFormat(
        "langchain",
        lambda path: json_or_jsonl(path, "messages", add_langchain_message),
        "langchain_core.messages.messages_to_dict output (a list), or an object of such lists by session",
    )
)
