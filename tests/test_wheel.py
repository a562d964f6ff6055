"""The built wheel, installed non-editable into a fresh venv, works next to anyone's code.

What an editable install hides: the wheel must carry every sub-package and data file under the
one import name ``turncheck``, and a user's project with its own ``models``, ``sim`` and
``reports`` packages on ``PYTHONPATH`` must not shadow any of it. This builds the wheel with pip,
installs it (its dependencies at the versions of constraints.txt) into a new venv without the
system's site-packages (the ``wheel_venv`` fixture of conftest.py), and runs the README's first
commands from such a project folder.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

USER_PROJECT = {
    "models/__init__.py": "raise ImportError('this is the user\\'s own models package')\n",
    "sim/__init__.py": "SIM = 'the user\\'s sim'\n",
    "reports/__init__.py": "REPORTS = 'the user\\'s reports'\n",
    "my_trim.py": (
        "from turncheck import window_from_start\n"
        "from turncheck.models.projector import fit_start\n\n"
        "def fn(history, budget, cost):\n"
        "    return window_from_start(history, budget, cost, fit_start(history, budget, cost), 'my_trim')\n"
    ),
}


def _run(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    for rel, text in USER_PROJECT.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_wheel_holds_one_top_level_package(wheel_venv: Path) -> None:
    site = next((wheel_venv.parent / "lib").glob("python*/site-packages"))
    ours = {
        p.name
        for p in site.iterdir()
        if p.name
        in ("models", "sim", "scenarios", "reports", "cli", "integrations", "bench", "benchmarks", "docs")
    }
    assert ours == set()
    package = site / "turncheck"
    for sub in ("models", "sim", "scenarios", "reports", "cli", "integrations"):
        omitted = [str(i.parent.relative_to(ROOT)) for i in (ROOT / sub).rglob("__init__.py")
                   if not (package / i.relative_to(ROOT)).is_file()]  # fmt: skip
        assert omitted == [], "packages pyproject.toml's [tool.setuptools] omits"
    tools = ("bench", "reports/doc_figures.py", "reports/hand_figures.py", "cli/reference.py")
    assert [t for t in tools if (package / t).exists()] == []  # the repository's tools stay there
    assert (package / "py.typed").is_file()
    assert (package / "scenarios" / "data" / "example.jsonl").is_file()


def test_readme_commands_run_next_to_a_users_own_packages(wheel_venv: Path, user_project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = f"{wheel_venv}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = "."
    turncheck = str(wheel_venv / "turncheck")
    version = _run([turncheck, "--version"], user_project, env)
    assert version.returncode == 0 and version.stdout.startswith("turncheck "), version.stderr
    helped = _run([str(wheel_venv / "python"), "-m", "turncheck", "--help"], user_project, env)
    assert helped.returncode == 0 and "Usage: turncheck" in helped.stdout, helped.stderr
    projected = _run([turncheck, "project", "--example", "--budget", "40", "--strategy", "my_trim:fn"],
                     user_project, env)  # fmt: skip
    assert projected.returncode == 0 and "my_trim" in projected.stdout, projected.stderr
    demo = _run([turncheck, "demo", "--scale", "tiny", "-o", "demo-out", "-q"], user_project, env)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert (user_project / "demo-out" / "report.html").is_file()
    usage = _run([turncheck, "project", "--example", "--budget", "abc"], user_project, env)
    assert usage.returncode == 2 and len(usage.stderr.splitlines()) == 1 and "Traceback" not in usage.stderr


def test_the_readme_projector_and_its_command_run_from_the_wheel_as_printed(
    wheel_venv: Path, tmp_path: Path
) -> None:
    """The README's ``my_trim.py``, saved as printed, and its ``PYTHONPATH=. turncheck project …``
    line, run word for word by the installed wheel on a log of the user's own (the wheel's example
    history as ``my.jsonl``): exit 0, the trimmer named in what it prints, and no window it sends
    orphans a result."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n# my_trim.py\n(.*?)```", readme, re.S)
    line = re.search(r"```bash\n(PYTHONPATH=\. turncheck project [^\n]*my_trim[^\n]*)\n```", readme)
    assert code and line, "the README's my_trim.py block and its command line"
    (tmp_path / "my_trim.py").write_text(code.group(1), encoding="utf-8")
    (tmp_path / "my.jsonl").write_bytes((ROOT / "scenarios" / "data" / "example.jsonl").read_bytes())
    assign, *argv = shlex.split(line.group(1))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env[assign.split("=")[0]] = assign.split("=", 1)[1]
    argv[0] = str(wheel_venv / argv[0])
    strategy = argv[argv.index("--strategy") + 1]
    assert strategy.startswith("messages:my_trim:"), strategy
    shown = _run(argv, tmp_path, env)
    assert shown.returncode == 0 and strategy in shown.stdout, shown.stdout + shown.stderr
    rows = _run([*argv, "--format", "json"], tmp_path, env)
    records = [json.loads(r) for r in rows.stdout.splitlines()]
    assert rows.returncode == 0 and records and all(r["orphanRes"] == 0 for r in records), rows.stderr


def test_the_checkout_root_and_the_installed_wheel_never_disagree(wheel_venv: Path, tmp_path: Path) -> None:
    """After a non-editable install, the README's commands run from the repository's own root,
    where the checkout's ``turncheck/`` folder comes first on ``sys.path`` (``python -m``, and
    ``PYTHONPATH=.``) and used to hide every sub-package: ``No module named 'turncheck.cli'``."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    python, turncheck = str(wheel_venv / "python"), str(wheel_venv / "turncheck")
    version = _run([python, "-m", "turncheck", "--version"], ROOT, env)
    assert version.returncode == 0 and version.stdout.startswith("turncheck "), version.stderr
    env["PYTHONPATH"] = "."
    for argv in ([turncheck, "--version"], [turncheck, "project", "--example", "--budget", "40"]):
        shown = _run(argv, ROOT, env)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    where = _run([python, "-c", "import turncheck.cli, turncheck.models as m; print(m.__file__)"], ROOT, env)
    assert where.returncode == 0 and where.stdout.strip() == str(ROOT / "models" / "__init__.py"), (
        where.stderr
    )


def _pytest_in(wheel_venv: Path) -> None:
    """pytest in the wheel's venv, as docs/your-agent.md's ``pip install . pytest`` gives (under the
    venv's lock: other workers run pages in it)."""
    import fcntl

    from conftest import _install

    with open(wheel_venv.parent.parent / "wheel-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (wheel_venv / "pytest").exists():
            _install(wheel_venv / "python", "pytest", wheel_venv.parent.parent)


def _page_command(page: str, pattern: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = re.search(pattern, text, re.M)
    assert found, f"{page}: no line matching {pattern!r}"
    return shlex.split(found.group(1))


def test_the_docs_commands_run_as_printed_from_the_checkout_root(wheel_venv: Path) -> None:
    """docs/your-agent.md's ``pytest … examples/your-agent/test_trim.py`` and the README's counterexample
    command, word for word from the real repository root, by the installed (non-editable) wheel:
    the checkout's ``turncheck/`` folder shadowed the installed package there, so the page's test
    stopped at ``No module named 'turncheck.models'`` and the README's line at ``No module named
    'turncheck.cli'``; the docs test ran them from a scratch folder, where nothing shadows."""
    _pytest_in(wheel_venv)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{wheel_venv}{os.pathsep}{env.get('PATH', '')}"
    argv = _page_command("docs/your-agent.md", r"^\$ (pytest [^\n]*examples/your-agent/test_trim\.py)$")
    python = str(wheel_venv / "python")
    for runner in ([str(wheel_venv / "pytest")], [python, "-m", "pytest"]):  # the page's line; python -m
        shown = _run([*runner, *argv[1:]], ROOT, env)
        printed = shown.stdout + shown.stderr
        assert "No module named" not in printed and shown.returncode == 1, printed
        assert "1 failed, 1 passed" in shown.stdout, printed  # as the page prints it
        assert "FAILED examples/your-agent/test_trim.py::test_keep_recent_never_orphans_a_result" in printed
    readme = _page_command("README.md", r"^\$ (turncheck check projector [^\n]*your-agent/trim\.py[^\n]*)$")
    for runner in ([str(wheel_venv / "turncheck")], [python, "-m", "turncheck"]):
        shown = _run([*runner, *readme[1:]], ROOT, env)
        assert shown.returncode == 1 and "FAIL: no-orphan-results is violated" in shown.stdout, shown.stderr
        assert "window sent: messages:examples/your-agent/trim.py:keep_recent sends seq 2..2" in shown.stdout
        replay = re.search(r"\((turncheck replay [^)]*)\)", shown.stdout)
        assert replay, shown.stdout  # the replay line runs as printed, from where it was printed
        again = _run([*runner, *shlex.split(replay.group(1))[1:]], ROOT, env)
        assert again.returncode == 1 and "still fails the same way" in again.stdout, again.stderr


REPOSITORY_FILES = ("examples/races/agents_compaction.py", "examples/stores/first_open.py")
"""What the case catalogue runs of the repository (models/corpus/races.py, stress_opens.py)."""


def _wheel_beside_the_environment(built_wheel: Path, home: Path) -> Path:
    """A fresh venv that sees this interpreter's site-packages (the Agents SDK, httpx …: what a
    race case loads), the wheel installed in it non-editable; its ``bin`` folder."""
    import sys

    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(home)], check=True, timeout=300
    )
    pip = [
        str(home / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        str(built_wheel),
    ]
    subprocess.run(pip, check=True, capture_output=True, timeout=600)
    return home / "bin"


def test_the_cases_that_run_repository_files_run_from_the_wheel(built_wheel: Path, tmp_path: Path) -> None:
    """``cases list`` names race tests of ``examples/races`` and a store of ``examples/stores``
    that shipped with the repository only: from an install those cases were skipped ("ships
    with the repository, not the wheel"). The wheel ships them as ``turncheck/examples/…``;
    installed non-editable, run from a folder outside the checkout, every case behaves as
    recorded — the race cases against the releases each side pins (the suite's cache of
    tests/test_race_libraries.py, linked into ``TURNCHECK_CACHE``) — and ``cases show`` names
    the shipped files, its first-open line running as printed (exit 1: the red store fails)."""
    import shlex

    from test_race_libraries import AFTER, BEFORE, OPENAI, agents_at

    bin_ = _wheel_beside_the_environment(built_wheel, tmp_path / "venv")
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages")) / "turncheck"
    for relative in REPOSITORY_FILES:
        assert (site / relative).read_bytes() == (ROOT / relative).read_bytes(), relative
    libraries = tmp_path / "cache" / "libraries"
    libraries.mkdir(parents=True)
    for release in (BEFORE, AFTER):
        (libraries / f"openai-agents-{release}-openai-{OPENAI}").symlink_to(agents_at(release))
    user = tmp_path / "project"
    user.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["TURNCHECK_CACHE"] = str(tmp_path / "cache")
    turncheck = str(bin_ / "turncheck")
    where = _run([str(bin_ / "python"), "-c", "import turncheck; print(turncheck.__file__)"], user, env)
    assert where.stdout.strip() == str(site / "__init__.py"), where.stdout + where.stderr
    ran = _run([turncheck, "cases", "run", "--format", "json", "-q"], user, env, timeout=1800)
    runs = {r["case"]: r for r in map(json.loads, ran.stdout.splitlines())}
    wanted = (
        "openai-agents-compaction-race",
        "openai-agents-compaction-lost-turn",
        "sqlite-first-open-contention",
    )
    assert {name: runs[name]["status"] for name in wanted} == dict.fromkeys(wanted, "as recorded"), ran.stdout
    assert ran.returncode == 0 and all(r["status"] != "differs" for r in runs.values()), (
        ran.stdout + ran.stderr
    )
    shown = {}
    for name, relative in (("openai-agents-compaction-race", REPOSITORY_FILES[0]),
                           ("sqlite-first-open-contention", REPOSITORY_FILES[1])):  # fmt: skip
        done = _run([turncheck, "cases", "show", name], user, env)
        shown[name] = dict(line.split(":", 1) for line in done.stdout.splitlines())
        for side in ("red", "green"):
            files = [a for a in shlex.split(shown[name][side]) if a.endswith(".py") or ".py:" in a]
            assert [a.startswith(f"{site / relative}:") for a in files] == [True], shown[name][side]
    red = shlex.split(shown["sqlite-first-open-contention"]["red"])
    printed = _run([str(bin_ / red[0]), *red[1:]], user, env)
    assert printed.returncode == 1 and "FAIL: a concurrent first open failed" in printed.stdout, (
        printed.stderr
    )
