"""``--from vercel``: Vercel AI SDK ``ModelMessage[]`` — a JSON list, ``{"messages": […]}`` (what
``generateText``'s ``responseMessages`` are appended to), or JSONL of request bodies.

Roles ``system``, ``user``, ``assistant``, ``tool``; ``content`` is a string or a list of parts.
An assistant message's ``tool-call`` parts (``toolCallId``, ``toolName``, ``input``) are its
calls, one CALL each; without any, its text is the TERM. A ``tool`` message's ``tool-result``
parts (``toolCallId``, ``output``) are RESULTs; a provider-executed tool's ``tool-result`` comes
in the assistant message itself, and is a RESULT there too. ``reasoning`` and the
approval request/response parts are not context the log sizes, and are skipped; a file, an
image or any part a role does not take here is opaque content where it stands
(:meth:`~models.chat_log.SessionBuilder.keep_opaque`: it is sent, so it is costed) — but a
``tool-call`` or ``tool-result`` part where its role never holds one is refused by name, since
kept opaque it would hide an unpaired call or result; the calls after
a ``reasoning`` part are tied to the first, as the Responses importer ties them, for
``--provider openai-responses`` (the SDK's OpenAI provider sends the part back as that
``reasoning`` item, and the API refuses it without its call: vercel/ai issues 7099 and 8379). A
``tool-call`` made by Anthropic code execution's code carries its source in
``providerOptions.anthropic.caller.toolId`` (what the SDK's Anthropic provider sends as the
``tool_use``'s ``caller.tool_id``); it is kept as the call's :attr:`~models.events.Event.caller`,
for ``--provider anthropic``'s ``caller-not-sent`` (vercel/ai issue 12504: ``pruneMessages`` kept
such a call and dropped its source). The names are
those of the installed ``ai`` package's types (AI SDK 5 onwards): AI SDK 4's ``args`` /
``result`` are refused by name rather than read as a call without arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format

SKIPPED = (
    "reasoning",
    "reasoning-file",
    "tool-approval-request",
    "tool-approval-response",
)
PARTS = {"user": ("text",), "assistant": ("text", "tool-call", "tool-result"), "tool": ("tool-result",)}


def output_text(output: Any, where: str) -> str:
    """A ``ToolResultOutput`` as the text a RESULT carries: ``text`` / ``error-text`` values as
    they are, a denial its reason, every other kind its value as JSON."""
    if not isinstance(output, Mapping) or not isinstance(output.get("type"), str):
        raise ImportFormatError(f"{where}: a tool-result 'output' must be an object with a 'type'")
    if output["type"] == "execution-denied":
        return str(output.get("reason") or "")
    value = output.get("value")
    if isinstance(value, str) and output["type"] in ("text", "error-text"):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def tool_call_id(part: Mapping[str, Any], where: str) -> str:
    value = part.get("toolCallId")
    if value is not None and not isinstance(value, str):
        raise ImportFormatError(f"{where}: a {part['type']} part's toolCallId must be a string")
    return value or ""


def anthropic_caller(part: Mapping[str, Any]) -> str | None:
    """``providerOptions.anthropic.caller.toolId`` of a tool-call part: the Anthropic server tool
    use whose code made the call; None for a direct call or none named."""
    options = part.get("providerOptions")
    anthropic = options.get("anthropic") if isinstance(options, Mapping) else None
    caller = anthropic.get("caller") if isinstance(anthropic, Mapping) else None
    if not isinstance(caller, Mapping) or caller.get("type") == "direct":
        return None
    tool_id = caller.get("toolId")
    return tool_id if isinstance(tool_id, str) and tool_id else None


def add_vercel_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One ``ModelMessage``."""
    if not isinstance(message, Mapping):
        raise ImportFormatError(f"{where}: expected a message object, got {type(message).__name__}")
    role, content = message.get("role"), message.get("content")
    if role not in ("system", "user", "assistant", "tool"):
        raise ImportFormatError(
            f"{where}: unknown message role {role!r} (expected system, user, assistant or tool)"
        )
    if role == "system":
        return
    if isinstance(content, str) and role != "tool":
        (b.user if role == "user" else b.answer)(content, where)
        return
    if not isinstance(content, list):
        raise ImportFormatError(
            f"{where}: content must be {'a list of parts' if role == 'tool' else 'text or a list of parts'}, "
            f"got {type(content).__name__}"
        )
    texts: list[str] = []
    calls = False
    carrier: str | None = None  # as in openai_responses: "" after a reasoning part, then its first call
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(kind, str):
            raise ImportFormatError(f"{where}: a content part without a 'type'")
        carrier = "" if kind == "reasoning" else carrier
        if kind in SKIPPED:
            continue
        if kind in ("tool-call", "tool-result") and kind not in PARTS[role]:  # opaque, it would hide its pair
            raise ImportFormatError(
                f"{where}: a {kind} part in a {role} message (the AI SDK's ModelMessage has none there)"
            )
        if kind not in PARTS[role]:
            b.keep_opaque(kind, part, texts)  # an image, file, source part…: opaque content
        elif kind == "text":
            if not isinstance(part.get("text"), str):
                raise ImportFormatError(f"{where}: a text part must hold a string 'text'")
            texts.append(part["text"])
        elif kind == "tool-call":
            if "input" not in part and "args" in part:
                raise ImportFormatError(f"{where}: a tool-call part with 'args' (AI SDK 4); expected 'input'")
            call_id = tool_call_id(part, where)
            b.call(
                call_id, arguments_text(part.get("input", {})), where, carrier or None, anthropic_caller(part)
            )
            carrier = carrier or (call_id if carrier == "" else None)
            calls = calls or not part.get("providerExecuted")  # a provider's tool answers in this message
        else:
            if "output" not in part and "result" in part:
                raise ImportFormatError(
                    f"{where}: a tool-result part with 'result' (AI SDK 4); expected 'output'"
                )
            b.result(tool_call_id(part, where), output_text(part.get("output"), where), where)
    if role == "user":
        b.user("".join(texts), where)
    elif role == "assistant" and not calls:
        b.answer("".join(texts), where)


register_format(
    LogFormat(
        "vercel",
        lambda path: json_or_jsonl(path, "messages", add_vercel_message),
        'Vercel AI SDK ModelMessage[] (tool-call / tool-result parts): a JSON list, {"messages": […]}, or JSONL of request bodies',
    )
)
