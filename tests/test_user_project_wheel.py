"""A separate user project against the built wheel: the pytest plugin and ``turncheck.testing``
come from the installed distribution (entry point ``pytest11``), not from this checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH"))}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_user_project_finds_the_orphan_with_the_installed_wheel(tmp_path: Path, built_wheel: Path) -> None:
    wheel = built_wheel
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    installed = run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
                    tmp_path)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    project = tmp_path / "my-agent"
    project.mkdir()
    shutil.copy(ROOT / "tests" / "user_project" / "users_test_file.py", project / "test_my_trim.py")
    where = run([str(python), "-c", "import turncheck; print(turncheck.__file__)"], project)
    assert str(env_dir) in where.stdout, where.stdout + where.stderr  # the wheel, not this checkout
    done = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_trim.py"], project)
    assert done.returncode == 1, done.stdout + done.stderr
    head = re.search(
        r"AssertionError: projector (\S+) breaks orphanRes at request \d+ of this (\d)-event", done.stdout
    )
    assert head is not None, done.stdout
    assert head.group(1) == "test_my_trim:keep_what_fits" and int(head.group(2)) <= 5
