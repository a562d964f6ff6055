"""``--from openai-responses``: OpenAI Responses API input items (``message``, ``function_call``,
``function_call_output``) — a JSON list, ``{"input": […]}``, or JSONL of request bodies.

A ``compaction`` item (``/responses/compact``, or server-side compaction) is a SUMMARY covering
every earlier event of the session: the docs let a client drop every item before the newest
compaction item, whose ``encrypted_content`` carries them (its text here: opaque, but what is sent).
``/responses/compact`` returns the user messages followed by one compaction item: a compaction
with only user messages before it stands for items the file no longer holds, and is read as the
message it is sent as (:meth:`~models.chat_log.SessionBuilder.summary` with nothing to cover). An item of another
type (``web_search_call``, ``image_generation_call``, a type added later) is opaque content where
it stands (:meth:`~models.chat_log.SessionBuilder.keep_opaque`), as is a content part that is not text;
a tool item that pairs by ``call_id`` (``custom_tool_call``, ``computer_call``… and their
``*_output``) is a CALL or RESULT as ``function_call`` is (:func:`is_paired`).

JSONL of request bodies shows what each request sent: a call one body sent after its
``reasoning`` item and a later body sends without it (a store that dropped reasoning items, a
trimmer that pruned them: vercel/ai#11036) is tied to that reasoning item's id — no call bears it,
so ``reasoning-not-sent`` flags the call where it was sent bare.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text, text_of
from turncheck.models.events import Kind
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format

ITEM_KEYS = ("type", "id", "call_id", "status")
"""What every tool item holds besides its call: a paired item's other fields are its arguments
(``input`` of a ``custom_tool_call``, ``action`` of a ``computer_call``)."""


def is_paired(item: Mapping[str, Any], suffix: str) -> bool:
    """A tool item that pairs by ``call_id`` as ``function_call`` does (``custom_tool_call``,
    ``computer_call``, ``local_shell_call`` and their ``*_output``): the API refuses an output
    without its call just the same. Self-contained items (``web_search_call``: no ``call_id``)
    are opaque content."""
    kind = item.get("type")
    return isinstance(kind, str) and kind.endswith(suffix) and isinstance(item.get("call_id"), str)


def add_response_item(
    b: SessionBuilder, item: Any, where: str, produced: dict[tuple[str, str], str] | None = None
) -> None:
    """One Responses API input item: a message, ``function_call`` or ``function_call_output``.
    A ``reasoning`` item is no event, but the calls of the output it opens are tied: it rides
    with the first (its required following item), and each later call is ``tied_to`` that one.
    ``produced`` (one file's, across its request bodies): the reasoning item each call (id and
    arguments) was first sent after; the same call sent with no reasoning before it is tied to that
    item (see the module)."""
    if not isinstance(item, Mapping):
        raise ImportFormatError(f"{where}: expected an input item object, got {type(item).__name__}")
    kind = item.get("type", "message" if "role" in item else None)
    carrier, b.carrier = b.carrier, "" if kind == "reasoning" else None
    reasoning, b.reasoning = b.reasoning, str(item.get("id") or "") if kind == "reasoning" else ""
    if kind == "message":
        role = item.get("role")
        if role in ("system", "developer"):
            return
        if role == "user":
            b.user(text_of(item.get("content"), where, b), where)
        elif role == "assistant":
            b.answer(text_of(item.get("content"), where, b), where)
        else:
            raise ImportFormatError(f"{where}: unknown message role {role!r}")
    elif kind == "function_call" or is_paired(item, "_call"):
        call_id = str(item.get("call_id") or "")
        rest = {k: v for k, v in item.items() if k not in ITEM_KEYS}
        arguments = item.get("arguments", "" if kind == "function_call" else rest)
        text, tie = arguments_text(arguments), carrier or None
        if produced is not None and carrier == "" and reasoning:
            produced.setdefault((call_id, text), reasoning)
        elif produced is not None and carrier is None and (call_id, text) in produced:
            tie = produced[call_id, text]  # sent before after its reasoning item, now without it
        b.call(call_id, text, where, tie)
        b.carrier = carrier or (call_id if carrier == "" else None)
    elif kind == "function_call_output" or is_paired(item, "_call_output"):
        output = item.get("output")
        text = arguments_text(output) if isinstance(output, Mapping) else text_of(output, where, b)
        b.result(str(item.get("call_id") or ""), text, where)
    elif kind == "reasoning":
        return
    elif kind == "compaction":
        text = text_of(item.get("encrypted_content"), where, b)
        if all(e.kind is Kind.USER for e in b.events):
            b.user(text, where)
        else:
            b.summary(text, where)
    elif isinstance(kind, str):
        b.keep_opaque(kind, item, [])
    else:
        raise ImportFormatError(f"{where}: an input item without a 'type'")


register_format(
    LogFormat(
        "openai-responses",
        lambda path: json_or_jsonl(path, "input", functools.partial(add_response_item, produced={})),
        'a JSON list of Responses API input items (message, function_call, function_call_output), {"input": […]}, or JSONL of request bodies',
        provider="openai-responses",
    )
)
