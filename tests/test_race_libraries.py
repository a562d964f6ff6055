"""``turncheck race`` on real libraries: the OpenAI Agents SDK and LangGraph (issue 29).

openai-agents-python #2317: the runner compacted a session right after a turn whose tool output
the Responses API had not seen, and ``responses.compact`` answered 400 "No tool output found
for function call". PR #2322 (released in 0.6.7) defers that compaction. The example
(examples/races/agents_compaction.py: two concurrent runs, a real ``SQLiteSession``, a scripted
offline model and ``responses.compact``) fails on 0.6.6 and passes on 0.6.7 and on the version
constraints.txt pins. The two old versions are not the suite's environment: the test installs
each, with the ``openai`` 2.x of their day, into a cache folder (``TURNCHECK_TEST_CACHE``,
default ``~/.cache/turncheck-tests``; CI keeps it between runs) and runs ``turncheck race`` with
it first on ``PYTHONPATH``; with no package index reachable it skips, saying so.

Two runs through one compacting session: on 0.6.7 a compaction's clear-and-rewrite drops a turn
the other run saved in between (plain asyncio's order does not show it, a reordered schedule
does); the pinned version skips a compaction whose history changed, and passes.

LangGraph: two concurrent ``aupdate_state`` of one thread through the real ``AsyncSqliteSaver``
(aiosqlite's own thread included) lose one update; serialised, both are kept; and a token
replays byte-identically although aiosqlite's thread is one the loop did not start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from uv import find_uv_bin

ROOT = Path(__file__).resolve().parents[1]
AGENTS = "examples/races/agents_compaction.py:test_runs_compact_safely"
SHARED = "examples/races/agents_compaction.py:test_one_session_two_runs"
GRAPH = "examples/races/langgraph_checkpoint.py"
# the release before PR #2322 and the one that shipped it, each with an openai of January 2026
BEFORE, AFTER, OPENAI = "0.6.6", "0.6.7", "2.15.0"
CACHE = Path(os.environ.get("TURNCHECK_TEST_CACHE", Path.home() / ".cache" / "turncheck-tests"))


def race(*argv: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "turncheck", "race", *argv], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=600)  # fmt: skip


def agents_at(version: str) -> Path:
    """A folder holding openai-agents ``version`` and its openai, installed once (no deps: the rest
    is the suite's own environment); skips when no package index answers."""
    target = CACHE / f"openai-agents-{version}-openai-{OPENAI}"
    if (target / "agents").is_dir():
        _skip_without_its_dependencies(target)
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=CACHE))
    proc = subprocess.run(
        [find_uv_bin(), "pip", "install", "-q", "--no-deps", "--target", str(scratch),
         f"openai-agents=={version}", f"openai=={OPENAI}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        pytest.skip(
            f"cannot install openai-agents=={version} (no package index reachable?): {proc.stderr[-300:]}"
        )
    try:
        scratch.rename(target)
    except OSError:  # another worker installed it first
        shutil.rmtree(scratch, ignore_errors=True)
    _skip_without_its_dependencies(target)
    return target


def _skip_without_its_dependencies(target: Path) -> None:
    """``--no-deps`` leaves httpx, pydantic … to the environment (the peers extra brings them):
    without them the race would fail to load the test, so skip naming what is missing."""
    if target not in _IMPORTABLE:
        env = {**os.environ, "PYTHONPATH": str(target)}
        proc = subprocess.run(
            [sys.executable, "-c", "import agents"], capture_output=True, text=True, env=env
        )
        _IMPORTABLE[target] = proc.stderr.strip().splitlines()[-1] if proc.returncode else ""
    if _IMPORTABLE[target]:
        pytest.skip(f"openai-agents needs the peers extra's dependencies: {_IMPORTABLE[target]}")


_IMPORTABLE: dict[Path, str] = {}


def test_agents_sdk_before_pr_2322_compacts_against_a_pending_tool_call() -> None:
    proc = race(AGENTS, "-n", "10", pythonpath=agents_at(BEFORE))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED: NoToolOutput: 400 No tool output found for function call call_resp_" in proc.stdout
    assert "in compact ← run_compaction ← _save_result_to_session" in proc.stdout


def test_agents_sdk_after_pr_2322_passes_every_schedule() -> None:
    proc = race(AGENTS, "-n", "10", pythonpath=agents_at(AFTER))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: 10 schedules passed" in proc.stdout


def test_agents_sdk_pinned_version_passes() -> None:
    pytest.importorskip("agents")
    for test in (AGENTS, SHARED):
        proc = race(test, "-n", "20")
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_agents_sdk_one_session_two_runs_loses_a_turn_on_0_6_7() -> None:
    after = agents_at(AFTER)
    proc = race(SHARED, "-n", "100", pythonpath=after)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "AssertionError: a run's turn is gone: the session covers ['call_resp_" in proc.stdout
    assert "in compact ← run_compaction ← _save_result_to_session" in proc.stdout
    shrunk = int(proc.stdout.split(" reorderings of asyncio's order")[0].rsplit(", ", 1)[1])
    assert shrunk <= 3, proc.stdout  # the SDK's to_thread calls are two steps each: more points to shrink
    token = proc.stdout.rsplit("--schedule ", 1)[1].split()[0]
    again = race(SHARED, "--schedule", token, pythonpath=after)
    assert again.returncode == 1 and "a run's turn is gone" in again.stdout


def test_langgraph_two_concurrent_updates_of_one_thread() -> None:
    pytest.importorskip("langgraph.checkpoint.sqlite.aio")
    pytest.importorskip("aiosqlite")
    lost = race(f"{GRAPH}:test_both_updates_kept", "-n", "10")
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert "AssertionError: the thread holds ['hello', 'from the" in lost.stdout
    assert "aiosqlite/core.py" in lost.stdout  # the interleaving goes through aiosqlite's thread
    kept = race(f"{GRAPH}:test_both_updates_kept_serialised", "-n", "10")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    once, again = (race(f"{GRAPH}:test_both_updates_kept", "--schedule", "0.0:3=1", "--format", "json")
                   for _ in range(2))  # fmt: skip
    assert once.returncode == again.returncode == 1 and once.stdout == again.stdout


FAULTS = "examples/races/agents_compaction_faults.py:test_compaction_keeps_history"


def test_agents_sdk_before_pr_3117_loses_the_history_when_add_items_fails() -> None:
    """openai-agents-python#3116 on 0.6.7 (before PR #3117): an error in the re-add after the
    clear empties the session; plain race passes, --faults names the point."""
    before = agents_at(AFTER)  # 0.6.7: after PR #2322, before PR #3117
    assert race(FAULTS, "-n", "10", pythonpath=before).returncode == 0
    proc = race(FAULTS, "-n", "40", "--faults", "--fault-kinds", "error", pythonpath=before)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED: AssertionError: the history is empty after it held 2 acknowledged items" in proc.stdout
    assert "fault: error at fault point 5: " in proc.stdout and "in add_items ← run_compaction" in proc.stdout
    again = race(FAULTS, "--schedule", "0.0:/5=error", pythonpath=before)
    assert again.returncode == 1 and "the history is empty" in again.stdout


def test_agents_sdk_pinned_version_restores_the_history_but_not_after_a_crash() -> None:
    """The pinned release has PR #3117: errors and cancellations restore the history; a crash of
    the compacting task between the clear and the re-add still loses it (nothing restores)."""
    pytest.importorskip("agents")
    kept = race(FAULTS, "-n", "40", "--faults", "--fault-kinds", "error,cancel")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "16 of 16 single faults" in kept.stdout
    crashed = race(FAULTS, "-n", "40", "--faults", "--fault-kinds", "crash")
    assert crashed.returncode == 1 and "fault: crash at fault point " in crashed.stdout
