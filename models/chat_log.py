"""Chat messages as our events: the one mapping every importer (:mod:`integrations.formats`) shares.

An agent's chat history is a list of messages; our log is a list of events. The mapping is the
inverse of :func:`models.cost.message_of`:

* a user message → USER, and opens a new turn; a message mixing text and tool results keeps
  its blocks in the order sent (text before a result is a USER before that RESULT), since that
  order is what a provider refuses or accepts;
* an assistant message with tool calls → one CALL per call (parallel calls stay consecutive),
  carrying the call's id and its arguments as text (text the model wrote alongside its calls is
  not kept: a CALL event carries the call, and our request format sends only the arguments);
* a tool result → RESULT with the id of the call it answers;
* an assistant message without tool calls → TERM, which closes the turn;
* system / developer messages are not part of the log (the cost model's frame holds them) and
  are skipped.

Invariant kept: what is built is the log *as it happened*, one event per record, ``seq`` strictly
increasing, CALL and RESULT ids present (a record without one cannot be paired and is refused,
naming it). Nothing is repaired or refused for its place: a result for a call never issued, a
call answered twice, a result before its call are written where they stand, each event
remembering the record it came from (:attr:`SessionBuilder.origins`), so ``lint`` names that
record. A call whose result never comes stays a dangling CALL. Events before the first user
message (a stored window that starts mid-turn) form a turn of their own, without a USER.

A vendor's compaction (Anthropic's ``compaction`` block, the Responses ``compaction`` item, an
ADK compaction event) is a SUMMARY whose ``covers`` names the events of its session it stands
for, by seq (:meth:`SessionBuilder.summary`); whether it covers them rightly is ``lint``'s to say.

A part a reader does not know (an image, a file, a ``blob``, a ``uri``, a server tool's call, a
type added to a format after this reader was written) is *opaque content*, never a reason to
refuse a well-formed record: it is kept as its compact JSON in the text of the message it sits
in, where it stands (:meth:`SessionBuilder.keep_opaque`) — so it is costed and ordered as sent,
and, having no call id, never paired. In a message whose text is not kept (calls, results) it
rides on the message's newest event (:meth:`SessionBuilder.end_message`, which the readers'
shared loops call after every record). :attr:`SessionBuilder.opaque` counts such parts by
type, for the one warning line ``lint`` and ``import`` print (:func:`opaque_warning`). A record
that is not the format (no ``type``, a part that is not an object) is still refused.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from turncheck.models.events import Event, EventFormatError, Kind, check_encodable, detect_cjk, new_event

_USER, _CALL, _RESULT, _TERM, _SUMMARY = Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM, Kind.SUMMARY
"""The kinds as module globals, read once per event: ``Kind.USER`` goes through the slow path
of ``EnumType`` (its ``__getattr__`` keeps CPython from caching class attributes), ~0.3 µs a
lookup against ~20 ns for a global."""


class ImportFormatError(EventFormatError):
    """A record of a foreign log that cannot be mapped onto our events (named in the message)."""


@dataclass
class SessionBuilder:
    """Appends one session's events in order, tracking turns and where each came from."""

    session: str
    first_seq: int = 0
    """The seq of the session's first event: events are built with their final seq."""
    events: list[Event] = field(default_factory=list)
    turn: int = -1
    origins: list[str] = field(default_factory=list)
    """Where each event came from (``FILE: session 'x': record 3``), index for index."""
    unnamed: dict[str, list[str]] = field(default_factory=dict)
    """Open calls that came without an id, by tool name, oldest first: formats whose ids are
    optional (Gemini) pair a result by name and order, as the provider does."""
    carrier: str | None = None
    """While reading one model output after a ``reasoning`` item (Responses): ``""`` until its
    first call, then that call's id, which the output's later calls are tied to; else ``None``.
    Anthropic: the first ``tool_use`` after a ``thinking`` block, until the next user message."""
    reasoning: str = ""
    """The id of the ``reasoning`` item just read (Responses), for the call that follows it."""
    clock: float | None = None
    """The writer's stamp of the record being read, for formats that keep one (ADK's
    ``timestamp``); ``None``: an event's ``ts`` is its position."""
    timed: bool = False
    opaque: Counter[str] = field(default_factory=Counter)
    """Parts kept as opaque content, by type (:meth:`keep_opaque`)."""
    beside: list[str] = field(default_factory=list)
    """Opaque content of the message being read that no event carries yet."""
    id_base: int = 0
    """The seq the session's own positions count from: an id-less call's ``NAME@N`` id and the
    ``ts`` of an unstamped event in a stamped session are ``seq - id_base``
    (:func:`~models.importers.build_sessions` sets it to ``first_seq``: positions in the session,
    whatever sessions come before it)."""
    unstamped: int = 0
    """Events added before the first stamped one, counted when it comes (``ts`` their seq until
    the session turned out to be stamped: :meth:`positioned_events`)."""
    session_checked: bool = False
    summary_heads: list[int] = field(default_factory=list)
    """Indexes in :attr:`events` of the summaries read as the USER heading the prompt (:meth:`summary`
    with nothing to cover): a window whose older history a compaction replaced."""
    bare: int | None = None
    """The first call of the assistant turn in progress, as a position in :attr:`events`, when its
    message did not start with a thinking block; ``None`` when it did, or the turn has no call."""
    turn_called: bool = False
    """Whether the turn in progress (since the last user message) has a call yet."""
    thinking: str | None = None
    """The ``thinking`` setting of the request body being read (``"enabled"``, ``"adaptive"``,
    ``"disabled"``), ``None`` where the file does not say (a stored history)."""

    def opaque_text(self, kind: str, part: Any) -> str:
        """A part of type ``kind`` this reader does not know, as the text it is kept as (its
        compact JSON, keys sorted: the same part always costs the same), counted in :attr:`opaque`."""
        self.opaque[kind] += 1
        return json.dumps(part, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)

    def keep_opaque(self, kind: str, part: Any, texts: list[str]) -> None:
        """An unknown part of a message read block by block: its text joins ``texts`` (the
        message's text so far) where it stands; if the message ends without a text event (a
        message of calls or results), :meth:`end_message` puts it on the message's newest event."""
        text = self.opaque_text(kind, part)
        texts.append(text)
        self.beside.append(text)

    def end_message(self, where: str) -> None:
        """The end of one record: opaque content no USER or TERM took rides on the newest event
        (after its own text: costed where it was sent, never paired); with no event yet, it is
        the USER it was sent as."""
        if not self.beside:
            return
        text = "".join(self.beside)
        self.beside.clear()
        if not self.events:
            self.user(text, where)
            return
        last = self.events[-1]
        try:
            check_encodable(text, f"{where}: opaque content")
        except EventFormatError as exc:
            raise ImportFormatError(str(exc)) from None
        joined = (last.text or "") + text
        self.events[-1] = dataclasses.replace(last, text=joined, chars=len(joined), cjk=detect_cjk(joined))

    def call_by_name(self, name: str, call_id: str, arguments: str, where: str) -> None:
        """A call whose id may be missing: it gets ``NAME@SEQ``, and the next id-less result of
        ``name`` answers it."""
        if not call_id:
            call_id = f"{name}@{self.next_seq - self.id_base}"
            self.unnamed.setdefault(name, []).append(call_id)
        self.call(call_id, arguments, where)

    def result_by_name(self, name: str, call_id: str, text: str, where: str) -> None:
        """A result whose id may be missing: it answers the oldest open id-less call of ``name``
        (none open: an id of its own, so ``lint`` reports it as orphaned)."""
        if not call_id:
            pending = self.unnamed.get(name)
            call_id = pending.pop(0) if pending else f"{name}@{self.next_seq - self.id_base}"
        self.result(call_id, text, where)

    @property
    def next_seq(self) -> int:
        return self.first_seq + len(self.events)

    def positioned_events(self) -> list[Event]:
        """The events, the ``ts`` of a stamped session's events read before its first stamp being
        their place in the session (``seq - id_base``), as for every later unstamped one."""
        if not self.timed or not self.unstamped or not self.id_base:
            return self.events
        early = [
            dataclasses.replace(e, ts=float(e.seq - self.id_base)) for e in self.events[: self.unstamped]
        ]
        return early + self.events[self.unstamped :]

    def _check_encodable(self, text: str, call_id: str | None, where: str) -> None:
        for value, what in ((text, "text"), (call_id or "", "call id"), (self.session, "session name")):
            try:
                check_encodable(value, f"{where}: {what}")
            except EventFormatError as exc:  # a lone surrogate cannot be written: refused by record
                raise ImportFormatError(str(exc)) from None
        self.session_checked = True

    def add(
        self, kind: Kind, text: str, where: str, call_id: str | None = None,
        covers: tuple[int, int] | None = None, tied_to: str | None = None, caller: str | None = None,
    ) -> None:  # fmt: skip
        """One event of ``kind``, read from the record ``where``: what :meth:`user`, :meth:`call`,
        :meth:`result`, :meth:`answer` and :meth:`summary` add, each rule of a kind written here
        once (a USER opens a turn; a CALL or RESULT needs its id). A reader's hot loop calls it
        directly: one call per event instead of two."""
        if kind is _USER:
            self.turn += 1 if self.events else 0
            self.carrier = None  # a user message ends the assistant turn a tie can reach across
            self.bare, self.turn_called = None, False
        elif not call_id and (kind is _CALL or kind is _RESULT):
            raise ImportFormatError(
                f"{where}: a tool call without an id (cannot pair it with its result)"
                if kind is _CALL
                else f"{where}: a tool result without a call id"
            )
        ascii = text.isascii()
        if not (ascii and self.session_checked and (call_id is None or call_id.isascii())):
            self._check_encodable(text, call_id, where)  # ASCII is always encodable
        events = self.events
        seq = self.first_seq + len(events)
        if self.beside and (kind is _USER or kind is _TERM):
            self.beside.clear()  # the message's text, opaque content included, is this event's
        if self.turn < 0:
            self.turn = 0
        clock = self.clock
        if clock is None:
            ts = float(seq - self.id_base) if self.timed else float(seq)
        else:
            if not self.timed:
                self.timed, self.unstamped = True, len(events)
            ts = clock
        self.origins.append(where)
        events.append(
            new_event(seq, self.session, self.turn, kind, call_id, ts, "0", text, len(text),
                      False if ascii else detect_cjk(text), None, covers, tied_to, caller)
        )  # fmt: skip

    def user(self, text: str, where: str) -> None:
        self.add(_USER, text, where)

    def user_text(self, texts: list[str], where: str) -> None:
        """The text of a user message read so far, as its USER, before the block that comes next
        (a tool result): blocks keep their order, so text sent before a result stays before it,
        where the provider's rules see it (:mod:`models.provider_rules`). Empties ``texts``."""
        if texts:
            self.user("".join(texts), where)
            texts.clear()

    def call(
        self, call_id: str, arguments: str, where: str, tied_to: str | None = None, caller: str | None = None
    ) -> None:
        """A CALL; ``tied_to`` the call its reasoning or thinking rides with, ``caller`` the server
        tool use whose code made it (:class:`~models.events.Event`)."""
        self.add(_CALL, arguments, where, call_id, None, tied_to, caller)
        self.turn_called = True

    def turn_call(
        self, call_id: str, arguments: str, where: str, thinking: bool, caller: str | None = None
    ) -> None:
        """A call of an assistant turn run with Anthropic's thinking: the first call after a
        ``thinking`` block (``thinking``) carries it, and every later call of the turn, up to the
        next user message, is tied to that one (``thinking-not-sent``, :mod:`models.provider_rules`).
        A later call after thinking shows thinking on in the turn: its first call, sent without
        any, is held to it (:meth:`thinking_required`)."""
        if not self.turn_called:
            self.bare = None if thinking or self.carrier else len(self.events)
        elif thinking and self.thinking not in ("adaptive", "disabled"):
            self.thinking_required()  # the turn shows thinking on: its first call must have had it
        self.call(call_id, arguments, where, None if thinking else self.carrier, caller)
        self.carrier = call_id if thinking else self.carrier

    def thinking_required(self) -> None:
        """Thinking is on for the turn in progress (the request says so, or the turn shows a
        thinking block): its first call, if its message did not start with thinking, is tied to a
        carrier no call bears — the API refuses the turn (``thinking-not-sent``)."""
        if self.bare is not None:
            bare = self.events[self.bare]
            self.events[self.bare] = dataclasses.replace(bare, tied_to=f"thinking before {bare.call_id}")
            self.bare = None

    def result(self, call_id: str, text: str, where: str) -> None:
        self.add(_RESULT, text, where, call_id)

    def answer(self, text: str, where: str) -> None:
        self.add(_TERM, text, where)

    def summary(self, text: str, where: str, covers: tuple[int, int] | None = None) -> None:
        """A compaction's summary, covering the seqs ``covers`` of this session — by default every
        event before it (Anthropic's block and the Responses item stand for everything earlier).
        With nothing to cover (a window stored after the drop, a range holding no event of the
        file) it is the head of the prompt, read as the USER it is sent as."""
        if covers is None and self.events:
            covers = (self.first_seq, self.next_seq - 1)
        if covers is None:
            self.summary_heads.append(len(self.events))
            self.user(text, where)
        else:
            self.add(_SUMMARY, text, where, covers=covers)


def text_of(content: Any, where: str, b: SessionBuilder | None = None) -> str:
    """A message's content as text: a string, None, or a list of text parts (``text`` /
    ``input_text`` / ``output_text`` / LangChain's ``{"type": "text"}``); with the session's
    builder ``b``, a part of another type (``image_url``, ``input_file``…) is kept in place as
    opaque content (:meth:`SessionBuilder.opaque_text`) — without it, refused."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, Mapping) and part.get("type") == "refusal":
                parts.append(str(part.get("refusal", "")))
            elif b is not None and isinstance(part, Mapping) and isinstance(part.get("type"), str):
                parts.append(b.opaque_text(part["type"], part))
            else:
                kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
                raise ImportFormatError(f"{where}: content part of type {kind!r} is not text")
        return "".join(parts)
    raise ImportFormatError(f"{where}: content must be text or a list of parts, got {type(content).__name__}")


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments as the text a CALL carries (JSON strings stay as they are)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def opaque_warning(opaque: Mapping[str, int]) -> str | None:
    """The one line saying how many parts were kept as opaque content, and of which types
    (``3 parts of types blob, uri were kept as opaque content``); ``None`` when none were."""
    n = sum(opaque.values())
    if not n:
        return None
    kinds = ", ".join(sorted(opaque))
    return (f"{n} part{'s' if n > 1 else ''} of type{'s' if len(opaque) > 1 else ''} {kinds} "
            f"{'were' if n > 1 else 'was'} kept as opaque content (costed and ordered as sent, never paired)")  # fmt: skip
