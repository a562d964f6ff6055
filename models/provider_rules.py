"""What each provider's API refuses in a request, as checks over our events.

An API does not see events but messages: a run of consecutive CALLs is one assistant message
(its ``tool_calls``, ``tool_use`` blocks or ``functionCall`` parts), a run of consecutive RESULTs
the message answering it (OpenAI's ``tool`` messages, Anthropic's ``user`` message of
``tool_result`` blocks, Gemini's content of ``functionResponse`` parts). The rules:

* ``result-not-next`` (openai-chat, anthropic, gemini): a RESULT outside the run that directly
  follows the CALL run holding its call — orphaned, late, or after another message. Chat
  Completions wants each ``tool`` message to answer the assistant message before it; Anthropic
  wants every ``tool_result`` in the very next message after its ``tool_use``; Gemini wants the
  function response turn right after the function call turn.
* ``call-not-answered-next`` (openai-chat, anthropic, gemini): a CALL whose result is not in that
  next run (a run at the very end is a request not sent yet, and not flagged).
* ``response-count-mismatch`` (gemini): a run of results not as many as the calls before it —
  Gemini pairs id-less responses by order, so it refuses a turn whose counts differ.
* ``orphan-output`` (openai-responses): a ``function_call_output`` whose ``call_id`` has no
  ``function_call`` earlier in the input (Responses pairs by id anywhere before, not by place).
* ``reasoning-not-sent`` (openai-responses): a CALL :attr:`~models.events.Event.tied_to` a call
  the request does not hold before it. A reasoning model's ``reasoning`` item must be sent with
  the item that followed it, and every ``function_call`` it produced with it: the API answers
  "Item 'fc_…' of type 'function_call' was provided without its required 'reasoning' item",
  or "Item 'rs_…' of type 'reasoning' was provided without its required following item". The
  reasoning rides with the first call of its output, so a request that keeps a later call of
  that output but not the first is refused either way.

Not checked here: Anthropic's ``thinking`` blocks, which the importer does not keep.

Invariant kept: a rule reads only the events given (one session, in send order), so the same
functions judge a whole log (``lint --provider``) and every window sent
(``project --per-request --fail-on PROVIDER``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind

Finding = tuple[str, int]
"""A rule broken, and the position of the event it names."""

RULES: dict[str, str] = {
    "result-not-next": "RESULT not in the message right after its CALL's (the provider refuses it)",
    "call-not-answered-next": "CALL whose RESULT is not in the next message (the provider refuses it)",
    "response-count-mismatch": "results not as many as the calls of their turn (Gemini refuses it)",
    "orphan-output": "function_call_output with no function_call before it (Responses refuses it)",
    "reasoning-not-sent": "function_call sent without the reasoning item it came after (Responses refuses it)",
}


def _runs(events: Sequence[Event]) -> list[tuple[Kind, int, int]]:
    """Maximal runs of one kind as (kind, start, end); CALL and RESULT runs are the messages."""
    out: list[tuple[Kind, int, int]] = []
    for i, e in enumerate(events):
        if out and out[-1][0] is e.kind and e.kind in (Kind.CALL, Kind.RESULT):
            out[-1] = (e.kind, out[-1][1], i + 1)
        else:
            out.append((e.kind, i, i + 1))
    return out


def adjacency(events: Sequence[Event], count: bool = False) -> list[Finding]:
    """``result-not-next`` and ``call-not-answered-next`` (and, with ``count``,
    ``response-count-mismatch``) over one session's events in send order."""
    found: list[Finding] = []
    runs = _runs(events)
    for r, (kind, start, end) in enumerate(runs):
        if kind is Kind.RESULT:
            before = runs[r - 1] if r and runs[r - 1][0] is Kind.CALL else None
            ids = {events[i].call_id for i in range(*before[1:])} if before else set()
            found += [("result-not-next", i) for i in range(start, end) if events[i].call_id not in ids]
            if count and before and before[2] - before[1] != end - start:
                found.append(("response-count-mismatch", start))
        elif kind is Kind.CALL and r + 1 < len(runs):
            nxt = runs[r + 1]
            answered = {events[i].call_id for i in range(*nxt[1:])} if nxt[0] is Kind.RESULT else set()
            found += [
                ("call-not-answered-next", i) for i in range(start, end) if events[i].call_id not in answered
            ]
    return found


def responses(events: Sequence[Event]) -> list[Finding]:
    """``orphan-output``: the Responses API pairs an output with any earlier call of its id;
    ``reasoning-not-sent``: a tied call needs the call carrying its reasoning before it."""
    issued: set[str | None] = set()
    found: list[Finding] = []
    for i, e in enumerate(events):
        if e.kind is Kind.CALL:
            if e.tied_to is not None and e.tied_to not in issued:
                found.append(("reasoning-not-sent", i))
            issued.add(e.call_id)
        elif e.kind is Kind.RESULT and e.call_id not in issued:
            found.append(("orphan-output", i))
    return found


PROVIDERS: dict[str, Callable[[Sequence[Event]], list[Finding]]] = {
    "openai-chat": adjacency,
    "openai-responses": responses,
    "anthropic": adjacency,
    "gemini": lambda events: adjacency(events, count=True),
}


def check_provider(name: str) -> str:
    if name not in PROVIDERS:
        raise BadParameter(f"--provider must be one of {', '.join(PROVIDERS)}, got {name!r}")
    return name


def provider_findings(provider: str, events: Sequence[Event]) -> list[Finding]:
    """Every rule of ``provider`` the events of one session break, in event order."""
    return sorted(PROVIDERS[check_provider(provider)](events), key=lambda f: f[1])
