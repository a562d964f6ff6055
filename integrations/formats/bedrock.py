"""``--from bedrock``: Amazon Bedrock Converse ``messages`` — what Strands Agents keeps in
``agent.messages`` — as a JSON list, a request body ``{"messages": […]}`` (its ``system`` is the
frame, not the log), or JSONL of request bodies; a record may also be a Strands session file's
``{"message": {…}, "message_id": N}`` (``FileSessionManager``'s ``message_N.json``), alone or as
the agent's folder of them (``agents/agent_ID/messages/``, read in ``message_id`` order as one
history: ``lint --from bedrock FOLDER`` is never an archive of one-message files). The folder
reads as Strands restores the agent from it: the messages its conversation manager cut
(``agent.json``'s ``removed_message_count``) are skipped, and a ``SummarizingConversationManager``'s
``summary_message`` comes first (:func:`manager_state`) — the history its next request sends.

A message is ``{"role": "user"|"assistant", "content": [block, …]}`` and a block is an object
whose one key names its kind (AWS's ``ContentBlock`` union). An assistant message's ``toolUse``
blocks (``toolUseId``, ``name``, ``input``) are its CALLs, side by side; without any, its text is
the TERM. Results travel in the next *user* message as ``toolResult`` blocks (``toolUseId``,
``content`` of ``text`` / ``json`` items, ``status``), one RESULT each — an ``error`` status is
still the answer the API pairs. Text in a user message is the USER, where it stands (text before
a ``toolResult`` stays before it: Bedrock refuses that message, and the log keeps what was sent).
A ``reasoningContent`` block is no event but ties the turn's later calls to the first call after
it, as Anthropic's ``thinking`` does (Claude on Bedrock wants it back with them: ``thinking-not-sent``,
with a request body's ``additionalModelRequestFields.thinking`` read as the Anthropic importer
reads ``thinking``). ``cachePoint``,
``image``, ``document``, ``video`` and ``audio`` carry no text an event holds and are skipped;
``guardContent``, ``citationsContent`` and ``searchResult`` are text. A block of any other kind
(one key, a kind AWS added after this reader was written) is opaque content where it stands
(:meth:`~models.chat_log.SessionBuilder.keep_opaque`: costed, ordered, never paired), as is a
``toolResult`` content item of another kind; a block that is not one object of one key, or a
known block where its role does not take it (a ``toolUse`` from the user), is refused by name.

Invariant kept: one event per block that is one, in the order sent — a window Strands trimmed to
start at an assistant ``toolUse`` (strands-agents harness-sdk#1749) stays assistant-first, for
``first-not-user`` (:mod:`models.provider_rules`) to name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.anthropic import BodyThinking, body_thinking, read_body_thinking
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import (
    Imported,
    LogFormat,
    build_sessions,
    json_or_jsonl,
    loads,
    read_text,
    register_format,
)

SKIPPED = frozenset({"cachePoint", "image", "document", "video", "audio"})
TEXT_BLOCKS = frozenset({"text", "guardContent", "citationsContent", "searchResult"})
KINDS = frozenset({"toolUse", "toolResult", "reasoningContent"}) | SKIPPED | TEXT_BLOCKS


def block_kind(block: Any, where: str) -> str:
    """The one key of a block that names its kind: a known one, or the only key of a block of a
    kind this reader does not know (opaque content); a block of several keys none or more than
    one of them known is refused (Strands adds none)."""
    if not isinstance(block, Mapping) or not block:
        raise ImportFormatError(f"{where}: a content block must be a non-empty object")
    kinds = [k for k in block if k in KINDS]
    if not kinds and len(block) == 1 and isinstance(next(iter(block)), str):
        return str(next(iter(block)))
    if len(kinds) != 1:
        named = ", ".join(repr(k) for k in block)
        raise ImportFormatError(f"{where}: content block {named} is not one Converse block kind")
    return str(kinds[0])


def block_text(kind: str, value: Any, where: str) -> str:
    """A text-carrying block's text: ``text`` is a string, ``guardContent`` ``{"text": {"text"}}``,
    ``citationsContent`` and ``searchResult`` ``{"content": [{"text"}…]}``."""
    if kind == "guardContent" and isinstance(value, Mapping):
        value = value.get("text", {}).get("text") if isinstance(value.get("text"), Mapping) else None
    elif kind in ("citationsContent", "searchResult") and isinstance(value, Mapping):
        parts = value.get("content")
        value = (
            "".join(p.get("text", "") for p in parts if isinstance(p, Mapping))
            if isinstance(parts, list)
            else None
        )
    if not isinstance(value, str):
        raise ImportFormatError(f"{where}: a {kind!r} block without its text")
    return value


def result_text(result: Mapping[str, Any], where: str, b: SessionBuilder) -> str:
    """A ``toolResult``'s content as text: its ``text`` items, ``json`` items as JSON, in order
    (an image or document item holds no text; an item of another kind, one key, is opaque content)."""
    content = result.get("content", [])
    if not isinstance(content, list):
        raise ImportFormatError(f"{where}: toolResult content must be a list, got {type(content).__name__}")
    parts = []
    for item in content:
        if isinstance(item, Mapping) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, Mapping) and "searchResult" in item:
            parts.append(block_text("searchResult", item["searchResult"], where))
        elif isinstance(item, Mapping) and "json" in item:
            parts.append(json.dumps(item["json"], ensure_ascii=False, separators=(",", ":"), sort_keys=True))
        elif isinstance(item, Mapping) and len(item) == 1 and not SKIPPED.intersection(item):
            parts.append(b.opaque_text(str(next(iter(item))), item))
        elif not (isinstance(item, Mapping) and SKIPPED.intersection(item)):
            raise ImportFormatError(f"{where}: a toolResult content item that is not text, json or a file")
    return "".join(parts)


def add_converse_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One Converse message (or a Strands session file's record wrapping one)."""
    if isinstance(message, BodyThinking):  # a request body's thinking setting (body_thinking)
        read_body_thinking(b, message)
        return
    if isinstance(message, Mapping) and "role" not in message and isinstance(message.get("message"), Mapping):
        message = message["message"]
    if not isinstance(message, Mapping):
        raise ImportFormatError(f"{where}: expected a message object, got {type(message).__name__}")
    role, content = message.get("role"), message.get("content")
    if role not in ("user", "assistant"):
        raise ImportFormatError(f"{where}: unknown message role {role!r} (expected user or assistant)")
    if not isinstance(content, list):
        raise ImportFormatError(f"{where}: content must be a list of blocks, got {type(content).__name__}")
    texts: list[str] = []
    calls = thinking = False
    before = len(b.events)
    for block in content:
        kind = block_kind(block, where)
        value = block[kind]
        if kind in ("toolUse", "toolResult") and not isinstance(value, Mapping):
            raise ImportFormatError(f"{where}: a {kind!r} block must be an object")
        if kind in TEXT_BLOCKS:
            texts.append(block_text(kind, value, where))
        elif kind == "toolUse" and role == "assistant":
            call_id = str(value.get("toolUseId") or "")
            b.turn_call(call_id, arguments_text(value.get("input", {})), where, thinking)
            calls, thinking = True, False
        elif kind == "toolResult" and role == "user":
            b.user_text(texts, where)
            b.result(str(value.get("toolUseId") or ""), result_text(value, where, b), where)
        elif kind == "reasoningContent" and role == "assistant":
            thinking = True
        elif kind in KINDS and kind not in SKIPPED:  # a toolUse from the user: Bedrock refuses it
            raise ImportFormatError(f"{where}: a {kind!r} block is not mapped in {role} messages")
        elif kind not in SKIPPED:
            b.keep_opaque(kind, block, texts)
    if role == "user":
        b.user_text(texts, where)
        if len(b.events) == before:  # only an image or a document: still the user message sent
            b.user("", where)
    elif not calls:
        b.answer("".join(texts), where)


MESSAGE_FILE = re.compile(r"message_(\d+)\.json")
"""How Strands' ``FileSessionManager`` names an agent's messages (``messages/message_N.json``)."""


def message_files(folder: Path) -> list[Path]:
    """An agent's message files in ``message_id`` order (``message_10`` after ``message_9``): the
    agent folder's ``messages/``, or that folder itself; regular files only, never a symlink
    followed. Refused when there is none."""
    messages = folder / "messages" if (folder / "messages").is_dir() else folder
    found = [
        (int(m.group(1)), p)
        for p in messages.iterdir()
        if (m := MESSAGE_FILE.fullmatch(p.name)) and p.is_file() and not p.is_symlink()
    ]
    if not found:
        raise ImportFormatError(
            f"{folder}: no Strands message files (message_N.json) in it or in its messages/"
        )
    return [p for _, p in sorted(found)]


def message_record(path: Path) -> Any:
    """One ``message_N.json`` of an agent folder: its JSON, or one line naming the file."""
    try:
        return loads(read_text(path), str(path))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}: malformed JSON ({exc.msg})") from None


AGENT_STATE = "agent.json"
"""A Strands agent folder's state (``FileSessionManager``), its ``conversation_manager_state`` in it."""


def manager_state(folder: Path) -> tuple[int, Any]:
    """What the agent's conversation manager cut, as Strands restores the agent from the folder
    (``RepositorySessionManager.initialize``): its ``removed_message_count`` (the message files
    skipped, in index order) and a ``SummarizingConversationManager``'s ``summary_message`` (sent
    before the rest). ``(0, None)`` when ``agent.json`` is not a regular file (never a symlink
    followed) or holds no manager state; a count that is not a non-negative integer is refused."""
    state_file = folder / AGENT_STATE
    if state_file.is_symlink() or not state_file.is_file():
        return 0, None
    try:
        agent = loads(read_text(state_file), str(state_file))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{state_file}: malformed JSON ({exc.msg})") from None
    state = agent.get("conversation_manager_state") if isinstance(agent, Mapping) else None
    if not isinstance(state, Mapping):
        return 0, None
    removed = state.get("removed_message_count", 0)
    if isinstance(removed, bool) or not isinstance(removed, int) or removed < 0:
        raise ImportFormatError(
            f"{state_file}: removed_message_count must be a non-negative integer, got {removed!r}"
        )
    return removed, state.get("summary_message") or None


def read_bedrock(path: Path) -> Imported:
    """Converse messages: a file (JSON, JSONL, or one Strands ``message_N.json``), or a Strands
    agent folder (``FileSessionManager``'s ``agents/agent_ID/``, or its ``messages/``): one history."""
    if path.is_dir():
        folder = path.parent if path.name == "messages" else path
        files = message_files(path)
        removed, summary = manager_state(folder)
        groups = [(folder.name, [message_record(p)], str(p), None) for p in files[removed:]]
        if summary is not None:
            groups.insert(0, (folder.name, [summary], f"{folder / AGENT_STATE}: summary_message", None))
        return build_sessions(groups, add_converse_message)
    if MESSAGE_FILE.fullmatch(path.name):
        try:
            value = loads(read_text(path), str(path))
        except json.JSONDecodeError:
            value = None  # JSON lines, or not the format: the general reader names it
        if isinstance(value, Mapping) and isinstance(value.get("message"), Mapping):
            return build_sessions([(path.stem, [value], str(path), None)], add_converse_message)
    return json_or_jsonl(path, "messages", add_converse_message, framing=body_thinking)


register_format(
    LogFormat(
        "bedrock",
        read_bedrock,
        'Amazon Bedrock Converse messages (toolUse / toolResult blocks; Strands agent.messages, read as strands-agents 1.62.0 writes it): a JSON list, {"messages": […]}, or JSONL of request bodies',
        provider="bedrock",
        folders=True,
        history_folder=lambda p: (
            (p / "messages").is_dir() or any(MESSAGE_FILE.fullmatch(f.name) for f in p.iterdir())
        ),
        not_histories=frozenset({"session.json", AGENT_STATE}),
    )
)
