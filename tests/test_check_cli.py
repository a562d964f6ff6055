"""``turncheck check``, ``explore`` and ``replay`` end to end, through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--max-examples", "30", "--quiet"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # default trace and example-database paths land in the working directory
    monkeypatch.chdir(tmp_path)


def test_unlocked_trigger_fails_shortest_shrunk_and_replays(cli: Any, capsys: Any, tmp_path: Path) -> None:
    trace = tmp_path / "cx.json"
    code, out, _ = cli(
        "check",
        "trigger",
        "--param",
        "locking=none",
        "--param",
        "gap=1",
        "--trace-out",
        str(trace),
        *FAST,
    )
    assert code == 1  # a gate, with or without --trace-out
    assert "FAIL: no-uncounted-gap-turn is violated" in out and f"trace saved: {trace}" in out
    assert "broken in 5 steps (shortest, by breadth-first search)" in out
    assert "hypothesis shrank its counterexample (within-max-turns) to 4 steps" in out
    # the transcript: numbered steps, a lane per actor, the model's columns, the broken invariant
    for word in (
        "step",
        "writer 0",
        "writer 1",
        "live",
        "peak",
        "invariant no-uncounted-gap-turn broken after step 5",
    ):
        assert word in out
    saved = json.loads(trace.read_text())
    assert saved["format"] == "turncheck-trace/1" and saved["model"] == "trigger"
    assert saved["violated"] == "no-uncounted-gap-turn" and saved["steps"] == len(saved["actions"]) == 5
    assert saved["params"]["locking"] == "none"
    code, out, _ = cli("replay", str(trace))
    assert code == 1 and "still fails the same way" in out


def test_replay_of_a_fixed_configuration_exits_zero(cli: Any, capsys: Any, tmp_path: Path) -> None:
    trace = tmp_path / "cx.json"
    cli("check", "trigger", "-p", "locking=none", "-p", "gap=1", "--trace-out", str(trace), *FAST)
    obj = json.loads((tmp_path / "cx.within-max-turns.json").read_text())  # the 4-step run
    obj["params"]["locking"] = "append-sync"  # the same run under a strategy that never exceeds M
    trace.write_text(json.dumps(obj))
    code, out, _ = cli("replay", str(trace))
    assert code == 0 and "no longer fails" in out
    # trim-to bounds it by M + A·G, but every strategy is also held to live ≤ maxTurns, which
    # trim-to breaks at the same step: it still fails, the same way
    obj["params"]["locking"] = "trim-to"
    trace.write_text(json.dumps(obj))
    code, out, _ = cli("replay", str(trace))
    assert code == 1 and "still fails the same way: within-max-turns broken at step 4" in out


def test_trace_out_never_inverts_the_verdict(cli: Any, tmp_path: Path) -> None:
    """Saving the artifact is not a different question: exit 1 on a counterexample and 0 when every
    invariant holds, with ``--trace-out`` as without it (a CI gate that keeps the trace stays a gate)."""
    trace = tmp_path / "none.json"
    code, out, _ = cli("check", "trigger", "-p", "locking=append-sync", "--trace-out", str(trace), *FAST)
    assert code == 0 and "PASS" in out and not trace.exists()
    code, out, _ = cli("check", "trigger", "-p", "locking=none", "--format", "json",
                       "--trace-out", str(trace), *FAST)  # fmt: skip
    assert code == 1 and json.loads(out)["verdict"] == "fail" and trace.is_file()
    code, out, _ = cli("check", "trigger", "-p", "locking=none", *FAST)
    assert code == 1 and "trace saved: " in out


def test_timeout_bounds_the_hypothesis_engine_too(cli: Any) -> None:
    """``--timeout`` is the whole check's budget: Hypothesis asked for a million runs stops at it
    and says so (in the table and in JSON), with the verdict of what it ran."""
    args = ("check", "trigger", "-p", "locking=mutex", "-i", "bounded-peak-turns", "--engine", "hypothesis",
            "--max-examples", "1000000", "--timeout", "1")  # fmt: skip
    code, out, _ = cli(*args)
    assert code == 0 and "(stopped at --timeout)" in out, out
    code, out, _ = cli(*args, "--format", "json")
    assert code == 0 and json.loads(out)["hypothesis"]["stopped"] is True


def test_default_trace_path_is_printed(cli: Any, capsys: Any, tmp_path: Path) -> None:
    code, out, _ = cli("check", "trigger", "-p", "gap=1", *FAST)
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith("trace saved: "))
    path = Path(line.split()[2])
    assert (tmp_path / path).is_file()


def test_locked_triggers_pass_with_the_space_exhausted(cli: Any, capsys: Any) -> None:
    code, out, _ = cli("check", "trigger", "-p", "locking=append-sync", "-p", "gap=1", *FAST)
    assert code == 0, out
    assert "exhaustive: every reachable state was visited" in out
    assert "PASS" in out and "agrees" in out


def test_every_strategy_meets_the_same_named_invariants(cli: Any, capsys: Any, tmp_path: Path) -> None:
    """none breaks "no turn arrives uncounted in the gap" with the 5-step run that shows it;
    mutex holds that invariant (and its own bound) and breaks only live ≤ maxTurns, by the
    triggering turn that waits for the act — the 4-step run every strategy but append-sync has."""
    trace = tmp_path / "cx.json"
    code, out, _ = cli("check", "trigger", "-p", "locking=none", "-p", "gap=1",
                       "--trace-out", str(trace), *FAST)  # fmt: skip
    assert code == 1
    assert "counterexample: no-uncounted-gap-turn broken in 5 steps" in out
    assert "appends a turn (live 3 → 4) — inside" in out and "the gap, uncounted" in out
    assert "invariant no-uncounted-gap-turn broken after step 5" in out
    assert "bounded-peak-turns: broken by the same 4 steps as within-max-turns" in out
    gap_trace = tmp_path / "cx.json"
    assert json.loads(gap_trace.read_text())["steps"] == 5
    assert json.loads((tmp_path / "cx.within-max-turns.json").read_text())["steps"] == 4
    code, out, _ = cli("replay", str(gap_trace))
    assert code == 1 and "still fails the same way: no-uncounted-gap-turn broken at step 5" in out

    code, out, _ = cli("check", "trigger", "-p", "locking=mutex", "-p", "gap=1", *FAST)
    assert code == 1
    assert "no-uncounted-gap-turn  always      holds" in out  # the kind column fits "eventually"
    assert "holds: no-uncounted-gap-turn, bounded-peak-turns" in out
    assert "FAIL: within-max-turns is violated" in out and "broken in 4 steps" in out
    code, out, _ = cli("check", "trigger", "-p", "locking=mutex", "-p", "gap=1",
                       "-i", "no-uncounted-gap-turn", "-i", "bounded-peak-turns", *FAST)  # fmt: skip
    assert code == 0 and "PASS" in out
    assert "explored post-compaction peak 2 = closed form M" in out


def test_projector_m4_finds_the_fallback_orphan_and_m5_passes(cli: Any, capsys: Any) -> None:
    code, out, _ = cli("check", "projector", "-p", "strategy=M4", *FAST)
    assert code == 1 and "no-orphan-results" in out and "fallback to M0" in out
    assert "window sent: M4 sends" in out
    code, out, _ = cli("check", "projector", "-p", "strategy=M5", *FAST)
    assert code == 0, out


def test_clock_ts_breaks_seq_ordered_turns_and_seq_passes(cli: Any, capsys: Any) -> None:
    code, out, _ = cli("check", "clock", "-p", "order=ts", *FAST)
    assert code == 1 and "FAIL: seq-ordered-turns is violated" in out
    code, out, _ = cli("check", "clock", "-p", "order=seq", *FAST)
    assert code == 0, out


def test_selected_invariant_only(cli: Any, capsys: Any) -> None:
    code, out, _ = cli(
        "check",
        "projector",
        "-p",
        "strategy=M1",
        "-i",
        "no-orphan-results",
        "-p",
        "reuse=false",
        *FAST,
    )
    assert code == 0 and "within-budget" not in out
    code, out, _ = cli("check", "projector", "-p", "strategy=M1", "-i", "within-budget", *FAST)
    assert code == 1 and "FAIL: within-budget" in out


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
def test_single_engines(cli: Any, capsys: Any, engine: str) -> None:
    code, out, _ = cli("check", "trigger", "--engine", engine, *FAST)
    assert code == 1
    assert ("explorer:" in out) == (engine == "explore")
    assert ("hypothesis:" in out) == (engine == "hypothesis")


def test_json_format(cli: Any, capsys: Any) -> None:
    code, out, _ = cli("check", "projector", "-p", "strategy=M3", "--format", "json", "--max-examples", "20")
    obj = json.loads(out)
    # the first violated invariant in the model's declared order: an orphan (reused call id)
    assert code == 1 and obj["verdict"] == "fail" and obj["violated"] == "no-orphan-results"
    assert obj["explore"]["exhaustive"] is True and obj["counterexample"]["steps"] == 5


USER_PROTOCOL = '''
from examples.my_lock import FlagLock
from turncheck.models.protocol import Property


class HopefulLock(FlagLock):
    """A goal the atomic lock can never reach: two workers compacting at once."""

    def properties(self):
        return (*super().properties(),
                Property("both-compact", "sometimes", lambda s: sum(p == 2 for p in s[1:]) >= 2))


class ClockReadingLock(FlagLock):
    """Not deterministic: its step depends on how often it has been called."""

    calls = 0

    def step(self, state, action):
        ClockReadingLock.calls += 1
        nxt = super().step(state, action)
        return nxt if ClockReadingLock.calls % 7 else (nxt[0], *reversed(nxt[1:]))
'''


def test_users_own_protocol_by_module_and_by_file(cli: Any, capsys: Any, tmp_path: Path) -> None:
    code, out, _ = cli("check", "examples.my_lock:FlagLock", *FAST)
    assert code == 1 and "one-compactor" in out and "worker 0" in out
    code, out, _ = cli("check", "examples.my_lock:FlagLock", "-p", "atomic=true", "-p", "workers=3", *FAST)
    assert code == 0, out
    by_file = f"{ROOT / 'examples' / 'my_lock.py'}:FlagLock"
    code, out, _ = cli("explore", by_file, "-p", "workers=3", "--quiet")
    assert code == 0 and "reduction ×3.00" in out


def test_users_protocol_trace_replays(cli: Any, capsys: Any, tmp_path: Path) -> None:
    trace = tmp_path / "lock.json"
    code, _, _ = cli("check", "examples.my_lock:FlagLock", "--trace-out", str(trace), *FAST)
    assert code == 1
    code, out, err = cli("replay", str(trace))
    assert code == 2 and "never loads code" in err and "--model examples.my_lock:FlagLock" in err
    code, out, _ = cli("replay", str(trace), "--model", "examples.my_lock:FlagLock")
    assert code == 1 and "still fails the same way: one-compactor" in out
    by_file = f"{ROOT / 'examples' / 'my_lock.py'}:FlagLock"
    code, out, _ = cli("replay", str(trace), "--model", by_file)
    assert code == 1 and "still fails the same way: one-compactor" in out


MARKER_MODULE = """
import pathlib
pathlib.Path(__file__).with_name("RAN").write_text("code from a trace ran")
class Model:
    pass
"""


@pytest.mark.parametrize("ref", ["evil_helper:Model", "./evil_helper.py:Model", "evil_helper.py:Model"])
def test_replay_runs_no_code_named_by_a_trace(
    cli: Any, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: str
) -> None:
    """A trace received from someone else, next to a .py file it names: nothing is imported."""
    (tmp_path / "evil_helper.py").write_text(MARKER_MODULE)
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({
        "format": "turncheck-trace/1", "model": ref, "model_name": "x", "params": {},
        "violated": "p", "actions": [["a", 0]],
    }))  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--model", "trigger"], ["--model", ref.split(":")[0]]):
        code, _, err = cli("replay", str(trace), *extra)
        assert code == 2 and err.count("\n") == 1, (extra, err)
        assert not (tmp_path / "RAN").exists(), extra
    assert "evil_helper" not in sys.modules


MARKER_PROJECTOR = (
    MARKER_MODULE
    + """
from turncheck.models.projector import window_from_start
def cut(history, budget, cost):
    return window_from_start(history, budget, cost, max(0, len(history) - 2), "cut")
"""
)


def test_no_command_runs_code_a_trace_parameter_names(
    cli: Any, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog model whose parameter names user code (``strategy=evil_cut:cut``): replay,
    report and plot import nothing unless the command line names that code."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "evil_cut.py").write_text(MARKER_PROJECTOR)
    code, _, _ = cli("check", "projector", "-p", "strategy=evil_cut:cut", "--trace-out", "t.json", *FAST)
    assert code == 1
    (tmp_path / "RAN").unlink()
    sys.modules.pop("evil_cut", None)
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "t.json").write_bytes((tmp_path / "t.json").read_bytes())
    code, _, err = cli("replay", "t.json")
    assert code == 2 and err.count("\n") == 1 and "--param strategy=evil_cut:cut" in err
    assert cli("report", "traces", "-o", "r.html", "-q")[0] == 0
    assert cli("plot", "traces", "-o", "plots", "-q")[0] == 0
    assert not (tmp_path / "RAN").exists() and "evil_cut" not in sys.modules
    code, out, _ = cli("replay", "t.json", "--param", "strategy=evil_cut:cut")  # named: loaded
    assert code == 1 and (tmp_path / "RAN").exists()
    sys.modules.pop("evil_cut", None)


def test_unreachable_goal_is_inconclusive(
    cli: Any, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "user_locks.py").write_text(USER_PROTOCOL)
    monkeypatch.syspath_prepend(str(ROOT))
    code, out, _ = cli("check", "user_locks:HopefulLock", "-p", "atomic=true", *FAST)
    assert code == 3
    assert "INCONCLUSIVE" in out and "both-compact" in out


def test_check_determinism(cli: Any, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli("check", "trigger", "-p", "locking=append-sync", "--check-determinism", *FAST)
    assert code == 0 and "determinism: 20 seeded walks" in out
    (tmp_path / "user_locks.py").write_text(USER_PROTOCOL)
    monkeypatch.syspath_prepend(str(ROOT))
    code, out, _ = cli("check", "user_locks:ClockReadingLock", "--check-determinism", *FAST)
    assert code == 1 and "NOT deterministic" in out and "step" in out
    assert not list(tmp_path.glob(".turncheck/traces/*"))  # stopped before checking


def test_explore_prints_statistics_worst_cases_and_cross_check(cli: Any, capsys: Any, tmp_path: Path) -> None:
    dot, graphml = tmp_path / "g.dot", tmp_path / "g.graphml"
    code, out, _ = cli(
        "explore",
        "trigger",
        *("-p", "writers=2", "-p", "gap=1", "-p", "max_turns=2", "-p", "turns=4"),
        *("--dot", str(dot), "--graphml", str(graphml), "--quiet"),
    )
    assert code == 0
    assert "distinct (up to symmetry)" in out and "transitions" in out and "states/s" in out
    assert "worst peak_turns = 5" in out
    assert "cross-check: explored worst-case peak 5 = closed form M + 2·A·G − 1" in out and "agrees" in out
    assert "reduction ×" in out
    assert dot.read_text().startswith("digraph") and graphml.read_text().startswith("<?xml")


def test_the_search_without_symmetry_stops_at_a_small_bound_unless_reduction_is_asked(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the second search (a model that cannot size its classes) stops at
    RAW_SEARCH_STATES and prints a lower bound; ``--reduction`` runs it to ``--max-states``;
    ``--no-reduction`` skips it. The bound is lowered to 20 here so FlagLock's 45 raw states pass it."""
    import turncheck.sim.explorer as explorer

    assert explorer.RAW_SEARCH_STATES == 100_000
    monkeypatch.setattr(explorer, "RAW_SEARCH_STATES", 20)
    lock = ("explore", "examples.my_lock:FlagLock", "-p", "workers=3", "-q")
    code, out, _ = cli(*lock)
    assert (
        code == 0
        and "symmetry: ≥ 20 raw states (raw search bounded, not exhaustive: stopped by max states (20))"
        in out
    )
    code, out, _ = cli(*lock, "--reduction")
    assert code == 0 and "symmetry: 45 raw states / 15 classes = reduction ×3.00" in out
    code, out, _ = cli(*lock, "--no-reduction")
    assert code == 0 and "symmetry:" not in out
    code, out, _ = cli("explore", "trigger", "-p", "writers=3", "-p", "turns=1", "-q")  # counted: no bound
    assert code == 0 and "symmetry: 28 raw states / 11 classes = reduction ×2.55" in out


def test_explore_bounded_says_so(cli: Any, capsys: Any) -> None:
    code, out, _ = cli("explore", "trigger", "-p", "writers=3", "-p", "turns=0", "--max-states", "20", "-q")
    assert code == 0 and "bounded, not exhaustive: stopped by max states (20)" in out
    assert "symmetry:" not in out  # no search without symmetry beside a bounded one: nothing to divide
    code, out, _ = cli("explore", "trigger", "-p", "writers=3", "-p", "turns=1", "--max-states", "20", "-q")
    assert (
        code == 0 and "coverage: exhaustive" in out
    )  # 11 classes: their 28 raw states counted, not searched
    assert "symmetry: 28 raw states / 11 classes = reduction ×2.55" in out
    # a model that cannot size its classes: the search without symmetry, under the same bound
    lock = ("explore", "examples.my_lock:FlagLock", "-p", "workers=3", "--max-states", "20", "-q")
    code, out, _ = cli(*lock)
    assert code == 0 and "coverage: exhaustive" in out  # 15 classes, 45 raw states
    assert "symmetry: ≥ 20 raw states (raw search bounded" in out and "15 classes = reduction ≥ ×1.33" in out
    code, out, _ = cli("explore", "trigger", "--max-depth", "3", "--format", "json", "-q")
    obj = json.loads(out)
    assert obj["exhaustive"] is False and obj["bound"] == "max depth (3)" and obj["depth"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nosuch"], "unknown model 'nosuch'"),
        (["check", "trigger", "-p", "colour=red"], "no parameter 'colour'"),
        (["check", "trigger", "-p", "gap=soon"], "parameter gap"),
        (["check", "trigger", "-p", "gap"], "must be written k=v"),
        (["check", "trigger", "-i", "no-such-invariant"], "unknown invariant 'no-such-invariant'"),
        (["check", "trigger", "-i", "within-budget"], "does not check invariant 'within-budget'"),
        (["check", "trigger", "--engine", "magic"], "--engine"),
        (["check", "nosuch.module:Thing"], "cannot import model module"),
        (["check", "examples.my_lock:NoSuchClass"], "has no class"),
        (["explore", "trigger", "--max-states", "0"], "--max-states"),
        (["replay", "missing.json"], "no such file"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    cli: Any, capsys: Any, tmp_path: Path, args: list[str], message: str
) -> None:
    code, out, err = cli(*args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.rglob("*"))  # nothing written


@pytest.fixture(scope="module")
def saved_trace(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The text of one saved counterexample (unlocked trigger), made once for the module."""
    trace = tmp_path_factory.mktemp("trace") / "cx.json"
    assert main(["check", "trigger", "--engine", "explore", "--trace-out", str(trace), "--quiet"]) == 1
    return trace.read_text()


def _swap_model(model: str, params: dict[str, Any], name: str | None = None) -> Any:
    def edit(text: str) -> str:
        obj = json.loads(text)
        obj.update(model=model, params=params, model_name=name or model, violated="seq-ordered-turns")
        return json.dumps(obj)

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text[:-20], "malformed JSON"),
        (lambda text: "[1, 2]", "expected a JSON object"),
        (lambda text: json.dumps({"format": "other"}), "not a turncheck trace"),
        (_swap_model("clock", {}), "trace does not fit model clock"),
        (_swap_model("projector", {"writers": 2}), "no parameter 'writers'"),
        (_swap_model("clock", {}, name="trigger"), "recorded on model 'trigger'"),
        (
            lambda text: text.replace('"violated": "no-uncounted-gap-turn"', '"violated": "non-empty"'),
            "does not check",
        ),
        (lambda text: text.replace('"actions": [', '"actions": [{"x": 1}, '), "action 1 must be a list"),
        (lambda text: text.replace('"init": 0', '"init": 5'), "initial state 5"),
    ],
)
def test_bad_trace_is_one_line_exit_2(
    cli: Any, capsys: Any, tmp_path: Path, saved_trace: str, edit: Any, message: str
) -> None:
    trace = tmp_path / "cx.json"
    trace.write_text(edit(saved_trace))
    code, _, err = cli("replay", str(trace))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_replay_refuses_a_trace_of_another_model(
    cli: Any, capsys: Any, tmp_path: Path, saved_trace: str
) -> None:
    trace = tmp_path / "cx.json"
    trace.write_text(saved_trace)
    code, _, err = cli("replay", str(trace), "--model", "projector")
    assert code == 2 and "belongs to model 'trigger'" in err


def test_check_writes_nothing_in_the_working_directory_beside_its_database(tmp_path: Path) -> None:
    """Hypothesis's constants cache goes beside the named database, not into ``./.hypothesis``
    (a fresh interpreter: the cache is written once per process)."""
    work, db = tmp_path / "work", tmp_path / "db"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "turncheck", "check", "clock", "--max-examples", "20", "--database", str(db)],
        cwd=work, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(work.iterdir()) == []
    assert any((db / ".hypothesis" / "constants").iterdir())


@pytest.mark.parametrize("expectation", ["evenutally", "Always"])
@pytest.mark.parametrize("command", ["check", "explore"])
def test_an_expectation_no_checker_knows_is_refused(
    cli: Any, tmp_path: Path, command: str, expectation: str
) -> None:
    """A misspelt expectation is one line, exit 2 — never quietly a goal."""
    (tmp_path / "drains.py").write_text(
        "from turncheck import Property, ProtocolModel\n\n\n"
        "class Drains(ProtocolModel):\n"
        "    def init_states(self):\n        return [0]\n\n"
        "    def actions(self, state):\n        return [('add',)] if state < 2 else []\n\n"
        "    def step(self, state, action):\n        return state + 1\n\n"
        f"    def properties(self):\n        return (Property('drains', {expectation!r}, lambda s: s == 0),)\n",
        encoding="utf-8",
    )
    code, out, err = cli(command, f"{tmp_path / 'drains.py'}:Drains", "--quiet")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (
        f"property 'drains': expectation {expectation!r} is not one of always, sometimes, eventually" in err
    )
