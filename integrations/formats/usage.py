"""What the provider counted: the input tokens a request's reported usage holds, in any API's shape.

A compaction trigger that sums the messages' tokens sees less than the provider bills: the system
prompt and the tool schemas (the *frame*) ride with every request, and an estimator may undercount
the messages themselves (langchain-ai/langchain#34664: "the summarization middleware only accounts
for chat history"; openclaw/openclaw PR #115309: the trigger "measures provider context tokens
(usage-based, including system prompt and tool schemas), but the cut-point planner accumulates a
chars/4 estimate that excludes them"). The trace formats (:mod:`integrations.formats`) keep the count the
provider reported with each request (:class:`~models.sent_windows.SentRequest`), read here. A
session file keeps it with each answer instead (Claude Code, pi, Pydantic AI, LangChain's
``messages_to_dict``): :class:`UsageWindows` makes each such answer's request — the messages sent
before it — for ``lint --budget``.

Invariant kept: a count is a non-negative integer the usage object states; a usage without one,
or with a value that is not a count, is *no* count (``None``), never zero — a request without a
reported count is never called within a budget on the provider's word.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from turncheck.models.chat_log import SessionBuilder
from turncheck.models.events import Event, Kind
from turncheck.models.importers import Imported
from turncheck.models.sent_windows import SentWindow

INPUT_KEYS = (
    "input_tokens",
    "prompt_tokens",
    "promptTokenCount",
    "prompt_token_count",
    "input",
    "promptTokens",
    "inputTokens",
    "request_tokens",
)
"""Where each shape keeps the input count: Anthropic, OpenAI Responses, LangChain's
``usage_metadata`` and Pydantic AI's ``RequestUsage`` (``input_tokens``; Pydantic AI's older
``request_tokens``); Chat Completions and LiteLLM (``prompt_tokens``); Gemini's ``usageMetadata``
(camel or snake case: ``promptTokenCount`` "includes the number of tokens in the cached content";
``toolUsePromptTokenCount`` is the prompt of Gemini's own server tools, not of the request, and is
not added); Langfuse's ``usage`` / ``usageDetails`` (``input``, older ``promptTokens``); Bedrock's
Converse ``TokenUsage`` (``inputTokens``)."""
CACHED_APART = {
    "input_tokens": ("cache_creation_input_tokens", "cache_read_input_tokens"),
    "inputTokens": (
        "cacheReadInputTokens",
        "cacheWriteInputTokens",
        "cacheReadInputTokenCount",
        "cacheWriteInputTokenCount",
    ),
    "input": ("cacheRead", "cacheWrite"),
}
"""Per input key, the prompt-cache counts an API reports *beside* it, not in it, which the
request's input is the sum with. Anthropic: crewAIInc/crewAI PR #6770, "Anthropic reports cache
reads/writes as counters *separate* from ``input_tokens``"; Bedrock's Converse likewise (Pydantic
AI's ``RequestUsage``: "Anthropic and Bedrock, whose raw ``input_tokens`` exclude cache
reads/writes"; anomalyco/opencode PR #38427: "AWS reports inputTokens separately from cache reads
and writes"; strands-agents' ``Usage`` spelled them ``cacheReadInputTokenCount`` /
``cacheWriteInputTokenCount`` before); pi's ``usage`` keeps ``cacheRead`` / ``cacheWrite`` apart
from its ``input``.
Never beside ``prompt_tokens``: OpenAI's counts its cached tokens, and LiteLLM's usage of an
Anthropic call has ``prompt_tokens`` *already* summed with the very ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` it keeps beside it (adding them would count the cache twice)."""


def count_of(value: Any) -> int | None:
    """A token count: a non-negative int (or an int written as digits, as OTLP JSON writes
    ``intValue``); anything else is no count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value < 2**62:
        return int(value)  # an OTLP doubleValue, a JSON writer's 4100.0
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value)
    return None


def input_count(value: Any) -> int | None:
    """A request's input count: a :func:`count_of` above 0 — no request sends nothing, so a 0
    (what an export holds where no usage was recorded) is no count."""
    n = count_of(value)
    return n if n else None


OTEL_CACHED = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
               "gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_creation_input_tokens",
               "gen_ai.usage.cache_write_input_tokens")  # fmt: skip
"""A span's prompt-cache counts: the conventions' names, then the older spellings instrumentations
still write (strands-agents writes Bedrock's ``cacheWriteInputTokens`` as
``gen_ai.usage.cache_write_input_tokens``)."""


def otel_input(attrs: Mapping[str, Any]) -> int | None:
    """A span's input count: ``gen_ai.usage.input_tokens`` (else the older ``prompt_tokens``). The
    GenAI conventions count cached tokens inside it, but an instrumentation copying Anthropic's
    ``usage.input_tokens`` leaves them out (4 input tokens beside 18 000 read from the cache): a
    count smaller than the span's own cache counts cannot hold them, so they are added to it."""
    n = input_count(attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens")))
    if n is None:
        return None
    cached = sum(count_of(attrs.get(k)) or 0 for k in OTEL_CACHED[:2]) or sum(
        count_of(attrs.get(k)) or 0 for k in OTEL_CACHED[2:]
    )
    return n + cached if cached > n else n


def reported_input(usage: Any) -> int | None:
    """The input tokens ``usage`` reports (the first of :data:`INPUT_KEYS` it holds as a count,
    plus the cache counts its API keeps apart from that key, :data:`CACHED_APART`), else ``None``."""
    if not isinstance(usage, Mapping):
        return None
    for key in INPUT_KEYS:
        n = input_count(usage.get(key))
        if n is not None:
            return n + sum(count_of(usage.get(k)) or 0 for k in CACHED_APART.get(key, ()))
    return None


def first_reported(*usages: Any) -> int | None:
    """The count of the first of ``usages`` that reports one (a format keeps it in several places)."""
    for usage in usages:
        n = reported_input(usage)
        if n is not None:
            return n
    return None


Request = tuple[int, str, str | None, int, str | None]
"""A request a session file records the usage of: the number of the session's events sent before
its answer, where the answer is, the model, the input count the provider reported, and the
system prompt sent with it when the file keeps it (its frame; ``None``: the file does not)."""


def usage_windows(
    b: SessionBuilder, requests: Iterable[Request], provider: str | None
) -> Iterator[SentWindow]:
    """Each request of ``requests``: the events sent before its answer, less those a summary among
    them hides (its ``covers``), with the provider's count and its frame — one pass over the session's events,
    the events kept so far filtered at each summary."""
    events, origins = b.events, b.origins
    kept: list[int] = []
    done = 0
    for n, where, model, reported, frame in requests:
        for i in range(done, n):
            e = events[i]
            if e.kind is Kind.SUMMARY and e.covers:
                lo, hi = e.covers
                kept = [k for k in kept if not lo <= events[k].seq <= hi]
            kept.append(i)
        done = n
        window: list[Event] = [events[k] for k in kept]
        yield SentWindow(
            where, provider, Imported(window, [origins[k] for k in kept]), model, b.session, reported, frame
        )


class UsageWindows(Sequence[SentWindow]):
    """The requests of a session file's usage (:func:`usage_windows`; per session its builder and
    requests), built when first read: only ``lint --budget`` reads them, and a long session makes
    a window per answer."""

    def __init__(
        self, sessions: Iterable[tuple[SessionBuilder, list[Request]]], provider: str | None
    ) -> None:
        self.sessions = [(b, r) for b, r in sessions if r]
        self.provider = provider
        self.built: list[SentWindow] | None = None

    def __len__(self) -> int:
        return sum(len(r) for _, r in self.sessions)

    @overload
    def __getitem__(self, i: int) -> SentWindow: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[SentWindow]: ...
    def __getitem__(self, i: int | slice) -> SentWindow | Sequence[SentWindow]:
        if self.built is None:
            self.built = [w for b, r in self.sessions for w in usage_windows(b, r, self.provider)]
        return self.built[i]
