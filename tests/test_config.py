"""``[tool.turncheck]`` in pyproject.toml: found from the working directory upward, each key the
default of its flag, the flag given on the command line winning; a bad table is one line, exit 2."""

from __future__ import annotations

import json
import os
import sys
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
            "has no key 'budgt' (known: budget, cost, fail_on, from, history, invariants, out, per_request,"
            " provider, strategy)",
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


# -- issue 57: config never runs code, never writes outside the project, never a traceback ---------

DEEP = "x = " + "[" * 1000 + "]" * 1000 + "\n"


@pytest.mark.parametrize(
    "toml",
    [
        '[tool.turncheck]\nstrategy = "exec:touch {marker}"\n',
        '[tool.turncheck]\nstrategy = "messages:exec:touch {marker}"\n',
        '[tool.turncheck]\nstrategy = "os:system"\n',
        '[tool.turncheck]\nstrategy = "plugin.py:trim"\n',
        '[tool.turncheck]\ncost = "exec:touch {marker}"\n',
        '[tool.turncheck]\ninvariants = ["no-orphan-results", "exec:touch {marker}"]\n',
    ],
    ids=["exec", "messages-exec", "module", "file", "cost-exec", "invariants-exec"],
)
def test_config_naming_code_is_refused_and_nothing_runs(cli, project, tmp_path: Path, toml: str) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "plugin.py").write_text(f"open({str(marker)!r}, 'w')\ndef trim(*a): return a\n")
    root = project(toml.format(marker=marker))
    for argv in (("project", "--example", "-q"), ("check", "projector", "-q"), ("--version",)):
        done = cli(*argv)
        assert done.code == 2 and done.err.count("\n") == 1, done
        assert str(root / "pyproject.toml") in done.err and "names code" in done.err
    assert not marker.exists()


def test_the_search_stops_at_the_first_pyproject_toml(cli, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.turncheck]\nstrategy = "exec:touch {marker}"\nbudget = 7\n'
    )
    (tmp_path / "clone" / "src").mkdir(parents=True)
    (tmp_path / "clone" / "pyproject.toml").write_text('[project]\nname = "theirs"\n')
    monkeypatch.chdir(tmp_path / "clone" / "src")
    assert default_map() is None
    row = rows(cli("project", "--example", "-q", "--format", "json").out)[0]
    assert (row["strategy"], row["budget"]) == ("M1", 4000) and not marker.exists()


@pytest.mark.parametrize("marker", [".git", ".hg"])
def test_the_search_stops_at_a_repository_root(cli, tmp_path: Path, monkeypatch, marker: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.turncheck]\nbudget = 7\n")
    (tmp_path / "repo" / marker).mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "src")
    assert default_map() is None
    monkeypatch.chdir(tmp_path)
    assert default_map() == {"project": {"budget": 7}, "lint": {"budget": 7}}


@pytest.mark.parametrize("out", ["../elsewhere", "../../x", "a/../../x", "/tmp/turncheck-out"])
def test_out_outside_the_project_is_refused(cli, project, out: str) -> None:
    root = project(f'[tool.turncheck]\nout = "{out}"\n')
    done = cli("scenario", "clock-skew", "--scale", "tiny", "-q")
    assert done.code == 2 and done.err.count("\n") == 1 and "outside the project folder" in done.err
    assert sorted(p.name for p in root.iterdir()) == ["pyproject.toml", "src"]


def test_out_inside_the_project_through_dots_is_taken(project) -> None:
    root = project('[tool.turncheck]\nout = "src/../results"\n')
    assert default_map() == {
        "scenario": {"out": str(root / "src/../results")},
        "sweep": {"out": str(root / "src/../results")},
    }


@pytest.mark.parametrize(
    "toml",
    [
        DEEP.encode(),
        ("x = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n").encode(),
        b"[tool.black]\nline-length = \n",
        b"name = '\xff'\n",
    ],
    ids=["deep-array", "deep-inline-table", "bad-toml", "bad-utf8"],
)
def test_a_broken_pyproject_without_our_table_is_ignored(cli, project, toml: bytes) -> None:
    root = project("")
    (root / "pyproject.toml").write_bytes(toml)
    assert cli("--version").code == 0
    done = cli("project", "--example", "-q", "--format", "json")
    assert done.code == 0 and done.err == ""


@pytest.mark.parametrize(
    "toml", ["[tool.turncheck]\nbudget = 5\n" + DEEP, "[tool.turncheck]\nbudget = \n"], ids=["deep", "bad"]
)
def test_a_broken_pyproject_with_our_table_is_one_line(cli, project, toml: str) -> None:
    # run at the recursion limit a fresh ``turncheck`` process has: a library imported earlier in
    # this worker (mkdocstrings' handler sets its own) may have raised it, and tomllib then parses
    # the deep array instead of giving up on it (the full suite saw "no key 'x'")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        _refused_in_one_line(cli, project(toml))
    finally:
        sys.setrecursionlimit(limit)


def _refused_in_one_line(cli, root: Path) -> None:
    for argv in (("--version",), ("project", "--example", "-q")):
        done = cli(*argv)
        assert done.code == 2 and done.out == "" and done.err.count("\n") == 1, done
        assert str(root / "pyproject.toml") in done.err and "not valid TOML" in done.err


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev-zero"])
def test_a_pyproject_that_is_not_a_file_is_not_read(cli, tmp_path: Path, monkeypatch, kind: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.turncheck]\nbudget = 7\n")
    (tmp_path / "p").mkdir()
    special = tmp_path / "p" / "pyproject.toml"
    {"fifo": os.mkfifo, "dir": os.mkdir, "dev-zero": lambda p: os.symlink("/dev/zero", p)}[kind](special)
    monkeypatch.chdir(tmp_path / "p")
    assert default_map() is None
    assert cli("--version").code == 0


# -- issue 55: the table covers the CI gate's own flags (project --per-request --fail-on, lint) ----

GATE = """[tool.turncheck]
history = "logs/requests.jsonl"
from = "openai-chat"
budget = 250
per_request = true
fail_on = {fail_on}
"""


def gate_project(project, fail_on: str = '["orphanRes", "overBudget"]') -> Path:
    root = project(GATE.format(fail_on=fail_on))
    (root / "logs").mkdir()
    source = Path(__file__).resolve().parent.parent / "examples" / "your-agent" / "requests.jsonl"
    (root / "logs" / "requests.jsonl").write_bytes(source.read_bytes())
    return root


@pytest.mark.parametrize(
    "fail_on", ['["orphanRes", "overBudget"]', '"orphanRes,overBudget"'], ids=["list", "string"]
)
def test_the_gate_runs_bare_from_the_table(cli, project, fail_on: str) -> None:
    root = gate_project(project, fail_on)
    assert default_map()["project"] == {
        "history": str(root / "logs/requests.jsonl"), "source": "openai-chat", "budget": 250,
        "per_request": True, "fail_on": "orphanRes,overBudget",
    }  # fmt: skip
    done = cli("project", "-q")  # from src/: the log is found relative to the pyproject.toml
    assert done.code == 1 and "requests in 2 sessions" in done.out
    assert "FAIL: session ticket-1043, request 2 (after 7 events): overBudget" in done.out


def test_flags_win_over_the_gate_table(cli, project) -> None:
    gate_project(project)
    done = cli("project", "-q", "--fail-on", "orphanRes")
    assert done.code == 0 and "OK: no request breaks orphanRes" in done.out
    done = cli("project", "-q", "--no-per-request", "--format", "json")  # per session, at the end
    *sessions, verdict = done.out.splitlines()
    assert done.code == 1 and verdict.startswith("FAIL: session ticket-1043 breaks overBudget")
    assert [r["session"] for r in rows("\n".join(sessions))] == ["ticket-1043", "ticket-2210"]
    assert "requests" not in rows(sessions[0])[0]


def test_lint_runs_bare_from_the_table(cli, project) -> None:
    root = gate_project(project)
    done = cli("lint", "-q")
    assert done.code == 0 and done.out.startswith(f"{root / 'logs/requests.jsonl'}: 24 events in 2 sessions")


def test_provider_in_the_table_is_lints_and_checked_as_the_flag(cli, project) -> None:
    project('[tool.turncheck]\nprovider = "anthropic"\n')
    assert default_map() == {"lint": {"provider": "anthropic"}}
    project('[tool.turncheck]\nprovider = "antropic"\n')
    done = cli("lint", "-q", str(Path(__file__).resolve().parent.parent / "scenarios/data/example.jsonl"))
    assert done.code == 2 and "--provider must be one of" in done.err and "'antropic'" in done.err


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("per_request = 1", "per_request must be true or false, got 1"),
        ('per_request = "yes"', "per_request must be true or false"),
        ("fail_on = []", "fail_on must be a non-empty list of strings"),
        ("fail_on = [1]", "fail_on must be a non-empty list of strings"),
        ('fail_on = ""', "fail_on must be a non-empty list of strings"),
        ("history = 5", "history must be a non-empty string"),
        ("from = true", "from must be a non-empty string"),
        ('from = "exec:touch x"', "names code"),
        ('provider = "pkg.mod:fn"', "names code"),
        ('fail-on = ["orphanRes"]', "has no key 'fail-on'"),
    ],
)
def test_a_bad_gate_key_is_one_line_exit_2(cli, project, toml: str, says: str) -> None:
    root = project(f"[tool.turncheck]\n{toml}\n")
    done = cli("lint", "-q", "x.jsonl")
    assert done.code == 2 and done.out == "" and done.err.count("\n") == 1, done
    assert str(root / "pyproject.toml") in done.err and says in done.err


def test_an_unknown_check_in_fail_on_is_refused_as_the_flag(cli, project) -> None:
    gate_project(project, '["orphanRes", "orphans"]')
    done = cli("project", "-q")
    assert done.code == 2 and done.err.startswith("turncheck: error: --fail-on: unknown check orphans")


def trace_project(project, toml: str) -> Path:
    root = project(toml)
    source = Path(__file__).resolve().parent.parent / "examples" / "traces" / "langsmith-runs.jsonl"
    (root / "runs.jsonl").write_bytes(source.read_bytes())
    return root


def test_lint_takes_the_tables_budget_for_a_trace_as_the_flag(cli, project) -> None:
    """The table's ``budget`` is the CI gate's ``lint --budget`` too: a trace whose requests report
    68 and 94 input tokens fails against ``budget = 60`` bare, as with ``-b 60``. It was read by
    ``project`` only, so ``turncheck lint`` printed "clean" and exit 0 where ``lint -b 60`` exits 1."""
    trace_project(project, '[tool.turncheck]\nfrom = "langsmith"\nhistory = "runs.jsonl"\nbudget = 60\n')
    bare, flagged = cli("lint", "-q"), cli("lint", "-q", "-b", "60")
    assert bare.code == flagged.code == 1 and "over-budget" in bare.out, bare
    assert bare.out == flagged.out
    assert cli("lint", "-q", "-b", "100").code == 0  # the flag still wins


def test_the_tables_budget_leaves_a_log_without_requests_to_lint_as_before(cli, project) -> None:
    """The project's budget (``turncheck init`` writes 4000) does not make ``lint`` refuse a log
    without model requests, as ``--budget`` on the command line does."""
    example = str(Path(__file__).resolve().parent.parent / "scenarios" / "data" / "example.jsonl")
    project("[tool.turncheck]\nbudget = 4000\n")
    assert default_map() == {"project": {"budget": 4000}, "lint": {"budget": 4000}}
    done = cli("lint", "-q", example)
    assert done.code == 1 and done.err == "" and "dangling-call" in done.out, done
    assert cli("lint", "-q", example, "-b", "4000").code == 2  # given as a flag, still refused
    requests = str(Path(__file__).resolve().parent.parent / "examples" / "your-agent" / "requests.jsonl")
    assert cli("lint", "-q", "--from", "openai-chat", requests).code == 0


def test_a_budget_in_bytes_is_not_lints_token_budget(cli, project) -> None:
    """With ``cost = "utf8-json"`` the table's budget counts bytes, which ``lint --budget`` (tokens)
    would read four times too leniently: lint does not take it."""
    project('[tool.turncheck]\nbudget = 60\ncost = "utf8-json"\n')
    assert "lint" not in (default_map() or {})


def test_example_reads_the_bundled_log_whatever_format_the_table_names(cli, project) -> None:
    """``project --example`` in a project whose table says ``from = "openai-chat"`` read the bundled
    turncheck JSONL as OpenAI requests: "expected a request body with a 'messages' list", exit 2.
    The table's format is its own log's; ``--from`` given by hand still applies."""
    gate_project(project)
    done = cli("project", "--example", "-q", "--format", "json")
    assert done.code in (0, 1) and done.err == "", done
    sessions = {json.loads(line).get("session") for line in done.out.splitlines() if line.startswith("{")}
    assert {"support-42", "notes-7"} <= sessions, done.out
    assert cli("project", "--example", "-q", "--from", "openai-chat").code == 2


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("[tool.turncheck]\nbudget = 1" + "0" * 5000 + "\n", "not valid TOML (Exceeds the limit"),
        ('[tool.turncheck]\nout = "a\\u0000b"\n', "out holds a NUL character"),
        ('[tool.turncheck]\nhistory = "a\\u0000b"\n', "history holds a NUL character"),
        ("[tool.turncheck]\ninvariants = " + "[" * 150 + '"a"' + "]" * 150 + "\n", "got [[[[[["),
    ],
    ids=["5001-digit-int", "nul-in-out", "nul-in-history", "deep-value"],
)
def test_a_pathological_value_is_one_short_line(cli, project, toml: str, says: str) -> None:
    """Held-out variants of the deep array: an integer past Python's 4 300-digit limit (tomllib
    lets that ValueError through) and a NUL in a path were tracebacks, exit 70, ``--version``
    included; a deep value was echoed whole."""
    root = project(toml)
    for argv in (("--version",), ("project", "--example", "-q")):
        done = cli(*argv)
        assert done.code == 2 and done.out == "" and done.err.count("\n") == 1, done
        assert str(root / "pyproject.toml") in done.err and says in done.err and len(done.err) < 300


@pytest.mark.parametrize("ours", [False, True], ids=["another-tools", "ours"])
def test_a_huge_pyproject_is_not_parsed(cli, project, ours: bool) -> None:
    """A 40 MB string in pyproject.toml kept ``turncheck --version`` parsing for seconds (200 MB:
    over a minute): past 1 MiB the file is only scanned for ``turncheck`` in bounded chunks."""
    from turncheck.cli.config import MAX_CONFIG_BYTES

    head = "[tool.turncheck]\nbudget = 5\n" if ours else "[tool.black]\n"
    root = project(head + 'x = "' + "y" * (40 * MAX_CONFIG_BYTES) + '"\n')
    done = cli("--version")
    if ours:
        assert done.code == 2 and done.err.count("\n") == 1 and "over 1 MiB" in done.err, done
        assert str(root / "pyproject.toml") in done.err
    else:
        assert done.code == 0 and done.err == "", done
