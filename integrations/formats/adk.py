"""``--from adk``: Google ADK session events — a ``Session`` as ADK's own
``session.model_dump(mode="json")`` writes it (its ``events``, the session named by its ``id``),
a JSON list of ``Event`` dumps, or an object of such lists by session; fields spelled as the
plain dump writes them (``function_call``) or as ``by_alias=True`` does (``functionCall``).

An event's ``content`` is a Gemini ``Content`` and is read as ``--from gemini`` reads one
(:func:`~integrations.formats.gemini.add_gemini_content`: calls, responses, id-less pairing by name
and order); an event without content (state or actions only) adds nothing. Every event keeps
ADK's ``timestamp`` as its ``ts``, because ADK decides what a compaction hides by timestamp.

A compaction event (``actions.compaction``: ``start_timestamp``, ``end_timestamp``,
``compacted_content``) is a SUMMARY whose ``covers`` runs, by seq, over the events ADK gave its
summarizer: from the earlier event of its session stamped ``start_timestamp`` to the one stamped
``end_timestamp`` (:func:`compaction_covers`). A compaction whose range contains an earlier
one's replaces it, as in ADK (re-compaction); one that only overlaps it (the sliding window's
``overlap_size``) leaves it live, as ADK keeps both, and covers from after it. ADK itself hides *every* raw event
stamped inside a kept compaction's range, wherever it stands; so an event with a skewed clock —
stamped inside the range but written after the covered run — is hidden and summarised by
nothing, and ``lint`` names it (``clock-skew-coverage``); a call still open when it was
summarised is ``summary-covers-open-call``. A range holding no earlier event is the head of
the prompt, read as the message it is sent as (:meth:`~models.chat_log.SessionBuilder.summary`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.gemini import add_gemini_content, part_field
from turncheck.integrations.formats.usage import Request, UsageWindows, first_reported
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, text_of
from turncheck.models.events import Kind
from turncheck.models.importers import (
    Imported,
    LogFormat,
    build_sessions,
    loads,
    read_text,
    register_format,
    sessions_of_json,
)
from turncheck.models.sent_windows import model_of


def stamp(value: Any, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImportFormatError(f"{where}: {what} must be a number of seconds")
    return float(value)


def compaction_covers(b: SessionBuilder, start: float, end: float) -> tuple[int, int] | None:
    """The seqs of the events ADK summarised: ADK stamps a compaction with the ``timestamp`` of
    the first and the last event it gave the summarizer, so the run goes from the first event so
    far stamped ``start`` to the last stamped ``end`` (else the first / last stamped in between)."""
    inside = [e for e in b.events if e.kind is not Kind.SUMMARY and start <= e.ts <= end]
    if not inside:
        return None
    first = next((e for e in inside if e.ts == start), inside[0])
    last = next((e for e in reversed(inside) if e.ts == end and e.seq >= first.seq), inside[-1])
    for s in b.events[first.seq - b.first_seq : last.seq - b.first_seq]:
        if s.kind is Kind.SUMMARY and s.covers is not None and not subsumed(b, s.covers, start, end):
            first = next((e for e in inside if e.seq > s.seq), last)
    return first.seq, last.seq


def subsumed(b: SessionBuilder, covers: tuple[int, int], start: float, end: float) -> bool:
    """Whether ADK drops the earlier compaction covering ``covers`` for one over ``[start, end]``:
    it keeps every compaction whose range another's does not contain. A kept one stays live here
    too — the later summary's run starts after it (a seq range cannot skip it), so the events
    both summarise stay the earlier one's, as the prompt ADK builds sends them: hidden."""
    stamps = [e.ts for e in b.events[covers[0] - b.first_seq : covers[1] + 1 - b.first_seq]]
    return start <= min(stamps) and max(stamps) <= end


def add_adk_event(b: SessionBuilder, event: Any, where: str) -> None:
    """One ADK ``Event`` dump: its content as Gemini's, or its compaction as a SUMMARY."""
    if not isinstance(event, Mapping):
        raise ImportFormatError(f"{where}: expected an ADK event object, got {type(event).__name__}")
    b.clock = stamp(event.get("timestamp"), "'timestamp'", where)
    actions = event.get("actions") or {}
    if not isinstance(actions, Mapping):
        raise ImportFormatError(f"{where}: 'actions' must be an object")
    compaction = actions.get("compaction")
    if compaction is not None:
        if not isinstance(compaction, Mapping):
            raise ImportFormatError(f"{where}: 'actions.compaction' must be an object")
        start = stamp(part_field(compaction, "startTimestamp", "start_timestamp"), "a compaction's start_timestamp", where)  # fmt: skip
        end = stamp(part_field(compaction, "endTimestamp", "end_timestamp"), "a compaction's end_timestamp", where)  # fmt: skip
        content = part_field(compaction, "compactedContent", "compacted_content")
        if not isinstance(content, Mapping) or not isinstance(content.get("parts"), list):
            raise ImportFormatError(
                f"{where}: a compaction's compacted_content must be a Content with 'parts'"
            )
        b.summary(text_of(content["parts"], where, b), where, compaction_covers(b, start, end))
        return
    content = event.get("content")
    if content is None or isinstance(content, Mapping) and not content.get("parts"):
        return
    add_gemini_content(b, content, where)


def read_adk(path: Path) -> Imported:
    text = read_text(path)
    try:
        value = loads(text, str(path))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}: malformed JSON ({exc.msg})") from None
    if isinstance(value, Mapping) and isinstance(value.get("events"), list) and value.get("id"):
        groups = [(str(value["id"]), value["events"])]
    else:
        groups = sessions_of_json(value, path, "events")
    asked: dict[str, tuple[SessionBuilder, list[Request]]] = {}

    def add(b: SessionBuilder, event: Any, where: str) -> None:
        """An event the model answered with carries Gemini's ``usage_metadata`` (its
        ``prompt_token_count`` holds the cached content): the input of the request before it."""
        if isinstance(event, Mapping):
            n = first_reported(event.get("usage_metadata"), event.get("usageMetadata"))
            if n is not None:
                model = event.get("model_version", event.get("modelVersion"))
                asked.setdefault(b.session, (b, []))[1].append(
                    (len(b.events), where, model_of(model), n, None)
                )
        add_adk_event(b, event, where)

    imported = build_sessions([(s, evs, f"{path}: session {s!r}", 1) for s, evs in groups], add)
    return dataclasses.replace(imported, reported=UsageWindows(asked.values(), "gemini"))


register_format(
    LogFormat(
        "adk",
        read_adk,
        "Google ADK session events (content as Gemini's, compaction events as SUMMARYs): a Session's "
        'model_dump(mode="json"), a JSON list of Events, or an object of lists by session',
        provider="gemini",
    )
)
