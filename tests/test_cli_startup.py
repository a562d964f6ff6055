"""``turncheck --help``, ``turncheck COMMAND --help`` and a completion TAB import no engine.

A command imports numpy, networkx, Hypothesis, matplotlib or SimPy when it runs, never when the
command line starts: every ``--help`` and every TAB would otherwise pay for them (0.7 s of CPU
before issue 25). Each case runs the real entry point, ``python -m turncheck``, in a fresh
interpreter under ``-X importtime``, which names on stderr every module the run imported.
``benchmarks/cli_startup.py`` measures what that costs against ``import typer``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from turncheck.cli.app import app

HEAVY = ("numpy", "networkx", "hypothesis", "matplotlib", "simpy")


def _command_paths(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name)
        if hasattr(command, "commands"):
            yield from _command_paths(command, (*prefix, name))


def imported(argv: list[str], cwd: Path, env: dict[str, str] | None = None, status: int = 0) -> set[str]:
    """Top-level packages ``python -m turncheck ARGV`` imported, from ``-X importtime``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "turncheck", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    assert proc.returncode == status, proc.stderr[-2000:]
    names = [
        line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    ]
    assert "turncheck.cli.app" in names, proc.stderr[-2000:]  # importtime did report
    return {name.split(".")[0] for name in names}


COMMANDS = [" ".join(path) for path in _command_paths(typer.main.get_command(app))]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_imports_no_engine(command: str, tmp_path: Path) -> None:
    heavy = imported([*command.split(), "--help"], tmp_path) & set(HEAVY)
    assert not heavy, f"turncheck {command} --help imported {sorted(heavy)}"


LOADED_AFTER = """
import contextlib, io, sys
from turncheck.cli.app import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(sorted(m for m in sys.modules if m.startswith("turncheck.models.vendors")))
"""


def test_help_does_not_load_the_model_catalogue(tmp_path: Path) -> None:
    """The vendor catalogue (models/vendors/) is the model registry's home, loaded on its first
    use: ``check --help`` names no model, so it loads none; ``list models`` loads them all."""

    def loaded(*argv: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", LOADED_AFTER, *argv], capture_output=True, text=True, cwd=tmp_path
        )
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout

    assert loaded("check", "--help") == "[]\n"
    assert "'turncheck.models.vendors.anthropic_background_compaction'" in loaded("list", "models")


@pytest.mark.parametrize(
    ("words", "cword"),
    [("turncheck ch", 1), ("turncheck check --engine ", 3), ("turncheck scenario --scale ", 3)],
)
def test_completion_imports_no_engine(words: str, cword: int, tmp_path: Path) -> None:
    env = {"_TURNCHECK_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    heavy = imported([], tmp_path, env) & set(HEAVY)
    assert not heavy, f"completing {words!r} imported {sorted(heavy)}"


def test_the_probe_sees_an_engine_a_command_imports(tmp_path: Path) -> None:
    """The probe can fail: a command that runs Hypothesis does import it (the keys model's goal
    is not reached in one one-step run: inconclusive, exit 3)."""
    argv = ["check", "keys", "--engine", "hypothesis", "--max-examples", "1", "--steps", "1", "-q"]
    assert "hypothesis" in imported([*argv, "--database", str(tmp_path / "db")], tmp_path, status=3)


WITHOUT_POSIX = """
import json, sys
sys.modules["fcntl"] = None
sys.modules["resource"] = None
from turncheck.cli.app import main
try:
    import resource
except ImportError:
    pass
else:
    raise SystemExit("resource is still importable: the probe blocks nothing")
statuses = {" ".join(argv): main(argv) for argv in json.loads(sys.argv[1])}
print(statuses)
raise SystemExit(0 if set(statuses.values()) == {0} else 1)
"""


def test_the_cli_starts_without_fcntl_and_resource(tmp_path: Path) -> None:
    """Windows has neither: ``--help``, every ``COMMAND --help`` and ``list`` still run (the POSIX
    modules are imported only where a lock is taken or a benchmark measures)."""
    argvs = [["--help"], ["list"], *[[*command.split(), "--help"] for command in COMMANDS]]
    proc = subprocess.run([sys.executable, "-c", WITHOUT_POSIX, json.dumps(argvs)],
                          capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
