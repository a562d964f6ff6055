"""Trace formats, checked as sent: each model call of a trace holds the exact window that went
out (its input messages) and what came back (its output), so ``lint`` checks every request as it
was sent instead of replaying the log through a projector.

A trace importer (``--from otel``; Langfuse and LangSmith alike) reads each model call into a
:class:`SentRequest` — its conversation, where it was read (trace and span ids, record number),
the provider rules it answers to, and its input and output messages in the format's own shape —
and passes them with the function that maps one message onto a
:class:`~models.chat_log.SessionBuilder` (an :data:`~models.importers.AddRecord`) to
:func:`sent_log`. That returns the :class:`~models.importers.Imported` every format returns: the
log rebuilt, per conversation, from its last call's input plus output (each call's input already
holds the whole conversation so far), with every call's window in :attr:`Imported.sent`.
:func:`lint_imported` is ``lint --from``'s check (and ``import``'s warning): the rebuilt log as
usual, then each window for what a request may not hold — the pairing problems of
:data:`WINDOW_PROBLEMS` and the provider's rules — each finding naming its request and message.

Per request, three costs side by side (:class:`RequestCost`): what its messages cost in its model's
tokens, what the provider reported it counted (:mod:`models.usage`), and the frame between them —
the system prompt and tool schemas costed when the trace carries them, else reported − messages.
``--budget`` flags a request over it on either count (``over-budget``), and, once per
conversation, the first request whose messages stayed within the budget while the provider's count
crossed it (``estimate-drift``: a trigger counting the messages does not fire there).

Invariant kept: a window is one call's input, message for message, in its own session builder;
nothing of another call is seen, so a finding is about exactly what that request sent. A request
without a reported count is judged on its messages only, and says so (``reported: null``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.chat_log import SessionBuilder
from turncheck.models.cost import CostModel, make_cost
from turncheck.models.events import Event, Kind
from turncheck.models.importers import AddRecord, Imported
from turncheck.models.lint import LintReport, at, lint_events
from turncheck.models.provider_rules import RULES
from turncheck.models.tokenizer import ENCODINGS

WINDOW_PROBLEMS = ("orphan-result", "dangling-call", "result-before-call", "answered-twice",
                   "reused-call-id", *RULES)  # fmt: skip
"""What a request window is checked for. The turn grammar's problems are left to the rebuilt
log: a window trimmed to its newest messages may well start inside a turn."""
DEFAULT_PROVIDER = "openai-chat"
"""The rules a request is held to when neither ``--provider`` nor the trace names its API."""


@dataclass(frozen=True)
class SentRequest:
    """One model call read from a trace. ``where`` names it (``FILE:3: trace T span S``);
    ``provider`` is a name of :data:`~models.provider_rules.PROVIDERS` or ``None`` (unknown);
    ``inputs`` / ``outputs`` are its messages as the format holds them; ``model`` the model the
    trace says was asked (it picks the tokenizer a ``--budget`` check counts with); ``reported``
    the input tokens the provider reported for the call (``None``: the trace holds no count);
    ``frame`` what went with the messages — system prompt, tool schemas — as text, when the trace
    carries it (``None``: it does not)."""

    conversation: str
    where: str
    provider: str | None
    inputs: Sequence[Any]
    outputs: Sequence[Any]
    model: str | None = None
    reported: int | None = None
    frame: str | None = None


@dataclass(frozen=True)
class TraceRecords:
    """How a trace format reads one record alone (:func:`models.request_lint.lint_request`):
    ``read(record, where)`` is the request it records, or ``None`` for a record that is no model
    call (an agent span, a tool run); ``add`` maps one of its messages onto a builder;
    ``split(document, where)`` gives the records one JSON document of the format's files holds
    (``lint --follow`` reads a file a line at a time; ``None``: a document is one record);
    ``holds(record)`` gives the records a container holds — a Langfuse trace's observations, a
    LangSmith run's child runs, an OTLP document's spans — and ``None`` for one record, so a
    container handed to ``lint_request`` is each model call it holds, never an empty verdict."""

    read: Callable[[Any, str], SentRequest | None]
    add: AddRecord
    split: Callable[[Any, str], Iterable[Any]] | None = None
    holds: Callable[[Any], list[Any] | None] | None = None


@dataclass(frozen=True)
class SentWindow:
    """The window one request sent, as events, each knowing its message (``where: input message 2``),
    with its conversation and what the trace says beside it (:class:`SentRequest`)."""

    where: str
    provider: str | None
    window: Imported
    model: str | None = None
    conversation: str = ""
    reported: int | None = None
    frame: str | None = None
    open_after: tuple[str, ...] = ()
    """The call ids the request left unanswered: its window's and its output's calls with no
    result in either (what the conversation's next request must answer, or summarise away)."""
    summary_at: int | None = None
    """The index in the window of its first compaction: a SUMMARY, or the summary read as the USER
    heading a window whose older history it replaced; ``None``: the window holds none."""


MAX_OPEN = 1024
"""Open call ids kept per request (:attr:`SentWindow.open_after`): a bound on what a monitor holds
per conversation; a request leaving more open keeps its newest."""


def open_calls(events: Sequence[Event]) -> tuple[str, ...]:
    """The call ids of ``events`` without a result among them, oldest first (at most :data:`MAX_OPEN`)."""
    pending: dict[str, int] = {}
    for e in events:
        if e.kind is Kind.CALL and e.call_id:
            pending[e.call_id] = pending.get(e.call_id, 0) + 1
        elif e.kind is Kind.RESULT and pending.get(e.call_id or ""):
            pending[e.call_id or ""] -= 1
    return tuple(c for c, n in pending.items() if n)[-MAX_OPEN:]


def flag_summarised_open_calls(report: LintReport, sent: SentWindow, open_before: Sequence[str]) -> None:
    """``summary-covers-open-call`` across requests: calls the conversation's previous request left
    open (``open_before``) that this window no longer holds while it holds a SUMMARY (a compaction)
    were summarised away open — by its first SUMMARY, which stands where they were. Each is named with
    where its result now comes (after the summary: an orphan) or that it never does."""
    summary = sent.summary_at
    if summary is None or not open_before:
        return
    located = sent.window.located()
    held = {e.call_id for _, e in located if e.kind is Kind.CALL}
    answered = {e.call_id: (line, e) for line, e in located[summary:] if e.kind is Kind.RESULT}
    line, s = located[summary]
    for call_id in open_before:
        if call_id in held:
            continue
        if call_id in answered:
            when = f"gets its RESULT after the summary ({at(*answered[call_id])})"
        else:
            when = "is not answered in this request"
        report.flag(
            "summary-covers-open-call",
            f"request {at(line, s)}: call {call_id}, open after the conversation's previous request, {when}",
        )


def first_summary(b: SessionBuilder) -> int | None:
    """The index of ``b``'s first compaction (:attr:`SentWindow.summary_at`)."""
    found = [i for i, e in enumerate(b.events) if e.kind is Kind.SUMMARY][:1] + b.summary_heads[:1]
    return min(found) if found else None


def sent_log(requests: Sequence[SentRequest], add: AddRecord) -> Imported:
    """The log of ``requests`` (in send order): per conversation, in the order conversations
    first appear, the last call's input then output; every call's input as a :class:`SentWindow`.
    Its ``opaque`` counts, per type, the most parts one request sent or the log holds: a part a
    compaction dropped from the last call was still sent, and checked, by the calls before it."""
    last: dict[str, SentRequest] = {}
    windows: list[SentWindow] = []
    opaque: Counter[str] = Counter()  # per type, the most one request (or the rebuilt log) held
    for r in requests:
        last[r.conversation] = r
        b = SessionBuilder(r.conversation)
        for i, message in enumerate(r.inputs, start=1):
            add(b, message, f"{r.where}: input message {i}")
            b.end_message(f"{r.where}: input message {i}")
        out = SessionBuilder(r.conversation)
        for i, message in enumerate(r.outputs, start=1):
            add(out, message, f"{r.where}: output message {i}")
            out.end_message(f"{r.where}: output message {i}")
        windows.append(SentWindow(r.where, r.provider, Imported(b.events, b.origins), r.model, r.conversation,
                                  r.reported, r.frame, open_calls([*b.events, *out.events]),
                                  first_summary(b)))  # fmt: skip
        opaque |= b.opaque
    firsts = list(dict.fromkeys(r.conversation for r in requests))
    events: list[Event] = []
    origins: list[str] = []
    rebuilt: Counter[str] = Counter()
    for conversation in firsts:
        r = last[conversation]
        b = SessionBuilder(conversation, first_seq=len(events))
        for part, messages in (("input", r.inputs), ("output", r.outputs)):
            for i, message in enumerate(messages, start=1):
                add(b, message, f"{r.where}: {part} message {i}")
                b.end_message(f"{r.where}: {part} message {i}")
        events.extend(b.events)
        origins.extend(b.origins)
        rebuilt.update(b.opaque)
    opaque |= rebuilt
    return Imported(events, origins, tuple(windows), opaque=dict(sorted(opaque.items())))


def model_of(value: Any) -> str | None:
    """A trace's model name, if it holds one (a string); anything else is no name."""
    return value if isinstance(value, str) and value else None


def request_cost(model: str | None) -> CostModel:
    """What a request of ``model`` is counted in: its own BPE encoding when ``tiktoken`` maps the
    model to one we read offline (``gpt-4o`` → ``bpe:o200k_base``), else the token estimate —
    a budget is a count of *that model's* tokens, never of another's."""
    if model:
        try:
            from tiktoken.model import encoding_name_for_model

            encoding = encoding_name_for_model(model)
        except (ImportError, KeyError):
            encoding = ""
        if encoding in ENCODINGS:
            return make_cost(f"bpe:{encoding}")
    return make_cost("estimate")


def system_texts(messages: Sequence[Any]) -> list[str]:
    """The text of the system / developer messages among ``messages``, in any trace's shape: Chat
    Completions (``content`` text or parts), OTel GenAI (``parts`` with ``content``), LangChain's
    ``dumpd`` (``kwargs.type == "system"``). Lenient: what is not text is not the frame's."""
    out: list[str] = []
    for m in messages:
        m = m.get("kwargs", m) if isinstance(m, Mapping) and "lc" in m else m
        if not isinstance(m, Mapping) or (m.get("role") or m.get("type")) not in ("system", "developer"):
            continue
        content = m.get("content", m.get("parts"))
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            text = (
                part
                if isinstance(part, str)
                else part.get("text", part.get("content"))
                if isinstance(part, Mapping)
                else None
            )
            if isinstance(text, str):
                out.append(text)
    return out


def frame_text(system: Sequence[str], tools: Any) -> str | None:
    """A request's frame as the text a trace shows of it: its system texts, then its tool schemas
    as compact JSON (keys sorted); ``None`` when the trace shows neither."""
    if not system and not tools:
        return None
    schemas = json.dumps(tools, ensure_ascii=False, separators=(",", ":"), sort_keys=True) if tools else ""
    return "\n".join(system) + schemas


@dataclass(frozen=True)
class RequestCost:
    """One request's three costs, in its model's tokens (``counted_with``): ``messages``, the
    ``frame`` (``frame_from``: ``trace`` when costed from the system prompt and tool schemas the
    trace carries, ``reported`` when it is reported − messages, ``None`` when neither is known),
    and ``reported``, the provider's count."""

    where: str
    conversation: str
    model: str | None
    counted_with: str
    messages: int
    frame: int | None
    frame_from: str | None
    reported: int | None

    @property
    def ratio(self) -> float | None:
        """messages / reported: how much of what the provider counted a trigger summing the
        messages sees (``None`` without a reported count, or a reported 0)."""
        return round(self.messages / self.reported, 3) if self.reported else None

    def to_json(self) -> dict[str, object]:
        return {"request": self.where, "conversation": self.conversation, "model": self.model,
                "counted_with": self.counted_with, "messages": self.messages, "frame": self.frame,
                "frame_from": self.frame_from, "reported": self.reported, "ratio": self.ratio}  # fmt: skip


def request_costs(sent: SentWindow) -> RequestCost:
    """The three costs of the request ``sent`` (:class:`RequestCost`)."""
    cost = request_cost(sent.model)
    messages = sum(cost.event_cost(e) for e in sent.window.events)
    frame, frame_from = None, None
    if sent.frame is not None:
        text = sent.frame
        frame, frame_from = cost.event_cost(Event(0, "", 0, Kind.USER, text=text, chars=len(text))), "trace"
    elif sent.reported is not None:
        frame, frame_from = sent.reported - messages, "reported"
    return RequestCost(sent.where, sent.conversation, sent.model, cost.name, messages, frame, frame_from,
                       sent.reported)  # fmt: skip


def flag_over_budget(
    report: LintReport, costs: Sequence[RequestCost], budget: int, drifted: set[str] | None = None
) -> None:
    """``over-budget``: a request whose messages, or whose provider-reported input, cost more than
    ``budget`` tokens of its model; ``estimate-drift``: per conversation, the first request whose
    messages stayed within ``budget`` while the reported count crossed it (``drifted`` holds the
    conversations already named, and gains the ones named now: a caller checking one request at a
    time keeps it)."""
    drifted = set() if drifted is None else drifted
    for c in costs:
        counted = f"{c.counted_with}{', ' + c.model if c.model else ''}"
        if c.messages > budget:
            report.flag(
                "over-budget", f"request {c.where}: {c.messages} tokens ({counted}) > budget {budget}"
            )
        elif c.reported is not None and c.reported > budget:
            report.flag("over-budget", f"request {c.where}: reported {c.reported} input tokens > budget "
                        f"{budget}; its messages {c.messages} tokens ({counted})")  # fmt: skip
            if c.conversation not in drifted:
                drifted.add(c.conversation)
                frame = f"frame {c.frame} ({'system prompt and tools' if c.frame_from == 'trace' else 'reported − messages'})"
                report.flag("estimate-drift", f"request {c.where}: messages {c.messages} tokens ≤ budget {budget} "
                            f"< reported {c.reported} (messages/reported {c.ratio}; {frame})")  # fmt: skip


def check_window(report: LintReport, sent: SentWindow, provider: str | None = None) -> None:
    """Flag in ``report`` what the window ``sent`` may not hold (:data:`WINDOW_PROBLEMS`) under
    ``provider``, else its own provider, else :data:`DEFAULT_PROVIDER`; examples start ``request``."""
    found = lint_events(
        sent.window.located(), report.keep, provider or sent.provider or DEFAULT_PROVIDER, sent=True
    )
    for problem in WINDOW_PROBLEMS:
        for example in found.examples.get(problem, []):
            report.flag(problem, f"request {example}")
        report.counts[problem] += found.counts[problem] - len(found.examples.get(problem, []))


def lint_imported(
    imported: Imported, keep: int = 5, provider: str | None = None, budget: int | None = None
) -> LintReport:
    """The imported log linted as usual (with ``provider``'s rules when given, else those of the
    API the file records, :attr:`~models.importers.Imported.provider`), then each sent
    window for :data:`WINDOW_PROBLEMS` under ``provider``, else the window's own provider, else
    :data:`DEFAULT_PROVIDER`, and against ``budget`` (:func:`flag_over_budget`) when given;
    ``report.requests`` counts the windows checked."""
    provider = provider if provider is not None else imported.provider
    report = lint_events(imported.located(), keep, provider, ends=imported.ends)
    costs = []
    if budget is not None or any(s.reported is not None for s in imported.sent):
        known = imported.reported if budget is not None else ()  # a session file's usage, for --budget
        costs = [request_costs(sent) for sent in (*imported.sent, *known)]
        report.costs = [c.to_json() for c in costs]
    if budget is not None:
        flag_over_budget(report, costs, budget)
    open_before: dict[str, tuple[str, ...]] = {}
    for sent in imported.sent:
        check_window(report, sent, provider)
        flag_summarised_open_calls(report, sent, open_before.get(sent.conversation, ()))
        open_before[sent.conversation] = sent.open_after
    report.requests = len(imported.sent)
    report.opaque = dict(imported.opaque)
    return report
