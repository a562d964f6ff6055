"""Foreign agent logs as our event log: ``turncheck import --from FORMAT`` (and ``--from`` on
``lint`` and ``project``).

| format | what the file holds |
|--------|---------------------|
| ``openai-chat`` | a JSON list of Chat Completions messages, a request body ``{"messages": […]}``, or JSONL of request bodies |
| ``openai-responses`` | a JSON list of Responses API input items (``message``, ``function_call``, ``function_call_output``), ``{"input": […]}``, or JSONL of request bodies |
| ``langchain`` | ``langchain_core.messages.messages_to_dict`` output (a list), or an object of such lists by session |
| ``agents-sqlite`` | the SQLite database the OpenAI Agents SDK's ``SQLiteSession`` writes (every session in it) |
| ``llamaindex`` | ``ChatMessage.model_dump()`` dumps (a list), or an object of such lists by session |

A JSON list is one session named after the file; an object maps session names to lists.
JSONL of request bodies is how chat-completion logs are usually kept: each line is the whole
conversation so far, so a line that extends the previous line of its session adds only its new
messages, and a line that does not starts a new session (named by the body's ``metadata``
``session_id``, else ``user``, else ``FILE-N``).

Invariant kept: the output is the log as the file holds it (:mod:`models.chat_log`) — seq strictly
increasing over the whole file, sessions contiguous, one event per record, each event knowing its
record (:attr:`Imported.origins`). It is *not* promised well formed: an orphaned result, a call
answered twice, a result before its call are kept in place for ``lint`` to name. Only what is
not the format at all — not JSON, wrong shapes or types, a call or result without an id, an
unknown role — is refused, with one line naming the record.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turncheck.models.chat_log import (
    ImportFormatError,
    SessionBuilder,
    add_openai_message,
    add_response_item,
    arguments_text,
    text_of,
)
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event

FORMATS = ("openai-chat", "openai-responses", "langchain", "agents-sqlite", "llamaindex")
AddRecord = Callable[[SessionBuilder, Any, str], None]


@dataclass(frozen=True)
class Imported:
    """An imported log: ``events`` in seq order, and ``origins[i]`` naming the record of the
    foreign file event ``i`` came from (what ``lint --from`` shows in place of a line number)."""

    events: list[Event]
    origins: list[str]

    def located(self) -> list[tuple[int | str, Event]]:
        return list(zip(self.origins, self.events, strict=True))


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


def add_llamaindex_message(b: SessionBuilder, record: Any, where: str) -> None:
    """One ``ChatMessage.model_dump()``: ``role``, ``blocks`` (or ``content``), ``additional_kwargs``."""
    if not isinstance(record, Mapping) or "role" not in record:
        raise ImportFormatError(f"{where}: expected a ChatMessage dump with a 'role'")
    role, extra = record["role"], record.get("additional_kwargs") or {}
    blocks = record.get("blocks")
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    if blocks is None:
        texts.append(text_of(record.get("content"), where))
    else:
        for block in blocks:
            kind = block.get("block_type") if isinstance(block, Mapping) else None
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_call":
                calls.append(
                    (str(block.get("tool_call_id") or ""), arguments_text(block.get("tool_kwargs", {})))
                )
            else:
                raise ImportFormatError(f"{where}: content block of type {kind!r} is not text or a tool call")
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


def _sessions_of_json(value: Any, path: Path, list_key: str) -> list[tuple[str, list[Any]]]:
    if isinstance(value, list):
        return [(path.stem, value)]
    if isinstance(value, Mapping) and isinstance(value.get(list_key), list):
        return [(_session_name(value, path.stem), value[list_key])]
    if isinstance(value, Mapping) and value and all(isinstance(v, list) for v in value.values()):
        return [(str(k), v) for k, v in value.items()]
    raise ImportFormatError(
        f"{path}: expected a list of records, {{{list_key!r}: […]}}, or an object of lists by session"
    )


def _session_name(body: Mapping[str, Any], fallback: str) -> str:
    meta = body.get("metadata")
    if isinstance(meta, Mapping) and meta.get("session_id"):
        return str(meta["session_id"])
    if body.get("user"):
        return str(body["user"])
    return fallback


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split at ``\\n`` only. ``str.splitlines`` also splits at
    U+0085, U+2028 and U+2029, which JSON strings may hold raw, and would cut a record in two."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _sessions_of_jsonl(path: Path, text: str, list_key: str) -> list[tuple[str, list[Any], int, int]]:
    """JSONL request bodies → (session, new records, line, records before them) in file order."""
    out: list[tuple[str, list[Any], int, int]] = []
    seen: dict[str, list[Any]] = {}  # session → the whole conversation so far
    counter = 0
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            body = _loads(line, f"{path}:{number}")
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{path}:{number}: malformed JSON ({exc.msg})") from None
        if not isinstance(body, Mapping) or not isinstance(body.get(list_key), list):
            raise ImportFormatError(f"{path}:{number}: expected a request body with a {list_key!r} list")
        records = body[list_key]
        named = _session_name(body, "")
        candidates = [named] if named else [s for s in reversed(seen) if s.startswith(f"{path.stem}-")][:1]
        session = next((s for s in candidates if s in seen and records[: len(seen[s])] == seen[s]), None)
        if session is None:
            counter += 1
            session = named or f"{path.stem}-{counter}"
            if session in seen:
                raise ImportFormatError(
                    f"{path}:{number}: session {session!r} does not continue its previous request "
                    "(its messages are not an extension of the earlier ones)"
                )
            seen[session] = []
        out.append((session, records[len(seen[session]) :], number, len(seen[session])))
        seen[session] = list(records)
    return out


Group = tuple[str, Sequence[Any], str, int | None]
"""(session, records, where, number of the first record — ``None`` when ``where`` names the
one record the group holds)."""


def _build(groups: Sequence[Group], add: AddRecord) -> Imported:
    """Build every session (a session may arrive in several groups); seq over the whole file."""
    builders: dict[str, SessionBuilder] = {}
    for session, records, where, first in groups:
        b = builders.setdefault(session, SessionBuilder(session))
        for i, record in enumerate(records, start=first or 0):
            add(b, record, where if first is None else f"{where}: record {i}")
    events: list[Event] = []
    origins: list[str] = []
    for b in builders.values():
        b.first_seq = len(events)
        events.extend(_reseq(b.events, b.first_seq))
        origins.extend(b.origins)
    return Imported(events, origins)


def _reseq(events: list[Event], first: int) -> list[Event]:
    return [dataclasses.replace(e, seq=first + i, ts=float(first + i)) for i, e in enumerate(events)]


def _loads(text: str | bytes, where: str) -> Any:
    """``json.loads``, with the two ways it fails on hostile input besides malformed JSON — nesting
    too deep for the parser, an integer past Python's 4300-digit limit — as one-line
    :class:`ImportFormatError` (malformed JSON is left to the caller: some fall back to lines)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ImportFormatError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:
        raise ImportFormatError(f"{where}: unreadable JSON ({str(exc).splitlines()[0][:80]})") from None


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _json_or_jsonl(path: Path, list_key: str, add: AddRecord) -> Imported:
    text = _read_text(path)
    try:
        value = _loads(text, str(path))
    except json.JSONDecodeError as exc:
        if len([line for line in json_lines(text) if line.strip()]) < 2:
            raise ImportFormatError(f"{path}: malformed JSON ({exc.msg})") from None
        value = None  # JSON lines: one request body per line
    if value is not None:
        return _build(
            [(s, recs, f"{path}: session {s!r}", 1) for s, recs in _sessions_of_json(value, path, list_key)],
            add,
        )
    return _build(
        [(s, recs, f"{path}:{n}", k + 1) for s, recs, n, k in _sessions_of_jsonl(path, text, list_key)], add
    )


def _agents_sqlite(path: Path) -> Imported:
    """Every session of a ``SQLiteSession`` database, items in the order they were added.

    The database is opened read-only through a URI built from the resolved path (``?``, ``#`` and
    ``%`` percent-encoded), so a name that looks like URI parameters opens that very file and
    never creates one."""
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = con.execute(
                "SELECT session_id, id, message_data FROM agent_messages ORDER BY id"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise ImportFormatError(f"{path}: not an OpenAI Agents SDK session database ({exc})") from None
    groups: list[Group] = []
    for session, row_id, data in rows:
        try:
            item = _loads(data, f"{path}: agent_messages row {row_id}")
        except (TypeError, json.JSONDecodeError):
            raise ImportFormatError(
                f"{path}: agent_messages row {row_id}: message_data is not JSON"
            ) from None
        groups.append((str(session), [item], f"{path}: agent_messages row {row_id}", None))
    return _build(groups, add_response_item)


def import_events(fmt: str, path: Path) -> list[Event]:
    """The events of ``path`` read as ``fmt`` (one of :data:`FORMATS`)."""
    return import_log(fmt, path).events


def import_log(fmt: str, path: Path) -> Imported:
    """``path`` read as ``fmt``: its events and the record each came from."""
    if fmt == "openai-chat":
        return _json_or_jsonl(path, "messages", add_openai_message)
    if fmt == "openai-responses":
        return _json_or_jsonl(path, "input", add_response_item)
    if fmt == "langchain":
        return _json_or_jsonl(path, "messages", add_langchain_message)
    if fmt == "llamaindex":
        return _json_or_jsonl(path, "messages", add_llamaindex_message)
    if fmt == "agents-sqlite":
        return _agents_sqlite(path)
    raise BadParameter(f"--from must be one of {', '.join(FORMATS)}, got {fmt!r}")
