"""What each provider's API refuses in a request: every rule a registered value, cited.

An API does not see events but messages: a run of consecutive CALLs is one assistant message
(its ``tool_calls``, ``tool_use`` blocks, ``functionCall`` parts or ``toolUse`` blocks), a run of
consecutive RESULTs the message answering it (OpenAI's ``tool`` messages, Anthropic's ``user``
message of ``tool_result`` blocks, Gemini's content of ``functionResponse`` parts, Bedrock's
``user`` message of ``toolResult`` blocks). Each :class:`ProviderRule` holds the API's own error
text as a thread we read quotes it (ids as there; ``…`` marks ids left out), the thread, a
minimal history the API refuses and one it accepts (:func:`events_of` shapes), and the check:
a function from one session's events in send order to the positions of the events it names.
:data:`REGISTRY` is every rule; :data:`PROVIDERS` groups them by API, and the test suite runs
every rule on both its examples, so a rule cannot be added without them.

Two choices the examples pin down:

* A *pending* call batch — CALLs with nothing after them — is a request not made yet (the agent
  is running the tools; its next request will hold their results), never an unanswered call.
  Every other call was in a request the log implies: the next one after it is made at the next
  USER, or at the end of the next run of RESULTs, or (nothing later) by the events as they stand.
  For Responses, which pairs by id anywhere in the input, ``output-missing`` flags a call whose
  output is not in that request: ``U Ca T U Ra T`` is refused at the second USER, whatever the
  log holds later (openai/openai-agents-python#2317, where compaction sends exactly that).
* A tie (:attr:`~models.events.Event.tied_to`) is what the importer read: a Responses
  ``reasoning`` item rides with the first call of its output and every later call of it is tied
  there; an Anthropic ``thinking`` block rides with the first ``tool_use`` of its message, and
  every later ``tool_use`` of that assistant turn is tied there. Anthropic asks for the thinking
  only in the turn in progress (after the last user message: "a final `assistant` message must
  start with a thinking block"); Responses asks for the reasoning wherever the call is sent.
  Where thinking is on — the request body says ``"thinking": {"type": "enabled"}``, or the turn
  shows a thinking block after its first call — a turn whose first call message does not start
  with thinking has that call tied to a carrier no call bears (the importer,
  :meth:`~models.chat_log.SessionBuilder.thinking_required`); adaptive thinking lets the model
  skip thinking, so a body saying ``adaptive`` (or ``disabled``) is not held to it.
* A ``caller`` (:attr:`~models.events.Event.caller`) is the Anthropic importer's reading of a
  programmatic ``tool_use``'s ``caller.tool_id``: the ``server_tool_use`` (code execution) whose
  code made the call. The API asks for it wherever the call is sent, in the same or an earlier
  assistant message (vercel/ai#12504: ``pruneMessages`` dropped the ``server_tool_use`` message
  and kept the ``tool_use`` naming it). Its error text is quoted as the thread quotes it, with the
  ids left out there; no stored source holds the whole text (:attr:`ProviderRule.note`).

Not checked (no field of an event holds it): a server tool's use without its ``*_tool_result`` (AnswerDotAI/lisette#108)
other than as any call left unanswered; Gemini's thought signatures; Bedrock's "conversation
blocks and tool result blocks cannot be provided in the same turn" (text and results in one
message read as a USER next to RESULTs, which ``results-not-first`` flags only when the text
comes first); Bedrock's alternation (``roles-not-alternating``) where events cannot show a message
boundary: two user messages of tool results in a row read as one run of RESULTs — and for the
same reason Gemini's count when a call turn's responses are split over two user contents (one
``functionResponse`` each: refused, cloudwego/eino-ext#571, vertesia/llumiverse#620), which
reads as one response turn of the right count. A tie is seen only where the importer read its carrier: a request logged after
its thinking or reasoning was already dropped (a trace's cut window, a trimmed request body)
holds no tie, and is not flagged for it — unless the same file shows an earlier request that sent
it (Responses JSONL of request bodies: the call is tied to the reasoning item it first came after).

Invariant kept: a rule reads only the events given (one session, in send order), so the same
functions judge a whole log (``lint --provider``) and every window sent
(``project --per-request --fail-on PROVIDER``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.requests import request_points

_USER, _CALL, _RESULT, _TERM, _SUMMARY = Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM, Kind.SUMMARY
"""The kinds read per event, as globals: ``Kind.CALL`` is a slow lookup (``EnumType``'s
``__getattr__`` keeps CPython from caching class attributes), ~15x a global's."""

Finding = tuple[str, int]
"""A rule broken, and the position of the event it names."""
Check = Callable[[Sequence[Event]], list[int]]


@dataclass(frozen=True)
class ProviderRule:
    """One rule of one API: ``id`` (shared by APIs refusing the same shape, each with its own
    text), ``provider``, ``error`` (the API's text), ``source`` (the threads it was read in),
    ``refused`` / ``clean`` (:func:`events_of` shapes the API refuses / accepts) and ``check``;
    ``note``, where the error text is not the API's whole text, says how it was read."""

    id: str
    provider: str
    error: str
    source: str
    refused: str
    clean: str
    check: Check
    note: str = ""


RULES: dict[str, str] = {
    "result-not-next": "RESULT not in the message right after its CALL's (the provider refuses it)",
    "call-not-answered-next": "CALL whose RESULT is not in the next message (the provider refuses it)",
    "results-not-first": "message after tool calls not starting with as many results (Anthropic refuses it)",
    "thinking-not-sent": "tool_use of the turn in progress sent without its thinking block (Anthropic refuses it)",
    "caller-not-sent": "tool_use sent without the server tool use its caller names (Anthropic refuses it)",
    "response-count-mismatch": "results not as many as the calls of their turn (Gemini refuses it)",
    "call-turn-misplaced": "function call turn not right after a user or function response turn (Gemini refuses it)",
    "orphan-output": "function_call_output with no function_call before it (Responses refuses it)",
    "output-missing": "function_call whose output is not in the next request (Responses refuses it)",
    "reasoning-not-sent": "function_call sent without the reasoning item it came after (Responses refuses it)",
    "first-not-user": "conversation not starting with a user message (Bedrock refuses it)",
    "roles-not-alternating": "two user or two assistant messages in a row (Bedrock refuses it)",
}
"""Every rule id and what it flags (``lint``'s problem table)."""


def _runs(events: Sequence[Event]) -> list[tuple[Kind, int, int]]:
    """Maximal runs of one kind as (kind, start, end); CALL and RESULT runs are the messages."""
    out: list[tuple[Kind, int, int]] = []
    for i, e in enumerate(events):
        if out and out[-1][0] is e.kind and e.kind in (_CALL, _RESULT):
            out[-1] = (e.kind, out[-1][1], i + 1)
        else:
            out.append((e.kind, i, i + 1))
    return out


def _answered_calls(events: Sequence[Event]) -> list[tuple[int, int, int, int]]:
    """Each CALL run with something after it, and the run after it: (start, end, next start,
    next end) — the next run's span is empty when it is no RESULT run. A CALL run at the very
    end is pending (no request holds it yet) and left out."""
    runs = _runs(events)
    out = []
    for r, (kind, start, end) in enumerate(runs[:-1]):
        if kind is _CALL:
            nkind, nstart, nend = runs[r + 1]
            out.append((start, end, nstart, nend if nkind is _RESULT else nstart))
    return out


def _sources(events: Sequence[Event]) -> set[str | None]:
    """The server tool uses a call names as its ``caller`` (code execution running the code that
    made it): still running while its calls are answered, its result comes in a later assistant
    message of the turn (programmatic tool calling), so no rule asks for it right after it."""
    return {e.caller for e in events if e.caller is not None}


def results_not_next(events: Sequence[Event]) -> list[int]:
    """RESULTs outside the run that directly follows the CALL run holding their call (a source's
    result, :func:`_sources`, needs only its call before it: ``orphan-result`` else)."""
    found: list[int] = []
    runs = _runs(events)
    sources = _sources(events)
    for r, (kind, start, end) in enumerate(runs):
        if kind is _RESULT:
            before = runs[r - 1] if r and runs[r - 1][0] is _CALL else None
            ids = {events[i].call_id for i in range(before[1], before[2])} if before else set()
            found += [i for i in range(start, end) if events[i].call_id not in ids | sources]
    return found


def calls_not_answered_next(events: Sequence[Event]) -> list[int]:
    """CALLs whose result is not in the run right after theirs (a pending run is not flagged, nor
    a source still running, :func:`_sources`)."""
    found: list[int] = []
    sources = _sources(events)
    for start, end, nstart, nend in _answered_calls(events):
        answered = {events[i].call_id for i in range(nstart, nend)} | sources
        found += [i for i in range(start, end) if events[i].call_id not in answered]
    return found


def results_not_first(events: Sequence[Event]) -> list[int]:
    """The message after a tool_use message does not begin with a matching number of results —
    text before them, too few, or too many; names the first event after the calls. A source
    (:func:`_sources`) and its result count on neither side: its result is the assistant's."""
    sources = _sources(events)
    if not sources:
        return [nstart for start, end, nstart, nend in _answered_calls(events) if nend - nstart != end - start]
    return [
        nstart
        for start, end, nstart, nend in _answered_calls(events)
        if sum(events[i].call_id not in sources for i in range(nstart, nend))
        != sum(events[i].call_id not in sources for i in range(start, end))
    ]


def response_counts(events: Sequence[Event]) -> list[int]:
    """A function call turn not followed by as many responses (:func:`results_not_first`), or
    responses after no call turn; names the first event after the calls, or the first response."""
    runs = _runs(events)
    return results_not_first(events) + [
        start
        for r, (kind, start, _) in enumerate(runs)
        if kind is _RESULT and (not r or runs[r - 1][0] is not _CALL)
    ]


def call_turns_misplaced(events: Sequence[Event]) -> list[int]:
    """Function call turns that open the history or follow anything but a user turn (a USER or
    the SUMMARY sent as one) or a function response turn."""
    after = (_USER, _SUMMARY, _RESULT)
    return [
        start
        for kind, start, _ in _runs(events)
        if kind is _CALL and (not start or events[start - 1].kind not in after)
    ]


def orphan_outputs(events: Sequence[Event]) -> list[int]:
    """``function_call_output`` items with no ``function_call`` of their id anywhere before."""
    issued: set[str | None] = set()
    found: list[int] = []
    for i, e in enumerate(events):
        if e.kind is _CALL:
            issued.add(e.call_id)
        elif e.kind is _RESULT and e.call_id not in issued:
            found.append(i)
    return found


def outputs_missing(events: Sequence[Event]) -> list[int]:
    """``function_call`` items whose output is not in the first request holding them (the one
    definition of a request, :func:`models.requests.request_points`); a call no request holds
    yet (a pending batch) is not flagged."""
    points = request_points(events)
    found: list[int] = []
    for i, e in enumerate(events):
        if e.kind is not _CALL:
            continue
        end = next((p for p in points if p > i), None)
        if end is not None and not any(
            r.kind is _RESULT and r.call_id == e.call_id for r in events[i + 1 : end]
        ):
            found.append(i)
    return found


def _ties_broken(events: Sequence[Event], start: int = 0) -> list[int]:
    """Tied CALLs from ``start`` on whose carrier is not a CALL before them in the events."""
    issued: set[str | None] = set()
    found: list[int] = []
    for i, e in enumerate(events):
        if e.kind is _CALL:
            if i >= start and e.tied_to is not None and e.tied_to not in issued:
                found.append(i)
            issued.add(e.call_id)
    return found


def reasoning_not_sent(events: Sequence[Event]) -> list[int]:
    """Calls sent without the call their ``reasoning`` item rides with, anywhere in the input."""
    return _ties_broken(events)


def thinking_not_sent(events: Sequence[Event]) -> list[int]:
    """Calls of the turn in progress (after the last USER) sent without the call their thinking
    block rides with: the API asks for thinking only in the final assistant turn."""
    users = [i for i, e in enumerate(events) if e.kind is _USER]
    return _ties_broken(events, users[-1] + 1 if users else 0)


def callers_not_sent(events: Sequence[Event]) -> list[int]:
    """Calls whose ``caller`` — the server tool use (code execution) whose code made them — is not
    a CALL before them in the events: programmatic tool calls sent without their source."""
    issued: set[str | None] = set()
    found: list[int] = []
    for i, e in enumerate(events):
        if e.kind is _CALL:
            if e.caller is not None and e.caller not in issued:
                found.append(i)
            issued.add(e.call_id)
    return found


SAME_ROLE = {(_USER, _USER), (_TERM, _TERM), (_TERM, _CALL), (_CALL, _TERM)}
"""Neighbours that are two messages of one role whatever the importer: a user message's text is
one USER, an assistant message is its TERM or (text beside calls is not kept) its CALLs."""


def roles_not_alternating(events: Sequence[Event]) -> list[int]:
    """The second of two messages of one role in a row (:data:`SAME_ROLE`): two user texts, two
    assistant texts, an assistant text and a tool use message either way. A SUMMARY between two
    messages separates them (how it is sent is the agent's choice); user text beside tool results
    and two result messages in a row are not told apart from one message (module docstring)."""
    return [i for i in range(1, len(events)) if (events[i - 1].kind, events[i].kind) in SAME_ROLE]


def first_not_user(events: Sequence[Event]) -> list[int]:
    """A history whose first message is an assistant's (a CALL or a TERM)."""
    return [0] if events and events[0].kind in (_CALL, _TERM) else []


REGISTRY: tuple[ProviderRule, ...] = (
    ProviderRule("result-not-next", "openai-chat",
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          "smarter-sh/smarter#264, miurla/morphic#136", "Ra T U", "U Ca Ra T U", results_not_next),
    ProviderRule("call-not-answered-next", "openai-chat",
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
          "'tool_call_id'. The following tool_call_ids did not have response messages: call_DAZJkqyYW8JTJdkO76E5MoPH",
          "BerriAI/litellm#10083, aliasrobotics/cai#111", "U Ca Cb Ra T", "U Ca Cb Rb Ra T", calls_not_answered_next),
    ProviderRule("result-not-next", "anthropic",
          "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_016ahFC3cNKqGN57sx7pMW1D. "
          "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
          "anthropics/claude-code#24670", "Ra T U", "U Ca Ra T U", results_not_next),
    ProviderRule("call-not-answered-next", "anthropic",
          "messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: "
          "toolu_01AbmHJypDhKqBF7NKdRPJ6d. Each `tool_use` block must have a corresponding `tool_result` block "
          "in the next message.",
          "anthropics/claude-code#5060", "U Ca Cb Ra T", "U Ca Cb Rb Ra T", calls_not_answered_next),
    ProviderRule("results-not-first", "anthropic",
          "messages.224: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages "
          "following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
          "anthropics/claude-code#37, apify/tester-mcp-client#12, theredsix/cerebellum#5",
          "U Ca U Ra T", "U Ca Ra U T", results_not_first),
    ProviderRule("thinking-not-sent", "anthropic",
          "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
          "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
          "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
          "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
          "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking",
          "openai/openai-agents-python#1704, langchain-ai/langchain#34794, "
          "deepset-ai/haystack-core-integrations#2146, mastra-ai/mastra#7799",
          "U Cb>a Rb", "U Ca Ra Cb>a Rb", thinking_not_sent),
    ProviderRule("caller-not-sent", "anthropic",
          "source tool ... not found for tool use block ...",
          "vercel/ai#12504, https://platform.claude.com/docs/en/agents-and-tools/tool-use/programmatic-tool-calling",
          "U Cb@a Rb T U", "U Ca Cb@a Rb Ra T U", callers_not_sent,
          note="as vercel/ai#12504 quotes it, ids left out there; no stored source holds the whole text"),
    ProviderRule("orphan-output", "openai-responses",
          "No tool call found for function call output with call_id call_jRznqKc4nwQo80WbWXIZJz7d.",
          "binaricat/Netcatty#684, OpenMinis/OpenMinis#222", "Ra T U", "U Ca Ra T U", orphan_outputs),
    ProviderRule("output-missing", "openai-responses",
          "No tool output found for function call call_WdnUUKXKvwy3jksn4I9ERdRT.",
          "openai/openai-agents-python#2317, openai/openai-agents-python#1061",
          "U Ca T U Ra T", "U Ca Cb", outputs_missing),
    ProviderRule("reasoning-not-sent", "openai-responses",
          "Item 'fc_07b27acff2b3b34800697bc13c9a408195a3a79b346cfc2714' of type 'function_call' was provided "
          "without its required 'reasoning' item: 'rs_07b27acff2b3b34800697bc10b56608195bfcb7755c43d483c'.",
          "continuedev/continue#10018, cline/cline#12242", "U Cb>a Rb T", "U Ca Cb>a Ra Rb T", reasoning_not_sent),
    ProviderRule("response-count-mismatch", "gemini",
          "Please ensure that the number of function response parts is equal to the number of function call "
          "parts of the function call turn.",
          "google-gemini/gemini-cli#4217", "U Ca Cb Ra T", "U Ca Cb Rb Ra T", response_counts),
    ProviderRule("call-turn-misplaced", "gemini",
          "Please ensure that function call turn comes immediately after a user turn or after a function "
          "response turn.",
          "google-gemini/gemini-cli#11814", "Ca Ra T U", "U Ca Ra T U", call_turns_misplaced),
    ProviderRule("first-not-user", "bedrock",
          "A conversation must start with a user message. Try again with a conversation that starts with a "
          "user message.",
          "langgenius/dify#12340, elastic/kibana#246393", "T U", "U T U", first_not_user),
    ProviderRule("roles-not-alternating", "bedrock",
          "A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
          "between user and assistant roles and try again.",
          "langchain-ai/langchain-aws#130, microsoft/semantic-kernel#10281, Portkey-AI/gateway#748",
          "U U T", "U T U T", roles_not_alternating),
    ProviderRule("thinking-not-sent", "bedrock",
          "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or "
          "`redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must "
          "start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
          "recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.",
          "anomalyco/opencode#3077, epam/ai-dial-adapter-bedrock#290", "U Cb>a Rb", "U Ca Ra Cb>a Rb",
          thinking_not_sent, note="Claude on Bedrock, as opencode#3077 quotes the BedrockException; the docs link after it left out"),
    ProviderRule("call-not-answered-next", "bedrock",
          "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_jQ912rboYgzgLULQpRxWot, "
          "tooluse_sX1A7q9kipz4qAW36LUR1H, …",
          "agno-agi/agno#6698", "U Ca Cb Ra T", "U Ca Cb Rb Ra T", calls_not_answered_next),
    ProviderRule("result-not-next", "bedrock",
          "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of "
          "previous turn.",
          "Just-Curieous/Curie#16, langgenius/dify-official-plugins#765", "Ra T U", "U Ca Ra T U", results_not_next),
)  # fmt: skip

PROVIDERS: dict[str, tuple[ProviderRule, ...]] = {}
for _r in REGISTRY:
    PROVIDERS[_r.provider] = (*PROVIDERS.get(_r.provider, ()), _r)


def check_provider(name: str) -> str:
    if name not in PROVIDERS:
        raise BadParameter(f"--provider must be one of {', '.join(PROVIDERS)}, got {name!r}")
    return name


SENT_UNANSWERED = ("call-not-answered-next", "output-missing")
"""The rules a request breaks by ending on calls it holds no answer for (:func:`provider_findings`
with ``sent``): Gemini's are left out, no thread we read showing it refuse that."""


def provider_findings(
    provider: str, events: Sequence[Event], sent: bool = False, ends: Sequence[int] = ()
) -> list[Finding]:
    """Every rule of ``provider`` the events of one session break, in event order. ``sent``: the
    events are one request as it goes out (a window a trimmer made), so calls at its very end are
    no pending batch but calls sent without their results — what the API refuses when a trimmer
    drops the newest results (``U Ca Ra`` sent as ``U Ca``). ``ends``: indexes where a request
    the file records went out (the last event of each of a JSONL's request bodies), each such
    end judged as ``sent`` judges the last (a body the client sent ending on calls was refused,
    though a later body answered them), and its turn in progress held to ``thinking-not-sent``."""
    rules = PROVIDERS[check_provider(provider)]
    found = [(rule.id, i) for rule in rules for i in rule.check(events)]
    ids = sorted({rule.id for rule in rules} & set(SENT_UNANSWERED))
    thinking = any(rule.id == "thinking-not-sent" for rule in rules)
    users = [i for i, e in enumerate(events) if e.kind is _USER] if ends and thinking else []
    seen = set(found)

    def add(rule: str, i: int) -> None:
        if (rule, i) not in seen:
            seen.add((rule, i))
            found.append((rule, i))

    for end in (*ends, *([len(events) - 1] if sent else ())):
        start = end
        while start >= 0 and events[start].kind is _CALL:
            start -= 1
        for i in range(start + 1, end + 1):
            for rule in ids:
                add(rule, i)
        if users:  # that request's turn in progress: after its last USER (a tie reaches no further)
            first = users[bisect.bisect_right(users, end) - 1] + 1 if users[0] <= end else 0
            for i in _ties_broken(events[first : end + 1]):
                add("thinking-not-sent", first + i)
    return sorted(found, key=lambda f: f[1])


SHAPE_KINDS = {"U": _USER, "C": _CALL, "R": _RESULT, "T": _TERM}


def events_of(shape: str, session: str = "s") -> list[Event]:
    """A history from its shape, the examples' notation: ``U`` a user message (a new turn),
    ``Ca`` a call with id ``a``, ``Cb>a`` a call ``b`` tied to the call ``a`` (its reasoning or
    thinking rides with ``a``), ``Cb@a`` a call ``b`` made by the code of the server tool use
    ``a`` (its ``caller``), ``Ra`` a result of ``a``, ``T`` a final answer.

    >>> [(e.kind.name, e.call_id, e.tied_to, e.caller) for e in events_of("U Ca Cb>a Cc@a")]
    [('USER', None, None, None), ('CALL', 'a', None, None), ('CALL', 'b', 'a', None), ('CALL', 'c', None, 'a')]
    """
    out: list[Event] = []
    turn = -1
    for i, word in enumerate(shape.split()):
        if word[:1] not in SHAPE_KINDS:
            raise BadParameter(f"history shape: {word!r} is not U, T, C<id>[>carrier][@caller] or R<id>")
        turn += word == "U"
        rest, _, caller = word[1:].partition("@")
        call_id, _, tie = rest.partition(">")
        kind = SHAPE_KINDS[word[0]]
        out.append(
            Event(i, session, max(turn, 0), kind, call_id or None, tied_to=tie or None, caller=caller or None)
        )
    return out
