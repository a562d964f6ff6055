"""docs/your-agent.md, run as written: every command's output and exit status, every file.

The guide runs through :mod:`doc_pages` (the one docs runner) in the fresh venv of the built wheel
(``wheel_venv``, without the system's site-packages and so without pytest-xdist), from a folder
holding the repository's ``examples/`` and ``pyproject.toml``, so the repository's pytest settings
apply to its pytest step as they do from the repository root. The page is in ``doc_pages.WHOLE``:
each ``turncheck`` command prints exactly what it shows, and ``$ echo $?`` its exit status; its
``pip install . pytest`` installs pytest into that venv, its ``pytest`` step runs there; its Python
blocks are the committed test file, excerpts of ``examples/your-agent/trim.py`` (``# from``), or
run, one namespace for the page: its event log, a history-level trimmer, a protocol and a policy.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import doc_pages

PAGE = "your-agent.md"


def test_the_guide_runs_as_shown_from_a_fresh_venv_with_its_install_line(
    tmp_path: Path, wheel_venv: Path, built_wheel: Path
) -> None:
    """Nine turncheck commands, the install and the pytest step; a missing test file is pytest's
    exit 4 there, not xdist's "no tests ran" (the repository's settings do not need xdist)."""
    steps = doc_pages.read(PAGE, (doc_pages.DOCS / PAGE).read_text(encoding="utf-8"))
    assert (
        sum(1 for s in steps if "tool" in s.run) == 2 and sum(1 for s in steps if s.status is not None) >= 8
    )
    assert (
        doc_pages.check(
            PAGE, steps, doc_pages.run(steps, doc_pages.scratch(tmp_path), wheel_venv, built_wheel)
        )
        >= 9
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH", "VIRTUAL_ENV"))}
    missing = subprocess.run([str(wheel_venv / "python"), "-m", "pytest", "-q", "examples/your-agent/test_missing.py"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert missing.returncode == 4 and "file or directory not found" in missing.stderr, missing.stderr
