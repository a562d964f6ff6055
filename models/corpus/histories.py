"""Cases whose input is a history in its product's own format, replayed before every model request
(:func:`models.per_request.replay_requests`): the red trimmer breaks ``breaks``, the green does not.
These are what ``turncheck cases run --against`` gives a user's own trimmer. The red trimmers are
our strategies shaped like the report's cut (a budget in place of a message count), not the
libraries: where a peer runs the library, the release names it."""

from __future__ import annotations

from turncheck.models.cases import Case, HistoryInput, register_case

CUT = "a model of the cut: M{} under a token budget where the library counts messages"

for _case in (
    Case("spring-ai-count-cut", "spring-projects/spring-ai#5940", "2026-05-05", "open", "orphan/pairing",
         HistoryInput("spring-ai-5940.json", "openai-chat", 40, "M0", "M5"), ("orphanRes",),
         "a parallel batch cut between its calls and results: the window opens on a tool result",
         CUT.format(0) + " (Spring AI 2.0.0-M5 in the report)",
         also=("github/copilot-cli#2589",)),
    Case("spring-ai-snap-to-user", "spring-projects/spring-ai#6312", "2026-06-05", "merged", "orphan/pairing",
         HistoryInput("spring-ai-6312.json", "openai-chat", 30, "M3", "M5"), ("empty",),
         "the cut snapped forward to the next USER leaves nothing while one tool loop outgrows the window",
         CUT.format(3) + " (the merged PR's rule)"),
    Case("parallel-batch-cut", "omnigent-ai/omnigent#2449", "2026-07-12", "merged", "orphan/pairing",
         HistoryInput("omnigent-2449.json", "openai-responses", 50, "M0", "M5"), ("orphanRes",),
         "dropping the first function_call of a parallel batch orphans its function_call_output",
         CUT.format(0) + " (the PR drops a batch atomically, as M5 does)"),
    Case("langchain-trim-last-orphan", "langchain-ai/langchain#35313", "2026-02-18", "open", "orphan/pairing",
         HistoryInput("spring-ai-5940.json", "openai-chat", 40, "peer:langchain", "peer:langchain-human",
                      ("langchain-core==1.8.3",)), ("orphanRes",),
         "trim_messages(strategy='last') keeps a ToolMessage whose AIMessage it cut: 400 messages with role "
         "'tool' must be a response to a preceding message with 'tool_calls'",
         "langchain-core 1.8.3 (constraints.txt), run as peer:langchain; green is start_on='human'",
         also=("langchain-ai/langchain#33265",)),
    Case("semantic-kernel-truncation", "microsoft/semantic-kernel#12708", "2025-08-11", "open", "orphan/pairing",
         HistoryInput("semantic-kernel-12708.json", "openai-chat", 5, "M0", "peer:semantic-kernel",
                      ("semantic-kernel==1.45.0",)), ("orphanRes",),
         "ChatHistoryTruncationReducer(target_count=3) cuts the TOOL_CALLS message and keeps its TOOL "
         "message (the thread's reproducer, as history)",
         "red is a model of the count cut (M0): the release the reporter ran is not named in what was read; "
         "semantic-kernel 1.45.0 (constraints.txt) keeps the pair on the reproducer: green"),
    Case("agent-framework-nonadjacent-pair", "microsoft/agent-framework#7212", "2026-07-20", "closed",
         "orphan/pairing", HistoryInput("agent-framework-7212.jsonl", None, 40, "M3", "M5"), ("orphanRes",),
         "group pairing is adjacency-only: a result written turns after its call (an approval) forms its own "
         "group, and compaction excludes the call's group but keeps the result's",
         "a model of the cut: M3 excludes whole turns oldest-first as the groups are; M5 pairs by id "
         "(agent-framework-core 1.10.0 to 1.12.1 in the report)"),
    Case("langchain4j-window-orphan", "langchain4j/langchain4j#585", "2024-02-01", "closed", "orphan/pairing",
         HistoryInput("langchain4j-585.json", "openai-chat", 60, "M0", "M5"), ("orphanRes",),
         "ChatMemory drops an AiMessage with tool requests and keeps its ToolExecutionResultMessage: Invalid "
         "parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
         CUT.format(0) + " (PR #666 evicts the orphaned results with their request)",
         also=("langchain4j/langchain4j#666",)),
    Case("langchain4j-bulk-tool-results", "langchain4j/langchain4j#3133", "2025-05-30", "open", "orphan/pairing",
         HistoryInput("langchain4j-3133.json", "openai-chat", 60, "M0", "M5"), ("orphanRes",),
         "one request runs a tool many times; a persisted memory of 35 messages keeps the results and drops what "
         "led to them, and every later request is refused",
         CUT.format(0) + " (the release is not named in what was read; open PR #4820 proposes the repair)"),
    Case("n8n-window-splits-pair", "n8n-io/n8n#34166", "2026-07-14", "closed", "orphan/pairing",
         HistoryInput("n8n-34166.json", "openai-chat", 60, "M0", "M5"), ("orphanRes",),
         "Chat Memory's contextWindowLength trimming splits tool_call/tool pairs: Invalid parameter: messages with "
         "role 'tool' must be a response to a preceeding message with 'tool_calls'.",
         CUT.format(0) + " (the n8n release is not named in what was read)"),
):  # fmt: skip
    register_case(_case)
