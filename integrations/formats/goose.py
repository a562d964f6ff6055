"""``--from goose``: a Goose (aaif-goose/goose, formerly block/goose) session — the ``sessions.db``
SQLite database current releases keep (``~/.local/share/goose/sessions/sessions.db``: every session
in it), or a session file of the releases before it (``sessions/NAME.jsonl``: a metadata line,
then one ``Message`` a line, as ``storage.rs`` ``save_messages_with_metadata`` writes it).

What the files hold, read in the source (docs/your-agent.md names the commits):

* a ``Message`` is ``{"id", "role": "user"|"assistant", "created", "content": [part, …],
  "metadata": {"userVisible", "agentVisible"}}`` (the JSONL of older releases has no
  ``metadata``); in the database each row of ``messages`` holds ``role``, ``content_json`` (the
  parts) and ``metadata_json``, read back ``ORDER BY created_timestamp, id`` as goose does;
* a part is named by ``type``: ``text``; ``toolRequest`` (``id``, ``toolCall`` ``{"status":
  "success", "value": {"name", "arguments"}}`` or ``{"status": "error", "error"}``) is a CALL;
  ``toolResponse`` (``id``, ``toolResult`` ``{"status": "success", "value": {"content": [...]}}``,
  the older ``"value": [...]``, or ``{"status": "error", "error"}``) is the RESULT answering it —
  an error is still the answer sent; ``thinking`` / ``redactedThinking`` (and the older
  ``reasoning``) tie the turn's later calls to the first call after them, as Anthropic's
  ``thinking`` does; ``image`` carries no text an event holds. The parts goose keeps for its own
  UI and never sends (``toolConfirmationRequest``, ``actionRequired``, ``frontendToolRequest``,
  ``systemNotification``, ``contextLengthExceeded``, ``summarizationRequested``,
  ``conversationCompacted``) hold no event; any other type is opaque content
  (:mod:`models.chat_log`).
* compaction (``context_mgmt::compact_messages``) keeps every message, marks those it replaces
  ``agentVisible: false``, and adds the summary as a *user* message with ``userVisible: false``
  (then an assistant continuation, also agent-only). Such a summary is a SUMMARY covering the
  messages hidden since the previous one, so ``lint`` checks what it replaced: a call still open
  across it is ``summary-covers-open-call``. Hidden messages are events where they stand (they
  were sent before the compaction), and a later compaction's summary covers the earlier one.

Goose sends to many providers: a database whose sessions all name one ``provider_name`` of
:data:`PROVIDERS` (``anthropic``, ``google``, ``aws_bedrock``) is held to that API's rules by
default (Anthropic's for aaif-goose/goose#6336's "tool_use ids were found without tool_result
blocks immediately after"); otherwise, and for the older JSONL, none apply unless ``--provider``
names them.

The database is read without opening the user's file with SQLite at all: the file (and its
``-wal``, which holds what goose committed but has not checkpointed) is copied into a private
temporary folder and that copy is opened by plain file name — no URI, nothing written beside the
user's file, a symlink refused — under a size bound, SQLite's length limit and a time limit (a
hostile database is a program).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import (
    Group,
    Imported,
    LogFormat,
    bounded_reads,
    build_sessions,
    json_records,
    loads,
    read_text,
    register_format,
)

SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_DB_BYTES = 1 << 30
"""The largest ``sessions.db`` (with its ``-wal``) copied for reading."""
READ_SECONDS = 10.0
MAX_VALUE_BYTES = 1 << 26
UNSENT = frozenset({
    "toolConfirmationRequest", "actionRequired", "frontendToolRequest", "systemNotification",
    "contextLengthExceeded", "summarizationRequested", "conversationCompacted",
})  # fmt: skip
THINKING = frozenset({"thinking", "redactedThinking", "reasoning"})


def tool_text(result: Any, where: str) -> str:
    """A ``toolResponse``'s ``toolResult`` as the text sent: the text items of its content (the
    ``{"content": [...]}`` of rmcp's ``CallToolResult``, or the older bare list), or its error."""
    if not isinstance(result, Mapping):
        raise ImportFormatError(f"{where}: a toolResponse without its toolResult object")
    if result.get("status") == "error":
        return str(result.get("error", ""))
    value = result.get("value")
    items = value.get("content", []) if isinstance(value, Mapping) else value
    if not isinstance(items, list):
        raise ImportFormatError(f"{where}: a toolResult whose value is neither a CallToolResult nor a list")
    texts = [str(i["text"]) for i in items if isinstance(i, Mapping) and isinstance(i.get("text"), str)]
    return "\n".join(texts)


def call_arguments(call: Any) -> str:
    if (
        isinstance(call, Mapping)
        and call.get("status") == "success"
        and isinstance(call.get("value"), Mapping)
    ):
        return arguments_text(call["value"].get("arguments") or {})
    return str(call.get("error", "")) if isinstance(call, Mapping) else ""


class Reader:
    """One session's messages in order: what each maps to, and the hidden events (sent, then
    replaced by a compaction) no summary covers yet."""

    def __init__(self) -> None:
        self.hidden: list[int] = []

    def add(self, b: SessionBuilder, message: Any, where: str) -> None:
        if not isinstance(message, Mapping):
            raise ImportFormatError(f"{where}: expected a message object, got {type(message).__name__}")
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            raise ImportFormatError(f"{where}: unknown message role {role!r} (expected user or assistant)")
        if not isinstance(content, list):
            raise ImportFormatError(f"{where}: content must be a list of parts, got {type(content).__name__}")
        meta: Mapping[str, Any] = message["metadata"] if isinstance(message.get("metadata"), Mapping) else {}
        agent_visible, user_visible = meta.get("agentVisible", True), meta.get("userVisible", True)
        before = b.next_seq
        if role == "user" and agent_visible and not user_visible and self.hidden:
            self.summary(b, content, where)
            return
        self.parts(b, role, content, where)
        if not agent_visible:
            self.hidden.extend(range(before, b.next_seq))

    def summary(self, b: SessionBuilder, content: list[Any], where: str) -> None:
        text = "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
        b.summary(text, where, (min(self.hidden), max(self.hidden)))
        self.hidden.clear()

    def parts(self, b: SessionBuilder, role: str, content: list[Any], where: str) -> None:
        texts: list[str] = []
        calls = thinking = sent = False
        before = len(b.events)
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if not isinstance(kind, str):
                raise ImportFormatError(f"{where}: a content part without a 'type'")
            sent = sent or kind not in UNSENT
            if kind == "text":
                texts.append(str(part.get("text", "")))
            elif kind == "toolRequest" and role == "assistant":
                b.turn_call(str(part.get("id") or ""), call_arguments(part.get("toolCall")), where, thinking)
                calls, thinking = True, False
            elif kind == "toolResponse" and role == "user":
                b.user_text(texts, where)
                b.result(str(part.get("id") or ""), tool_text(part.get("toolResult"), where), where)
            elif kind in THINKING and role == "assistant":
                thinking = True
            elif kind not in UNSENT and kind != "image":
                b.keep_opaque(kind, part, texts)
        if not sent:
            return  # only what goose shows its user: never sent
        if role == "user":
            b.user_text(texts, where)
            if len(b.events) == before:  # an image alone is still the user message sent
                b.user("", where)
        elif not calls:
            b.answer("".join(texts), where)


def jsonl_groups(path: Path) -> Iterator[Group]:
    """A session file's messages, the metadata line (``SessionMetadata``: ``description`` and
    ``message_count`` are the fields goose requires of it) skipped."""
    for number, record in json_records(path, read_text(path)):
        if number == 1 and isinstance(record, Mapping) and {"description", "message_count"} <= record.keys():
            continue  # SessionMetadata: its two fields goose's reader requires
        yield (path.stem, [record], f"{path}:{number}", None)


def private_copy(path: Path, folder: str) -> Path:
    """``path`` (a regular file, not a symlink) and its ``-wal`` copied into ``folder``."""
    copy = Path(folder) / "sessions.db"
    total = 0
    for source, target in ((path, copy), (Path(f"{path}-wal"), Path(f"{copy}-wal"))):
        try:
            fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            if source == path:
                raise ImportFormatError(f"{path}: no such file") from None
            continue
        except OSError as exc:
            raise ImportFormatError(
                f"{source}: not read ({exc.strerror or exc}; a symlink is refused)"
            ) from None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            total += info.st_size
            if not stat.S_ISREG(info.st_mode) or total > MAX_DB_BYTES:
                raise ImportFormatError(f"{source}: not a regular file of at most {MAX_DB_BYTES >> 20} MiB")
            with target.open("wb") as out:
                shutil.copyfileobj(fh, out)
    return copy


def database_groups(path: Path, con: sqlite3.Connection) -> Iterator[Group]:
    rows = con.execute(
        "SELECT m.id, m.session_id, m.role, m.content_json, m.metadata_json FROM messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id "
        "ORDER BY s.created_at, m.session_id, m.created_timestamp, m.id"
    )
    for row_id, session, role, content, metadata in rows:
        where = f"{path}: messages row {row_id}"
        try:
            parts = loads(content, where)
            meta = loads(metadata, where) if metadata else {}
        except (TypeError, json.JSONDecodeError):
            raise ImportFormatError(f"{where}: content_json or metadata_json is not JSON") from None
        yield (str(session), [{"role": role, "content": parts, "metadata": meta}], where, None)


PROVIDERS = {"anthropic": "anthropic", "google": "gemini", "aws_bedrock": "bedrock"}
"""Goose's ``provider_name`` → the rules of the one API that provider talks to (``openai`` is left
out: Goose sends some of its models through the Responses API, others through Chat Completions)."""


def sessions_provider(con: sqlite3.Connection) -> str | None:
    """The rules the database's sessions answer to: their one ``provider_name``, when every session
    with messages names the same mapped one."""
    try:
        rows = con.execute(
            "SELECT DISTINCT s.provider_name FROM sessions s WHERE EXISTS "
            "(SELECT 1 FROM messages m WHERE m.session_id = s.id)"
        ).fetchall()
    except sqlite3.OperationalError:  # an older schema, without provider_name: the file does not say
        return None
    names = {row[0] for row in rows}
    return PROVIDERS.get(str(next(iter(names)))) if len(names) == 1 else None


def read_database(path: Path) -> Imported:
    deadline = time.monotonic() + READ_SECONDS
    with tempfile.TemporaryDirectory(prefix="turncheck-goose-") as folder:
        copy = private_copy(path, folder)
        try:
            with contextlib.closing(sqlite3.connect(str(copy))) as con:
                con = bounded_reads(con, deadline, MAX_VALUE_BYTES)
                imported = read_sessions(database_groups(path, con))
                return dataclasses.replace(imported, provider=sessions_provider(con))
        except sqlite3.DatabaseError as exc:
            if time.monotonic() > deadline:
                raise ImportFormatError(
                    f"{path}: reading messages took over {READ_SECONDS:g} s; refused"
                ) from None
            raise ImportFormatError(f"{path}: not a goose sessions database ({exc})") from None


def read_sessions(groups: Iterator[Group]) -> Imported:
    readers: dict[str, Reader] = {}

    def add(b: SessionBuilder, message: Any, where: str) -> None:
        readers.setdefault(b.session, Reader()).add(b, message, where)

    return build_sessions(groups, add)


def read_goose(path: Path) -> Imported:
    """A ``sessions.db`` (by its SQLite header) or a session ``.jsonl``."""
    if path.is_symlink():
        raise ImportFormatError(f"{path}: a symlink (refused: name the file itself)")
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    return read_database(path) if head == SQLITE_MAGIC else read_sessions(jsonl_groups(path))


register_format(
    LogFormat(
        "goose",
        read_goose,
        "a Goose session: its sessions.db (every session in it) or an older sessions/NAME.jsonl",
    )
)
