"""``--from cline``: Cline's ``api_conversation_history.json`` (a task's stored history, in its
task directory), read by the Anthropic reader: Cline stores ``Anthropic.MessageParam`` objects
extended with fields of its own (``ts``, ``id``, ``modelInfo``, ``metrics``, which are never sent
and are ignored), as its ``ClineStorageMessage`` type declares.

The difference from ``--from anthropic``: Cline's histories hold images and documents (a pasted
screenshot, a browser action's screenshot inside a ``tool_result``), which are kept as empty text
(:func:`~integrations.formats.claude_code.as_text_blocks`) so that their message stays a message.

The file is the whole task; when Cline truncates its context it sends the first two messages and
the messages after the range it drops (``conversationHistoryDeletedRange``, kept outside this
file), so a truncation that orphans a ``tool_result`` (cline/cline#7225) shows only in that sent
window: a request body it logged, read with ``--from anthropic``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turncheck.integrations.formats.anthropic import add_anthropic_message
from turncheck.integrations.formats.claude_code import as_text_blocks
from turncheck.models.chat_log import SessionBuilder
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format


def add_cline_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One ``ClineStorageMessage``: the Anthropic message it extends, files as empty text."""
    if isinstance(message, Mapping):
        message = {**message, "content": as_text_blocks(message.get("content"))}
    add_anthropic_message(b, message, where)


register_format(
    LogFormat(
        "cline",
        lambda path: json_or_jsonl(path, "messages", add_cline_message),
        "Cline's api_conversation_history.json (Anthropic messages with Cline's own fields; images kept as empty text)",
        provider="anthropic",
    )
)
