"""Crash points (models/crash_points.py): a model declares where a writer may crash, every engine
finds the crash window, the shortest first.

Both ways on the real command: a user's plain class that replaces a record in two writes (clear,
then write) fails at the crash between them — under the explorer (shortest, 3 steps) and the
Hypothesis machine — and the same class writing in one step passes exhaustively with its crash
points still explored. The wrapper changes nothing for a model that declares none, and a crash
is only enabled where the model declares it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.catalog import build_model
from turncheck.models.crash_points import CRASH, WithCrashes, is_crash
from turncheck.models.protocol import as_model

RECORD = '''
from turncheck.models.crash_points import CrashPoint
from turncheck.models.protocol import Property


class Record:
    """A record replaced in two writes (clear, then write) or one (``one_step=True``)."""

    def __init__(self, one_step: bool = False) -> None:
        self.one_step = one_step

    def init_states(self):
        yield ("old", "idle", 0)   # stored, phase, crashes

    def actions(self, s):
        if s[1] == "idle":
            return [("begin",)] if s[0] == "old" else []
        return [("write",)] if self.one_step or s[1] == "cleared" else [("clear",)]

    def step(self, s, a):
        return {"begin": ("old", "writing", s[2]), "clear": ("", "cleared", s[2]),
                "write": ("new", "idle", s[2])}[a[0]]

    def crash_points(self, s):
        if s[1] == "idle" or s[2] >= 1:
            return ()
        return (CrashPoint("writer", f"while {s[1]}", (s[0], "idle", s[2] + 1)),)

    def properties(self):
        return (Property("record-kept", "always", lambda s: s[1] != "idle" or s[0] != ""),)
'''


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)  # check saves its traces in the working directory
    (tmp_path / "record.py").write_text(RECORD, encoding="utf-8")
    return "record.py:Record"


def _check(cli: Any, ref: str, *extra: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = cli("check", ref, *extra, "--format", "json")
    return code, json.loads(out)


def test_the_crash_between_two_writes_is_the_shortest_counterexample(cli: Any, record: str) -> None:
    code, obj = _check(cli, record, "--engine", "explore")
    assert code == 1 and obj["violated"] == "record-kept"
    cx = obj["counterexample"]
    assert cx["steps"] == 3 and [a[0] for a in cx["actions"]] == ["begin", "clear", CRASH]
    assert cx["actions"][-1] == [CRASH, "writer"]


def test_the_hypothesis_machine_draws_the_crash_too(cli: Any, record: str) -> None:
    code, obj = _check(cli, record, "--engine", "hypothesis", "--max-examples", "60")
    assert code == 1 and obj["violated"] == "record-kept"


def test_one_write_passes_exhaustively_with_its_crash_points_explored(cli: Any, record: str) -> None:
    code, obj = _check(cli, record, "--engine", "explore", "--param", "one_step=true")
    assert code == 0 and obj["verdict"] == "pass" and obj["explore"]["exhaustive"] is True
    # begin, write (3 states without crashes); the crash while writing, then begin and write again
    assert obj["explore"]["distinct"] == 6 and obj["explore"]["transitions"] == 5


def test_the_printed_run_names_the_crash_window(cli: Any, record: str) -> None:
    code, out, _ = cli("check", record, "--engine", "explore")
    assert code == 1
    words = " ".join(out.split())  # the transcript wraps its cells
    assert "crashes while cleared: what was written stays, it restarts with nothing in memory" in words


def test_a_model_without_crash_points_is_left_as_it_is() -> None:
    trigger = build_model("trigger")
    assert as_model(trigger) is trigger


def test_the_wrapper_is_idempotent_and_reads_the_models_own_attributes() -> None:
    model = as_model(build_model("spring-ai-mongo-save-all", {"variant": "transaction"}))
    assert isinstance(model, WithCrashes) and as_model(model) is model
    assert model.variant == "transaction" and model.name == "spring-ai-mongo-save-all"  # type: ignore[attr-defined]


def test_a_crash_is_enabled_only_where_declared() -> None:
    model = as_model(build_model("spring-ai-mongo-save-all"))
    start = next(iter(model.init_states()))
    assert not any(is_crash(a) for a in model.actions(start))  # idle: nothing in flight
    read = model.step(start, ("add",))
    assert (CRASH, "repository") in model.actions(read) and model.is_enabled(read, (CRASH, "repository"))
    crashed = model.step(read, (CRASH, "repository"))
    deleted = model.step(crashed, ("add",))
    assert not any(is_crash(a) for a in model.actions(deleted))  # crashes=1 spent
    with pytest.raises(ValueError, match="cannot crash"):
        model.step(start, (CRASH, "repository"))


def test_the_wrapper_keeps_the_successor_invariant_and_marks_crashes() -> None:
    model = as_model(build_model("openai-agents-compaction-replace", {"variant": "restore-on-failure"}))
    frontier = list(model.init_states())
    seen = set(frontier)
    while frontier:
        state = frontier.pop()
        succ = model.successors(state)
        assert succ == [(a, model.step(state, a)) for a in model.actions(state)]
        for action, after in succ:
            assert model.step_marks(state, action) == ((CRASH,) if is_crash(action) else ())
            if after not in seen:
                seen.add(after)
                frontier.append(after)
