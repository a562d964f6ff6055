"""Cases whose input is a model: a vendor model of :mod:`integrations.vendors`, the variant that shows the
report red and a fix green — each variant declared there with its kind and source, so a case never
calls a design of ours the vendor's fix — or ``cost-trigger`` with the report's parameters (an
estimate, a frame, a stale count, a summarizer's prompt) red and ones under which every property
holds green. Every thread here was read for its date and state."""

from __future__ import annotations

from turncheck.models.cases import Case, ModelInput, register_case

MODEL = "a protocol model: the report's mechanism, every interleaving explored; no library runs"
COST = "a model: cost-trigger with the report's parameters, every run explored; no library runs"

for _case in (
    Case("spring-ai-window-orphan", "spring-projects/spring-ai#5940", "2026-05-05", "open", "orphan/pairing",
         ModelInput("spring-ai-window", "buggy", "langchain4j"), ("no-orphan-tool-response",),
         "MessageWindowChatMemory's count cut keeps a tool_result without its tool_use (Anthropic 400)",
         f"{MODEL} (Spring AI 2.0.0-M5 in the report; peer:spring-ai-window-1.0 runs the library's cut)",
         also=("spring-projects/spring-ai#6029",)),
    Case("spring-ai-window-empty", "spring-projects/spring-ai#6312", "2026-06-05", "merged", "orphan/pairing",
         ModelInput("spring-ai-window", "turn-snapped", "append-only"), ("non-empty", "no-orphan-tool-response"),
         "the cut advanced to the next USER empties the window when one turn outgrows it",
         f"{MODEL} (the merged rule; peer:spring-ai-window runs Spring AI 1.1's)"),
    Case("openai-agents-compaction", "openai/openai-agents-python#2317", "2026-01-16", "closed", "compaction race",
         ModelInput("openai-agents-compaction", "buggy", "fixed"), ("compaction-accepted",),
         "responses.compact runs before the tool outputs are in the chain: 400 No tool output found",
         f"{MODEL}; the library itself: tests/test_race_libraries.py runs 0.6.6 (red) and 0.6.7 (green)"),
    Case("agents-js-compaction", "openai/openai-agents-js#1842", "2026-09-07", "merged", "lost write",
         ModelInput("agents-js-compaction", "buggy", "fixed"), ("no-write-lost",),
         "automatic compaction overwrites writes made through the same session meanwhile",
         f"{MODEL} (the ownership receipt of the merged PR)"),
    Case("adk-orphan-compaction", "google/adk-python#7236", "2026-09-22", "open", "trigger/liveness",
         ModelInput("adk-orphan-compaction", "buggy", "dead-call-retry"), ("compaction-runs-when-over-threshold",),
         "an orphaned function_call freezes safe_length at 0: compaction never runs again",
         f"{MODEL} (google-adk 2.9.2 in the report; green is open PR #7237, proposed)"),
    Case("adk-session-store", "google/adk-python#4751", "2026-03-07", "closed", "lost write",
         ModelInput("adk-session-store", "buggy", "raise-on-stale"), ("runs-not-interleaved",),
         "append_event reloads a stale session and carries on: two runs interleave their events",
         f"{MODEL} (google-adk 1.24-1.26 red; 1.27's raise on a stale append green)"),
    Case("adk-sliding-window", "google/adk-python#4740", "2026-03-06", "closed", "summary content",
         ModelInput("adk-sliding-window", "buggy", "seq-cut"), ("no-pending-call-summarised", "hidden-only-if-summarised"),
         "compaction summarises a pending adk_request_confirmation call away",
         f"{MODEL} (green is ours, proposed)"),
    Case("langchain-summarization-frame", "langchain-ai/langchain#34664", "2025-12-29", "open", "cost",
         ModelInput("cost-trigger", "frame=3", "frame=3 threshold=5"), ("request-fits-window", "over-threshold-compacted"),
         "the summarization middleware counts the chat history only: an agent with many tools hits the context "
         "window on overhead the trigger does not see",
         f"{COST} (langchain 1.2.3 triggers on the provider's reported usage instead, per the maintainer); "
         "green is ours: the threshold lowered by the frame"),
    Case("letta-summarizer-capped", "letta-ai/letta#3279", "2026-04-04", "open", "cost",
         ModelInput("cost-trigger", "summarizer=1", "summarizer=0"), ("summarizer-request-fits", "no-compaction-loop"),
         "the global context limit caps the summarizer's request too: it cannot fit the messages to summarize, "
         "so compaction fails",
         f"{COST} (Letta 0.16.7 in the report); green is a summarizer request that fits, not a release's fix"),
    Case("openclaw-stale-token-count", "openclaw/openclaw#119824", "2026-08-06", "closed", "trigger/liveness",
         ModelInput("cost-trigger", "stale=true threshold=6", "threshold=6"), ("no-compaction-loop",),
         "budget-triggered compaction never lowers tokenCount, causing a compact-on-every-message loop",
         f"{COST} (openclaw 2026.6.8 and 2026.7.1-2 in the report); green is a count read fresh"),
    Case("pi-om-retained-tail-loop", "elpapi42/pi-observational-memory#47", "2026-08-11", "open", "trigger/liveness",
         ModelInput("cost-trigger", "summary=9", "summary=2"), ("no-compaction-loop",),
         "when the retained tail already meets compactAfterTokens, every agent_end schedules another compaction",
         f"{COST}; green is a compaction that leaves less than the threshold, not the issue's proposed fix"),
    Case("cline-char-estimate", "cline/cline#14195", "2026-09-16", "merged", "cost",
         ModelInput("cost-trigger", "estimate=0.75", "estimate=1.0"),
         ("request-fits-window", "summarizer-request-fits", "over-threshold-compacted", "no-compaction-loop"),
         "the trigger compared a ~3 chars/token estimate with the input budget: dense content reached the real "
         "context ceiling while the estimate stayed under the threshold, and compaction never fired",
         f"{COST}; green is the merged PR's, a trigger on the provider-reported input count"),
    Case("pi-om-estimate-undercount", "elpapi42/pi-observational-memory#40", "2026-07-31", "merged", "cost",
         ModelInput("cost-trigger", "estimate=0.6", "estimate=1.0"), ("request-fits-window", "over-threshold-compacted"),
         "thresholds measured on a chars/4 estimate without the system prompt and tool schemas, a 19-46% "
         "undercount of provider usage: sessions cross the threshold and auto-compaction never fires",
         f"{COST} (0.6 lies in the measured 0.54-0.81); green is the merged PR's, thresholds on provider usage"),
    Case("infinity-stale-usage-loop", "hydro-project/infinity#74", "2026-07-14", "merged", "trigger/liveness",
         ModelInput("cost-trigger", "stale=true threshold=6", "threshold=6"), ("no-compaction-loop",),
         "after a compaction the tracked token count still held the stale pre-compaction usage: the check "
         "re-fired on it and spawned another compaction, in a loop",
         f"{COST}; green is the merged PR's reset, a count read fresh"),
    Case("openclaw-cut-in-estimate-units", "openclaw/openclaw#115309", "2026-07-28", "merged", "trigger/liveness",
         ModelInput("cost-trigger", "summary=10", "summary=2"), ("over-threshold-compacted", "no-compaction-loop"),
         "the trigger measures provider usage (system prompt and tool schemas in it), the cut-point planner a "
         "chars/4 estimate without them: compaction selects zero or near-zero messages, freeing nothing while "
         "the trigger keeps firing",
         f"{COST}, a compaction that leaves the history as it was; green is a cut that frees, as the merged "
         "PR's planning in trigger units does"),
    Case("spring-ai-mongo-save-all", "spring-projects/spring-ai#6770", "2026-08-07", "open", "lost write",
         ModelInput("spring-ai-mongo-save-all", "buggy", "transaction"), ("history-kept",),
         "MongoChatMemoryRepository.saveAll deletes, then inserts, with no transaction: the insert failing (or the "
         "process dying) after the delete leaves the conversation without its history",
         f"{MODEL}, a crash point between the two writes (main 2.0.1-SNAPSHOT in the report); green is one "
         "transaction, open PRs #6774 (MongoDB) and #6798 (Neo4j, the same shape), proposed",
         also=("spring-projects/spring-ai#6798",)),
    Case("openai-agents-compaction-clear-add", "openai/openai-agents-python#3116", "2026-05-04", "closed",
         "lost write", ModelInput("openai-agents-compaction-replace", "buggy", "variant=restore-on-failure crashes=0"),
         ("history-kept",),
         "run_compaction clears the underlying session, then add_items fails: the original history is deleted",
         f"{MODEL}; green is merged PR #3117's restore, with no crash (the library itself: race --faults on "
         "examples/races/agents_compaction_faults.py fails 0.6.7, docs/races.md)"),
    Case("openai-agents-compaction-crash-window", "openai/openai-agents-python#3117", "2026-05-04", "merged",
         "lost write", ModelInput("openai-agents-compaction-replace", "restore-on-failure", "one-step-swap"),
         ("history-kept",),
         "the restore runs on an exception; a process that dies between clear_session and add_items runs "
         "nothing and its snapshot was in memory: the history is gone",
         f"{MODEL}, a crash point (race --faults finds the same crash against 0.24.0, docs/races.md); green is "
         "ours, a one-step swap, proposed"),
):  # fmt: skip
    register_case(_case)
