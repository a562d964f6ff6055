"""``--from anthropic``: Anthropic Messages API ``messages`` — a JSON list, a request body
``{"messages": […]}`` (its ``system`` is the frame, not the log), or JSONL of request bodies.

A message's ``content`` is a string or a list of blocks. An assistant message's ``tool_use``
blocks are its calls (one CALL each, so parallel calls stay side by side; text written beside
them is not kept, as for every format); without any, its text is the TERM. Results travel in a
*user* message as ``tool_result`` blocks (one RESULT each, paired by ``tool_use_id``); text in a
user message is the USER, where it stands: text sent before a ``tool_result`` is a USER before
that RESULT (the API refuses it: ``results-not-first``), text after it a USER after. Server tools
run inside the assistant message: ``server_tool_use`` (and ``mcp_tool_use``, any ``*tool_use``)
is a CALL and the block answering it (``web_search_tool_result``, ``mcp_tool_result``…, any
``*_tool_result`` carrying a ``tool_use_id``) its RESULT. A ``thinking`` or ``redacted_thinking`` block is no event, but with
thinking on the API wants it sent with the tool calls of the turn in progress: it rides with the
first ``tool_use`` after it, and every later call of that assistant turn (up to the next user
message) is :attr:`~models.events.Event.tied_to` that one, for ``thinking-not-sent``. Where
thinking is on — a request body's ``"thinking": {"type": "enabled"}`` (:func:`body_thinking`), or a
thinking block later in the same turn — a turn whose first ``tool_use`` message does not start with
thinking has that call tied to a carrier no call bears, which the rule flags while the turn is in
progress ("Expected `thinking` or `redacted_thinking`, but found `tool_use`"); ``adaptive`` lets
the model skip thinking, so a body saying it (or ``disabled``) is not held to that. A call made
by code execution's code (programmatic tool calling) names its source in ``caller``
(``{"type": "code_execution_…", "tool_id": "srvtoolu_…"}``): that ``tool_id`` is kept as the
call's :attr:`~models.events.Event.caller`, for ``caller-not-sent`` (a ``direct`` caller names
none).

A ``compaction`` block (context management's server-side compaction, in an assistant message)
is a SUMMARY covering every earlier event of the session: the API drops everything before the
block when it is sent back. One whose ``content`` is null is a failed compaction, a no-op to the
API, and skipped. Any other block (``image``, ``document``, ``search_result``, a type added
later) is opaque content (:meth:`~models.chat_log.SessionBuilder.keep_opaque`), never a refusal;
a ``tool_use`` in a user message or a ``tool_result`` in an assistant one is refused by name
(kept opaque, it would hide an unpaired call or result: a false clean).

JSONL of request bodies shows what each request sent: a ``tool_use`` one body sent after a
thinking block and a later body sends without one, in the turn still in progress (a store or a
trimmer that dropped the block: langchain-ai/langchain#34794), is tied to a carrier no call bears,
so ``thinking-not-sent`` flags it where it was sent bare (a finished turn's thinking may go).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format

SKIPPED = ("thinking", "redacted_thinking")


@dataclass(frozen=True)
class BodyThinking:
    """A request body's ``thinking`` setting, around its messages (:func:`body_thinking`):
    ``mode`` its ``type`` (``None`` when the body has none), ``end`` after the messages."""

    mode: str | None
    end: bool


def body_thinking(body: Any) -> tuple[list[Any], list[Any]]:
    """A request body's ``thinking`` setting as the records framing its messages
    (:data:`~models.importers.Framing`): the mode before them, the turn judged after them. A
    Converse body (Claude on Bedrock) holds it in ``additionalModelRequestFields``."""
    fields = body.get("additionalModelRequestFields") if isinstance(body, Mapping) else None
    setting = (fields if isinstance(fields, Mapping) else body).get("thinking") if isinstance(body, Mapping) else None
    mode = setting.get("type") if isinstance(setting, Mapping) else None
    mode = mode if isinstance(mode, str) else None
    return [BodyThinking(mode, False)], [BodyThinking(mode, True)]


def read_body_thinking(b: SessionBuilder, record: BodyThinking) -> None:
    """A framing record (:func:`body_thinking`): the body's mode while its messages are read;
    after them, with thinking ``enabled``, its turn in progress held to start with thinking."""
    b.thinking = None if record.end else record.mode
    if record.end and record.mode == "enabled":
        b.thinking_required()


def result_text(block: Mapping[str, Any], where: str, b: SessionBuilder) -> str:
    """A result block's content as text: a string, text blocks, or (server tools) the JSON."""
    content = block.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if block.get("type") == "tool_result":
        return text_of(content, where, b)
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def caller_of(block: Mapping[str, Any]) -> str | None:
    """The server tool use a ``*tool_use`` block's ``caller`` names (its ``tool_id``), or None
    for a direct call (``{"type": "direct"}``, or no ``caller``)."""
    caller = block.get("caller")
    if not isinstance(caller, Mapping) or caller.get("type") == "direct":
        return None
    tool_id = caller.get("tool_id")
    return tool_id if isinstance(tool_id, str) and tool_id else None


def add_anthropic_message(
    b: SessionBuilder, message: Any, where: str, produced: set[tuple[str, str]] | None = None
) -> None:
    """One Messages API message (``role`` user or assistant, ``content`` text or blocks).
    ``produced`` (one file's, across its request bodies): the calls (id and input) first sent
    after a thinking block; one sent again with none before it is tied to a carrier no call
    bears (the module)."""
    if isinstance(message, BodyThinking):  # a request body's setting (body_thinking)
        read_body_thinking(b, message)
        return
    if not isinstance(message, Mapping):
        raise ImportFormatError(f"{where}: expected a message object, got {type(message).__name__}")
    role, content = message.get("role"), message.get("content")
    if role not in ("user", "assistant"):
        raise ImportFormatError(f"{where}: unknown message role {role!r} (expected user or assistant)")
    if isinstance(content, str):
        (b.user if role == "user" else b.answer)(content, where)
        return
    if not isinstance(content, list):
        raise ImportFormatError(
            f"{where}: content must be text or a list of blocks, got {type(content).__name__}"
        )
    texts: list[str] = []
    calls = thinking = False
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if not isinstance(kind, str):
            raise ImportFormatError(f"{where}: a content block without a 'type'")
        if kind == "text":
            texts.append(text_of([block], where, b))
        elif kind == "compaction" and role == "assistant":
            if block.get("content") is not None:
                b.summary(text_of(block["content"], where, b), where)
        elif kind.endswith("tool_use") and role == "assistant":  # tool_use, server_tool_use, mcp_tool_use
            call_id = str(block.get("id") or "")
            arguments = arguments_text(block.get("input", {}))
            if produced is not None and thinking:
                produced.add((call_id, arguments))
            if (
                produced is not None
                and not thinking
                and b.carrier is None
                and (call_id, arguments) in produced
            ):
                b.call(call_id, arguments, where, f"thinking before {call_id}", caller_of(block))  # sent bare
            else:
                b.turn_call(call_id, arguments, where, thinking, caller_of(block))
            thinking = False
            calls = calls or kind == "tool_use"  # a server tool's answer comes in this same message
        elif (
            kind == "tool_result" and role == "user" or kind.endswith("_tool_result") and role == "assistant"
        ):
            if role == "user":
                b.user_text(texts, where)
            b.result(str(block.get("tool_use_id") or ""), result_text(block, where, b), where)
        elif kind in SKIPPED:
            thinking = role == "assistant"
            if thinking and b.thinking not in ("adaptive", "disabled"):
                b.thinking_required()  # the turn shows thinking on: its first call must have had it
        elif kind in ("tool_use", "tool_result"):  # the other role's: the API refuses it, never opaque
            raise ImportFormatError(f"{where}: a {kind!r} block in a {role} message (the Messages API has it only in "
                                    f"{'an assistant' if kind == 'tool_use' else 'a user'} message: not read as opaque)")  # fmt: skip
        else:
            b.keep_opaque(kind, block, texts)
    if role == "user":
        b.user_text(texts, where)
    elif not calls:
        b.answer("".join(texts), where)


register_format(
    LogFormat(
        "anthropic",
        lambda path: json_or_jsonl(
            path, "messages", functools.partial(add_anthropic_message, produced=set()), framing=body_thinking
        ),
        'Anthropic Messages API messages (tool_use / tool_result blocks): a JSON list, {"messages": […]}, or JSONL of request bodies',
        provider="anthropic",
    )
)
