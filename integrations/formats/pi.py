"""``--from pi``: a pi coding agent session file (``~/.pi/agent/sessions/--PATH--/TIME_UUID.jsonl``,
session format version 3), one JSON entry a line, as pi-mono's ``docs/session.md`` documents it.

Entries form a tree by ``id`` / ``parentId``; the history pi sends is the path from the leaf —
the last entry of the file — back to the root (``buildSessionContext``), and that path is what is
read: a branch left by ``/tree`` is not. On the path:

* ``message`` entries carry an ``AgentMessage``: ``user`` is the USER; ``assistant`` content
  blocks ``toolCall`` (``id``, ``arguments``) are CALLs — a ``thinking`` block ties the turn's later
  calls to the first after it — and without any its ``text`` is the TERM; ``toolResult``
  (``toolCallId``) is a RESULT; ``bashExecution`` (unless ``excludeFromContext``), ``custom`` and
  ``branchSummary`` are sent as user messages, so they are USERs; ``compactionSummary`` is a
  SUMMARY covering every earlier event.
* a ``compaction`` entry is a SUMMARY: pi sends its ``summary`` first, then the entries from
  ``firstKeptEntryId`` on, so it covers the events of the path before that entry. A compaction
  whose kept entries start between a call and its result covers the call but not the result —
  ``summary-splits-pair``, the stale compaction of earendil-works/pi#6832 and #8667.
* ``branch_summary`` and ``custom_message`` entries are sent as user messages (USER);
  ``model_change``, ``thinking_level_change``, ``custom``, ``label``, ``session_info`` and the
  ``session`` header are not sent and hold no event, nor does an entry of a type added after this
  reader was written (``buildSessionContext`` sends only the four above). An assistant block of a
  type this reader does not know is opaque content where it stands
  (:meth:`~models.chat_log.SessionBuilder.keep_opaque`), never a refusal.

An assistant message's ``usage`` (``input`` plus ``cacheRead`` and ``cacheWrite``) is the input of
the request that produced it, for ``lint --budget``
(:class:`~integrations.formats.usage.UsageWindows`).
pi talks to many providers: the rules applied by default are those of the ``api`` of the last
assistant message on the path (:data:`APIS`: ``anthropic-messages`` → Anthropic's, …), where
the session's next request goes; ``--provider`` names another.
Invariant kept: one pass reads the tree's ids, the next the entries on the path, in file order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.claude_code import records
from turncheck.integrations.formats.usage import Request, UsageWindows, reported_input
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.importers import Imported, LogFormat, build_sessions, read_text, register_format
from turncheck.models.sent_windows import model_of

SKIPPED = frozenset({"session", "model_change", "thinking_level_change", "custom", "label", "session_info"})
AS_USER = ("bashExecution", "custom", "branchSummary")


def blocks_text(content: Any, where: str) -> str:
    """Text of a string or of ``text`` / ``image`` blocks (an image holds none)."""
    if isinstance(content, list):
        content = [b for b in content if not (isinstance(b, Mapping) and b.get("type") == "image")]
    return text_of(content, where)


def add_assistant(b: SessionBuilder, message: Mapping[str, Any], where: str) -> None:
    content = message.get("content")
    if not isinstance(content, list):
        raise ImportFormatError(f"{where}: assistant content must be a list of blocks")
    texts: list[str] = []
    calls = thinking = False
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            texts.append(text_of([block], where))
        elif kind == "thinking":
            thinking = True
        elif kind == "toolCall":
            b.turn_call(
                str(block.get("id") or ""), arguments_text(block.get("arguments", {})), where, thinking
            )
            calls, thinking = True, False
        elif isinstance(kind, str):  # a block type added after this reader: sent, so costed
            b.keep_opaque(kind, block, texts)
        else:
            raise ImportFormatError(f"{where}: an assistant block without a 'type'")
    if not calls:
        b.answer("".join(texts), where)


def add_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One ``AgentMessage``."""
    if not isinstance(message, Mapping):
        raise ImportFormatError(f"{where}: a message entry without its 'message' object")
    role = message.get("role")
    if role == "user":
        b.user(blocks_text(message.get("content"), where), where)
    elif role == "assistant":
        add_assistant(b, message, where)
    elif role == "toolResult":
        b.result(str(message.get("toolCallId") or ""), blocks_text(message.get("content"), where), where)
    elif role == "bashExecution":
        if message.get("excludeFromContext") is not True:
            b.user(f"{message.get('command', '')}\n{message.get('output', '')}", where)
    elif role in AS_USER:
        b.user(blocks_text(message.get("content", message.get("summary")), where), where)
    elif role == "compactionSummary":
        b.summary(text_of(message.get("summary"), where), where)
    else:
        raise ImportFormatError(f"{where}: unknown message role {role!r}")


def read_pi(path: Path) -> Imported:
    text = read_text(path)
    parent: dict[str, str | None] = {}
    leaf = None
    for number, entry in records(path, text):
        if entry["type"] == "session":
            continue
        entry_id, up = entry.get("id"), entry.get("parentId")
        if not isinstance(entry_id, str) or not (up is None or isinstance(up, str)):
            raise ImportFormatError(f"{path}:{number}: an entry needs a string 'id' and a 'parentId'")
        parent[entry_id], leaf = up, entry_id
    on_path: set[str] = set()
    node = leaf
    while node is not None and node not in on_path:
        on_path.add(node)
        node = parent.get(node)
    first_event: dict[str, int] = {}  # entry id → seq of the first event it is or follows
    requests: dict[str, tuple[SessionBuilder, list[Request]]] = {}  # the answers with a usage
    apis: list[Any] = []

    def add(b: SessionBuilder, entry: Mapping[str, Any], where: str) -> None:
        first_event[str(entry["id"])] = b.next_seq
        kind = entry["type"]
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, Mapping) and message.get("role") == "assistant" and "api" in message:
                apis.append(message["api"])  # the last one's is where the next request goes
            asked(b, message, where, requests.setdefault(b.session, (b, []))[1])
            add_message(b, entry.get("message"), where)
        elif kind == "compaction":
            summary, kept = (
                text_of(entry.get("summary"), where),
                first_event.get(str(entry.get("firstKeptEntryId"))),
            )
            if kept == b.first_seq:  # everything kept: the summary stands for nothing in the file
                b.user(summary, where)
            else:
                b.summary(summary, where, None if kept is None else (b.first_seq, kept - 1))
        elif kind in ("branch_summary", "custom_message"):
            b.user(blocks_text(entry.get("summary", entry.get("content")), where), where)
        # any other entry type (SKIPPED, or one added after this reader) is not sent: pi's
        # buildSessionContext appends only messages, compactions and the two summaries

    groups = (
        (path.stem, [entry], f"{path}:{number}", None)
        for number, entry in records(path, text)
        if entry["type"] != "session" and entry.get("id") in on_path
    )
    imported = dataclasses.replace(
        build_sessions(groups, add), provider=APIS.get(str(apis[-1])) if apis else None
    )
    reported = UsageWindows(requests.values(), None)
    return dataclasses.replace(imported, reported=reported) if reported else imported


APIS = {"anthropic-messages": "anthropic", "openai-completions": "openai-chat",
        "openai-responses": "openai-responses", "google-generative-ai": "gemini", "google-vertex": "gemini",
        "bedrock-converse-stream": "bedrock"}  # fmt: skip
"""pi's ``api`` of an assistant message (pi-ai's ``Api``) → the provider rules it answers to."""


def asked(b: SessionBuilder, message: Any, where: str, requests: list[Request]) -> None:
    """An assistant message's ``usage`` (``input`` plus ``cacheRead`` and ``cacheWrite``) is the
    input of the request that produced it: noted with the events sent before it."""
    if isinstance(message, Mapping) and message.get("role") == "assistant":
        n = reported_input(message.get("usage"))
        if n is not None:
            requests.append((len(b.events), where, model_of(message.get("model")), n, None))


register_format(
    LogFormat(
        "pi",
        read_pi,
        "a pi coding agent session file (JSONL entries in a tree by id / parentId, session format 3, as pi-mono's docs/session.md describes it)",
    )
)
