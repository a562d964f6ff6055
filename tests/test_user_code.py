"""One resolver for user code: a user's projector wherever a strategy id is accepted."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.projector import resolve_strategy
from turncheck.models.user_code import load_object
from turncheck.scenarios.base import get_scenario, no_progress, parse_params
from turncheck.scenarios.sweep import sweep

TESTS = Path(__file__).parent


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory holding the user's module, as after ``cd my-agent``. The modules
    imported from it are forgotten afterwards and another test's ``my_trim`` is put aside first,
    so no test sees another's (in any order, under any split of the tests over processes)."""
    shutil.copy(TESTS / "my_trim.py", tmp_path / "my_trim.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_trim", raising=False)  # another test's my_trim (the README's)
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def test_module_and_file_references_resolve_to_the_same_rules(user_dir: Path) -> None:
    by_module = load_object("my_trim:cut", "projector")
    by_file = load_object("./my_trim.py:cut", "projector")
    assert by_module.__name__ == by_file.__name__ == "cut"
    assert load_object("./my_trim.py:cut", "projector") is by_file  # loaded once per process


@pytest.mark.parametrize(
    "ref,needle",
    [
        ("nosuch_module_xyz:fn", "cannot import projector module 'nosuch_module_xyz'"),
        ("./missing.py:fn", "projector file './missing.py' does not exist"),
        ("my_trim:nope", "module 'my_trim' has no function 'nope'"),
        ("./my_trim.py:nope", "module './my_trim.py' has no function 'nope'"),
        ("M9", "unknown strategy 'M9'"),
        ("my_trim:last_three", "is passed as messages:my_trim:last_three"),  # a trimmer: a traceback (#50)
        ("./my_trim.py:last_three", "is passed as messages:./my_trim.py:last_three"),
    ],
)
def test_bad_references_are_one_line_everywhere(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str], ref: str, needle: str
) -> None:
    with pytest.raises(UnknownName, match=needle):
        resolve_strategy(ref)
    for argv in (["project", "--example", "-q", "--strategy", ref],
                 ["check", "projector", "--param", f"strategy={ref}", "-q"]):  # fmt: skip
        code, out, err = cli(*argv)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("ref", ["my_trim:cut", "./my_trim.py:cut"])
def test_project_takes_both_spellings(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str], ref: str
) -> None:
    code, out, err = cli("project", "--example", "-q", "-b", "200", "--strategy", ref)
    assert code == 0 and ref in out and "Traceback" not in err


def test_check_projector_fails_a_mid_turn_cut_with_the_shortest_counterexample(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli("check", "projector", "--param", "strategy=my_trim:cut", "-q",
                       "--max-examples", "60", "--database", str(user_dir / "db"))  # fmt: skip
    assert code == 1
    assert "counterexample: no-orphan-results broken in 4 steps (shortest, by breadth-first search)" in out
    assert "my_trim:cut sends seq 2..3: CALL c1 RESULT c0[3]" in out
    code, out, _ = cli("explore", "projector", "--param", "strategy=./my_trim.py:cut", "-q")
    assert code == 0 and "no-orphan-results: violated at depth 4" in out


def test_the_replay_line_check_prints_runs_as_printed_for_user_code(cli: Any, user_dir: Path) -> None:
    """A trace never loads code, so ``check`` prints the replay line with the user's trimmer named
    on it (``--param strategy=…``); the line as printed replays the same failure."""
    import re
    import shlex

    code, out, _ = cli("check", "projector", "--param", "strategy=my_trim:cut", "--engine", "explore", "-q")
    lines = re.findall(r"trace saved: \S+   \((turncheck replay [^)]*)\)", out)
    assert code == 1 and lines and all("--param strategy=my_trim:cut" in line for line in lines), out
    for line in lines:
        replayed = cli(*shlex.split(line)[1:])
        assert replayed.code == 1 and "still fails the same way" in replayed.out, replayed.err


def test_check_projector_passes_a_pair_safe_projector(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli("check", "projector", "--param", "strategy=my_trim:pair_safe", "-q",
                       "--max-examples", "60", "--database", str(user_dir / "db"))  # fmt: skip
    assert code == 0, out
    assert "PASS" in out


@pytest.mark.parametrize(
    "scenario,assignments",
    [
        ("clock-skew", {"sessions": "20", "strategy": "my_trim:cut"}),
        ("key-collapse", {"sessions": "40", "keys": "4", "strategy": "./my_trim.py:cut"}),
        ("locking", {"strategy": "my_trim:pair_safe"}),
        ("token-estimate", {"sessions": "3", "turns": "4", "strategies": "M1,my_trim:cut"}),
        ("peers", {"sessions": "2", "turns": "4", "strategies": "M5,my_trim:cut", "manifolds": "1.0"}),
        ("testbench", {"sessions": "20", "turns": "6", "extra_strategies": "my_trim:cut"}),
    ],
)
def test_every_scenario_with_a_strategy_parameter_accepts_user_code(
    user_dir: Path, scenario: str, assignments: dict[str, str], extra_or_skip: Any
) -> None:
    s = get_scenario(scenario)
    with extra_or_skip():  # token-estimate and peers need the peers extra (tiktoken, faker)
        params = parse_params(s, assignments)
    with pytest.raises(
        BadParameter, match="parameter (extra_)?strateg.*cannot import projector module 'nope_mod'"
    ):
        parse_params(s, {**assignments, next(k for k in assignments if "strateg" in k): "nope_mod:fn"})
    if scenario in ("peers", "testbench"):
        result = s.run(params, no_progress)
        table = next(t for t in result.tables if t.name in ("peers", "strategies"))
        assert "my_trim:cut" in {r["strategy"] for r in table.records()}


def test_sweep_over_strategies_includes_the_users(user_dir: Path) -> None:
    res = sweep("key-collapse", ["strategy=M1,my_trim:cut"], fixed={"sessions": "40", "keys": "4"})
    strategies = [c.grid["strategy"] for c in res.cells]
    assert strategies == ["M1", "my_trim:cut"]


def test_strategies_plot_names_the_users_function(user_dir: Path) -> None:
    from turncheck.reports.plots.strategies import plot_strategies_vs_budget

    s = get_scenario("testbench")
    result = s.run(parse_params(s, {"sessions": "20", "turns": "6", "extra_strategies": "my_trim:cut"}),
                   no_progress)  # fmt: skip
    fig = plot_strategies_vs_budget(result)
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "my_trim:cut" in labels and "M5" in labels


KEEPS_BY_CHARS = """
def keep_recent(messages, budget):
    kept, used = [], 0
    for message in reversed(messages):
        used += len(str(message)) // 4
        if used > budget:
            break
        kept.insert(0, message)
    calls = {c["id"] for m in kept for c in m.get("tool_calls") or ()}
    return [m for m in kept if m["role"] != "tool" or m["tool_call_id"] in calls]
"""


@pytest.mark.parametrize(("budget", "code", "verdict"), [
    ("4", 3, "INCONCLUSIVE: no invariant broke, but goal(s) never reached: sends-something"),
    ("50", 0, "PASS: every invariant holds and every goal was reached"),
])  # fmt: skip
def test_a_users_trimmer_that_sends_nothing_is_no_pass(
    cli: Any, user_dir: Path, budget: str, code: int, verdict: str
) -> None:
    """A message trimmer that sizes a message by its characters keeps none at the model's budget
    4: no-orphan-results held only because nothing was sent, and the check printed PASS. The
    goal sends-something makes that INCONCLUSIVE (exit 3); at budget 50 it sends and passes."""
    (user_dir / "by_chars.py").write_text(KEEPS_BY_CHARS)
    got, out, _ = cli("check", "projector", "-q", "--engine", "explore", "-i", "no-orphan-results",
                      "-p", f"budget={budget}", "-p", "strategy=messages:by_chars.py:keep_recent")  # fmt: skip
    assert got == code and out.rstrip().endswith(verdict), out
    assert "sends-something" in out


def test_our_strategies_have_no_sends_something_goal(cli: Any, user_dir: Path) -> None:
    """The goal is a user trimmer's: M5's output and saved traces stay what the docs show."""
    got, out, _ = cli("check", "projector", "-q", "--engine", "explore", "-p", "strategy=M5")
    assert got == 0 and "sends-something" not in out


def test_check_projector_runs_a_message_level_trimmer(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli("check", "projector", "--param", "strategy=messages:my_trim:last_three", "-q",
                       "--engine", "explore")  # fmt: skip
    assert code == 1 and "messages:my_trim:last_three sends" in out and "FAIL" in out


def test_sweep_command_line_takes_a_users_strategy(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = user_dir / "out"
    argv = ["sweep", "key-collapse", "--grid", "strategy=M1,./my_trim.py:cut", "--param", "sessions=40",
            "--param", "keys=4", "-q", "--format", "json", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = (out / "sweep-key-collapse.jsonl").read_text()
    assert '"strategy": "./my_trim.py:cut"' in text or '"strategy":"./my_trim.py:cut"' in text


BROKEN_MODEL = """
from turncheck import Property


class Broken:
    def init_states(self):
        return [0]

    def actions(self, state):
        return ["up"] if state < 3 else []

    def step(self, state, action):
        return [1, 2][state]  # IndexError at state 2

    def properties(self):
        return [Property("small", "always", lambda s: s < 10)]
"""


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
def test_a_users_model_that_raises_is_their_error_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """A fault in the user's own code is theirs: one line naming the exception, the method and
    the line of their file, exit 2 — never a traceback saying turncheck has a bug."""
    model = tmp_path / "broken_model.py"
    model.write_text(BROKEN_MODEL)
    code = main(["check", f"{model}:Broken", "--engine", engine])
    err = capsys.readouterr().err
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(
        "turncheck: error: your code raised IndexError: list index out of range (in step, "
    )
    assert line.endswith(
        f"broken_model.py:{BROKEN_MODEL.splitlines().index('        return [1, 2][state]  # IndexError at state 2') + 1})"
    )


KEEP_LAST = '''
def pair_safe(messages, budget):
    """Keep the newest ``budget`` messages, never opening on a tool message."""
    kept = messages[-budget:] if budget > 0 else []
    while kept and kept[0]["role"] == "tool":
        kept = kept[1:]
    return kept


def plain(messages, budget):
    """Keep the newest ``budget`` messages."""
    return messages[-budget:] if budget > 0 else []
'''


@pytest.mark.parametrize(
    "ref,verdict",
    [("messages:keep_last:pair_safe", 0), ("messages:keep_last:plain", 1), ("my_trim:pair_safe", 0),
     ("./my_trim.py:cut", 1)],
)  # fmt: skip
def test_check_projector_and_the_fixture_agree_on_a_users_trimmer(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str], ref: str, verdict: int
) -> None:
    """A keep-last-N written as a user would (message-level, or a projector ``module:function``):
    the command's exhaustive check and the pytest fixture give one verdict. The command used to
    draw reused call ids for every projector, so it failed the pair-safe keep-last-N on a RESULT
    whose id an earlier, unanswered CALL had used."""
    from hypothesis import settings

    from turncheck.testing import check_projector

    (user_dir / "keep_last.py").write_text(KEEP_LAST)
    code, out, _ = cli("check", "projector", "-p", f"strategy={ref}", "-i", "no-orphan-results",
                       "--engine", "explore")  # fmt: skip
    assert code == verdict, out
    assert "reuse=false" in out
    fixture = settings(max_examples=300, database=None, deadline=None)
    if verdict == 0:
        check_projector(ref, settings=fixture)
    else:
        assert "orphan" in out and "reuses its id" not in out
        with pytest.raises(AssertionError, match="breaks orphanRes"):
            check_projector(ref, settings=fixture)


def test_reused_ids_are_a_named_option_and_the_counterexample_says_which_call_the_result_answers(
    cli: Any, user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (user_dir / "keep_last.py").write_text(KEEP_LAST)
    code, out, _ = cli("check", "projector", "-p", "strategy=messages:keep_last:pair_safe", "-p", "reuse=true",
                       "-i", "no-orphan-results", "--engine", "explore")  # fmt: skip
    assert code == 1 and "reuse=true" in out
    assert "appends CALL c0 (reused id)" in out
    assert (
        "RESULT c0 (seq 5) answers the CALL c0 at seq 1, turn 1, which the window leaves out, not the CALL "
        "at seq 4 that reuses its id: a RESULT pairs with the oldest unanswered CALL of its id"
    ) in out
    # our strategies keep reused ids by default (the docs' figures and saved traces), and say so too
    code, out, _ = cli(
        "check", "projector", "-p", "strategy=M1", "-i", "no-orphan-results", "--engine", "explore"
    )
    assert code == 1 and "reuse=true" in out and "that reuses its id" in out


def test_the_fixture_names_a_message_trimmer_passed_as_a_projector(user_dir: Path) -> None:
    """issue 50: ``check_projector(fn)`` with a ``(messages, budget)`` function raised a bare
    ``TypeError`` from inside the replay; it now says what the function is and how to pass it."""
    from turncheck.testing import check_projector

    trim = load_object("my_trim:last_three", "trimmer")
    with pytest.raises(UnknownName, match="is decorated with @turncheck.message_trimmer"):
        check_projector(trim)
