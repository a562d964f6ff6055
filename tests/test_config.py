"""``[tool.turncheck]`` in pyproject.toml: found from the working directory upward, each key the
default of its flag, the flag given on the command line winning; a bad table is one line, exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from turncheck.cli.config import default_map


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """``project(toml)``: a folder whose pyproject.toml holds ``toml``; the test runs in its
    subfolder ``src`` (the table is found upward)."""

    def make(toml: str) -> Path:
        (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
        (tmp_path / "src").mkdir(exist_ok=True)
        monkeypatch.chdir(tmp_path / "src")
        return tmp_path

    return make


def rows(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_project_takes_budget_and_strategy_from_the_table_and_flags_win(cli, project) -> None:
    project(
        '[project]\nname = "mine"\n\n[tool.turncheck]\nbudget = 250\nstrategy = "M3"\ncost = "utf8-json"\n'
    )
    row = rows(cli("project", "--example", "-q", "--format", "json").out)[0]
    assert (row["strategy"], row["budget"], row["cost_model"]) == ("M3", 250, "utf8-json")
    row = rows(cli("project", "--example", "-q", "--format", "json", "-b", "100", "-s", "M5").out)[0]
    assert (row["strategy"], row["budget"], row["cost_model"]) == ("M5", 100, "utf8-json")


def test_without_a_table_the_flags_keep_their_own_defaults(cli, project) -> None:
    project('[project]\nname = "mine"\n')
    assert default_map() is None
    row = rows(cli("project", "--example", "-q", "--format", "json").out)[0]
    assert (row["strategy"], row["budget"]) == ("M1", 4000)


def test_check_takes_its_invariants_from_the_table(cli, project) -> None:
    project('[tool.turncheck]\ninvariants = ["no-orphan-results"]\n')
    done = cli("check", "projector", "-q", "--engine", "explore", "--format", "json")
    assert done.code == 1
    assert list(json.loads(done.out)["explore"]["properties"]) == ["no-orphan-results"]


def test_out_is_relative_to_the_pyproject_folder(cli, project) -> None:
    root = project('[tool.turncheck]\nout = "results"\n')
    assert default_map() == {
        "scenario": {"out": str(root / "results")},
        "sweep": {"out": str(root / "results")},
    }
    assert cli("scenario", "clock-skew", "--scale", "tiny", "-q").code == 0
    assert (root / "results" / "clock-skew.json").is_file()
    assert not (root / "src" / "turncheck-out").exists()


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        (
            "[tool.turncheck]\nbudgt = 250\n",
            "has no key 'budgt' (known: budget, cost, invariants, out, strategy)",
        ),
        ('[tool.turncheck]\nbudget = "250"\n', "budget must be a positive integer, got '250'"),
        ("[tool.turncheck]\nbudget = true\n", "budget must be a positive integer, got True"),
        ("[tool.turncheck]\nbudget = 0\n", "budget must be a positive integer, got 0"),
        (
            '[tool.turncheck]\ninvariants = "no-orphan-results"\n',
            "invariants must be a non-empty list of strings",
        ),
        ('[tool.turncheck]\nstrategy = ""\n', "strategy must be a non-empty string"),
        ('[tool]\nturncheck = "M3"\n', "[tool.turncheck] must be a table"),
        ("[tool.turncheck\nbudget = 1\n", "not valid TOML"),
    ],
)
def test_a_bad_table_is_one_line_exit_2_naming_the_file(cli, project, toml: str, says: str) -> None:
    root = project(toml)
    done = cli("project", "--example", "-q")
    assert done.code == 2 and done.out == ""
    assert done.err.count("\n") == 1 and str(root / "pyproject.toml") in done.err and says in done.err


def test_a_value_the_command_refuses_is_refused_as_the_flag_would_be(cli, project) -> None:
    project('[tool.turncheck]\ncost = "bytes"\n')
    done = cli("project", "--example", "-q")
    assert done.code == 2 and done.err.startswith("turncheck: error: --cost must be one of")
