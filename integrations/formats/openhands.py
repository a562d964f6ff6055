"""``--from openhands``: an OpenHands (software-agent-sdk) conversation's events — the objects of
its ``events/event-NNNNN-ID.json`` files, in order, as a JSON list or as JSONL, one event a line
(``jq -c . events/event-*.json > events.jsonl``) — each an object named by its ``kind``, as the
SDK's classes (``openhands/sdk/event/``) serialize — or the conversation's folder itself (its
``events/event-NNNNN-ID.json`` files in name order, which is the SDK's order): one history, so
``lint --from openhands FOLDER`` is one conversation, never an archive of one-event files.

The events the SDK turns into LLM messages map as they are sent: a ``MessageEvent``'s
``llm_message`` is the USER (role ``user``) or the TERM (role ``assistant``); an ``ActionEvent`` is
a CALL by ``tool_call_id`` (its ``tool_call.arguments``; parallel calls of one response are
consecutive events, and the ``thinking_blocks`` of the first tie the others to it); an
``ObservationEvent`` (its ``observation.content`` text), a ``UserRejectObservation`` (sent as
"Action rejected: REASON") and an ``AgentErrorEvent`` (its ``error``) are the RESULT answering
that id — a rejection is still the answer the API pairs (software-agent-sdk PR #432).
A ``Condensation`` is a SUMMARY covering the events it forgets (``forgotten_event_ids``, first
to last); a ``CondensationSummaryEvent`` is sent as a user message, so a USER. The system prompt
and the events the LLM never sees (state updates, pauses, interrupts, requests for condensation,
token and hook logs) hold no event; an event of any other ``kind`` (one the SDK adds later) is
opaque content where it stands (:meth:`~models.chat_log.SessionBuilder.keep_opaque`: on the
newest event, costed, never paired), counted in the one warning line, never a refusal.

OpenHands sends to many providers through LiteLLM; the rules applied by default are those of the
API the conversation's own ``base_state.json`` (beside ``events/``, as the SDK persists it) names in
``agent.llm`` (:func:`rules_of`): an ``anthropic/`` or ``claude-`` model Anthropic's, a ``gemini/``
or ``gemini-`` model Gemini's, an OpenAI model Chat Completions' or the Responses API's as its
``api_mode`` says (``auto`` does not say: none). A Bedrock model gets none: LiteLLM merges two user
(or assistant) messages in a row into one before Converse sees them, so Bedrock's roles rule would
name what is never sent (``--provider bedrock`` checks all four). A proxy (``litellm_proxy/``,
``openrouter/``, ``openhands/``, …), a file of joined events without its folder, or a
``base_state.json`` that is not one object: none, and the clean line says no API's rules ran.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, text_of
from turncheck.models.importers import (
    Imported,
    LogFormat,
    build_sessions,
    json_records,
    loads,
    read_text,
    register_format,
)

UNSEEN = frozenset({
    "SystemPromptEvent", "ConversationStateUpdateEvent", "CondensationRequest", "PauseEvent", "InterruptEvent",
    "TokenEvent", "HookExecutionEvent", "LLMCompletionLogEvent", "ConversationErrorEvent",
    "ACPToolCallEvent", "StreamingDeltaEvent",
})  # fmt: skip
"""The SDK's events that are no ``LLMConvertibleEvent`` (``openhands/sdk/event/``): never sent to the
model, so no event of the log (an ACP agent's own tool calls, streamed deltas, state, logs)."""
RESULTS = ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent")


def content_text(content: Any, where: str) -> str:
    """``TextContent`` items as text; an ``ImageContent`` holds none."""
    if isinstance(content, list):
        content = [c for c in content if not (isinstance(c, Mapping) and c.get("type") == "image")]
    return text_of(content, where)


def result_text(event: Mapping[str, Any], where: str) -> str:
    if event["kind"] == "UserRejectObservation":
        return f"Action rejected: {event.get('rejection_reason', 'User rejected the action')}"
    if event["kind"] == "AgentErrorEvent":
        return str(event.get("error", ""))
    observation = event.get("observation")
    if not isinstance(observation, Mapping):
        raise ImportFormatError(f"{where}: an ObservationEvent without its 'observation' object")
    return content_text(observation.get("content"), where) + content_text(
        event.get("extended_content"), where
    )


class Reader:
    """One conversation: events in order, and the seq each event id's events start at (for a
    condensation's forgotten ids)."""

    def __init__(self) -> None:
        self.seq_of: dict[str, int] = {}

    def add(self, b: SessionBuilder, event: Any, where: str) -> None:
        if not isinstance(event, Mapping) or not isinstance(event.get("kind"), str):
            raise ImportFormatError(f"{where}: expected an event object with a 'kind'")
        before = b.next_seq
        self.event(b, event, where)
        if isinstance(event.get("id"), str) and b.next_seq > before:
            self.seq_of[event["id"]] = before

    def event(self, b: SessionBuilder, event: Mapping[str, Any], where: str) -> None:
        kind = event["kind"]
        if kind == "MessageEvent":
            self.message(b, event, where)
        elif kind == "ActionEvent":
            call = event.get("tool_call")
            arguments = call.get("arguments", "") if isinstance(call, Mapping) else ""
            thinking = bool(event.get("thinking_blocks"))
            b.turn_call(str(event.get("tool_call_id") or ""), str(arguments), where, thinking)
        elif kind in RESULTS:
            b.result(str(event.get("tool_call_id") or ""), result_text(event, where), where)
        elif kind == "Condensation":
            self.condensation(b, event, where)
        elif kind == "CondensationSummaryEvent":
            b.user(text_of(event.get("summary"), where), where)
        elif kind not in UNSEEN:  # a kind added after this reader: kept, costed, never paired
            b.keep_opaque(kind, event, [])

    def message(self, b: SessionBuilder, event: Mapping[str, Any], where: str) -> None:
        message = event.get("llm_message")
        if not isinstance(message, Mapping):
            raise ImportFormatError(f"{where}: a MessageEvent without its 'llm_message' object")
        text = content_text(message.get("content"), where) + content_text(
            event.get("extended_content"), where
        )
        role = message.get("role")
        if role == "user":
            b.user(text, where)
        elif role == "assistant":
            b.answer(text, where)
        elif role != "system":
            raise ImportFormatError(f"{where}: unknown message role {role!r}")

    def condensation(self, b: SessionBuilder, event: Mapping[str, Any], where: str) -> None:
        forgotten = event.get("forgotten_event_ids", [])
        if not isinstance(forgotten, list):
            raise ImportFormatError(f"{where}: forgotten_event_ids must be a list")
        seqs = sorted(self.seq_of[f] for f in forgotten if f in self.seq_of)
        summary = event.get("summary") or ""
        if seqs:
            b.summary(text_of(summary, where), where, (seqs[0], seqs[-1]))
        elif summary:
            b.user(text_of(summary, where), where)


EVENT_FILES = "event-*.json"
"""How the SDK names a conversation's event files (``event-NNNNN-ID.json``: sorted, in order)."""


def event_files(folder: Path) -> list[Path]:
    """A conversation folder's event files in order: ``FOLDER/events/event-*.json`` (the
    conversation's own folder) or ``FOLDER/event-*.json`` (its ``events`` folder); regular files
    only, never a symlink followed. Refused when there is none."""
    events = folder / "events" if (folder / "events").is_dir() else folder
    files = sorted(p for p in events.glob(EVENT_FILES) if p.is_file() and not p.is_symlink())
    if not files:
        raise ImportFormatError(f"{folder}: no OpenHands event files ({EVENT_FILES}) in it or in its events/")
    return files


def events_of(path: Path) -> list[tuple[Any, str]]:
    """Every event with the place it came from, in order: a conversation folder's event files,
    one event file (a JSON object, as the SDK writes it: indented), a JSON list, or one event a line."""
    if path.is_dir():
        return [event for file in event_files(path) for event in events_of(file)]
    text = read_text(path)
    try:
        value = loads(text, str(path))
    except json.JSONDecodeError:
        value = None
    if isinstance(value, list):
        return [(event, f"{path}: event {i}") for i, event in enumerate(value, start=1)]
    if isinstance(value, Mapping) and "kind" in value:
        return [(value, str(path))]
    return [(record, f"{path}:{number}") for number, record in json_records(path, text)]


BASE_STATE = "base_state.json"
"""The conversation's persisted state beside its ``events/`` (``persistence_const.BASE_STATE``)."""
OPENAI_MODELS = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-")
"""Bare LiteLLM model names of OpenAI's (LiteLLM routes them to OpenAI)."""
API_MODES = {"chat": "openai-chat", "responses": "openai-responses"}


def rules_of(llm: Any) -> str | None:
    """The rules of the API an ``agent.llm`` config sends to, from its LiteLLM ``model`` string
    (``provider/model`` or a bare name LiteLLM knows) and ``api_mode``; ``None`` when it does not
    say (a proxy, an ``auto`` OpenAI model, Bedrock through LiteLLM: see the module's doc)."""
    if not isinstance(llm, Mapping) or not isinstance(llm.get("model"), str):
        return None
    model = llm["model"].strip().lower()
    prefix, _, name = model.rpartition("/")
    if prefix == "anthropic" or (not prefix and name.startswith("claude")):
        return "anthropic"
    if prefix == "vertex_ai" and name.startswith("claude"):
        return "anthropic"  # Claude on Vertex AI: Anthropic's Messages API
    if prefix in ("gemini", "vertex_ai") or (not prefix and name.startswith("gemini")):
        return "gemini" if name.startswith("gemini") else None
    if prefix in ("openai", "azure") or (not prefix and name.startswith(OPENAI_MODELS)):
        return API_MODES.get(str(llm.get("api_mode", "auto")))
    return None


def conversation_folder(path: Path) -> Path | None:
    """The folder holding the conversation's ``base_state.json``: the folder given (or the one
    above its ``events/``), or the one above the ``events/`` an event file is in."""
    if path.is_dir():
        return path.parent if path.name == "events" else path
    return path.parent.parent if path.parent.name == "events" else None


def recorded_rules(path: Path) -> str | None:
    """The rules of the API the conversation's ``base_state.json`` names (:func:`rules_of`), never
    through a symlink; ``None`` when there is no such regular file or it is not a state object."""
    folder = conversation_folder(path)
    state_file = folder / BASE_STATE if folder is not None else None
    if state_file is None or state_file.is_symlink() or not state_file.is_file():
        return None
    try:
        state = loads(read_text(state_file), str(state_file))
    except (json.JSONDecodeError, ImportFormatError):
        return None  # a state the SDK could not have written: the events are still read
    agent = state.get("agent") if isinstance(state, Mapping) else None
    return rules_of(agent.get("llm")) if isinstance(agent, Mapping) else None


def read_openhands(path: Path) -> Imported:
    reader = Reader()
    folder = path.parent if path.is_dir() and path.name == "events" else path  # the conversation's
    session = folder.name if path.is_dir() else path.stem
    imported = build_sessions(
        ((session, [event], where, None) for event, where in events_of(path)), reader.add
    )
    return dataclasses.replace(imported, provider=recorded_rules(path))


register_format(
    LogFormat(
        "openhands",
        read_openhands,
        "an OpenHands (software-agent-sdk) conversation's events: its folder (events/event-*.json), one event file, a JSON list or JSONL",
        folders=True,
        history_folder=lambda p: (p / "events").is_dir() or any(p.glob(EVENT_FILES)),
        not_histories=frozenset({BASE_STATE}),
    )
)
