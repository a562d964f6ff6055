"""Message-level projectors: a user's ``fn(messages, budget) -> messages`` as one of our strategies.

Most trimmers people write (and LangChain's and litellm's) take a list of chat messages and
return a shorter one. :func:`message_projector` (also usable as the decorator
:func:`message_trimmer`, and on the command line as ``--strategy messages:package.module:fn``)
wraps such a function so every engine can run it:

1. the history becomes OpenAI-style chat messages exactly as the peers see it
   (:func:`models.message_spans.openai_message`: parallel CALLs are one assistant message),
   or LangChain ``BaseMessage`` objects with ``flavour="langchain"``;
2. the function is called with a copy of them it may change at will (a ``list`` subclass of
   copies, :class:`models.message_replay.HandedMessages`: what it changed is undone before the
   next request, which costs O(what it read), not O(history)) and ``budget − frame`` (the
   system prompt and the current question belong to the cost model's frame, not to the list);
3. each returned message is mapped back onto the log: equal to the next unused input message
   (in order) → those events; an assistant message with only some of an input message's tool
   calls → those calls' events; anything else is *invented* (a summary, an edited message) and
   is costed as the events it would be;
4. the result is costed with the chosen cost model (any of ours, real BPE included) and reported
   with our structural counters — a suffix of the log gives the ordinary window; anything else a
   :class:`MessageWindow` listing the messages dropped inside the kept span and those invented,
   as :class:`~models.selection.PeerWindow` does for the peer libraries.

Invariant kept: the window's ``events`` are exactly what the function returned, in its order,
and ``cost``/``report`` are computed over those events, never over the span they came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Literal, overload

from turncheck.models.chat_log import text_of
from turncheck.models.cost import CostModel
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event, Kind, detect_cjk
from turncheck.models.history import History
from turncheck.models.message_replay import MessageIndex, StateCache
from turncheck.models.message_spans import Span, openai_message, spans
from turncheck.models.projector import MESSAGES_PREFIX, RESOLVERS, Strategy, Window, window_from_start
from turncheck.models.registry import Registry
from turncheck.models.report import Report
from turncheck.models.selection import PeerWindow, Selection, not_kept, window_of
from turncheck.models.user_code import load_object

Flavour = Literal["openai", "langchain"]
MessageTrimmer = Callable[[list[Any], int], Sequence[Any]]


class MessageWindow(PeerWindow):
    """A message-level projector's answer that is not a plain suffix of the log.

    ``invented_positions`` lists the positions, in the returned list, of messages that are not
    in the log (their events are in ``sent`` at the same order; ``invented`` counts them);
    ``dropped_inside`` (from ``PeerWindow``) the history positions inside the kept span that
    were not sent."""

    _fields = (*PeerWindow._fields, "invented_positions")

    def __new__(  # type: ignore[misc]
        cls,
        history: History,
        strategy: str,
        budget: int,
        start: int,
        end: int,
        cost: int,
        report: Report,
        sent: tuple[Event, ...] = (),
        dropped_inside: tuple[int, ...] = (),
        invented_positions: tuple[int, ...] = (),
    ) -> MessageWindow:
        base = PeerWindow.__new__(PeerWindow, history, strategy, budget, start, end, cost, report, sent,
                                  dropped_inside, invented=len(invented_positions))  # fmt: skip
        return tuple.__new__(cls, (*base, invented_positions))

    invented_positions: tuple[int, ...] = property(itemgetter(17))  # type: ignore[assignment]


FLAVOURS: Registry[Callable[[History, list[Span]], list[Any]]] = Registry(
    "message flavour", home="turncheck.integrations.peers"
)
"""Message flavours other than OpenAI-style dicts: name → ``(history, spans) -> messages``.
``langchain`` (LangChain ``BaseMessage`` objects) is registered by the LangChain peer's module
(its home, imported by name on the first lookup)."""


def history_messages(history: History, flavour: Flavour = "openai") -> tuple[list[Span], list[Any]]:
    """The chat messages a history becomes, with the span of events behind each."""
    message_spans = spans(history)
    if flavour == "openai":
        return message_spans, [openai_message(history, s) for s in message_spans]
    return message_spans, FLAVOURS[flavour](history, message_spans)


def invented_events(message: Any, where: str, session: str = "s") -> list[Event]:
    """The events a message not found in the log stands for (costed like any event), in the
    session of the log it was returned for."""

    def _event(kind: Kind, text: str, call_id: str | None = None) -> Event:
        return Event(0, session, 0, kind, call_id, text=text, chars=len(text), cjk=detect_cjk(text))

    if not isinstance(message, dict):  # a LangChain message
        kind = getattr(message, "type", None)
        text = text_of(getattr(message, "content", ""), where)
        calls = getattr(message, "tool_calls", None) or []
        if kind == "tool":
            return [_event(Kind.RESULT, text, str(getattr(message, "tool_call_id", "")))]
        if kind == "ai" and calls:
            return [_event(Kind.CALL, str(c.get("args", "")), str(c.get("id", ""))) for c in calls]
        return [_event(Kind.TERM if kind == "ai" else Kind.USER, text)]
    role = message.get("role")
    calls = message.get("tool_calls") or []
    if role == "tool":
        return [_event(Kind.RESULT, text_of(message.get("content"), where), str(message.get("tool_call_id")))]
    if role == "assistant" and calls:
        try:
            return [_event(Kind.CALL, str(c["function"]["arguments"]), str(c.get("id"))) for c in calls]
        except (KeyError, TypeError, AttributeError):
            raise TurncheckError(f"{where}: a tool call without function.arguments") from None
    text = text_of(message.get("content"), where)
    return [_event(Kind.TERM if role == "assistant" else Kind.USER, text)]


def answer_window(history: History, budget: int, cost: CostModel, message_spans: Sequence[Span],
                  messages: Sequence[Any], answer: Sequence[Any], label: str,
                  index: MessageIndex | None = None) -> Window:  # fmt: skip
    """The window of a trimmer's ``answer`` to ``messages`` (the messages of ``message_spans``).

    Each returned message is the next unused input message equal to it (its events), or the
    tool calls of one — an assistant message carrying some of an input message's calls, in
    order, is those calls' events (the others are dropped inside the span, as a library that
    prunes calls one by one sends them) — or else invented (see the module doc). ``index``
    (of ``messages``) narrows the positions looked at to those that can match; the first
    match is the same (every position that matches is a candidate).
    """
    session = history.events[0].session if len(history) else "s"
    positions: list[int] = []
    sent: list[Event] = []
    invented: list[int] = []
    nxt = 0
    for k, m in enumerate(answer):
        found, picked = None, None
        candidates = index.candidates(m, nxt) if index is not None else None
        for i in range(nxt, len(messages)) if candidates is None else candidates:
            if messages[i] == m:
                found, picked = i, list(message_spans[i].positions)
                break
            calls = calls_of(m, messages[i])
            if calls is not None:
                found, picked = i, [message_spans[i].start + j for j in calls]
                break
        if found is None or picked is None:
            invented.append(k)
            sent.extend(invented_events(m, f"trimmer {label}: returned message {k + 1}", session))
            continue
        nxt = found + 1
        positions.extend(picked)
        sent.extend(history.events[p] for p in picked)
    if not invented:
        return window_of(history, budget, cost, Selection(tuple(positions)), label)
    sub = History([dataclasses.replace(e, seq=i) for i, e in enumerate(sent)], costs=(cost,))
    inner = window_from_start(sub, budget, cost, 0, label)
    n = len(history)
    start = min(positions) if positions else n
    return MessageWindow(
        history,
        label,
        budget,
        start,
        n,
        inner.cost,
        inner.report._replace(empty=int(not sent)),
        tuple(sent),
        not_kept(positions, start, n),
        tuple(invented),
    )


def calls_of(message: Any, given: Any) -> list[int] | None:
    """The indexes of ``given``'s tool calls that ``message`` carries, when ``message`` is
    ``given`` with only some of its calls (in order, at least one); else ``None``."""
    if not (isinstance(message, dict) and isinstance(given, dict)):
        return None
    mine, theirs = message.get("tool_calls"), given.get("tool_calls")
    if not (isinstance(mine, list) and isinstance(theirs, list) and mine and len(mine) < len(theirs)):
        return None
    if {k: v for k, v in message.items() if k != "tool_calls"} != {
        k: v for k, v in given.items() if k != "tool_calls"
    }:
        return None
    out: list[int] = []
    j = 0
    for call in mine:
        while j < len(theirs) and theirs[j] != call:
            j += 1
        if j == len(theirs):
            return None
        out.append(j)
        j += 1
    return out


def message_projector(
    fn: MessageTrimmer, *, name: str | None = None, flavour: Flavour = "openai"
) -> Strategy:
    """Our strategy running the message-level trimmer ``fn`` (see the module doc)."""
    label = name or f"messages:{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"

    cache = StateCache(flavour, lambda h, s: FLAVOURS[flavour](h, s))

    def projector(history: History, budget: int, cost: CostModel) -> Window:
        # the messages of the history as it grows, and a list of copies the trimmer may change
        # (models.message_replay): a replay request costs O(new events + what fn reads)
        state = cache.take(history)
        try:
            answer = fn(state.handed, budget - cost.frame)
            if answer is state.handed:  # read as it is now, not as handed out again
                answer = list.copy(answer)
            if isinstance(answer, (str, bytes, dict)) or not isinstance(answer, Sequence):
                raise TurncheckError(
                    f"trimmer {label} returned {type(answer).__name__}, not a list of messages"
                )
            return answer_window(
                history, budget, cost, state.spans, state.messages, answer, label, state.indexed()
            )
        finally:
            cache.give(state)

    projector.__name__ = getattr(fn, "__name__", "trimmer")
    projector.__qualname__ = getattr(fn, "__qualname__", projector.__name__)
    projector.__module__ = getattr(fn, "__module__", __name__)
    projector.__wrapped__ = fn  # type: ignore[attr-defined]
    projector.strategy_id = label  # type: ignore[attr-defined]
    return projector


@overload
def message_trimmer(fn: MessageTrimmer, *, flavour: Flavour = "openai") -> Strategy: ...
@overload
def message_trimmer(
    fn: None = None, *, flavour: Flavour = "openai"
) -> Callable[[MessageTrimmer], Strategy]: ...
def message_trimmer(
    fn: MessageTrimmer | None = None, *, flavour: Flavour = "openai"
) -> Strategy | Callable[[MessageTrimmer], Strategy]:
    """Decorator: ``@message_trimmer`` (OpenAI-style dicts) or ``@message_trimmer(flavour="langchain")``
    turns ``fn(messages, budget) -> messages`` into a projector ``(history, budget, cost) -> Window``."""
    if fn is None:
        return lambda f: message_projector(f, flavour=flavour)
    return message_projector(fn, flavour=flavour)


def resolve_messages(spec: str) -> Strategy:
    """The strategy ``messages:package.module:function``: that trimmer as a message projector."""
    return message_projector(load_object(spec[len(MESSAGES_PREFIX) :], "trimmer"), name=spec)


RESOLVERS.register(MESSAGES_PREFIX, resolve_messages)
