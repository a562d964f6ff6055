"""Cases whose input is a store scenario (:mod:`sim.store_cases`) raced against a session store
of openai-agents' ``Session`` protocol: the reference store that shows the report (red,
:mod:`sim.session_stores`) and one that does not (green). ``turncheck cases run --against
store:package.module:Factory`` races the same scenarios against a user's own store."""

from __future__ import annotations

from turncheck.models.cases import Case, StoreInput, register_case

REFERENCE = "store:turncheck.sim.session_stores:"
AGENTS = "openai-agents==0.24.0"
"""The release whose ``OpenAIResponsesCompactionSession`` runs the compaction scenario
(constraints.txt's pin)."""

for _case in (
    Case("store-concurrent-appends", "lucianfialho/effect-gates#64", "2026-05-10", "open", "lost write",
         StoreInput("concurrent-appends", REFERENCE + "ReadModifyWriteSession", REFERENCE + "LockedSession"),
         ("no-lost-append",),
         "each chat request loads the session's history, appends its messages and saves it, unlocked: two "
         "concurrent requests each read the same base and the last save wins, the other's messages lost",
         "a model: the reported store is an application's file store (no library release); the red shape is its "
         "read-modify-write, raced (also NocoBot's unsynchronised history dict and flask-session's Redis store)",
         also=("steve-goldberg/NocoBot#8", "pallets-eco/flask-session#71")),
    Case("store-compaction-clear-then-add", "openai/openai-agents-python#3116", "2026-05-04", "closed", "lost write",
         StoreInput("compaction-under-faults", REFERENCE + "ClearThenAddSession", REFERENCE + "LockedSession",
                    fault_kinds="error,cancel", pinned=(AGENTS,)),
         ("history-kept-under-faults",),
         "run_compaction clears the underlying session, then add_items fails: the original history is already "
         "deleted",
         "openai-agents v0.24.0: its compaction (fixed by PR #3117) restores the history when clear → add fails, so "
         "a locked store keeps it; a store whose own replacement (_atomic_replace_items) clears, then adds, loses "
         "it again (Datus-agent PR #577 was reviewed for the same clear-then-add)",
         also=("openai/openai-agents-python#3117", "Datus-ai/Datus-agent#577")),
):  # fmt: skip
    register_case(_case)
