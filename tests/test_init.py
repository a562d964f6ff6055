"""``turncheck init``: a starter that ``python -m pytest`` runs green, whose tests fail when the
trimmer or the store is broken, and that never overwrites anything (issue 55)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

STARTER = ("trim.py", "test_trim.py", "test_chat_store_race.py")

BUGGY_TRIM = '''
def trim(messages, budget):
    """Keep the newest 4 messages: a cut between a call and its result orphans the result."""
    return messages[-4:]
'''


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of ``folder`` and its bytes (a symlink: where it points)."""
    return {
        p.name: os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
        for p in sorted(folder.iterdir())
    }


def pytest_in(folder: Path) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``folder``, with this environment's python, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / ".git").mkdir()  # a repository's root: no pyproject.toml above it applies
    monkeypatch.chdir(folder)
    return folder


def test_init_writes_a_starter_that_pytest_runs_green(cli, here: Path) -> None:
    done = cli("init")
    assert done.code == 0 and done.err == ""
    assert sorted(p.name for p in here.iterdir()) == sorted(
        [*STARTER, "pyproject.toml", ".gitignore", ".git"]
    )
    assert (here / ".gitignore").read_text() == ".turncheck/\n"
    ran = pytest_in(here)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


def test_the_starter_tests_fail_on_a_buggy_trimmer_and_an_unlocked_store(cli, here: Path) -> None:
    assert cli("init").code == 0
    trim = here / "trim.py"
    trim.write_text(trim.read_text() + BUGGY_TRIM)  # the later def replaces the starter's
    store = here / "test_chat_store_race.py"
    locked = "        async with self._lock:  # the read and the write in one critical section\n"
    assert locked in store.read_text()
    store.write_text(store.read_text().replace(locked, "        if True:\n"))
    ran = pytest_in(here)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "2 failed" in ran.stdout
    assert "breaks orphanRes" in ran.stdout and "schedule" in ran.stdout


def test_the_starter_table_is_read_by_the_cli(cli, here: Path) -> None:
    assert cli("init").code == 0
    done = cli("project", "--example", "-q", "-s", "messages:trim.py:trim")
    assert done.code == 0 and "| requests |" in done.out  # per_request = true, from the table
    assert "OK: no request breaks orphanRes, overBudget" in done.out


def test_a_second_init_refuses_and_changes_nothing(cli, here: Path) -> None:
    assert cli("init").code == 0
    before = snapshot(here)
    done = cli("init")
    assert done.code == 2 and done.out == "" and done.err.count("\n") == 1
    assert (
        "trim.py, test_trim.py, test_chat_store_race.py exist" in done.err and "nothing written" in done.err
    )
    assert snapshot(here) == before


@pytest.mark.parametrize("name", STARTER)
def test_any_starter_file_that_exists_stops_every_write(cli, here: Path, name: str) -> None:
    (here / name).write_text("mine\n")
    before = snapshot(here)
    done = cli("init")
    assert done.code == 2 and done.err.count("\n") == 1 and f"{name} exists" in done.err
    assert snapshot(here) == before


def test_a_dangling_symlink_in_a_starter_files_place_is_refused(cli, here: Path) -> None:
    (here / "trim.py").symlink_to(here / "nowhere.py")
    before = snapshot(here)
    done = cli("init")
    assert done.code == 2 and "trim.py exists" in done.err and snapshot(here) == before


@pytest.mark.parametrize(
    "old",
    [
        b'[project]\nname = "mine"\n',
        b'[project]\nname = "mine"',  # no newline at the end
        b'[project]\r\nname = "mine"\r\n',
        b"[tool.black]\nline-length = 100\n",
        b"",
    ],
    ids=["plain", "no-final-newline", "crlf", "other-tool", "empty"],
)
def test_an_existing_pyproject_gets_the_table_appended(cli, here: Path, old: bytes) -> None:
    import tomllib

    (here / "pyproject.toml").write_bytes(old)
    assert cli("init").code == 0
    new = (here / "pyproject.toml").read_bytes()
    assert new.startswith(old) and new.count(b"[tool.turncheck]") == 1
    data = tomllib.loads(new.decode())
    assert data["tool"]["turncheck"]["per_request"] is True
    before = tomllib.loads(old.decode())
    assert {k: v for k, v in data.items() if k != "tool"} == {k: v for k, v in before.items() if k != "tool"}
    assert {k: v for k, v in data["tool"].items() if k != "turncheck"} == before.get("tool", {})


@pytest.mark.parametrize(
    ("old", "says"),
    [
        (b"tool = {black = {line-length = 100}}\n", "cannot be appended without rewriting"),
        (b'name = """unfinished\n', "not a TOML file"),
        (b"name = '\xff'\n", "not a TOML file"),
    ],
    ids=["inline-tool", "bad-toml", "bad-utf8"],
)
def test_a_pyproject_init_cannot_append_to_is_refused(cli, here: Path, old: bytes, says: str) -> None:
    (here / "pyproject.toml").write_bytes(old)
    before = snapshot(here)
    done = cli("init")
    assert done.code == 2 and done.out == "" and done.err.count("\n") == 1, done
    assert says in done.err
    assert snapshot(here) == before


@pytest.mark.parametrize(
    "old",
    [b"[tool.turncheck]\nbudget = 7\n", b'[project]\nname = "x"\n\n[tool]\nturncheck = {budget = 7}\n'],
    ids=["table", "dotted"],
)
def test_a_pyproject_with_its_own_table_is_left_as_it_is(cli, here: Path, old: bytes) -> None:
    """The project's [tool.turncheck] is its own: init writes the starter beside it, appends no
    second table (which TOML refuses) and says so; pytest runs green there."""
    (here / "pyproject.toml").write_bytes(old)
    done = cli("init")
    assert done.code == 0 and done.err == "", done
    assert "left as they were: pyproject.toml (its [tool.turncheck] table)" in done.out
    assert (here / "pyproject.toml").read_bytes() == old
    assert all((here / name).is_file() for name in STARTER)
    ran = pytest_in(here)
    assert ran.returncode == 0 and "2 passed" in ran.stdout, ran.stdout + ran.stderr
    before = snapshot(here)
    again = cli("init")
    assert again.code == 2 and snapshot(here) == before


def test_a_symlinked_pyproject_is_refused(cli, here: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.toml"
    target.write_text('[project]\nname = "x"\n')
    (here / "pyproject.toml").symlink_to(target)
    before = snapshot(here)
    done = cli("init")
    assert done.code == 2 and "symlink" in done.err and snapshot(here) == before
    assert target.read_text() == '[project]\nname = "x"\n'


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"build/\n", b"build/\n.turncheck/\n"),
        (b"build/", b"build/\n.turncheck/\n"),
        (b"build/\n.turncheck/\n", None),
        (b"/.turncheck\n", None),
    ],
    ids=["append", "no-final-newline", "there", "rooted"],
)
def test_gitignore_gets_the_line_once(cli, here: Path, old: bytes, new: bytes | None) -> None:
    (here / ".gitignore").write_bytes(old)
    assert cli("init").code == 0
    assert (here / ".gitignore").read_bytes() == (old if new is None else new)
