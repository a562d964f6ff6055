"""Cases whose input is a race test of ``examples/races``, run by ``turncheck race`` against the
library releases the report names (red) and those of the fix (green), each pinned; a release
neither installed nor cached skips the case, saying so (``cases run --install`` installs it).
The tests ship with the repository and, as ``turncheck/examples/races``, with the wheel."""

from __future__ import annotations

from turncheck.models.cases import Case, RaceInput, register_case

OPENAI = "openai==2.15.0"
"""The openai client of the two old releases' day (tests/test_race_libraries.py's)."""

for _case in (
    Case("openai-agents-compaction-race", "openai/openai-agents-python#2317", "2026-01-16", "closed", "compaction race",
         RaceInput("examples/races/agents_compaction.py:test_runs_compact_safely",
                   ("openai-agents==0.6.6", OPENAI), ("openai-agents==0.6.7", OPENAI)),
         ("test_runs_compact_safely",),
         "responses.compact runs while a function_call waits for its output: 400 No tool output found for function call",
         "openai-agents 0.6.6 (red) and 0.6.7 (green: PR #2322), with openai 2.15.0"),
    Case("openai-agents-compaction-lost-turn", "openai/openai-agents-python#4679", "2026-08-26", "closed", "lost write",
         RaceInput("examples/races/agents_compaction.py:test_one_session_two_runs",
                   ("openai-agents==0.6.7", OPENAI), ("openai-agents==0.24.0",), schedules=100),
         ("test_one_session_two_runs",),
         "a compaction's clear-and-rewrite drops the turn another run saved while responses.compact was in flight",
         "openai-agents 0.6.7 (red) and 0.24.0 (green: constraints.txt's pin, after PR #4736)",
         also=("openai/openai-agents-python#4736",)),
):  # fmt: skip
    register_case(_case)
