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

Invariant kept: a window is one call's input, message for message, in its own session builder;
nothing of another call is seen, so a finding is about exactly what that request sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.chat_log import SessionBuilder
from turncheck.models.cost import CostModel, make_cost
from turncheck.models.events import Event
from turncheck.models.importers import AddRecord, Imported
from turncheck.models.lint import LintReport, lint_events
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
    trace says was asked (it picks the tokenizer a ``--budget`` check counts with)."""

    conversation: str
    where: str
    provider: str | None
    inputs: Sequence[Any]
    outputs: Sequence[Any]
    model: str | None = None


@dataclass(frozen=True)
class SentWindow:
    """The window one request sent, as events, each knowing its message (``where: input message 2``)."""

    where: str
    provider: str | None
    window: Imported
    model: str | None = None


def sent_log(requests: Sequence[SentRequest], add: AddRecord) -> Imported:
    """The log of ``requests`` (in send order): per conversation, in the order conversations
    first appear, the last call's input then output; every call's input as a :class:`SentWindow`."""
    last: dict[str, SentRequest] = {}
    windows: list[SentWindow] = []
    for r in requests:
        last[r.conversation] = r
        b = SessionBuilder(r.conversation)
        for i, message in enumerate(r.inputs, start=1):
            add(b, message, f"{r.where}: input message {i}")
            b.end_message(f"{r.where}: input message {i}")
        windows.append(SentWindow(r.where, r.provider, Imported(b.events, b.origins), r.model))
    firsts = list(dict.fromkeys(r.conversation for r in requests))
    events: list[Event] = []
    origins: list[str] = []
    opaque: Counter[str] = Counter()
    for conversation in firsts:
        r = last[conversation]
        b = SessionBuilder(conversation, first_seq=len(events))
        for part, messages in (("input", r.inputs), ("output", r.outputs)):
            for i, message in enumerate(messages, start=1):
                add(b, message, f"{r.where}: {part} message {i}")
                b.end_message(f"{r.where}: {part} message {i}")
        events.extend(b.events)
        origins.extend(b.origins)
        opaque.update(b.opaque)
    return Imported(events, origins, tuple(windows), dict(sorted(opaque.items())))


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


def flag_over_budget(report: LintReport, sent: SentWindow, budget: int) -> None:
    """``over-budget``: the request's messages cost more than ``budget`` tokens of its model."""
    cost = request_cost(sent.model)
    spent = sum(cost.event_cost(e) for e in sent.window.events)
    if spent > budget:
        report.flag("over-budget", f"request {sent.where}: {spent} tokens ({cost.name}"
                    f"{', ' + sent.model if sent.model else ''}) > budget {budget}")  # fmt: skip


def lint_imported(
    imported: Imported, keep: int = 5, provider: str | None = None, budget: int | None = None
) -> LintReport:
    """The imported log linted as usual (with ``provider``'s rules when given), then each sent
    window for :data:`WINDOW_PROBLEMS` under ``provider``, else the window's own provider, else
    :data:`DEFAULT_PROVIDER`, and against ``budget`` (:func:`flag_over_budget`) when given;
    ``report.requests`` counts the windows checked."""
    report = lint_events(imported.located(), keep, provider)
    for sent in imported.sent:
        found = lint_events(sent.window.located(), keep, provider or sent.provider or DEFAULT_PROVIDER)
        for problem in WINDOW_PROBLEMS:
            for example in found.examples.get(problem, []):
                report.flag(problem, f"request {example}")
            report.counts[problem] += found.counts[problem] - len(found.examples.get(problem, []))
        if budget is not None:
            flag_over_budget(report, sent, budget)
    report.requests = len(imported.sent)
    report.opaque = dict(imported.opaque)
    return report
