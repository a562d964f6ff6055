"""``--from openai-chat``: OpenAI Chat Completions messages (``role``, ``content``, ``tool_calls``,
``tool_call_id``) — a JSON list, a request body ``{"messages": […]}``, or JSONL of request bodies.

JSONL of request bodies is first decoded into the structs below (:class:`TypedBodies`: typed
``msgspec`` decoding, several times faster than decoding to dicts and reading them): text
messages, text parts, function calls with string arguments. Any other shape — an image part, a
field these structs do not name, an id that is not a string — sends the whole file to the
generic reader, :func:`add_openai_message`, so nothing is read two ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.events import Kind
from turncheck.models.importers import LogFormat, NotTyped, TypedBodies, json_or_jsonl, register_format

USER, CALL, RESULT, TERM = Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM
"""The kinds as globals: ``Kind.USER`` is a slow lookup (``EnumType``'s ``__getattr__``)."""


class TextPart(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    type: str | UnsetType = UNSET


class Function(msgspec.Struct, forbid_unknown_fields=True):
    name: str | UnsetType = UNSET
    arguments: str | UnsetType = UNSET


class ToolCall(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    function: Function
    type: str | UnsetType = UNSET


class ChatMessage(msgspec.Struct, forbid_unknown_fields=True):
    """A Chat Completions message of the shapes read typed; a missing field is ``UNSET``, not
    ``None``, so struct equality is JSON object equality."""

    role: str
    content: str | None | list[TextPart] | UnsetType = UNSET
    tool_calls: list[ToolCall] | None | UnsetType = UNSET
    tool_call_id: str | None | UnsetType = UNSET
    name: str | UnsetType = UNSET


class ChatBody(msgspec.Struct):
    """A request body: its messages and what names its session; other fields are skipped."""

    messages: list[ChatMessage]
    user: str | None | UnsetType = UNSET
    metadata: dict[str, str] | None | UnsetType = UNSET


def _text(content: str | None | list[TextPart] | UnsetType) -> str:
    if type(content) is str:
        return content
    if isinstance(content, list):
        return "".join(part.text for part in content)
    return ""


def add_typed_message(b: SessionBuilder, message: ChatMessage, where: str) -> None:
    """:func:`add_openai_message` of a :class:`ChatMessage` (the same events; a role it does not
    know is left to it), each event added with :meth:`SessionBuilder.add` (the builder's one
    definition of each kind, one call an event)."""
    role, content = message.role, message.content
    text = content if type(content) is str else _text(content)  # most contents: no call
    if role == "user":
        b.add(USER, text, where)
    elif role == "assistant":
        calls = message.tool_calls
        if not calls:
            b.add(TERM, text, where)
            return
        for call in calls:
            arguments = call.function.arguments
            b.add(CALL, arguments if type(arguments) is str else "", where, call.id)
    elif role == "tool":
        b.add(RESULT, text, where, message.tool_call_id or "")  # type: ignore[arg-type]
    elif role not in ("system", "developer"):
        raise NotTyped(role)


def call_arguments(call: Any, where: str) -> str:
    """A tool call's arguments: a ``function`` call's ``arguments``, or a ``custom`` tool call's
    free-form ``input`` (``{"type": "custom", "custom": {"name", "input"}}``, the tools GPT-5 calls
    with plain text); a call with neither is refused."""
    if isinstance(call, Mapping) and call.get("type") == "custom" and isinstance(call.get("custom"), Mapping):
        return arguments_text(call["custom"].get("input", ""))
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping):
        raise ImportFormatError(f"{where}: a tool call without a function")
    return arguments_text(fn.get("arguments", ""))


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
            b.call(str(call.get("id") or ""), call_arguments(call, where), where)
    elif role == "tool":
        b.result(str(message.get("tool_call_id") or ""), text_of(message.get("content"), where, b), where)
    else:
        raise ImportFormatError(
            f"{where}: unknown message role {role!r} (expected system, developer, user, assistant or tool)"
        )


TYPED = TypedBodies(ChatBody, add_typed_message)

register_format(
    LogFormat(
        "openai-chat",
        lambda path: json_or_jsonl(path, "messages", add_openai_message, TYPED),
        'a JSON list of Chat Completions messages, a request body {"messages": […]}, or JSONL of request bodies',
        provider="openai-chat",
    )
)
