"""Threads of the corpus not expressible as a case yet, each with what it waits on (listed by
``turncheck cases list``, never counted as a case). ``shows`` is what the thread reports where it
was read for this corpus; ``not read yet`` where it was not."""

from __future__ import annotations

from turncheck.models.cases import PendingThread, register_pending

IMPORTERS = "not read yet; the product's own session file (claude-code, pi, bedrock/strands, pydantic-ai, openhands and goose files are read now)"
RACE = "sim/race with real thread/timer durations and exits"
COST = "usage and the three costs per request in lint, and the cost-trigger model"
NOT_FOUND = "its text not found in the search corpus, so its date, state and shape are not read"
UNSORTED = "not read for this corpus yet: its shape decides the input"

for _thread in (
    PendingThread("openai/openai-agents-js#1668", "a model of the runner-to-session hand-off",
                  "items before an inline compaction marker reach neither addItems() nor replaceHistoryWithCompaction() (closed, wontfix, 2026-08-14)"),
    PendingThread("google/adk-python#1733", RACE,
                  "two /run calls on one session: the stale-session ValueError (closed)"),
    PendingThread("google/adk-python#3717", RACE,
                  "the stale-session ValueError on equal timestamps with LongRunningFunctionTool (open, 2025-11-26)"),
    PendingThread("google/adk-python#5602", "an adk-format history holding an intermediate and a final function_response of one id",
                  "compaction folds a LongRunningFunctionTool call whose pending response shares its id (closed, 2026-05-06)"),
    PendingThread("google/adk-go#1234", RACE + " (tests/test_race.py holds its shape as a test)"),
    PendingThread("anthropics/claude-code#39695", IMPORTERS),
    PendingThread("strands-agents/harness-sdk#1749", "its text: not found in the search corpus (the shape it is cited for, a window starting at an assistant toolUse, is the case of #2085)"),
    PendingThread("earendil-works/pi#4203", IMPORTERS),
    PendingThread("aaif-goose/goose#7444", NOT_FOUND + " (--from goose reads the sessions.db; #6336 is a case)"),
    PendingThread("google-gemini/gemini-cli#3814", UNSORTED + " (the issue groups it with #16543 and #21830, a case)"),
    PendingThread("crewAIInc/crewAI#4381", NOT_FOUND + " (models/cost_trigger.py quotes its Anthropic refusal: prompt is too long)"),
    PendingThread("cline/cline#14195", NOT_FOUND + " (models/cost_trigger.py quotes it; its shape, an estimate under the real count, is cost-trigger --param estimate=0.75)"),
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
    PendingThread("letta-ai/letta#2541", COST,
                  "with Gemini models the summarizer is not triggered when the context limit is reached, only warned about (open, 2025-04-07; Letta 0.6.48)"),
    *(PendingThread(t, UNSORTED) for t in (
        "spring-projects/spring-ai#7029", "spring-projects/spring-ai#3945",
        "spring-projects/spring-ai#3149", "langchain4j/langchain4j#5250",
        "mastra-ai/mastra#16193", "mastra-ai/mastra#13984",
        "microsoft/agent-framework#8441",
        "microsoft/agent-framework#6972", "microsoft/agent-framework#4924", "microsoft/agent-framework#4835",
        "microsoft/agent-framework#7744", "microsoft/agent-framework#7518", "letta-ai/letta#2605",
        "langchain-ai/langgraph#4168",
    )),
):  # fmt: skip
    register_pending(_thread)
