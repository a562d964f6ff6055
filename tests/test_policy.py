"""A compaction policy stated as values runs in every engine as the trigger model (issue 32).

The explorer, Hypothesis and the SimPy simulation each get exactly the model the policy's
parameters build (no second encoding of the rules); a TOML file, a ``Policy`` object in a user's
file and ``--param`` overrides reach the same model; a bad file is one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck import Policy, build_model, explore
from turncheck.cli.app import main
from turncheck.models.errors import BadParameter
from turncheck.models.locking import worst_case_peak
from turncheck.models.policy import read_policy
from turncheck.sim.checking import run_check
from turncheck.sim.simulation import RunSpec, simulate

TOML = """[policy]
trigger = 3
gap = 1
locking = "none"
delete = "live-at-commit"
writers = 2
turns = 4
"""
TRIM_TO = {"writers": 2, "gap": 1, "max_turns": 3, "locking": "trim-to", "turns": 4}


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(TOML, encoding="utf-8")
    return path


def test_the_delete_rule_picks_the_registered_locking_with_that_rule(policy_file: Path) -> None:
    policy = read_policy(policy_file)
    assert policy == Policy(trigger=3, gap=1, locking="none", delete="live-at-commit", writers=2, turns=4)
    assert policy.trigger_params() == TRIM_TO
    assert Policy(locking="mutex").locking_name() == "mutex"
    with pytest.raises(BadParameter, match="locking 'mutex' with delete 'live-at-commit' is no registered"):
        Policy(locking="mutex", delete="live-at-commit")
    with pytest.raises(BadParameter, match="parameter max_turns must be an integer >= 1"):
        Policy(trigger=0)


def test_the_explorer_and_hypothesis_run_the_trigger_model_it_is(policy_file: Path) -> None:
    model = read_policy(policy_file).model()
    assert dict(model.params) == dict(build_model("trigger", TRIM_TO).params)
    result = explore(model)
    assert result.exhausted and result.outcome("bounded-peak-turns").status == "holds"
    assert result.worst_of("peak_turns") == worst_case_peak(2, 1, 3, "trim-to") == 5
    report = run_check(model, model.properties(), engine="hypothesis", max_examples=30, database=None)
    assert report.stateful is not None and report.stateful.violated == "within-max-turns"


def test_the_simpy_simulation_runs_it_as_the_trigger_model(policy_file: Path) -> None:
    spec = RunSpec(slots=300, seed=3)
    ran = simulate(read_policy(policy_file).model(), spec)
    assert ran == simulate(build_model("trigger", TRIM_TO), spec)
    assert 3 < ran.peak <= worst_case_peak(2, 1, 3, "trim-to")


def test_check_and_replay_take_a_toml_file_or_a_policy_object(
    policy_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(policy_file.parent)
    assert main(["check", "policy.toml", "--engine", "explore", "--trace-out", "t.json", "-q"]) == 1
    out = capsys.readouterr().out
    assert "locking=trim-to" in out and "FAIL: no-uncounted-gap-turn is violated" in out
    assert main(["replay", "t.json", "-q"]) == 1 and "still fails the same way" in capsys.readouterr().out
    assert main(["check", "policy.toml", "--engine", "explore", "-p", "locking=mutex", "-q"]) == 1
    assert "holds: no-uncounted-gap-turn" in capsys.readouterr().out
    (policy_file.parent / "mine.py").write_text(
        'from turncheck import Policy\n\nPOLICY = Policy(trigger=3, gap=1, locking="none", delete="live-at-commit")\n',
        encoding="utf-8",
    )
    assert main(["explore", "mine.py:POLICY", "-q"]) == 0
    assert "worst peak_turns = 5" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[policy]\ntrigger = '3'\n", "policy trigger must be a int, got '3'"),
        ("[policy]\nlockin = 'none'\n", "unknown policy key 'lockin'"),
        ("trigger = 3\n", "needs a [policy] table"),
        ("[policy\n", "not a TOML file"),
        ("[policy]\nlocking = 'optimistic'\n", "optimistic"),
        ("[policy]\ndelete = 'all'\n", "policy delete must be one of count-read, live-at-commit"),
    ],
)
def test_a_bad_policy_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    (tmp_path / "p.toml").write_text(text, encoding="utf-8")
    assert main(["check", str(tmp_path / "p.toml"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("turncheck: error: ") and says in err, err
    assert [p.name for p in tmp_path.iterdir()] == ["p.toml"]


def test_a_policy_without_turns_has_unbounded_writers_as_the_trigger_model_does() -> None:
    """``turns`` defaults to 0 like the trigger model's: cas's starved compaction is a lasso
    then, while writers that stop after four turns let it commit after them."""
    from turncheck import explore

    assert Policy().turns == 0 == Policy().model().config.turns
    assert explore(Policy(locking="cas").model()).outcome("due-compaction-runs").status == "violated"
    assert explore(Policy(locking="cas", turns=4).model()).outcome("due-compaction-runs").status == "holds"
