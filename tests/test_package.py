"""The package's shape: one import name, layers that point one way, modules that import alone.

- Every module of ``turncheck`` imports on its own in a fresh interpreter, which is what a Dask
  worker, a ``spawn`` process pool or a notebook's first cell does; an import cycle fails here.
- No module imports a higher layer: models ← sim ← scenarios ← reports ← integrations ← cli
  (found by walking every ``import`` statement, including those inside functions), nor the
  repository's own tools (``benchmarks``, ``docs.tools``), which the wheel does not ship.
- The core (``models``, ``sim``, ``scenarios``, ``reports``) never imports
  ``turncheck.integrations``, the code that knows another product: it reaches it only through
  its registries, which import their homes there by name (``cli`` and ``turncheck`` may import
  it).
- The public API names in ``turncheck.__all__`` resolve.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import turncheck

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"models": 0, "sim": 1, "scenarios": 2, "reports": 3, "integrations": 4, "cli": 5}
CORE = ("models", "sim", "scenarios", "reports")
REPOSITORY_ONLY = ("benchmarks", "docs")


def _modules() -> list[tuple[str, Path]]:
    found = []
    for folder in (*FOLDERS, "turncheck"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts) if parts[0] == "turncheck" else ".".join(["turncheck", *parts])
            found.append((name, path))
    return found


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "turncheck" or len(parts) < 2:
        return None
    return FOLDERS.get(parts[1])


# Imports each module in a forked child of an interpreter that has loaded only third-party
# libraries: for our modules every child is a fresh interpreter (an import cycle among them
# fails exactly as in a new process), at the cost of a fork instead of a start-up.
_FORKED_IMPORTS = r"""
import importlib, os, sys, traceback
import numpy, matplotlib, hypothesis, hypothesis.stateful, simpy, networkx, typer, rich.progress, msgspec
import matplotlib.figure, matplotlib.backends.backend_agg, matplotlib.backends.backend_svg
assert not [m for m in sys.modules if m == "turncheck" or m.startswith("turncheck.")]
failed = 0
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
        except BaseException:
            os.write(write, traceback.format_exc().strip().splitlines()[-1].encode())
            os._exit(1)
        os._exit(0)
    os.close(write)
    message = os.read(read, 4096).decode()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed += 1
        print(f"{name}: {message}")
sys.exit(1 if failed else 0)
"""


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    names = [name for name, _ in _modules()]
    assert len(names) > 80
    proc = subprocess.run(
        [sys.executable, "-c", _FORKED_IMPORTS, *names], capture_output=True, text=True, cwd="/", timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_cycle_would_be_caught(tmp_path: Path) -> None:
    """The check above can fail: two modules importing each other's names at the top."""
    (tmp_path / "cyc").mkdir()
    (tmp_path / "cyc" / "__init__.py").write_text("")
    (tmp_path / "cyc" / "a.py").write_text("from cyc.b import B\nA = 1\n")
    (tmp_path / "cyc" / "b.py").write_text("from cyc.a import A\nB = 1\n")
    proc = subprocess.run(
        [sys.executable, "-c", _FORKED_IMPORTS.replace('"turncheck"', '"cyc"'), "cyc.b"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1 and "cyc.b: ImportError" in proc.stdout


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for name, path in _modules():
        own = _layer(name)
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            for target in targets:
                layer = _layer(target)
                if target.split(".")[0] in REPOSITORY_ONLY:
                    wrong.append(f"{name} imports {target}: the repository's tools do not ship")
                elif target.split(".")[0] in FOLDERS:
                    wrong.append(f"{name} imports {target}: use turncheck.{target}")
                elif layer is not None and layer > own:
                    wrong.append(f"{name} (layer {own}) imports {target} (layer {layer})")
    assert wrong == []


def integration_imports(source: str) -> list[str]:
    """The modules of ``turncheck.integrations`` that ``source`` imports (anywhere in it)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                a.name for a in node.names if a.name.startswith(("turncheck.integrations", "integrations"))
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[:2] == ["turncheck", "integrations"] or node.module == "integrations":
                found.append(node.module)
            elif node.module == "turncheck" and any(a.name == "integrations" for a in node.names):
                found.append("turncheck.integrations")
    return found


def test_the_core_never_imports_the_integrations() -> None:
    wrong = [
        f"{name} imports {target}"
        for name, path in _modules()
        if (name.split(".") + [""])[1] in CORE
        for target in integration_imports(path.read_text(encoding="utf-8"))
    ]
    assert wrong == [], "register through a registry whose home is in turncheck.integrations instead"


def test_the_integration_import_check_can_fail() -> None:
    source = (
        "import turncheck.integrations.peers\n"
        "def f():\n    from turncheck import integrations\n"
        "    from turncheck.integrations.formats import otel\n"
        "import turncheck.models.peer\n"
    )
    assert integration_imports(source) == [
        "turncheck.integrations.peers", "turncheck.integrations", "turncheck.integrations.formats"
    ]  # fmt: skip
    assert integration_imports('HOME = "turncheck.integrations.peers"\n') == []


def test_sim_holds_only_engines() -> None:
    names = {p.stem for p in (ROOT / "sim").glob("*.py")}
    assert not {n for n in names if n.startswith(("cli", "bench", "demo"))}


@pytest.mark.parametrize("name", turncheck.__all__)
def test_public_api_resolves(name: str) -> None:
    assert getattr(turncheck, name) is not None


def test_python_dash_m_turncheck(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "turncheck", "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0 and proc.stdout == f"turncheck {turncheck.__version__}\n"


def test_no_module_needs_fcntl_to_import() -> None:
    """On a platform without fcntl (Windows) every command but the log's must still work, so
    fcntl is imported only where a lock is taken."""
    script = (
        "import sys; sys.modules['fcntl'] = None\n"
        "import turncheck.cli.app, turncheck.models.store, turncheck.scenarios\n"
        "from turncheck.models.store import TurnLog\n"
        "from turncheck.models.errors import TurncheckError\n"
        "import tempfile, pathlib\n"
        "d = pathlib.Path(tempfile.mkdtemp())\n"
        "try:\n"
        "    TurnLog.open(d / 'x.log', create=True)\n"
        "except TurncheckError as e:\n"
        "    assert 'POSIX file locks' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('opened a log without fcntl')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr


def test_each_declared_lower_bound_is_one_the_other_dependencies_accept() -> None:
    """A lower bound below what another declared dependency requires can never be installed
    (``rich>=13.7`` beside typer 0.29, which needs ``rich>=13.8``). Read from the installed
    dependencies' metadata: the check CI's lowest-versions job would otherwise make by failing."""
    declared = [
        Requirement(r)
        for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    ]
    lowest = {r.name: next(s.version for s in r.specifier if s.operator == ">=") for r in declared}
    refused = []
    for dep in declared:
        for text in metadata.requires(dep.name) or []:
            need = Requirement(text)
            if need.name in lowest and (need.marker is None or need.marker.evaluate({"extra": ""})):
                if not need.specifier.contains(lowest[need.name], prereleases=True):
                    refused.append(f"{need.name}>={lowest[need.name]} but {dep.name} needs {need}")
    assert not refused


def test_the_lowest_versions_ci_installs_are_the_declared_lower_bounds() -> None:
    """``.ci/lowest`` runs the suite on constraints-lowest.txt: that file must pin exactly the
    lower bound of every core dependency and of the test extra, so a raised or lowered bound is
    tested, not just declared."""
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [Requirement(r) for r in (*project["dependencies"], *project["optional-dependencies"]["test"])]
    bounds = {r.name: Version(next(s.version for s in r.specifier if s.operator == ">=")) for r in declared}
    pins = {}
    for line in (ROOT / "constraints-lowest.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.strip()] = Version(version.strip())
    assert pins == bounds
    assert "constraints-lowest.txt" in (ROOT / ".ci" / "lowest").read_text()


def _capped_inside_a_release_line(requirement: str) -> bool:
    """Whether ``requirement`` caps below a minor or patch release (``<0.30``, ``<3.2``, ``==``,
    ``~=``): anything but a ``<N`` at a major release."""
    from packaging.version import Version

    return any(
        s.operator in ("<=", "==", "~=", "===") or (s.operator == "<" and any(Version(s.version).release[1:]))
        for s in Requirement(requirement).specifier
    )


def test_core_upper_bounds_stop_at_the_next_major_release_not_a_minor_one() -> None:
    """Issue 55: ``typer>=0.29,<0.30`` allowed one minor release, so a user with a newer typer
    could not install turncheck beside it. The lower bounds are what .ci/lowest runs (the test
    above); an upper bound of a core or test dependency stops at the next major release (``<N``,
    and ``<1`` for a 0.x library)."""
    assert _capped_inside_a_release_line("typer>=0.29,<0.30")  # the rule refuses the old bound
    assert _capped_inside_a_release_line("msgspec>=0.19,<0.23") and _capped_inside_a_release_line("x==1.2")
    assert not _capped_inside_a_release_line("typer>=0.29,<1")  # and accepts a major one
    assert not _capped_inside_a_release_line("numpy>=1.26,<3.0")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = (*project["dependencies"], *project["optional-dependencies"]["test"])
    assert [r for r in declared if _capped_inside_a_release_line(r)] == []
