"""``--from llamaindex``: LlamaIndex ``ChatMessage.model_dump()`` dumps (a list), or an object of
such lists by session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format


def add_llamaindex_message(b: SessionBuilder, record: Any, where: str) -> None:
    """One ``ChatMessage.model_dump()``: ``role``, ``blocks`` (or ``content``), ``additional_kwargs``."""
    if not isinstance(record, Mapping) or "role" not in record:
        raise ImportFormatError(f"{where}: expected a ChatMessage dump with a 'role'")
    role, extra = record["role"], record.get("additional_kwargs") or {}
    blocks = record.get("blocks")
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    if blocks is None:
        texts.append(text_of(record.get("content"), where, b))
    else:
        for block in blocks:
            kind = block.get("block_type") if isinstance(block, Mapping) else None
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_call":
                calls.append(
                    (str(block.get("tool_call_id") or ""), arguments_text(block.get("tool_kwargs", {})))
                )
            elif isinstance(kind, str):
                b.keep_opaque(kind, block, texts)  # an image, audio, document block: opaque content
            else:
                raise ImportFormatError(f"{where}: a content block without a 'block_type'")
    for call in extra.get("tool_calls") or []:  # OpenAI-style calls kept in additional_kwargs
        fn = call.get("function") or {}
        calls.append((str(call.get("id") or ""), arguments_text(fn.get("arguments", ""))))
    text = "".join(texts)
    if role == "system":
        return
    if role == "user":
        b.user(text, where)
    elif role == "assistant":
        if not calls:
            b.answer(text, where)
        for call_id, args in calls:
            b.call(call_id, args, where)
    elif role == "tool":
        b.result(str(extra.get("tool_call_id") or ""), text, where)
    else:
        raise ImportFormatError(f"{where}: unknown role {role!r} (expected system, user, assistant or tool)")


register_format(
    LogFormat(
        "llamaindex",
        lambda path: json_or_jsonl(path, "messages", add_llamaindex_message),
        "ChatMessage.model_dump() dumps (a list), or an object of such lists by session",
    )
)
