"""The README's promises: the two set-up commands, CI running the same test command, and the
user-projector example working as printed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from turncheck.cli.app import EXIT_BUG, EXIT_INTERRUPTED, EXIT_USAGE, main

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
        speed_guard,
        "bash .ci/lowest",
    ]


def test_user_projector_example_runs_as_printed(tmp_path, monkeypatch, capsys):
    code = re.search(r"```python\n# my_trim.py\n(.*?)```", README, re.S)
    assert code
    (tmp_path / "my_trim.py").write_text(code.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_trim", raising=False)
    try:
        status = main(["project", "--example", "--budget", "200", "--strategy", "my_trim:keep_whole_calls",
                       "--format", "json"])  # fmt: skip
    finally:
        sys.modules.pop("my_trim", None)  # the README's module is not the one other tests import
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 0 and rows and all(r["orphanRes"] == 0 for r in rows)


def test_readme_exit_statuses_are_the_command_lines():
    """The README's list of exit statuses is the one ``cli/app.py`` returns: 0 and 1 by
    convention, the rest by its ``EXIT_*`` constants."""
    section = README.split("**Exit status**", 1)[1].split("\n\n", 1)[0]
    listed = [int(n) for n in re.findall(r"^- exit (\d+):", section, re.M)]
    assert listed == [0, 1, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPTED]


def test_the_docs_home_page_shows_the_readmes_two_commands():
    readme = re.search(r"```bash\n(.*?)```", README, re.S)
    home = re.search(r"```bash\n(.*?)```", (ROOT / "docs" / "index.md").read_text(), re.S)
    assert readme and home and home.group(1) == readme.group(1)
