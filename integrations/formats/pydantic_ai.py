"""``--from pydantic-ai``: Pydantic AI's message history as ``ModelMessagesTypeAdapter`` dumps it
(``dump_json(result.all_messages())``) — a JSON list of messages, or an object of such lists by
session.

A message is a ``request`` (what the agent sends) or a ``response`` (what the model returned),
each a list of ``parts`` named by ``part_kind``, kept in their order:

* request: ``user-prompt`` and ``retry-feedback`` are the USER (consecutive ones one message);
  ``tool-return`` (and its typed views ``tool-search-return``, ``capability-load-return``) is a
  RESULT by ``tool_call_id``; a ``retry-prompt`` naming a tool answers that call (a RESULT: it is
  sent as the tool's error), one without is a USER; ``system-prompt`` is the frame.
* response: ``tool-call`` (and ``tool-search-call``, ``capability-load-call``) is a CALL; without
  any, the ``text`` parts are the TERM; a native tool's ``builtin-tool-call`` and its
  ``builtin-tool-return`` in the same response are a CALL and its RESULT, as Anthropic's server
  tools are; a ``thinking`` part ties the response's later calls to its first call.
* ``compaction`` (either side) is a SUMMARY covering every earlier event of the session.
* The records of what changed in the run's set-up (``instruction-delta``,
  ``instruction-baseline``, ``model-settings-delta``, ``tool-availability-delta``,
  ``capability-load-delta``) and ``file`` / ``speech`` media hold no event.

A part of any other ``part_kind`` (one a later Pydantic AI adds) is opaque content where it stands
(:meth:`~models.chat_log.SessionBuilder.keep_opaque`: costed, ordered, never paired), never a
refusal; a message of any other ``kind``, a part without a ``part_kind``, or a known part on the
side that never holds it (a ``tool-call`` in a request), is refused by name. Pydantic AI sends to many APIs: a history
whose last response names its ``provider_name`` (:data:`PROVIDERS`: ``anthropic``, ``google-gla``,
``google-vertex``, ``bedrock``) is held to that API's rules by default; otherwise none apply
unless ``--provider`` names the one the agent's model is.
A run stopped after a response's tool calls leaves them unanswered in the stored history, and
the next run's request is built on it (pydantic/pydantic-ai#4728: "once a conversation is
poisoned, it stays poisoned"); the log keeps that CALL where it stands for ``lint`` to name.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.usage import Request, UsageWindows, reported_input
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import Imported, LogFormat, json_or_jsonl, loads, read_text, register_format
from turncheck.models.sent_windows import frame_text, model_of

CALLS = ("tool-call", "tool-search-call", "capability-load-call")
RETURNS = ("tool-return", "tool-search-return", "capability-load-return")
NO_EVENT = frozenset({
    "system-prompt", "instruction-delta", "instruction-baseline", "model-settings-delta",
    "tool-availability-delta", "capability-load-delta", "file", "speech",
})  # fmt: skip
REQUEST_KINDS = (
    frozenset({"user-prompt", "retry-feedback", "retry-prompt", "compaction", *RETURNS}) | NO_EVENT
)
RESPONSE_KINDS = (
    frozenset({"text", "thinking", "builtin-tool-call", "builtin-tool-return", "compaction", *CALLS})
    | NO_EVENT
)
"""The part kinds each side holds: one of the other side's there is refused, any other is opaque."""


def keep_unknown(b: SessionBuilder, part: Any, kind: str, texts: list[str], side: str, where: str) -> None:
    """A part of a kind this reader does not know is opaque content; a known one on the wrong side
    (a ``tool-call`` in a request) is not what Pydantic AI writes, and is refused by name."""
    if kind in (RESPONSE_KINDS if side == "request" else REQUEST_KINDS):
        raise ImportFormatError(f"{where}: a part of kind {kind!r} is not mapped in a {side}")
    b.keep_opaque(kind, part, texts)


def content_text(content: Any) -> str:
    """A part's content as text: a string as it is, anything else (a tool's structured return,
    a retry's list of validation errors) as JSON."""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def prompt_text(content: Any) -> str:
    """A user prompt's text: a string, or a list of strings and media (a media item holds none)."""
    if isinstance(content, list) and all(isinstance(x, str | Mapping) for x in content):
        return "".join(x for x in content if isinstance(x, str))
    return content_text(content)


def call_id(part: Mapping[str, Any], where: str) -> str:
    value = part.get("tool_call_id")
    if value is not None and not isinstance(value, str):
        raise ImportFormatError(f"{where}: tool_call_id must be a string")
    return value or ""


def add_request(b: SessionBuilder, parts: list[Any], where: str) -> None:
    texts: list[str] = []
    for part, kind in parts:
        if kind == "user-prompt":
            texts.append(prompt_text(part.get("content")))
        elif kind == "retry-feedback" or kind == "retry-prompt" and not part.get("tool_name"):
            texts.append(content_text(part.get("content")))
        elif kind in RETURNS or kind == "retry-prompt":
            b.user_text(texts, where)
            b.result(call_id(part, where), content_text(part.get("content")), where)
        elif kind == "compaction":
            b.user_text(texts, where)
            b.summary(content_text(part.get("content")), where)
        elif kind not in NO_EVENT:
            keep_unknown(b, part, kind, texts, "request", where)
    b.user_text(texts, where)


def add_response(b: SessionBuilder, parts: list[Any], where: str) -> None:
    texts: list[str] = []
    calls = thinking = False
    for part, kind in parts:
        if kind == "text":
            texts.append(content_text(part.get("content")))
        elif kind in CALLS or kind == "builtin-tool-call":
            b.turn_call(call_id(part, where), arguments_text(part.get("args") or {}), where, thinking)
            calls, thinking = calls or kind != "builtin-tool-call", False
        elif kind == "builtin-tool-return":
            b.result(call_id(part, where), content_text(part.get("content")), where)
        elif kind == "thinking":
            thinking = True
        elif kind == "compaction":
            b.summary(content_text(part.get("content")), where)
        elif kind not in NO_EVENT:
            keep_unknown(b, part, kind, texts, "response", where)
    if not calls:
        b.answer("".join(texts), where)


def add_model_message(b: SessionBuilder, message: Any, where: str) -> None:
    """One ``ModelRequest`` or ``ModelResponse`` as JSON."""
    if not isinstance(message, Mapping) or not isinstance(message.get("parts"), list):
        raise ImportFormatError(f"{where}: expected a message object with a 'parts' list")
    parts = []
    for part in message["parts"]:
        kind = part.get("part_kind") if isinstance(part, Mapping) else None
        if not isinstance(kind, str):
            raise ImportFormatError(f"{where}: a part without a 'part_kind'")
        parts.append((part, kind))
    if message.get("kind") == "request":
        add_request(b, parts, where)
    elif message.get("kind") == "response":
        add_response(b, parts, where)
    else:
        raise ImportFormatError(
            f"{where}: unknown message kind {message.get('kind')!r} (expected request or response)"
        )


PROVIDERS = {
    "anthropic": "anthropic",
    "google-gla": "gemini",
    "google-vertex": "gemini",
    "bedrock": "bedrock",
}
"""A response's ``provider_name`` → the rules of the API it came from (``openai`` is left out: its
models may be Chat Completions' or the Responses API's, which the name does not say)."""


def read_pydantic_ai(path: Path) -> Imported:
    """The history, held by default to the rules of the provider of its last response that names
    one (where the next request goes; :data:`PROVIDERS`). A response's ``usage`` (``RequestUsage``,
    its ``input_tokens`` holding the cache reads and writes) is the input of the request that
    produced it — the history before it, its frame the system-prompt parts and the instructions
    sent with it — judged by ``lint --budget`` as a trace's request is."""
    asked: dict[str, tuple[SessionBuilder, list[Request]]] = {}
    system: dict[str, list[str]] = {}  # per session, the system-prompt parts so far
    instructions: dict[str, str] = {}  # per session, the last request's instructions

    def add(b: SessionBuilder, message: Any, where: str) -> None:
        if isinstance(message, Mapping) and message.get("kind") == "request":
            parts = message.get("parts")
            system.setdefault(b.session, []).extend(
                content_text(p.get("content")) for p in (parts if isinstance(parts, list) else [])
                if isinstance(p, Mapping) and p.get("part_kind") == "system-prompt"
            )  # fmt: skip
            said = message.get("instructions")
            instructions[b.session] = said if isinstance(said, str) else ""
        if isinstance(message, Mapping) and message.get("kind") == "response":
            n = reported_input(message.get("usage"))
            if n is not None:
                texts = [*system.get(b.session, []), *filter(None, [instructions.get(b.session)])]
                request = (
                    len(b.events),
                    where,
                    model_of(message.get("model_name")),
                    n,
                    frame_text(texts, None),
                )
                asked.setdefault(b.session, (b, []))[1].append(request)
        add_model_message(b, message, where)

    imported = json_or_jsonl(path, "messages", add)
    provider = last_provider(path)
    reported = UsageWindows(asked.values(), provider)
    return dataclasses.replace(imported, provider=provider, reported=reported)


def last_provider(path: Path) -> str | None:
    """The ``provider_name`` of the file's last response naming one, as rules; for an object of
    histories by session, the one every session's last named response names (``None``: unnamed,
    sessions naming different ones, or not one of :data:`PROVIDERS`)."""
    try:
        value = loads(read_text(path), str(path))
    except json.JSONDecodeError:
        return None  # JSON lines of request bodies: each may go elsewhere
    histories = list(value.values()) if isinstance(value, Mapping) else [value]
    found = {history_provider(h) for h in histories}
    return found.pop() if len(found) == 1 else None


def history_provider(history: Any) -> str | None:
    """One history's last named ``provider_name``, as rules."""
    if not isinstance(history, list):
        return None
    names = [
        m.get("provider_name") for m in history if isinstance(m, Mapping) and m.get("kind") == "response"
    ]
    named = [n for n in names if isinstance(n, str)]
    return PROVIDERS.get(named[-1]) if named else None


register_format(
    LogFormat(
        "pydantic-ai",
        read_pydantic_ai,
        "Pydantic AI ModelMessagesTypeAdapter JSON (request / response messages of parts; read as pydantic-ai 2.68 writes it): a list, or an object of such lists by session",
    )
)
