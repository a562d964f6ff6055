"""The documentation site: it builds with ``mkdocs build --strict``, its API reference covers every
public name, and its code blocks run as a user who installed turncheck runs them.

* The guide pages' ``python``, ``console``, ``json`` and ``toml`` blocks run through
  :mod:`doc_pages` (the one docs runner; its docstring gives the rules): in the fresh venv of the
  built wheel, one process per page — for a page whose install line names extras, in a fresh
  venv that holds them too. Pages come in two tiers, by what running them costs:
  :data:`RUN_PAGES`, whose whole run costs a few seconds of CPU, run in the default suite (the
  README's test command, held to its 6-minute budget); :data:`SLOW_PAGES`, whose commands are
  full-scale runs (minutes), need heavy extras (peers, frameworks, adk, notebook), a PostgreSQL
  server or the built JVM/Node bridges, are marked ``slow`` and run only with
  ``TURNCHECK_SCALE=full`` — ``.ci/run`` runs them after the main command. Every page is in one of
  them or is run by a test of its own (:data:`OWN_TEST`). A page of :data:`PG_PAGES` runs beside a
  throw-away PostgreSQL server, reached as its reader reaches theirs (``PGHOST``, port 5432); one
  of :data:`BRIDGE_PAGES` skips, naming why, until ``java``, ``node`` and the built bridges are
  there (``.ci/run`` builds them first).
* ``bash``/``sh`` blocks are setup: ``pip install`` lines must name extras ``pyproject.toml``
  declares, ``turncheck`` lines must name real commands and options, a bridge's build line must be
  the one CI runs (:data:`BUILD_LINES`), anything else must be one of the few setup commands listed
  here (a new kind of line fails until it is checked).
* On every page, old and new, every ``turncheck`` command line in any code block names a real
  command and real options.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import shlex
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import doc_pages
import pytest
import typer

import turncheck
from turncheck.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RUN_PAGES = ("index.md", "getting-started.md", "concepts.md", "scale-out.md", "viewer.md",
             "races.md", "known-failures.md", "config.md", "checking.md", "store.md", "history-format.md", "concurrency.md", "cli.md",
             "architecture.md")  # fmt: skip
# measured on 2 cores, one at a time: from 15 s (api.md) to 5 min (peers.md) each, 14 min in all
SLOW_PAGES = ("reports.md", "testbench.md", "performance.md", "api.md", "real-stores.md", "peers.md",
              "other-languages.md")  # fmt: skip
PG_PAGES = {
    "real-stores.md": None,
    "other-languages.md": 5432,
}  # beside a throw-away server, on that TCP port
BRIDGE_PAGES = (
    "peers.md",
    "other-languages.md",
)  # run the JVM and Node peers: skip, naming why, until the bridges are built
OWN_TEST = {
    "your-agent.md": "tests/test_your_agent_doc.py",
    "exec-protocol.md": "tests/test_exec_protocol.py",
}
BUILD_LINES = {
    "npm ci --prefix bridges/node": ".ci/setup-node.sh",
    "mvn -q -f bridges/java package": ".ci/setup-java-bridge.sh",
}
"""The bridges' build steps a page shows (other-languages.md), each the one CI runs before the tests."""
SETUP_COMMANDS = ("python -m pytest", "mkdocs build --strict", "dask scheduler ", "dask worker ")


def _text(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def blocks(page: str) -> list[tuple[str, str]]:
    return doc_pages.blocks(_text(page))


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
    shipped = [
        p.relative_to(site) for p in site.rglob("*") if p.suffix in (".py", ".pyc") or p.name == "__pycache__"
    ]
    assert shipped == [], "the site ships the docs folder's Python (docs/tools, the hooks, bytecode)"


def test_api_page_names_every_public_name() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: turncheck\.(\w+)$", text, re.M))
    assert documented | {"__version__"} == set(turncheck.__all__)
    assert "`turncheck.__version__`" in text


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p for p in all_pages() if f" {p}" not in nav] == []


# -- the code blocks run --------------------------------------------------------------------------


def _pyproject_extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


def _check_setup(page: str) -> Callable[[str, str], None]:
    """The blocks :mod:`doc_pages` leaves to this page: ``bash``/``sh`` setup lines, and the
    workflow and pre-commit ``yaml`` of config.md (run by tests/test_ci_gate.py)."""

    def check(lang: str, block: str) -> None:
        if lang == "yaml" and page == "config.md":
            return
        assert lang in ("bash", "sh"), f"{page}: a {lang or 'plain'} block that nothing runs"
        for part in doc_pages.setup_lines(block):
            if part.startswith("pip install"):
                unknown = doc_pages.install_line(part)[0] - _pyproject_extras()
                assert not unknown, f"no extra {sorted(unknown)}: {part}"
            elif part.startswith("turncheck "):
                _check_command_line(part)
            elif part in BUILD_LINES:
                script = (ROOT / BUILD_LINES[part]).read_text(encoding="utf-8").split()
                assert all(w in script for w in shlex.split(part)), (
                    f"{BUILD_LINES[part]} does not run {part!r}"
                )
            else:
                assert part.startswith(SETUP_COMMANDS), f"unchecked setup line: {part!r}"

    return check


def _run_page(page: str, folder: Path, wheel: Path, fresh: Path, with_extras: Callable[[frozenset[str]], Path],
              timeout: float = 900, env: dict[str, str] | None = None) -> None:  # fmt: skip
    """Run ``page`` in the fresh venv ``fresh``, or, when its install lines name extras, in the
    one ``with_extras`` makes for exactly those; a page whose blocks are all setup (index.md's
    developer line names every extra) has nothing to run, and no venv is made for it."""
    text = _text(page)
    steps = doc_pages.read(page, text, _check_setup(page))
    extras = frozenset(doc_pages.page_extras(text))
    bin_dir = (with_extras(extras) if extras else fresh) if steps else None
    doc_pages.check(
        page, steps, doc_pages.run(steps, doc_pages.scratch(folder), bin_dir, wheel, timeout, env)
    )


@pytest.mark.parametrize("page", RUN_PAGES)
def test_code_blocks_run_from_a_fresh_venv(
    page: str, tmp_path: Path, wheel_venv: Path, built_wheel: Path,
    venv_with_extras: Callable[[frozenset[str]], Path],
) -> None:  # fmt: skip
    """The page's blocks in one process of the fresh ``wheel_venv`` (the built wheel, no extras,
    no checkout on ``sys.path``): a command that works only from the checkout fails here. A page
    whose install line names extras (scale-out.md's ``.[dask]``) runs in a venv holding them."""
    _run_page(page, tmp_path, built_wheel, wheel_venv, venv_with_extras)


@contextlib.contextmanager
def _pg_host(port: int | None = None) -> Iterator[str]:
    """The socket folder of a throw-away PostgreSQL server (``sim/stress/pg_server.py``), also on
    ``127.0.0.1:port`` when given (other-languages.md's JDBC URL names PostgreSQL's default
    port); skips, with the reason, where none can be started or the port is taken. One server per
    test: an xdist worker's server never holds a port another's page names."""
    from turncheck.sim.stress.pg_server import throwaway_server, unavailable_reason

    if (reason := unavailable_reason()) is not None:
        pytest.skip(reason)
    if port is not None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                pytest.skip(f"port {port}, which the page names, is taken by a server the test did not start")
    with throwaway_server(port) as dsn:
        yield dsn.split("host=", 1)[1].split()[0]


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES)
def test_slow_pages_run_as_written(
    page: str, tmp_path: Path, wheel_venv: Path, built_wheel: Path,
    venv_with_extras: Callable[[frozenset[str]], Path],
) -> None:  # fmt: skip
    """The pages too costly for the default suite, run exactly as the fast ones are (the longest,
    peers.md's full-scale run, about five minutes on two cores). A page of :data:`PG_PAGES` names no server: it
    reaches the one libpq finds, as its reader's does, and the test starts one (on the TCP port
    the page names, if any) and sets ``PGHOST`` to its socket folder, as the page tells the
    reader to."""
    if page in BRIDGE_PAGES and (reason := _bridges_missing()) is not None:
        pytest.skip(f"{page} runs the JVM and Node peers: {reason}")
    with contextlib.ExitStack() as server:
        env = {"PGHOST": server.enter_context(_pg_host(PG_PAGES[page]))} if page in PG_PAGES else None
        _run_page(page, tmp_path, built_wheel, wheel_venv, venv_with_extras, timeout=3600, env=env)


def _bridges_missing() -> str | None:
    """Why some bridge peer cannot run here (``java``/``node`` absent, a bridge not built), or None."""
    from turncheck.models.peer import PEERS

    return next((r for peer in PEERS.values() if peer.bridge and (r := peer.missing())), None)


PG_SELF_TEST = """
```console
$ turncheck stress --store postgres --dsn 'user=postgres dbname=postgres' --writers 1 --seconds 0.5
```
"""


@pytest.mark.slow
def test_a_postgres_page_reaches_the_server_through_pghost(
    tmp_path: Path, built_wheel: Path, venv_with_extras: Callable[[frozenset[str]], Path]
) -> None:
    """With ``PGHOST`` naming the test's server the command runs; naming no server, it fails."""
    steps = doc_pages.read("pg.md", PG_SELF_TEST)
    bin_dir = venv_with_extras(frozenset(doc_pages.page_extras(_text("real-stores.md"))))
    with _pg_host() as served:
        ok = doc_pages.run(
            steps, doc_pages.scratch(tmp_path / "served"), bin_dir, built_wheel, env={"PGHOST": served}
        )
    assert doc_pages.check("pg.md", steps, ok) == 1
    nowhere = {"PGHOST": str(tmp_path / "no-server")}
    refused = doc_pages.run(
        steps, doc_pages.scratch(tmp_path / "unserved"), bin_dir, built_wheel, env=nowhere
    )
    with pytest.raises(AssertionError, match="exited 2"):
        doc_pages.check("pg.md", steps, refused)


def test_every_page_runs_somewhere() -> None:
    tiers = [*RUN_PAGES, *SLOW_PAGES, *OWN_TEST]
    assert sorted(tiers) == all_pages(), "a page in no tier, or in two"
    assert all((ROOT / test).exists() for test in OWN_TEST.values())


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


# -- the runner can fail --------------------------------------------------------------------------

SELF_TEST = f"""
```console
$ turncheck --version
turncheck {turncheck.__version__}
$ turncheck --version
turncheck 0.0.0-not-this
$ turncheck lint no-such-file.jsonl
$ COLUMNS=200 turncheck sweep --help
  scenario <str>  Scenario name (turncheck scenario --list).  [required]
$ COLUMNS=60 turncheck sweep --help
  scenario <str>  Scenario name (turncheck scenario --list).  [required]
```

```python
import docs.tools  # the repository's doc tooling: in the checkout, not in the wheel
```
"""


@pytest.fixture(scope="module")
def self_test(
    tmp_path_factory: pytest.TempPathFactory, wheel_venv: Path, built_wheel: Path
) -> tuple[list[doc_pages.Step], list[dict[str, Any]]]:
    steps = doc_pages.read("self-test.md", SELF_TEST)
    return steps, doc_pages.run(
        steps, doc_pages.scratch(tmp_path_factory.mktemp("self-test")), wheel_venv, built_wheel
    )


def test_the_runner_fails_on_a_line_not_printed(
    self_test: tuple[list[doc_pages.Step], list[dict[str, Any]]],
) -> None:
    steps, results = self_test
    assert doc_pages.check("self-test.md", steps[:1], results[:1]) == 1
    with pytest.raises(AssertionError, match="did not print 'turncheck 0.0.0-not-this'"):
        doc_pages.check("self-test.md", steps[1:2], results[1:2])
    with pytest.raises(AssertionError, match="no-such-file.jsonl exited 2"):  # shows nothing, yet fails
        doc_pages.check("self-test.md", steps[2:3], results[2:3])


def test_a_variable_before_a_command_is_in_its_environment(
    self_test: tuple[list[doc_pages.Step], list[dict[str, Any]]],
) -> None:
    """``COLUMNS=N turncheck …`` runs in a process that has it: the help wraps at N columns."""
    steps, results = self_test
    assert steps[3].run == {"turncheck": ["sweep", "--help"], "env": {"COLUMNS": "200"}}
    assert doc_pages.check("self-test.md", steps[3:4], results[3:4]) == 1
    with pytest.raises(AssertionError, match="did not print '  scenario <str>  Scenario name"):
        doc_pages.check("self-test.md", steps[4:5], results[4:5])


def test_a_block_that_works_only_from_the_checkout_fails_in_the_venv(
    self_test: tuple[list[doc_pages.Step], list[dict[str, Any]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same block runs in this process (the checkout is on ``sys.path``) and fails in the venv."""
    steps, results = self_test
    with pytest.raises(AssertionError, match="ModuleNotFoundError: No module named 'docs'"):
        doc_pages.check("self-test.md", steps[5:], results[5:])
    monkeypatch.chdir(doc_pages.scratch(tmp_path))
    assert doc_pages.run(steps[5:], tmp_path) == [{"error": None}]


def test_whole_output_is_every_line_but_those_elided() -> None:
    printed = ["head", "middle", "tail 1.2s"]
    assert doc_pages.shown_in(printed, ["head", "tail ..."], whole=False) is None
    assert doc_pages.shown_in(printed, ["head", "...", "tail ..."], whole=True) is None
    assert doc_pages.shown_in(printed, ["head", "mid..."], whole=True) is None  # a last '...' ends it
    assert (
        doc_pages.shown_in(printed, ["head", "tail ..."], whole=True) == "did not print 'tail ...' as line 2"
    )
    assert (
        doc_pages.shown_in(printed, ["head", "middle"], whole=True)
        == "printed more than is shown: 'tail 1.2s'"
    )
    assert doc_pages.shown_in(printed, ["middle", "head"], whole=False) == "did not print 'head'"


def test_an_ellipsis_inside_a_line_stands_for_the_text_printed_there() -> None:
    """``OK: … (... appends by 4 writers; ...)`` shows the words that matter and elides a count
    and a path; the words around each ``...`` must still be printed as shown."""
    line = "OK: 45 appends by 4 writers (see run/x.json)"
    assert doc_pages.shown_in([line], ["OK: ... appends by 4 writers (see ...)"], whole=True) is None
    assert doc_pages.shown_in([line], ["OK: ... appends by 3 writers (see ...)"], whole=True) is not None
    assert doc_pages.shown_in([line], ["OK: ... appends by 4 writers"], whole=True) is not None  # the rest unshown
    assert doc_pages.shown_in([line + "!"], ["OK: ... (see ...)"], whole=True) is not None  # must end on ')'


def test_an_excerpt_is_the_files_lines_in_the_order_shown() -> None:
    (code,) = [c for lang, c in blocks("checking.md") if c.startswith("# from examples/my_lock.py\n")]
    doc_pages.read("excerpt.md", f"```python\n{code}```\n")
    changed = code.replace("<= 1,", "<= 2,")
    assert changed != code
    with pytest.raises(AssertionError, match="not in examples/my_lock.py"):
        doc_pages.read("excerpt.md", f"```python\n{changed}```\n")
    java = '```java title="examples/exec/KeepLast.java"\n...\npublic final class KeepLast {\n```\n'
    doc_pages.read("excerpt.md", java)
    with pytest.raises(AssertionError, match="not in examples/exec/KeepLast.java"):
        doc_pages.read("excerpt.md", java.replace("final ", ""))
    swapped = "# from examples/my_lock.py\nclass FlagLock(ProtocolModel[State, Action]):\n...\nIDLE, SAW_CLEAR, COMPACTING = 0, 1, 2\n"
    with pytest.raises(AssertionError, match="not in examples/my_lock.py"):
        doc_pages.read("excerpt.md", f"```python\n{swapped}```\n")


def test_a_json_block_is_the_file_it_names_field_by_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.json").write_text('{"format": "f/1", "steps": 4, "words": ["a"]}', encoding="utf-8")
    page = '```json title="t.json"\n{"format": "f/1", "steps": 4}\n```\n'
    steps = doc_pages.read("json.md", page)
    doc_pages.check("json.md", steps, doc_pages.run(steps, tmp_path))
    for shown, problem in (("4", "steps is 4, shown 5"), ('"f/1"', "format is 'f/1', shown 'f/2'")):
        wrong = doc_pages.read("json.md", page.replace(shown, shown.replace("4", "5").replace("1", "2"), 1))
        with pytest.raises(AssertionError, match=re.escape(problem)):
            doc_pages.check("json.md", wrong, doc_pages.run(wrong, tmp_path))
