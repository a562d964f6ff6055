"""docs/your-agent.md, run as written: every command's output and exit status, every file.

Console blocks are sequences of ``$ command`` lines, each followed by the stdout it must print
(exactly, for ``turncheck``; every shown line, for ``pytest``, whose timing varies), and
``$ echo $?`` checks the previous command's exit status. A Python block whose first line is
``# path.py`` is written to that path before the commands after it run; any other Python block
must be a verbatim excerpt of ``examples/your-agent/trim.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from turncheck.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "your-agent.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r" in \d+\.\d+s", "", text)).strip()


def commands(block: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def test_every_snippet_of_the_guide_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    trim = (ROOT / "examples" / "your-agent" / "trim.py").read_text()
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert sum(1 for lang, _ in blocks if lang == "console") >= 4
    last = None
    ran = 0
    for lang, body in blocks:
        if lang == "python":
            first = body.splitlines()[0]
            if first.startswith("# ") and first.endswith(".py"):
                (tmp_path / first[2:]).write_text(body, encoding="utf-8")
            else:
                assert body in trim, f"snippet is not in trim.py:\n{body}"
            continue
        assert lang == "console", lang
        for cmd, expected in commands(body):
            if cmd == "echo $?":
                assert [str(last)] == expected, f"exit status of the command before: {last}"
                continue
            argv = shlex.split(cmd)
            if argv[0] == "turncheck":
                capsys.readouterr()
                last = main(argv[1:])
                out = capsys.readouterr().out
                assert out.splitlines() == expected, f"$ {cmd}\n{out}"
            elif argv[0] == "pytest":
                env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
                done = subprocess.run([sys.executable, "-m", *argv], cwd=tmp_path, env=env,
                                      capture_output=True, text=True, timeout=600)  # fmt: skip
                last = done.returncode
                for line in expected:
                    assert normal(line) in normal(done.stdout), f"$ {cmd}: missing {line!r}\n{done.stdout}"
            else:
                raise AssertionError(f"the guide runs a command the test cannot: {cmd}")
            ran += 1
    assert ran >= 7
