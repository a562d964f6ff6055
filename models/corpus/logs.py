"""Cases whose input is a log in a product's own format: the red one as the report shows it
written or sent, the green one as the fix writes it, each linted with a provider's rules (the
fault is a store's or a serializer's, not a trimmer's). Every thread here was read."""

from __future__ import annotations

from turncheck.models.cases import Case, LogInput, register_case

WRITTEN = "the log as the thread describes it written, linted: the library does not run"

for _case in (
    Case("spring-ai-streaming-memory", "spring-projects/spring-ai#6340", "2026-06-08", "open", "orphan/pairing",
         LogInput("spring-ai-6340-red.json", "spring-ai-6340-green.json", "openai-chat", "openai-chat"),
         ("call-not-answered-next",),
         "MessageChatMemoryAdvisor stores one AssistantMessage holding the final text and the round's tool_calls: "
         "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.",
         f"{WRITTEN} (Spring AI 2.0.0-RC1 in the report)"),
    Case("letta-orphan-after-crash", "letta-ai/letta#3250", "2026-03-25", "open", "orphan/pairing",
         LogInput("letta-3250-red.json", "letta-3250-green.json", "openai-responses", "openai-responses"),
         ("orphan-output",),
         "a run crashed mid-tool-sequence leaves a tool return without its call in message_ids: "
         "No tool call found for function call output with call_id call_XXXXX.",
         WRITTEN),
    Case("gemini-cli-response-count", "google-gemini/gemini-cli#16543", "2026-01-13", "open", "orphan/pairing",
         LogInput("gemini-cli-16543-red.json", "gemini-cli-16543-green.json", "gemini", "gemini"),
         ("response-count-mismatch",),
         "Please ensure that the number of function response parts is equal to the number of function call "
         "parts of the function call turn.",
         "gemini-cli 0.23.0 (#16543) and 0.24.0 (#21830) in the reports; the request shape the error names, "
         "linted: how gemini-cli came to send it is not in what was read",
         also=("google-gemini/gemini-cli#21830", "google-gemini/gemini-cli#16827", "google-gemini/gemini-cli#14590",
               "google-gemini/gemini-cli#6379", "google-gemini/gemini-cli#5443")),
    Case("claude-code-orphan-result", "anthropics/claude-code#6836", "2025-08-29", "open", "orphan/pairing",
         LogInput("claude-code-6836-red.json", "claude-code-6836-green.json", "anthropic", "anthropic"),
         ("result-not-next",),
         "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: … Each `tool_result` "
         "block must have a corresponding `tool_use` block in the previous message.",
         "the meta thread of 150+ reports (opened on Claude Code 1.0.94, after the alleged fix in 1.0.84; its "
         "comments from 2025-12 quote the error); the request shape the error names, linted: how Claude Code came "
         "to send it is not in what was read, so no release of it runs"),
    Case("mastra-semantic-recall-orphan", "mastra-ai/mastra#16193", "2026-05-05", "closed", "orphan/pairing",
         LogInput("mastra-16193-red.json", "mastra-16193-green.json", "anthropic", "anthropic"),
         ("orphan-result", "result-not-next"),
         "SemanticRecall (scope resource, a small messageRange, parallel tool calls) injects recalled messages "
         "whose tool_result blocks lost their tool_use: messages.N.content.0: unexpected tool_use_id found in "
         "tool_result blocks",
         "the request as the thread describes SemanticRecall building it, linted: @mastra/memory does not run "
         "(its release is not named in what was read); green is the recalled range widened to whole tool pairs"),
    Case("cline-truncation-orphan", "cline/cline#7225", "2025-11-02", "merged", "orphan/pairing",
         LogInput("cline-7225-red.json", "cline-7225-green.json", "anthropic", "anthropic"),
         ("result-not-next",),
         "context truncation removes a tool_use and keeps its tool_result in the first user message after the "
         "truncated range: messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks",
         "the request as the PR describes it after truncation, linted; green drops the orphaned tool_result, "
         "as the merged PR does: cline does not run"),
    Case("strands-window-assistant-first", "strands-agents/harness-sdk#2085", "2026-04-07", "closed",
         "orphan/pairing", LogInput("strands-2085-red.json", "strands-2085-green.json", "bedrock", "bedrock", trimmed=40),
         ("first-not-user",),
         "the sliding window keeps a history that starts with an assistant message: ValidationException: "
         "A conversation must start with a user message",
         "strands-agents 1.62.0 wrote both files (examples/formats/strands_messages.py): window 4 falls back to "
         "an assistant toolUse boundary (red; Strands 1.30.0 in the report, PR #2087 merged the user-first check "
         "for plain cuts); green is the same agent untrimmed, not a release's fix",
         also=("strands-agents/harness-sdk#2087",)),
    Case("claude-code-compaction-in-flight", "anthropics/claude-code#90036", "2026-08-27", "open", "summary content",
         LogInput("claude-code-90036-red.jsonl", "claude-code-90036-green.jsonl", "claude-code", "anthropic"),
         ("summary-covers-open-call",),
         "compaction rewrites the window while a background agent still runs: the free-prose summary may not "
         "mention it, and the session dispatches a second agent onto the same work",
         "the session file in Claude Code's own format, with the CLI version of the report (2.1.247) in its "
         "records; written for the importer, not by the CLI: the compaction boundary sits before the running "
         "call's result (red), after it (green)"),
    Case("pi-stale-compaction-mid-pair", "earendil-works/pi#8667", "2026-08-26", "closed", "compaction race",
         LogInput("pi-8667-red.jsonl", "pi-8667-green.jsonl", "pi", "anthropic"),
         ("summary-splits-pair", "result-not-next"),
         "a compaction entry appended while a tool ran sits between the call and its result; a later compaction "
         "keeps it, and every turn fails: 400 messages.N.content.M: unexpected tool_use_id found in tool_result blocks",
         "the session file in pi's own format (session version 3, pi 0.84.3 in the report), written for the "
         "importer in the tree shape the report shows; green is a session whose compactions sit between turns"),
    Case("pydantic-ai-poisoned-history", "pydantic/pydantic-ai#4728", "2026-03-18", "open", "orphan/pairing",
         LogInput("pydantic-ai-4728-red.json", "pydantic-ai-4728-green.json", "pydantic-ai", "anthropic"),
         ("dangling-call", "call-not-answered-next"),
         "a run stops after the model's tool call and the stored history keeps the call unanswered: once one bad "
         "pair gets in, every subsequent run 400s on the same history",
         "pydantic-ai-slim 2.68.0 wrote both files (examples/formats/pydantic_ai_messages.py): the run stopped "
         "after its tool call (red), and one that ran to its answer (green)"),
    Case("langchain4j-concurrent-memory", "langchain4j/langchain4j#1966", "2024-10-21", "open", "orphan/pairing",
         LogInput("langchain4j-1966-red.json", "langchain4j-1966-green.json", "openai-chat", "openai-chat"),
         ("call-not-answered-next", "result-not-next"),
         "two concurrent calls with tools on one MessageWindowChatMemory leave it in a bad state: each call's "
         "messages land between the other's tool request and its result",
         f"{WRITTEN}: the memory as two interleaved requests leave it (the maintainer, 2024-10-24: AI Services "
         "should not be used concurrently for now)"),
    Case("openhands-rejected-action-filtered", "OpenHands/software-agent-sdk#432", "2025-09-22", "merged",
         "orphan/pairing", LogInput("openhands-432-red.json", "openhands-432-green.json", "openhands", "anthropic"),
         ("orphan-result", "result-not-next"),
         "the condenser paired actions only with ObservationEvent: an action the user rejected "
         "(UserRejectObservation) is filtered out as unpaired, and its rejection is sent without it",
         "the events as the condenser's view sends them, written for the importer after openhands/sdk/event "
         "(openhands-sdk does not run: it is not on the package index this suite installs from); green is the view of "
         "the merged PR"),
    Case("openhands-answered-twice-after-crash", "OpenHands/software-agent-sdk#2300", "2026-03-04", "merged",
         "orphan/pairing", LogInput("openhands-2300-red.json", "openhands-2300-green.json", "openhands", "anthropic"),
         ("answered-twice",),
         "crash recovery answers the running action with an AgentErrorEvent, run() executes it again: both an "
         "AgentErrorEvent and an ObservationEvent for one tool_call_id",
         "the events as the PR's steps describe them, written for the importer (openhands-sdk does not run: it is "
         "not on the package index this suite installs from); green is the history after the merged fix"),
    Case("atomic-duplicate-tool-result", "bastani-inc/atomic#2051", "2026-07-28", "closed", "compaction race",
         LogInput("atomic-2051-red.json", "atomic-2051-green.json", "anthropic", "anthropic"), ("answered-twice",),
         "a mid-turn compaction followed by parallel tool calls: messages.4.content.1: each tool_use must have a "
         "single result. Found multiple `tool_result` blocks with id",
         f"{WRITTEN}: the request the error names, with the report's tool_use id"),
    Case("opencode-interrupted-tool-call", "anomalyco/opencode#3230", "2025-10-16", "closed", "orphan/pairing",
         LogInput("opencode-3230-red.json", "opencode-3230-green.json", "anthropic", "anthropic"),
         ("dangling-call", "call-not-answered-next"),
         "interrupting a conversation while a tool call runs: `tool_use` ids were found without `tool_result` "
         "blocks immediately after",
         f"{WRITTEN}: the request the error names (the opencode release is not named in what was read); green "
         "answers the interrupted call"),
    Case("crush-interrupted-tool-call", "charmbracelet/crush#862", "2025-08-22", "closed", "orphan/pairing",
         LogInput("crush-862-red.json", "crush-862-green.json", "openai-chat", "openai-chat"),
         ("dangling-call", "call-not-answered-next"),
         "interrupting crush during a tool call, then prompting again: An assistant message with 'tool_calls' must "
         "be followed by tool messages responding to each 'tool_call_id'",
         f"{WRITTEN}: the request DeepSeek refused, with the report's call id (the crush release is not named in "
         "what was read)"),
    Case("pi-hook-compaction-orphan-result", "earendil-works/pi#6832", "2026-07-19", "closed", "compaction race",
         LogInput("pi-6832-red.jsonl", "pi-6832-green.jsonl", "pi", "openai-responses"), ("summary-covers-open-call",),
         "a hook-triggered compaction folds a running call away and keeps its result, and every turn fails: "
         "400 No tool call found for function call output with call_id",
         "the session file in pi's own format, in the on-disk pattern the report shows (pi 0.80.10, openai-codex; "
         "#4570 the same on 0.74.0), written for the importer; green is a compaction placed after the result",
         also=("earendil-works/pi#4570",)),
    Case("goose-unanswered-tool-request", "aaif-goose/goose#6336", "2026-01-05", "closed", "orphan/pairing",
         LogInput("goose-6336-red.jsonl", "goose-6336-green.jsonl", "goose", "anthropic"),
         ("dangling-call", "call-not-answered-next", "results-not-first"),
         "a session whose stored toolRequest has no toolResponse, sent to Claude (through Databricks) with the next "
         "prompt: messages.2: tool_use ids were found without tool_result blocks immediately after: "
         "toolu_bdrk_01A5Cmwj9JMNSh2PgSLnJwzy",
         "the session in goose's own message serialization (examples/formats/goose_session.py, after "
         "message.rs / storage.rs; the older JSONL form, which --from goose reads as it reads sessions.db), with "
         "the report's tool_use id, written for the importer: goose needs a model account to run; green stores "
         "the call's response and answer"),
):  # fmt: skip
    register_case(_case)
