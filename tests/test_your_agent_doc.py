"""docs/your-agent.md, run as written: every command's output and exit status, every file.

Console blocks are sequences of ``$ command`` lines, each followed by the stdout it must print
(exactly, for ``turncheck``; every shown line, for ``pytest``, whose timing varies), and
``$ echo $?`` checks the previous command's exit status. A Python block whose first line is
``# path`` must be that committed file, line for line after it; any other Python block must be a
verbatim excerpt of ``examples/your-agent/trim.py``.

The ``turncheck`` commands run in-process. The block that installs (``pip install . pytest``) and
runs ``pytest`` runs in a fresh venv without the system's site-packages (``wheel_venv``: the built
wheel stands for ``.``), from a folder holding the repository's ``pyproject.toml``, so its pytest
settings apply as they do from the repository root.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
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


def shown_as(printed: list[str], shown: list[str]) -> bool:
    """The guide shows exactly what was printed, line for line; a line ending in ``...`` elides the
    rest of that line (an id that varies), and when it is the last shown line, the lines after it."""
    cut = bool(shown) and shown[-1].endswith("...")
    if len(printed) < len(shown) or (len(printed) != len(shown) and not cut):
        return False
    return all(
        p.startswith(want[:-3]) if want.endswith("...") else p == want
        for p, want in zip(printed, shown, strict=False)
    )


def run_guide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], venv: Path | None = None, wheel: Path | None = None
) -> int:
    """Check every file the guide shows and run its console blocks: the ``turncheck`` ones when
    ``venv`` is None, the ``pip``/``pytest`` one in ``venv`` (``wheel`` for ``.``) otherwise; how
    many commands ran."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    trim = (ROOT / "examples" / "your-agent" / "trim.py").read_text()
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert sum(1 for lang, _ in blocks if lang == "console") >= 4
    last = None
    ran = 0
    for lang, body in blocks:
        if lang == "python":
            first, _, rest = body.partition("\n")
            if first.startswith("# ") and first.endswith(".py"):
                assert (ROOT / first[2:]).read_text(encoding="utf-8") == rest, f"{first[2:]} is not as shown"
            else:
                assert body in trim, f"snippet is not in trim.py:\n{body}"
            continue
        assert lang == "console", lang
        steps = commands(body)
        if (steps[0][0].split()[0] in ("pip", "pytest")) != (venv is not None):
            continue
        for cmd, expected in steps:
            if cmd == "echo $?":
                assert [str(last)] == expected, f"exit status of the command before: {last}"
                continue
            argv = shlex.split(cmd)
            if argv[0] == "turncheck":
                capsys.readouterr()
                last = main(argv[1:])
                out = capsys.readouterr().out
                assert shown_as(out.splitlines(), expected), f"$ {cmd}\n{out}"
            elif argv[0] in ("pip", "pytest") and venv is not None:
                done = in_venv(venv, argv, tmp_path, wheel)
                last = done.returncode
                for line in expected:
                    assert normal(line) in normal(done.stdout), f"$ {cmd}: missing {line!r}\n{done.stdout}"
            else:
                raise AssertionError(f"the guide runs a command the test cannot: {cmd}")
            ran += 1
    return ran


def in_venv(
    venv: Path, argv: list[str], cwd: Path, wheel: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``pip install``/``pytest`` as the venv's own; ``.`` to install is ``wheel``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH", "VIRTUAL_ENV"))}
    if argv[0] == "pip":
        args = [str(wheel) if a == "." else a for a in argv[2:]]
        argv = ["pip", "install", "-q", "-c", str(ROOT / "constraints.txt"), *args]
    return subprocess.run([str(venv / "python"), "-m", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def test_every_turncheck_command_of_the_guide_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_guide(tmp_path, capsys) >= 7


def test_the_pytest_step_runs_from_a_fresh_venv_with_the_guides_install_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wheel_venv: Path, built_wheel: Path
) -> None:
    """No pytest-xdist in that venv: the repository's pytest settings must not need it."""
    assert run_guide(tmp_path, capsys, wheel_venv, built_wheel) >= 2
    missing = in_venv(wheel_venv, ["pytest", "-q", "examples/your-agent/test_missing.py"], tmp_path)
    assert missing.returncode == 4 and "file or directory not found" in missing.stderr, missing.stderr
