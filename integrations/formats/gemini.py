"""``--from gemini``: Google Gemini ``contents`` — a JSON list of ``Content`` objects (``role``
``user`` or ``model``, ``parts``), a request body ``{"contents": […]}`` (``systemInstruction`` is
the frame), or JSONL of request bodies; parts spelled as the REST API and ``google-genai``'s
``model_dump(by_alias=True)`` write them (``functionCall``) or as its plain ``model_dump()``
(``function_call``).

A ``model`` content's ``functionCall`` parts are its calls (one CALL each, parallel calls side
by side); without any, its text is the TERM. ``functionResponse`` parts are the results (in a
``user`` content, or the older ``function`` / ``tool`` role). Ids are optional in Gemini: a part
with an ``id`` pairs by it, one without pairs by name and order — a response answers the oldest
open call of its name (:meth:`~models.chat_log.SessionBuilder.result_by_name`), as the API
does. Text in a user content is the USER where it stands (text before a ``functionResponse`` a
USER before that RESULT). Thought parts (``thought: true``) are the model's own and skipped. Any other part
(``inlineData``, ``fileData``, ``executableCode``, a field added later) is opaque content named by
its field (:meth:`~models.chat_log.SessionBuilder.keep_opaque`); an empty part is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turncheck.models.chat_log import ImportFormatError, SessionBuilder, arguments_text
from turncheck.models.importers import LogFormat, json_or_jsonl, register_format

ROLES = ("user", "model", "function", "tool")


def part_field(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    return part[camel] if camel in part else part.get(snake)


def add_gemini_content(b: SessionBuilder, content: Any, where: str) -> None:
    """One ``Content``: ``role`` and its ``parts``."""
    if not isinstance(content, Mapping) or not isinstance(content.get("parts"), list):
        raise ImportFormatError(f"{where}: expected a Content object with a 'parts' list")
    role = content.get("role", "user")
    if role not in ROLES:
        raise ImportFormatError(f"{where}: unknown role {role!r} (expected user or model)")
    texts: list[str] = []
    calls = False
    for part in content["parts"]:
        if not isinstance(part, Mapping):
            raise ImportFormatError(f"{where}: a part must be an object, got {type(part).__name__}")
        call = part_field(part, "functionCall", "function_call")
        response = part_field(part, "functionResponse", "function_response")
        if call is not None or response is not None:
            fn = call if call is not None else response
            if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                raise ImportFormatError(
                    f"{where}: a function {'call' if call is not None else 'response'} without a name"
                )
            call_id = fn.get("id") or ""
            if not isinstance(call_id, str):
                raise ImportFormatError(f"{where}: a function part's id must be a string")
            if call is not None and role == "model":
                b.call_by_name(fn["name"], call_id, arguments_text(fn.get("args") or {}), where)
                calls = True
            elif response is not None and role != "model":
                b.user_text(texts, where)  # text before a response stays before it
                b.result_by_name(fn["name"], call_id, arguments_text(fn.get("response") or {}), where)
            else:
                raise ImportFormatError(
                    f"{where}: a function {'call' if call is not None else 'response'} in a {role} content"
                )
        elif "text" in part:
            if not isinstance(part["text"], str):
                raise ImportFormatError(f"{where}: a text part must hold a string")
            if not part.get("thought"):
                texts.append(part["text"])
        elif not part:
            raise ImportFormatError(f"{where}: a part holding nothing")
        elif not part.get("thought") and not part_field(part, "thoughtSignature", "thought_signature"):
            b.keep_opaque(min(part), part, texts)
    if role == "model" and not calls:
        b.answer("".join(texts), where)
    elif role != "model":
        b.user_text(texts, where)


register_format(
    LogFormat(
        "gemini",
        lambda path: json_or_jsonl(path, "contents", add_gemini_content),
        'Gemini contents (functionCall / functionResponse parts, ids optional): a JSON list, {"contents": […]}, or JSONL of request bodies',
        provider="gemini",
    )
)
