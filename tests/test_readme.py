"""The README's promises: the two set-up commands, CI running the same test command, a front door
of at most 200 lines that reaches "check your own trimmer" in its first 40, and that section's
trimmer, command line and pytest test working as printed, catching the bug it names."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import _check_command_line

from turncheck.cli.app import EXIT_BUG, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_two_setup_commands_and_ci_runs_the_second():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block and README.index("```bash") < README.index("##")
    commands = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    assert "turncheck demo" in commands[0] and "pytest" in commands[1]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]  # fmt: skip
    setup = [line for line in ci if line.startswith("bash .ci/setup-")]  # services CI must install
    wall_times = ("start=", "main=", "pages=", "guard=", "echo ")
    timing = [line for line in ci if line.startswith(wall_times)]
    install = commands[1].split(" && ")[0]  # run once before, so the command's own is a no-op
    slow_docs = "TURNCHECK_SCALE=full python -m pytest -n logical -m slow tests/test_docs.py tests/test_doc_figures.py"
    speed_guard = "turncheck bench all --compare --scale tiny --quiet --baseline benchmarks/baseline.json"
    assert [line for line in ci if line not in setup + timing] == [
        install,
        commands[1],
        slow_docs,
        f"{speed_guard} || {speed_guard}",  # a run over the baseline is measured once more
        "bash .ci/lowest",
    ]


TRIMMER = re.search(r"```python\n# my_trim.py\n(.*?)```", README, re.S)
COMMAND = re.search(r"```bash\n(PYTHONPATH=\. turncheck project [^\n]*messages:my_trim:[^\n]*)\n```", README)
FIXTURE = re.search(r"```python\n# test_trim.py\n(.*?)```", README, re.S)
FIX = re.compile(r"^    # the fix: .*\n^    calls = .*\n^    kept = \[.*\n", re.M)  # the lines that fix it


def test_readme_is_a_front_door_that_opens_on_your_own_trimmer():
    """At most 200 lines; what turncheck is and is not in two sentences before the set-up
    commands; "Check your own trimmer" and its ``messages:`` command line in the first 40."""
    lines = README.splitlines()
    assert len(lines) <= 200
    opening = README.split("```bash", 1)[0].split("\n", 2)[2].strip()
    assert len(re.findall(r"[.!?](?:\s|$)", opening)) == 2 and " not " in opening
    assert "## Check your own trimmer" in lines[:40]
    assert any(
        line.startswith("PYTHONPATH=. turncheck project") and "messages:" in line for line in lines[:40]
    )
    assert "turncheck init" in README and "exec:node " in README and FIXTURE and TRIMMER


def test_every_turncheck_command_the_readme_shows_exists():
    """Every ``turncheck …`` line of a code block, and every inline ```turncheck …``` span, names
    a real command and real options; the ``exec:`` trimmer it names is a file of the repository."""
    spans = [" ".join(c.split()) for c in re.findall(r"`(turncheck [^`]+)`", README)]
    blocks = [line.removeprefix("$ ") for code in re.findall(r"```\w*\n(.*?)```", README, re.S)
              for line in code.splitlines() if re.match(r"^(\$ )?(PYTHONPATH=\S+ )?turncheck ", line)]  # fmt: skip
    assert len(spans) >= 10 and blocks
    for line in spans + blocks:
        _check_command_line(line)
    for path in re.findall(r"exec:node (\S+?)\"", README):
        assert (ROOT / path).is_file(), path


def test_readme_trimmer_and_command_run_as_printed(tmp_path, monkeypatch, capsys):
    """The README's ``my_trim.py`` and its ``PYTHONPATH=. turncheck project …`` line, word for word,
    on a log of one's own (the bundled example as ``my.jsonl``): exit 0, no request's window
    orphans a result."""
    assert TRIMMER and COMMAND
    (tmp_path / "my_trim.py").write_text(TRIMMER.group(1))
    (tmp_path / "my.jsonl").write_bytes((ROOT / "scenarios" / "data" / "example.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_trim", raising=False)
    assign, command, *argv = shlex.split(COMMAND.group(1))
    assert (assign, command) == ("PYTHONPATH=.", "turncheck")
    try:
        status = main([*argv, "--format", "json"])
    finally:
        sys.modules.pop("my_trim", None)  # the README's module is not the one other tests import
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 0 and rows and all(r["orphanRes"] == 0 for r in rows)


@pytest.mark.parametrize("fixed", [True, False], ids=["as-printed", "without-the-fix"])
def test_readme_pytest_test_passes_and_catches_the_bug_it_names(tmp_path, fixed):
    """The README's ``test_trim.py``, run by pytest next to its ``my_trim.py``, passes; with the two
    lines the README says the counterexample needs taken out, the same test fails on it."""
    assert TRIMMER and FIXTURE
    trimmer = TRIMMER.group(1) if fixed else FIX.sub("", TRIMMER.group(1))
    assert trimmer != TRIMMER.group(1) or fixed
    (tmp_path / "my_trim.py").write_text(trimmer)
    (tmp_path / "test_trim.py").write_text(FIXTURE.group(1))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "test_trim.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)  # fmt: skip
    if fixed:
        assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-2000:]
    else:
        assert run.returncode == 1 and "breaks orphanRes" in run.stdout, run.stdout[-2000:]


# a fix that only pops tool results off the front: it misses a result whose call was cut while a
# later call of the same turn starts the window (USER, CALL c0, CALL c1, RESULT c0, CALL c2,
# RESULT c1 sends CALL c2, RESULT c1) — the README's first fix, which `check projector` broke from
# budget 50 on (its own default budget 4 keeps nothing of a message sized by len(str(message)) // 4)
FRONT_ONLY = """    while kept and kept[0]["role"] == "tool":
        kept.pop(0)
"""


@pytest.mark.parametrize("budget", [20, 50, 100])
@pytest.mark.parametrize("fix", ["as-printed", "front-only"])
def test_readme_trimmer_never_orphans_a_result_on_any_small_history(tmp_path, monkeypatch, capsys, fix, budget):
    """The README's ``check projector -p strategy=messages:my_trim.py:keep_recent`` line on its own
    trimmer, at budgets where it keeps a few messages (its default budget 4 keeps none): the printed
    fix holds ``no-orphan-results`` over every small history, explored exhaustively, and sends
    something; a fix that only pops tool results off the front breaks it from budget 50 on."""
    assert TRIMMER
    trimmer = TRIMMER.group(1) if fix == "as-printed" else FIX.sub(FRONT_ONLY, TRIMMER.group(1))
    assert trimmer != TRIMMER.group(1) or fix == "as-printed"
    (tmp_path / "my_trim.py").write_text(trimmer)
    monkeypatch.chdir(tmp_path)
    status = main(["check", "projector", "-q", "--engine", "explore", "-i", "no-orphan-results",
                   "-p", f"budget={budget}", "-p", "strategy=messages:my_trim.py:keep_recent"])  # fmt: skip
    out = capsys.readouterr().out
    kept = int(re.search(r"worst case: kept_cost (\d+)", out).group(1))
    if fix == "as-printed" or budget < 50:
        assert status == 0 and "PASS" in out and "exhaustive" in out and kept > 0, out
    else:
        assert status == 1 and "window sent" in out and "1 orphan RESULT" in out, out


def test_readme_exit_statuses_are_the_command_lines():
    """The README's list of exit statuses is the one ``cli/app.py`` returns: 0 and 1 by
    convention, the rest by its ``EXIT_*`` constants."""
    section = README.split("**Exit status**", 1)[1].split("\n\n", 1)[0]
    listed = [int(n) for n in re.findall(r"^- exit (\d+):", section, re.M)]
    assert listed == [0, 1, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_BUG, EXIT_INTERRUPTED]


def test_the_docs_home_page_shows_the_users_install_not_the_test_install():
    """docs/index.md's first set-up block is the README's first command (install and demo); the
    test install, which CI and contributors run, is not on the site's entry page at all."""
    readme = re.search(r"```bash\n(.*?)```", README, re.S)
    home_text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    home = re.findall(r"```bash\n(.*?)```", home_text, re.S)
    assert readme and home and home[0] == readme.group(1).splitlines(keepends=True)[0]
    assert "constraints.txt" not in home_text and "pytest -n logical" not in home_text
