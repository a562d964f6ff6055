"""One request at a time, where traces arrive: the evaluator a tracing back-end runs.

Langfuse and LangSmith run *code* evaluators on each observation or run they receive, and an
OpenTelemetry pipeline can process each span as it ends; none of them sees a file. So
:func:`lint_request` takes one record — an OTel span (OTLP JSON, the SDK's ``to_json``, or a
``ReadableSpan``), a Langfuse observation (the API's JSON or the SDK's ``ObservationsView``), a
LangSmith run (its JSON or ``langsmith.schemas.Run``) — and returns the findings of the request it
records: what ``lint --from FORMAT`` says of that request (the window's pairing problems, the
provider's rules, ``--budget``'s ``over-budget`` and ``estimate-drift``), one :class:`Finding`
each. A record that is no model call (an agent span, a tool run) has none.

A :class:`Conversations` carries what one request cannot know alone across many calls: which
conversations already had their first ``estimate-drift`` named (so it is named once per
conversation, as ``lint`` names it), how many requests each has sent, and the calls its last
request left open — a later request whose compaction summarises them away is
``summary-covers-open-call``, as ``lint`` names it across a file's requests. It holds one entry per
conversation seen and nothing of the messages; :meth:`Conversations.close` forgets one.

Invariant kept: the findings of a request are exactly those ``lint --from FORMAT`` reports for
that request of a file holding it (tests/test_request_lint.py checks both on the same records);
a record that is not the format raises :class:`~models.chat_log.ImportFormatError`, one line.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from turncheck.models.chat_log import ImportFormatError
from turncheck.models.importers import FORMATS
from turncheck.models.lint import PROBLEMS, LintReport, lint_coverage
from turncheck.models.sent_windows import (
    check_window,
    flag_over_budget,
    flag_summarised_open_calls,
    request_costs,
    sent_log,
)

EVERY = 1 << 30
"""How many examples a finding list keeps per problem: all of them."""


@dataclass(frozen=True)
class Finding:
    """One problem of one request: its name (a key of ``lint``'s problems), what it means, and
    where — the request, the message and the event, as ``lint`` prints it."""

    problem: str
    where: str

    @property
    def meaning(self) -> str:
        return PROBLEMS[self.problem]

    def __str__(self) -> str:
        return f"{self.problem}: {self.where}"


@dataclass
class Conversations:
    """What :func:`lint_request` keeps across the requests of many conversations: the
    conversations whose ``estimate-drift`` was already named, and each one's requests so far.

    ``limit`` bounds it (``None``: no bound): past ``limit`` conversations, the one idle the
    longest is closed (:meth:`close`), so a monitor that runs for weeks holds at most ``limit``
    entries; a conversation that comes back after that starts afresh (its ``estimate-drift``
    may be named once more)."""

    drifted: set[str] = field(default_factory=set)
    requests: Counter[str] = field(default_factory=Counter)
    limit: int | None = None
    open_calls: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per conversation, the call ids its last request left open (at most
    :data:`~models.sent_windows.MAX_OPEN`): a later request that summarises them away open is
    ``summary-covers-open-call``."""

    def close(self, conversation: str) -> None:
        """Forget a conversation that has ended (its next request starts afresh)."""
        self.drifted.discard(conversation)
        self.requests.pop(conversation, None)
        self.open_calls.pop(conversation, None)

    def sent(self, conversation: str) -> None:
        """One more request of ``conversation``, now the most recent; the idlest closed past
        :attr:`limit` (``requests`` is kept in order of each conversation's last request)."""
        self.requests[conversation] = self.requests.pop(conversation, 0) + 1
        while self.limit is not None and len(self.requests) > self.limit:
            self.close(next(iter(self.requests)))


def record_json(record: Any) -> Any:
    """A record as the JSON its back-end exports: a mapping as it is, an OTel SDK span through
    its ``to_json``, a pydantic model (Langfuse's, LangSmith's) through ``model_dump_json``."""
    for method in ("to_json", "model_dump_json"):
        if callable(getattr(record, method, None)):
            return json.loads(getattr(record, method)())
    return record


def lint_request(
    record: Any,
    format: str = "otel",
    *,
    provider: str | None = None,
    budget: int | None = None,
    state: Conversations | None = None,
    where: str = "",
) -> list[Finding]:
    """The findings of the one request ``record`` holds; empty when it is clean, or no model call.

    Parameters
    ----------
    record
        One span (``format="otel"``), observation (``"langfuse"``) or run (``"langsmith"``):
        its JSON as the back-end exports it, or the SDK's own object. A container — an OTLP
        document, a Langfuse trace with its ``observations``, a LangSmith run with its
        ``child_runs`` (the root run ``evaluate`` hands an evaluator) — is each model call it
        holds, in start order, with one ``state``: the findings of all of them.
    format
        A trace format of ``turncheck list formats``.
    provider
        Hold the request to this API's rules (default: the one the record names, else
        ``openai-chat``), as ``lint --provider``.
    budget
        Also check the request's cost against this many tokens, as ``lint --budget``.
    state
        The :class:`Conversations` to carry across calls (default: this request alone).
    where
        Where the record was read (``FILE:LINE``), at the head of each finding's place.

    Raises
    ------
    ImportFormatError
        ``record`` is not the format (one line naming what is wrong); ``format`` reads no
        single records.

    Examples
    --------
    >>> import turncheck
    >>> span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "startTimeUnixNano": "1", "attributes": [
    ...     {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
    ...     {"key": "gen_ai.input.messages", "value": {"stringValue":
    ...         '[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}]}]'}}]}
    >>> [f.problem for f in turncheck.lint_request(span, format="otel")]
    ['orphan-result', 'result-not-next']
    """
    fmt = FORMATS[format]
    if fmt.requests is None:
        single = ", ".join(name for name, f in FORMATS.items() if f.requests is not None)
        raise ImportFormatError(
            f"--from {format} reads whole files; lint_request reads one record of: {single}"
        )
    value = record_json(record)
    state = Conversations() if state is None else state
    held = fmt.requests.holds(value) if fmt.requests.holds is not None else None
    if held is not None:  # a trace, a run with its child runs, an OTLP document: each call in it
        return [
            finding
            for one in held
            for finding in lint_request(
                one, format, provider=provider, budget=budget, state=state, where=where
            )
        ]
    sent = fmt.requests.read(value, where)
    if sent is None:
        return []
    state.sent(sent.conversation)
    log = sent_log([sent], fmt.requests.add)
    window = log.sent[0]
    report = LintReport(keep=EVERY)
    check_window(report, window, provider)
    lint_coverage(report, log.located())  # the request's own input and output, as lint's rebuilt log
    flag_summarised_open_calls(report, window, state.open_calls.get(sent.conversation, ()))
    if sent.conversation in state.requests:  # not closed past the limit by this very request
        state.open_calls[sent.conversation] = window.open_after
    if budget is not None:
        flag_over_budget(report, [request_costs(window)], budget, state.drifted)
    return [Finding(problem, where) for problem, examples in report.examples.items() for where in examples]
