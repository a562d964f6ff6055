"""The documentation site: it builds with ``mkdocs build --strict``, its API reference covers every
public name, and its code blocks run.

* ``python`` blocks of the guide pages run in order, one namespace per page, in a scratch
  directory (with a copy of ``examples/``): their ``assert`` lines are the figures the page states.
* ``console`` blocks are ``$ turncheck …`` commands followed by what they print; each command runs
  through :func:`turncheck.cli.app.main` in that scratch directory and every line shown must
  appear, in order, in what it printed (a ``...`` line elides lines, a trailing ``...`` the end of
  a line, such as a timing).
* a ``toml`` block opening with ``# pyproject.toml`` is written to the scratch directory's
  ``pyproject.toml`` before the blocks after it run.
* ``bash``/``sh`` blocks are setup: ``pip install`` lines must name extras ``pyproject.toml``
  declares, ``turncheck`` lines must name real commands and options, anything else must be one of
  the few setup commands listed here (a new kind of line fails until it is checked).
* On every page, old and new, every ``turncheck`` command line in any code block names a real
  command and real options.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import typer

import turncheck
from turncheck.cli.app import app, main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RUN_PAGES = ("index.md", "getting-started.md", "concepts.md", "own-agent.md", "scale-out.md", "viewer.md",
             "races.md", "known-failures.md", "config.md")  # fmt: skip
SETUP_COMMANDS = ("python -m pytest", "mkdocs build --strict", "dask scheduler ", "dask worker ")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


GENERATED = re.compile(r"<!-- figures .*?<!-- /figures -->", re.S)  # checked by tests/test_doc_figures.py


def blocks(page: str) -> list[tuple[str, str]]:
    text = GENERATED.sub("", (DOCS / page).read_text(encoding="utf-8"))
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def all_pages() -> list[str]:
    return sorted(str(p.relative_to(DOCS)) for p in DOCS.glob("*.md"))


# -- the site builds ------------------------------------------------------------------------------


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    for module, why in (
        ("mkdocs", "mkdocs"),
        ("material", "mkdocs-material"),
        ("mkdocstrings", "mkdocstrings"),
    ):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{why} is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    api = (site / "api.html").read_text(encoding="utf-8")
    for name in turncheck.__all__:
        if name != "__version__":
            assert f'id="turncheck.{name}"' in api, f"API reference lacks {name}"
    cli = (site / "cli.html").read_text(encoding="utf-8")
    for name in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        assert f"turncheck {name}" in cli


def test_api_page_names_every_public_name() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: turncheck\.(\w+)$", text, re.M))
    assert documented | {"__version__"} == set(turncheck.__all__)
    assert "`turncheck.__version__`" in text


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p for p in all_pages() if f" {p}" not in nav] == []


# -- the code blocks run --------------------------------------------------------------------------


@pytest.fixture()
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run_console(block: str, capsys: pytest.CaptureFixture[str]) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"output before any command: {line!r}"
            commands[-1][1].append(line)
    for command, shown in commands:
        argv = shlex.split(command)
        assert argv[0] == "turncheck", command
        capsys.readouterr()
        main(argv[1:])
        printed = capsys.readouterr().out.splitlines()
        at = 0
        for want in (s for s in shown if s != "..."):
            while at < len(printed) and not _shows(printed[at], want):
                at += 1
            assert at < len(printed), f"{command!r} did not print {want!r}; it printed:\n" + "\n".join(
                printed
            )
            at += 1


def _shows(printed: str, want: str) -> bool:
    """A shown line equals the printed one; a trailing ``...`` elides what varies (timings)."""
    if want.endswith("..."):
        return printed.startswith(want[:-3].rstrip())
    return printed.rstrip() == want.rstrip()


def _pyproject_extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


def _check_setup(block: str) -> None:
    for raw in block.replace("\\\n", " ").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        for part in (p.strip() for p in line.split("&&")):
            if part.startswith("pip install"):
                extras = re.findall(r"\[([\w,\[\]-]+)\]", part)
                for group in extras:
                    for extra in group.split(","):
                        assert extra in _pyproject_extras() | {"distributed"}, f"no extra {extra!r}: {part}"
            elif part.startswith("turncheck "):
                _check_command_line(part)
            else:
                assert part.startswith(SETUP_COMMANDS), f"unchecked setup line: {part!r}"


@pytest.mark.parametrize("page", RUN_PAGES)
def test_code_blocks_run(page: str, scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"__name__": f"docs_{page.replace('-', '_').removesuffix('.md')}"}
    ran = 0
    for lang, code in blocks(page):
        if lang == "python":
            if "import distributed" in code and importlib.util.find_spec("distributed") is None:
                pytest.skip("optional extra dask[distributed] is not installed")
            exec(compile(code, f"{page} (python block)", "exec"), namespace)  # noqa: S102
        elif lang == "console":
            _run_console(code, capsys)
        elif lang in ("bash", "sh"):
            _check_setup(code)
        elif lang == "toml":  # a file the page's commands read, named on its first line
            name = code.splitlines()[0].removeprefix("# ").strip()
            assert name.endswith(".toml") and "/" not in name, f"{page}: a toml block starts '# NAME.toml'"
            (scratch / name).write_text(code, encoding="utf-8")
        elif lang == "yaml" and page == "config.md":
            pass  # the workflow and the pre-commit configuration: run by tests/test_ci_gate.py
        else:
            raise AssertionError(f"{page}: a {lang or 'plain'} block that nothing runs")
        ran += 1
    assert ran > 0


# -- every turncheck command line in the docs is a real command ---------------------------------


def _options_of(cmd: Any) -> set[str]:
    names = {"-h", "--help"}
    for p in cmd.params:
        names.update(getattr(p, "opts", ()))
        names.update(getattr(p, "secondary_opts", ()))
    return {n for n in names if n.startswith("-")}


def _check_command_line(line: str) -> None:
    words = shlex.split(line.split(" #", 1)[0])
    words = [w for w in words if not re.match(r"^[A-Z_]+=", w)]
    for stop in ("|", "&&", ";", ">", "2>"):
        if stop in words:
            words = words[: words.index(stop)]
    assert words[0] == "turncheck", line
    cmd: Any = typer.main.get_command(app)
    rest = words[1:]
    while rest and getattr(cmd, "commands", None) and not rest[0].startswith("-"):
        name = rest.pop(0)
        assert name in cmd.commands, f"no command {name!r} in: {line}"
        cmd = cmd.commands[name]
    known = _options_of(cmd)
    for word in rest:
        if word.startswith("-") and not re.match(r"^-\d", word):
            opt = word.split("=", 1)[0]
            assert opt in known, f"no option {opt} for {cmd.name}: {line}"


def _command_lines(page: str) -> list[str]:
    lines = []
    for _lang, code in blocks(page):
        for raw in code.replace("\\\n", " ").splitlines():
            text = raw.strip().removeprefix("$ ")
            text = re.sub(r"^([A-Z_]+=\S+\s+)+", "", text)
            if text.startswith("turncheck ") or text == "turncheck":
                lines.append(text)
    return lines


@pytest.mark.parametrize("page", all_pages())
def test_every_turncheck_command_in_the_docs_exists(page: str) -> None:
    for line in _command_lines(page):
        _check_command_line(line)


def test_the_console_runner_fails_on_a_line_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    _run_console(f"$ turncheck --version\nturncheck {turncheck.__version__}\n", capsys)
    with pytest.raises(AssertionError, match="did not print"):
        _run_console("$ turncheck --version\nturncheck 0.0.0-not-this\n", capsys)
