"""Threads of the corpus not expressible as a case yet, each with what it waits on (listed by
``turncheck cases list``, never counted as a case). ``shows`` is what the thread reports where it
was read for this corpus; ``not read yet`` where it was not."""

from __future__ import annotations

from turncheck.models.cases import PendingThread, register_pending

RACE = "sim/race with real thread/timer durations and exits"
NOT_FOUND = "its text not found in the search corpus, so its date, state and shape are not read"
UNSORTED = "not read for this corpus yet: its shape decides the input"
SEARCHED = (
    "its text: searched for in the issues corpus by product and topic (the #54 audit) and not found, "
    "so its date, state and shape are not read; its input waits on them"
)

for _thread in (
    PendingThread("openai/openai-agents-js#1668", "a model of the runner-to-session hand-off",
                  "items before an inline compaction marker reach neither addItems() nor replaceHistoryWithCompaction() (closed, wontfix, 2026-08-14)"),
    PendingThread("google/adk-python#1733", RACE,
                  "two /run calls on one session: the stale-session ValueError (closed)"),
    PendingThread("google/adk-python#3717", RACE,
                  "the stale-session ValueError on equal timestamps with LongRunningFunctionTool (open, 2025-11-26)"),
    PendingThread("google/adk-python#5602", "a lint check for a RESULT written after a summary that hid its CALL: an adk "
                  "session written with google-adk 2.13.0's own types (the call, its pending response, a compaction over "
                  "both, the resume response) lints the same as the unfolded one (answered-twice, response-count-mismatch "
                  "in both): lint, like ADK's compactor, reads the pending response as the answer (s62)",
                  "compaction folds a LongRunningFunctionTool call whose pending response shares its id (closed, 2026-05-06)"),
    PendingThread("google/adk-go#1234", RACE + " (tests/test_race.py holds its shape as a test)"),
    PendingThread("anthropics/claude-code#39695", SEARCHED + " (--from claude-code reads its session files now)"),
    PendingThread("strands-agents/harness-sdk#1749", "its text: not found in the search corpus (the shape it is cited for, a window starting at an assistant toolUse, is the case of #2085)"),
    PendingThread("earendil-works/pi#4203", SEARCHED + " (--from pi reads its session files now; its neighbours "
                  "#4570 and #6832 are read, and #6832 is a case)"),
    PendingThread("aaif-goose/goose#7444", NOT_FOUND + " (--from goose reads the sessions.db; #6336 is a case)"),
    PendingThread("google-gemini/gemini-cli#3814", UNSORTED + " (the issue groups it with #16543 and #21830, a case)"),
    PendingThread("crewAIInc/crewAI#4381", "a trigger that reacts to the provider's refusal: respect_context_window summarises only when a failed call's message matches a known pattern (cost-trigger's trigger acts on its own count, before the request)",
                  "Anthropic's 'prompt is too long: 210094 tokens > 200000 maximum' is not among CONTEXT_LIMIT_ERRORS, so the summary never runs (closed, 2026-02-05)"),
    PendingThread("mastra-ai/mastra#24110", "a check that a request sends the tool result it was made for (the node bridge runs peer:mastra-token-limiter)",
                  "TokenLimiter (best-fit) drops the current run's tool call and result: the agent loops and answers without the data (open)"),
    PendingThread("vercel/ai#11036", "a trace holding a call's output and the pruned request (a request logged without its reasoning item holds no tie: models/provider_rules.py)",
                  "pruneMessages strips reasoning parts: Responses refuses a function_call without its reasoning item (open, 2025-12-10)"),
    PendingThread("langchain-ai/langchain#38352", "a peer running SummarizationMiddleware (langchain 1.x; not among the peers)",
                  "_find_safe_cutoff_point leaves orphan ToolMessages in mixed tool-call runs (read in PRs #38357, closed, and #39269, open)"),
    PendingThread("letta-ai/letta#2601", "a summary-content check of the messages kept after the cutoff",
                  "summarize_messages_inplace wipes every in-context message, not only those before the cutoff (closed, 2025-04-30)"),
    PendingThread("microsoft/agent-framework#8099", "a summary-content check: a persisted history whose excluded messages no summary covers",
                  "call-level compaction's summary never reaches the AgentResponse; the history persists the exclusion flags alone (closed, 2026-09-06)"),
    PendingThread("strands-agents/harness-sdk#2173", "a peer running strands' SlidingWindowConversationManager (strands is not among the peers): the fault is its trim of a tool-heavy history, which a written file does not show",
                  "SlidingWindowConversationManager.reduce_context fails to trim tool-heavy conversations after v1.35.0 (closed, 2026-04-21)"),
    PendingThread("letta-ai/letta#2541", "its cause: the count crossed the threshold (the log warns 'last response total_tokens (3352) > 3000.0') and no summary ran; cost-trigger's trigger always acts on a count over it",
                  "with Gemini models the summarizer is not triggered when the context limit is reached, only warned about (open, 2025-04-07; Letta 0.6.48)"),
    PendingThread("google/adk-python#4675", NOT_FOUND + " (the issue cites it as a count trigger in the wrong unit)"),
    PendingThread("CherryHQ/cherry-studio#18351", "a failure to show: the corrected figure is an overcount, under which every cost-trigger property holds (the cost-trigger scenario draws it)",
                  "a ~3-4x undercount first, corrected by the reporter: that total counted prompt-cache reads; tokenx is ~+17% over the fresh input"),
    PendingThread("microsoft/conductor#507", "a check of what a compaction hook reports: cost-trigger and lint judge the requests, not a hook's tokens_before / tokens_after",
                  "a review finds the estimate overwritten with UTF-8 bytes and reported as tokens, inverting still_over_trigger (merged, 2026-09-08)"),
    PendingThread("cline/cline#13333", "a skip rule beside the trigger (cost-trigger has none): Cline's skip check weighs a relative margin, not the absolute headroom left",
                  "compaction skipped with ~2,000 tokens of headroom before the model's hard limit; the next turn overflows (closed, 2026-08-18; Cline v4.1.10)"),
    PendingThread("editor-code-assistant/eca#615", "its cause: the reporter could not pinpoint when the trigger fails to fire",
                  "automatic compaction sometimes does not trigger past the threshold (80% of 256k) for the whole 50k left (open, 2026-09-22)"),
    PendingThread("microsoft/agent-framework#7744", SEARCHED + " (#8099 cites it as fixed by PR #7912 in "
                  "agent-framework 1.17.0 and distinct from its own summary loss)"),
    PendingThread("langchain-ai/langgraph#4168", SEARCHED + "; reported closed, fixed by langgraph-checkpoint "
                  "2.0.22's serializer switch: a serializer's round trip, so its case is a log langgraph-checkpoint "
                  "before 2.0.22 wrote, which needs that release to run (the suite pins a later one)"),
    *(PendingThread(t, SEARCHED) for t in (
        "spring-projects/spring-ai#7029", "spring-projects/spring-ai#3945",
        "spring-projects/spring-ai#3149", "langchain4j/langchain4j#5250",
        "mastra-ai/mastra#13984",
        "microsoft/agent-framework#8441",
        "microsoft/agent-framework#6972", "microsoft/agent-framework#4924", "microsoft/agent-framework#4835",
        "microsoft/agent-framework#7518", "letta-ai/letta#2605",
    )),
):  # fmt: skip
    register_pending(_thread)
