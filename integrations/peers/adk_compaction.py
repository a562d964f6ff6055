"""Peer ``adk-compaction``: Google ADK's events compaction, run over ADK's own ``Event`` objects.

ADK does not trim a request; it *compacts the session*: an ``App(events_compaction_config=
EventsCompactionConfig(...))`` makes the runner summarize older events into one compaction event
(``EventActions(compaction=EventCompaction(start_timestamp, end_timestamp, compacted_content))``)
that is appended to the session, and every later request is rebuilt from the session with the
raw events inside a kept compaction's ``[start_timestamp, end_timestamp]`` hidden and its summary
put in their place. Both of ADK's triggers are configured, as its docs show them:

* sliding window — ``compaction_interval=3, overlap_size=1``: after an invocation completes
  (the runner's post-invocation step, ``Runner._run_post_invocation_compaction``), once three new
  invocations are in the session, the newest ones plus one earlier are summarized;
* token threshold — ``token_threshold=budget, event_retention_size=5``: before every model call
  (``CompactionRequestProcessor``, one of ``SingleFlow``'s request processors) and after every
  invocation, when the newest observed prompt size reached the budget, everything since the last
  compaction but the newest five events is summarized (token first: when it fires the sliding
  window is skipped).

Our events become ADK events in a real ``InMemorySessionService`` session, appended in order: a
USER is a user event that starts a new invocation; a TERM a model text event; a run of CALLs one
model event with a ``function_call`` part per call (one model response); a run of RESULTs one
event of ``function_response`` parts (ADK merges a batch's responses into one event). Timestamps
are the positions (ADK orders compaction ranges by timestamp; the writer's ``ts`` may be tied).
Each model event carries the prompt size of the request that produced it in ``usage_metadata``
— what a model reports, here in our cost model — which is what the token trigger reads.

At every request point the request is built by ``SingleFlow``'s request processors, compaction
and contents included, on an ``InvocationContext`` of the session: ``llm_request.contents`` is
the window. ADK drops orphaned function responses and unanswered calls itself while building it.

The summarizer is ADK's default, ``LlmEventSummarizer`` (which ADK builds from the agent's
model when none is given), and the model behind it is :func:`offline_model`: it answers a
summary request with the first ``SUMMARY_CHARS`` characters of the conversation ADK formatted
for it — deterministic, offline. The summary ADK sends in place of a compaction's events is a
SUMMARY event (:func:`summary_event`) whose ``covers`` are the seqs of the positions its
compaction's ``[start_timestamp, end_timestamp]`` spans, made after every event of the request's
history (as :mod:`models.summarising` makes its own): so its coverage errors are measured — an
event sent beside it, a call it summarised before its result came.

Each part of an ADK event carries its history position in its instance dictionary, outside the
model's fields: ADK's shallow and deep copies keep it, while serialization, equality and ADK's
size estimates do not see it. A sent part without one is a summary ADK materialized, or an error.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from functools import cache
from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel, content_of
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event, Kind, detect_cjk
from turncheck.models.history import History
from turncheck.models.message_spans import TOOL_NAME, Span, arguments, spans
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.requests import request_points
from turncheck.models.selection import Selection, window_of

PEER = "peer:adk-compaction"
NAME = "turncheck"
TAG = "turncheck_position"
SUMMARY_CHARS = 400
INTERVAL, OVERLAP, RETENTION = 3, 1, 5


@cache
def offline_model() -> Any:
    """An ADK ``BaseLlm`` that writes summaries without a network: the first ``SUMMARY_CHARS``
    and last ``SUMMARY_CHARS / 2`` characters of the conversation in the summary prompt (what follows
    the template's blank line)."""
    base_llm = require("google.adk.models.base_llm", PEER)
    llm_response = require("google.adk.models.llm_response", PEER)
    types = require("google.genai.types", PEER)

    class OfflineSummaryModel(base_llm.BaseLlm):  # type: ignore[misc, name-defined]
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            prompt = "".join(p.text or "" for c in llm_request.contents for p in c.parts or ())
            history = prompt.split("\n\n", 1)[-1]
            half = SUMMARY_CHARS // 2
            summary = history if len(history) <= SUMMARY_CHARS else f"{history[:half]} … {history[-half:]}"
            yield llm_response.LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=summary)])
            )

    return OfflineSummaryModel(model="turncheck-offline-summary")


def tagged(part: Any, position: int) -> Any:
    part.__dict__[TAG] = position
    return part


def adk_event(history: History, span: Span, invocation: str, prompt: int | None) -> Any:
    """The ADK event of one span; ``prompt`` is the prompt size of the request that produced it
    (a model event at a request point)."""
    types = require("google.genai.types", PEER)
    adk = require("google.adk.events", PEER)
    events = history.events
    first = events[span.start]
    at = range(span.start, span.end)
    if span.kind is Kind.USER:
        parts, role = [tagged(types.Part(text=content_of(first)), span.start)], "user"
    elif span.kind is Kind.TERM:
        parts, role = [tagged(types.Part(text=content_of(first)), span.start)], "model"
    elif span.kind is Kind.CALL:
        role = "model"
        parts = [
            tagged(types.Part(function_call=types.FunctionCall(
                id=events[p].call_id, name=TOOL_NAME, args=arguments(content_of(events[p])))), p)
            for p in at
        ]  # fmt: skip
    else:
        role = "user"
        parts = [
            tagged(types.Part(function_response=types.FunctionResponse(
                id=events[p].call_id, name=TOOL_NAME, response={"result": content_of(events[p])})), p)
            for p in at
        ]  # fmt: skip
    usage = None if prompt is None else types.GenerateContentResponseUsageMetadata(prompt_token_count=prompt)
    return adk.Event(
        invocation_id=invocation,
        author="user" if span.kind is Kind.USER else NAME,
        content=types.Content(role=role, parts=parts),
        timestamp=float(span.start + 1),
        usage_metadata=usage,
    )


def summary_event(history: History, n: int, text: str, covers: tuple[int, int], k: int) -> Event:
    """The ``k``-th summary sent at request ``n`` (a position of ``history``): covering the seqs
    of positions ``covers`` (inclusive), with a seq after every event of the request's history."""
    events = history.events
    last = events[covers[1]]
    return Event(max(e.seq for e in events[:n]) + 1 + k, last.session, last.turn, Kind.SUMMARY, ts=last.ts,
                 text=text, chars=len(text), cjk=detect_cjk(text),
                 covers=(events[covers[0]].seq, last.seq))  # fmt: skip


def compacted_positions(session: Any, message_spans: Sequence[Span]) -> dict[str, tuple[int, int]]:
    """Each compaction's summary text → the first and last history positions of its range (an
    ADK event's timestamp is its span's start + 1; the newest compaction of a text wins)."""
    ends = {span.start: span.end - 1 for span in message_spans}
    out = {}
    for event in session.events:
        c = event.actions.compaction if event.actions else None
        if c is not None and c.compacted_content is not None:
            text = "".join(part.text or "" for part in c.compacted_content.parts or ())
            out[text] = (int(c.start_timestamp) - 1, ends[int(c.end_timestamp) - 1])
    return out


def selection_of(history: History, n: int, contents: Sequence[Any], compacted: dict[str, tuple[int, int]]) -> Selection:  # fmt: skip
    """The history positions of the parts ADK sent at request ``n``, in order; a content of
    untagged text parts is a compaction's summary (``compacted``: its range), sent before the
    next kept position."""
    positions: list[int] = []
    invented: list[tuple[int, Event]] = []
    for content in contents:
        parts = list(content.parts or ())
        tags = [part.__dict__.get(TAG) for part in parts]
        if all(t is not None for t in tags):
            positions.extend(tags)
        elif all(t is None and part.text is not None for t, part in zip(tags, parts, strict=True)):
            text = "".join(part.text for part in parts)
            if text not in compacted:
                raise TurncheckError(f"{PEER} sent a summary of no compaction: {text[:80]}")
            invented.append((len(positions), summary_event(history, n, text, compacted[text], len(invented))))
        else:
            raise TurncheckError(f"{PEER} sent a part it was not given: {str(content)[:80]}")
    return Selection(tuple(positions), invented=tuple(invented))


async def _windows(history: History, at: Sequence[int], budget: int, cost: CostModel) -> list[Window]:
    """Replay ``history`` into an ADK session, compacting where the runner would, and the window
    of each request in ``at`` (each a request point of the history, or its end)."""
    sessions = require("google.adk.sessions", PEER)
    agents = require("google.adk.agents", PEER)
    ic = require("google.adk.agents.invocation_context", PEER)
    apps = require("google.adk.apps.app", PEER)
    runners = require("google.adk.runners", PEER)
    flows = require("google.adk.flows.llm_flows.single_flow", PEER)
    llm_request = require("google.adk.models.llm_request", PEER)
    service = sessions.InMemorySessionService()
    session = await service.create_session(app_name=NAME, user_id=NAME)
    agent = agents.LlmAgent(name=NAME, model=offline_model())
    config = apps.EventsCompactionConfig(compaction_interval=INTERVAL, overlap_size=OVERLAP,
                                         token_threshold=budget, event_retention_size=RETENTION)  # fmt: skip
    runner = runners.Runner(app=apps.App(name=NAME, root_agent=agent, events_compaction_config=config),
                            session_service=service)  # fmt: skip
    flow = flows.SingleFlow()
    n = len(history)
    wanted = set(at)
    points = sorted({p for p in request_points(history.events) if p < n} | wanted)
    found: dict[int, Window] = {}
    invocation = "i0"
    prompts: dict[int, int] = {}
    message_spans = spans(history, group_results=True)
    starts = {s.start: s for s in message_spans}
    for p in points:
        if p < n and p not in starts:
            raise TurncheckError(f"{PEER}: request {p} is inside a message")
    for span in [*message_spans, None]:
        p = n if span is None else span.start
        if p in points:
            context = ic.InvocationContext(session_service=service, invocation_id=invocation, agent=agent,
                                           session=session, events_compaction_config=config,
                                           run_config=agents.RunConfig())  # fmt: skip
            request = llm_request.LlmRequest(model=agent.model.model)
            async for _ in flow._preprocess_async(context, request):
                pass
            prefix = history if p == n else History(history.events[:p], costs=(cost,))
            selection = selection_of(
                history, p, request.contents, compacted_positions(session, message_spans)
            )
            w = window_of(prefix, budget, cost, selection, PEER)
            prompts[p] = cost.frame + w.cost
            if p in wanted:
                found[p] = w
        if span is None:
            break
        if span.kind is Kind.USER:
            if p > 0:
                await runner._run_post_invocation_compaction(session=session)
            invocation = f"i{p + 1}"
        await service.append_event(session, adk_event(history, span, invocation, prompts.get(p)))
    return [found[p] for p in at]


@cache
def silence_adk_log() -> None:
    """ADK logs what it drops (orphaned responses) as warnings; with no handler configured they
    would reach stderr through logging's last resort. The report counts them instead."""
    logging.getLogger("google_adk").addHandler(logging.NullHandler())


def quiet_windows(history: History, at: Sequence[int], budget: int, cost: CostModel) -> list[Window]:
    """:func:`_windows`, with ADK's experimental-feature warnings and its log lines (orphaned
    responses it drops) kept off the user's terminal."""
    silence_adk_log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import asyncio  # at the call: importing a peer module stays cheap (check starts fast)

        return asyncio.run(_windows(history, at, budget, cost))


def compaction_requests(
    events: Sequence[Event], at: Sequence[int], budget: int, cost: CostModel
) -> list[Window]:
    """Incremental replay (:data:`~integrations.peers.requests.REPLAYERS`): one session, every request."""
    history = History(events, costs=(cost,))
    n = len(events)
    natural = set(request_points(events)) | {n}
    if not set(at) <= natural:
        return [events_compaction(History(events[:p], costs=(cost,)), budget, cost) for p in at]
    return quiet_windows(history, at, budget, cost)


def events_compaction(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:adk-compaction``: ADK's session as compacted by its runner, the request it builds."""
    return quiet_windows(history, [len(history)], budget, cost)[0]


register_peer(Peer(PEER, events_compaction, "google-adk", "google.adk",
                   "App(events_compaction_config=EventsCompactionConfig(compaction_interval=3, overlap_size=1, "
                   "token_threshold=budget, event_retention_size=5))",
                   "ours (usage_metadata.prompt_token_count)", extra="adk"))  # fmt: skip
