"""Cost models: what a window costs, additively, so a projection can be found by bisection.

``cost(window) = frame + Σ cost(event)``. The separator term of the SPEC
(``sep × (n − 1)``) is folded in: each event's cost carries one separator and the frame one
less, which keeps the sum additive and prefix sums exact. Per-event costs depend only on the
model's ``key`` (so histories share prefix sums between requests that differ in system prompt
or current question); the ``frame`` carries the request-specific part.

* :class:`EstimateCost` — the seed's estimator: ``round(chars / cjk_ratio)`` for CJK events,
  ``round(chars / 4)`` otherwise, rounded half up like Java's ``Math.round``.
* :class:`Utf8JsonCost` — the exact UTF-8 byte length of the serialized request
  ``{"model": M, "messages": [system, …window…, current]}`` (compact JSON, keys in that order),
  with the ``python`` (``json.dumps``, ``ensure_ascii=False``) or ``java`` (Gson
  ``JsonElement.toString()``: additionally escapes U+2028/U+2029) escape profile.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol, runtime_checkable

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.events import Event, Kind, check_encodable

DEFAULT_MODEL = "agnes-3.0-flash"
PLACEHOLDER_TEXT = "[tool result missing]"
FILLER_ASCII = "x"
FILLER_CJK = "汉"


@runtime_checkable
class CostModel(Protocol):
    """What the projector needs from a cost model."""

    @property
    def name(self) -> str:
        """The model's name as the CLI spells it (``estimate``, ``utf8-json``, ``bpe:…``)."""
        ...

    @property
    def key(self) -> Hashable:
        """Identity of the per-event costing; equal keys share prefix sums."""
        ...

    @property
    def frame(self) -> int:
        """Cost of the request with an empty window (0 for a plain token estimate)."""
        ...

    def event_cost(self, event: Event) -> int: ...


def java_round(x: float) -> int:
    """``Math.round``: half rounds up (towards +inf), unlike Python's banker's ``round``."""
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class EstimateCost:
    """Tokens estimated from character counts, as seed 004 does (not a tokenizer)."""

    cjk_ratio: float = 1.5
    ascii_ratio: float = 4.0
    name: str = field(default="estimate", init=False)

    def __post_init__(self) -> None:
        if not (self.cjk_ratio > 0 and math.isfinite(self.cjk_ratio)):
            raise BadParameter(f"cjk_ratio must be a positive number, got {self.cjk_ratio}")
        if not (self.ascii_ratio > 0 and math.isfinite(self.ascii_ratio)):
            raise BadParameter(f"ascii_ratio must be a positive number, got {self.ascii_ratio}")

    @property
    def key(self) -> Hashable:
        return ("estimate", self.cjk_ratio, self.ascii_ratio)

    @property
    def frame(self) -> int:
        return 0

    def tokens(self, chars: int, cjk: bool) -> int:
        return java_round(chars / (self.cjk_ratio if cjk else self.ascii_ratio))

    def event_cost(self, event: Event) -> int:
        return self.tokens(event.size, event.cjk)


@dataclass(frozen=True)
class CharsCost:
    """Characters of each event (of its CJK events only, when ``cjk``), frame 0: not the price
    of a request but a size a history keeps as prefix sums like any cost — what a summarising
    strategy's summary is made from (:mod:`models.summarising`)."""

    cjk: bool = False
    name: str = field(default="chars", init=False)

    @property
    def key(self) -> Hashable:
        return ("chars", self.cjk)

    @property
    def frame(self) -> int:
        return 0

    def event_cost(self, event: Event) -> int:
        return event.size if event.cjk or not self.cjk else 0


Profile = Literal["python", "java"]


def dumps_compact(obj: Any, profile: Profile = "python") -> str:
    """Compact JSON as the profile's serializer writes it.

    ``python`` is ``json.dumps(ensure_ascii=False, separators=(",", ":"))``. ``java`` is Gson's
    ``JsonElement.toString()``: identical escapes for quotes, backslashes and control characters
    (short forms ``\\t \\b \\n \\r \\f``, otherwise lower-case ``\\u00xx``), no HTML escaping, and
    U+2028/U+2029 escaped as ``\\u2028``/``\\u2029``. Those two characters can only occur inside
    strings, so replacing them in the output is exact.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if profile == "java":
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text


def content_of(event: Event) -> str:
    """The message content of an event: its text, or filler of its size when only a size is known."""
    if event.text is not None:
        return event.text
    return (FILLER_CJK if event.cjk else FILLER_ASCII) * event.chars


def message_of(event: Event) -> dict[str, Any]:
    """The chat message an event becomes in a request (the shape documented in the README).

    USER and SUMMARY → ``{"role":"user","content":…}``; TERM → ``{"role":"assistant","content":…}``;
    CALL → ``{"role":"assistant","tool_calls":[{"id":…,"type":"function","function":{"name":"tool","arguments":…}}]}``;
    RESULT → ``{"role":"tool","tool_call_id":…,"content":…}``.
    """
    content = content_of(event)
    if event.kind is Kind.USER or event.kind is Kind.SUMMARY:
        return {"role": "user", "content": content}
    if event.kind is Kind.TERM:
        return {"role": "assistant", "content": content}
    if event.kind is Kind.CALL:
        return {
            "role": "assistant",
            "tool_calls": [
                {"id": event.call_id, "type": "function", "function": {"name": "tool", "arguments": content}}
            ],
        }
    return {"role": "tool", "tool_call_id": event.call_id, "content": content}


def placeholder_event(call: Event) -> Event:
    """The synthetic RESULT that M2 adds for a CALL of the first turn that has none."""
    return Event(
        seq=call.seq,
        session=call.session,
        turn=call.turn,
        kind=Kind.RESULT,
        call_id=call.call_id,
        ts=call.ts,
        writer=call.writer,
        text=PLACEHOLDER_TEXT,
        source=call.source,
    )


@dataclass(frozen=True)
class Utf8JsonCost:
    """Exact UTF-8 bytes of the serialized request; the window's messages sit between the
    system prompt and the current question, so each costs its encoded length plus one comma."""

    profile: Profile = "python"
    model: str = DEFAULT_MODEL
    system: str = ""
    current: str = ""
    name: str = field(default="utf8-json", init=False)

    def __post_init__(self) -> None:
        if self.profile not in ("python", "java"):
            raise UnknownName(f"unknown escape profile {self.profile!r} (known: python, java)")
        check_encodable(self.system, "system prompt")
        check_encodable(self.current, "current question")
        check_encodable(self.model, "model name")

    @property
    def key(self) -> Hashable:
        return ("utf8-json", self.profile)

    def system_message(self) -> dict[str, str]:
        return {"role": "system", "content": self.system}

    def current_message(self) -> dict[str, str]:
        return {"role": "user", "content": self.current}

    @cached_property
    def frame(self) -> int:
        return len(self.request([]).encode("utf-8"))

    def message_bytes(self, message: dict[str, Any]) -> int:
        return len(dumps_compact(message, self.profile).encode("utf-8"))

    def event_cost(self, event: Event) -> int:
        return self.message_bytes(message_of(event)) + 1

    def request(self, messages: Iterable[dict[str, Any]]) -> str:
        """The exact request text for the given window messages."""
        body = {
            "model": self.model,
            "messages": [self.system_message(), *messages, self.current_message()],
        }
        return dumps_compact(body, self.profile)


COST_MODELS = ("estimate", "utf8-json")


def make_cost(name: str, **options: Any) -> CostModel:
    """A cost model by name; options that do not apply to it are ignored when ``None``."""
    opts = {k: v for k, v in options.items() if v is not None}
    if name == "estimate":
        return EstimateCost(**{k: v for k, v in opts.items() if k in ("cjk_ratio", "ascii_ratio")})
    if name == "utf8-json":
        return Utf8JsonCost(
            **{k: v for k, v in opts.items() if k in ("profile", "model", "system", "current")}
        )
    if name.startswith("bpe:"):
        from turncheck.models import tokenizer  # optional real-token cost model, if installed

        return tokenizer.make_bpe_cost(name, **opts)  # type: ignore[attr-defined,no-any-return]
    raise UnknownName(f"unknown cost model {name!r} (known: {', '.join(COST_MODELS)})")
