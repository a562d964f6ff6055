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
         CUT.format(0) + " (Spring AI 2.0.0-M5 in the report)"),
    Case("spring-ai-snap-to-user", "spring-projects/spring-ai#6312", "2026-06-05", "merged", "orphan/pairing",
         HistoryInput("spring-ai-6312.json", "openai-chat", 30, "M3", "M5"), ("empty",),
         "the cut snapped forward to the next USER leaves nothing while one tool loop outgrows the window",
         CUT.format(3) + " (the merged PR's rule)"),
    Case("parallel-batch-cut", "omnigent-ai/omnigent#2449", "2026-07-12", "merged", "orphan/pairing",
         HistoryInput("omnigent-2449.json", "openai-responses", 50, "M0", "M5"), ("orphanRes",),
         "dropping the first function_call of a parallel batch orphans its function_call_output",
         CUT.format(0) + " (the PR drops a batch atomically, as M5 does)"),
):  # fmt: skip
    register_case(_case)
