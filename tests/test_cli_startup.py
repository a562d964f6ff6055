"""``turncheck --help``, ``turncheck COMMAND --help`` and a completion TAB import no engine.

A command imports numpy, networkx, Hypothesis, matplotlib or SimPy when it runs, never when the
command line starts: every ``--help`` and every TAB would otherwise pay for them (0.7 s of CPU
before issue 25). Each case runs the real entry point, ``python -m turncheck``, in a fresh
interpreter under ``-X importtime``, which names on stderr every module the run imported.
``benchmarks/cli_startup.py`` measures what that costs against ``import typer``.
"""

from __future__ import annotations

import importlib
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
PROBE = ["check", "keys", "--engine", "hypothesis", "--max-examples", "1", "--steps", "1", "-q"]
"""A command that runs Hypothesis, so it does import it (the keys model's goal is not reached in
one one-step run: inconclusive, exit 3): the probe's control."""
HELP_RUNS = """
import contextlib, io, json, sys
seen = set(sys.modules)
heavy, runs = set(json.loads(sys.argv[1])), []
for argv in json.loads(sys.argv[2]):
    sys.argv = ["turncheck", *argv]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from turncheck.__main__ import run
        try:
            status = run()
        except SystemExit as exit:
            status = exit.code
    new = set(sys.modules) - seen
    seen |= new
    runs.append([status, sorted({m.split(".")[0] for m in new} & heavy)])
print(json.dumps(runs))
"""
"""Every ``--help`` through the real entry point (``python -m turncheck``'s ``run``), one after
another in one fresh interpreter, each charged with the modules it added to ``sys.modules``. An
engine, once imported, stays: it is charged to the first command that imports it, whose test
fails. One interpreter rather than one for each: 22 start-ups cost 11 s of the suite's CPU."""


@pytest.fixture(scope="module")
def help_imports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, list[str]]]:
    """``COMMAND --help`` → (exit status, the engines it imported), and the same for :data:`PROBE`."""
    cwd = tmp_path_factory.mktemp("help")
    cases = {command: [*command.split(), "--help"] for command in ["", *COMMANDS]}
    cases[" ".join(PROBE)] = [*PROBE, "--database", str(cwd / "db")]
    argvs = json.dumps(list(cases.values()))
    proc = subprocess.run([sys.executable, "-c", HELP_RUNS, json.dumps(HEAVY), argvs],
                          capture_output=True, text=True, cwd=cwd)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {
        case: (status, heavy) for case, (status, heavy) in zip(cases, json.loads(proc.stdout), strict=True)
    }


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_imports_no_engine(command: str, help_imports: dict[str, tuple[int, list[str]]]) -> None:
    status, heavy = help_imports[command]
    assert status == 0 and not heavy, f"turncheck {command} --help: exit {status}, imported {heavy}"


def test_the_help_probe_sees_an_engine_a_command_imports(
    help_imports: dict[str, tuple[int, list[str]]],
) -> None:
    """The one-interpreter probe can fail: run after every ``--help``, :data:`PROBE` is charged
    with Hypothesis."""
    status, heavy = help_imports[" ".join(PROBE)]
    assert status == 3 and "hypothesis" in heavy


LOADED_AFTER = """
import contextlib, io, sys
from turncheck.cli.app import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(sorted(m for m in sys.modules if m.startswith("turncheck.integrations.vendors")))
"""


def test_help_does_not_load_the_model_catalogue(tmp_path: Path) -> None:
    """The vendor catalogue (integrations/vendors/) is the model registry's home, loaded on its first
    use: ``check --help`` names no model, so it loads none; ``list models`` loads them all."""

    def loaded(*argv: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", LOADED_AFTER, *argv], capture_output=True, text=True, cwd=tmp_path
        )
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout

    assert loaded("check", "--help") == "[]\n"
    assert "'turncheck.integrations.vendors.anthropic_background_compaction'" in loaded("list", "models")


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
    assert "hypothesis" in imported([*PROBE, "--database", str(tmp_path / "db")], tmp_path, status=3)


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


def test_check_with_the_explorer_imports_no_hypothesis_numpy_asyncio_or_matplotlib(tmp_path: Path) -> None:
    """Issue 58: a real ``check --engine explore`` imports Hypothesis only for the Hypothesis
    engine (its control is :data:`PROBE`, which does import it), asyncio only for the peers that
    call it, matplotlib never, and numpy only where a liveness pass runs: the model catalogue's
    clock and keys models keep their column forms (numpy's) in ``models/clock_columns.py`` and
    ``models/key_columns.py``."""
    argv = ["check", "agents-js-compaction", "--engine", "explore", "-q"]
    names = imported(argv, tmp_path, status=1)  # the buggy variant's counterexample: exit 1
    assert not names & {"hypothesis", "numpy", "asyncio", "matplotlib", "simpy", "networkx"}, names
    assert "hypothesis" in imported(PROBE, tmp_path, status=3)


def test_the_explorer_path_names_hypothesis_database_as_the_engine_does() -> None:
    from turncheck.sim import checking, stateful

    assert checking.DEFAULT_DATABASE == stateful.DEFAULT_DATABASE


def test_each_command_is_looked_up_in_the_module_that_registers_it() -> None:
    """A run of one command builds that command's module alone (``COMMAND_MODULES``): the table
    must name every command each module registers, and nothing else."""
    from turncheck.cli import app as cli_app

    found = {}
    for module in cli_app.MODULES:
        alone = typer.Typer()
        importlib.import_module(f"turncheck.cli.{module}").register(alone)
        names = [c.name or "" for c in alone.registered_commands] + [
            g.name or "" for g in alone.registered_groups
        ]
        found |= dict.fromkeys(names, module)
    assert found == cli_app.COMMAND_MODULES
    assert set(COMMANDS) >= set(found)  # the whole app lists each of them


def test_a_command_run_imports_no_other_command_s_module(tmp_path: Path) -> None:
    """``turncheck check …`` imports ``turncheck.cli.check`` and none of the other command
    modules (their imports and typer's work on their options are what a lone run saves); a
    mistyped command still gets the whole app, which suggests the right name."""
    script = (
        "import json, sys\n"
        "sys.argv = ['turncheck', *json.loads(sys.argv[1])]\n"
        "from turncheck.__main__ import run\n"
        "status = run()\n"
        "print(json.dumps([status, sorted(m for m in sys.modules if m.startswith('turncheck.cli.'))]))\n"
    )
    runs = {}
    for argv in (["check", "agents-js-compaction", "--engine", "explore", "-q"], ["chek"]):
        proc = subprocess.run([sys.executable, "-c", script, json.dumps(argv)], capture_output=True, text=True,
                              cwd=tmp_path)  # fmt: skip
        runs[argv[0]] = json.loads(proc.stdout.splitlines()[-1]), proc.stderr
    from turncheck.cli import app as cli_app

    commands = {f"turncheck.cli.{m}" for m in cli_app.MODULES}
    (status, modules), _ = runs["check"]
    assert status == 1 and set(modules) & commands == {"turncheck.cli.check"}
    (status, modules), stderr = runs["chek"]
    assert status == 2 and "Did you mean 'check'?" in stderr and set(modules) >= commands


NOT_FOR_A_SMALL_CHECK = ("msgspec", "multiprocessing", "concurrent", "ctypes", "pandas", "sqlite3", "asyncio", "logging")
"""Top-level modules a 20-state ``check --engine explore`` has no use for, beyond :data:`HEAVY`:
the durable log's codec (msgspec, pulled in by the projector and the built-in models), the
process pool (multiprocessing, concurrent.futures, ctypes for the workers' parent-death
signal), pandas and the stores, and logging without ``-v`` (tests/test_cli_verbose.py holds
that ``-v`` still logs). Each cost the command's start-up CPU (issue 58 item 7)."""
RUN_AND_LIST_MODULES = """
import contextlib, io, json, sys
from turncheck.cli.app import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
print(json.dumps([status, sorted(sys.modules)]))
"""
BUILD_EACH = """
import json, sys
from turncheck.models.catalog import BUILT_INS, MODELS, build_model
homes = {*BUILT_INS.values()}
def models():
    return {m for m in sys.modules if m in homes or (m.startswith("turncheck.integrations.vendors.")
                                                     and not m.rsplit(".", 1)[1].startswith("_"))}
added = []
for name in json.loads(sys.argv[1]):
    before = models()
    build_model(name)
    added.append([name, sorted(models() - before)])
print(json.dumps([added, list(MODELS)]))
"""


def _model_modules(modules: list[str]) -> set[str]:
    from turncheck.models.catalog import BUILT_INS

    vendor = "turncheck.integrations.vendors."
    return {m for m in modules if m in BUILT_INS.values() or (m.startswith(vendor) and not m[len(vendor):].startswith("_"))}


def test_a_small_check_imports_its_own_model_and_no_codec_pool_or_other_model(tmp_path: Path) -> None:
    """Issue 58 item 7 (a 19-state ``check --engine explore`` within 3× ``import typer``): the
    run imports the one model it checks — not the other vendor models, not the built-in models
    (and through them the projector and msgspec) — and none of :data:`NOT_FOR_A_SMALL_CHECK`.
    Its control: ``list models`` does import every model, and the pool's modules are there once
    a sweep runs on two workers."""
    def run(*argv: str) -> tuple[int, list[str]]:
        proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *argv], capture_output=True, text=True,
                              cwd=tmp_path)  # fmt: skip
        assert proc.stdout, proc.stderr[-2000:]
        status, modules = json.loads(proc.stdout.splitlines()[-1])
        return status, modules

    status, modules = run("check", "agents-js-compaction", "--engine", "explore", "-q")
    assert status == 1  # the buggy variant's counterexample, saved as a trace
    tops = {m.split(".")[0] for m in modules}
    assert not tops & {*HEAVY, *NOT_FOR_A_SMALL_CHECK}, sorted(tops & {*HEAVY, *NOT_FOR_A_SMALL_CHECK})
    assert _model_modules(modules) == {"turncheck.integrations.vendors.agents_js_compaction"}
    assert "tomllib" not in tops  # no pyproject.toml above tmp_path: nothing to parse
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = 1\n", encoding="utf-8")
    status, modules = run("check", "agents-js-compaction", "--engine", "explore", "-q")
    assert status == 1 and "tomllib" in modules  # the control: a config file is parsed
    status, listed = run("list", "models")
    assert status == 0 and len(_model_modules(listed)) >= 15  # the control: listing imports them all
    from turncheck.sim.executor import LocalExecutor

    assert LocalExecutor(jobs=2).map(abs, [-1, -2]) == [1, 2] and "concurrent.futures" in sys.modules


def test_each_model_is_built_from_its_own_module_alone(tmp_path: Path) -> None:
    """Every catalogue model, built by name, imports its own module and no other model's
    (``models.catalog.BUILT_INS`` for the built-ins, the module named after the model in
    ``integrations/vendors/`` for the others: a vendor file named otherwise would import the whole
    catalogue). One fresh interpreter builds them in reverse listing order, and the catalogue still
    lists in its one order afterwards (registration order alone would list them reversed)."""
    from turncheck.models.catalog import MODELS

    order = list(MODELS)
    proc = subprocess.run([sys.executable, "-c", BUILD_EACH, json.dumps(order[::-1])], capture_output=True,
                          text=True, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    added, listed = json.loads(proc.stdout)
    assert [(name, modules) for name, modules in added] == [(n, [MODELS[n].__module__]) for n in order[::-1]]
    assert listed == order


def test_lint_from_a_format_imports_that_format_alone(tmp_path: Path) -> None:
    """``lint --from openai-chat`` imports the openai_chat format's module and none of the 18
    others (the formats' package imported them all: a third of the command's own start-up, the
    agents-sqlite format's sqlite3 among them); ``list formats``, the control, imports every one,
    and lists them in their one order whichever was imported first."""
    log = tmp_path / "requests.jsonl"
    log.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n', encoding="utf-8")
    package = "turncheck.integrations.formats."

    def formats(*argv: str) -> tuple[int, set[str]]:
        proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *argv], capture_output=True, text=True,
                              cwd=tmp_path)  # fmt: skip
        assert proc.stdout, proc.stderr[-2000:]
        status, modules = json.loads(proc.stdout.splitlines()[-1])
        return status, {m[len(package):] for m in modules if m.startswith(package)}

    status, loaded = formats("lint", "--from", "openai-chat", str(log), "-q")
    assert status == 0 and loaded == {"openai_chat"}, loaded
    from turncheck.models.importers import BUILT_IN_FORMATS, FORMATS

    status, loaded = formats("list", "formats")
    assert status == 0 and loaded >= set(BUILT_IN_FORMATS)
    assert list(FORMATS)[: len(BUILT_IN_FORMATS)] == [m.replace("_", "-") for m in BUILT_IN_FORMATS]


def test_project_of_the_example_imports_no_scenario_or_per_request_code(tmp_path: Path) -> None:
    """``project --example`` prints one table: it imports neither the scenarios' base (and the
    executor behind it: reports.tables took its types at import) nor the per-request checks
    (imported for ``--fail-on`` alone), nor any other command's engines; ``--fail-on``, the
    control, does import the per-request module."""
    def modules(*argv: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *argv], capture_output=True, text=True,
                              cwd=tmp_path)  # fmt: skip
        assert proc.stdout, proc.stderr[-2000:]
        status, names = json.loads(proc.stdout.splitlines()[-1])
        assert status == 0, proc.stderr[-2000:]
        return set(names)

    plain = modules("project", "--example", "-q")
    unneeded = {"turncheck.scenarios.base", "turncheck.sim.executor", "turncheck.models.per_request", "multiprocessing"}
    assert not plain & unneeded, sorted(plain & unneeded)
    assert "turncheck.models.per_request" in modules("project", "--example", "--fail-on", "orphanRes", "-q")
