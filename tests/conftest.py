"""Fixtures every test module may use: the command line run in-process, and a real browser.

No ``sys.path`` edits: the package is installed (``pip install -e .``), so tests import
``turncheck.*`` like any user, and no test module imports another; what two of them share is a
module of tests/ that is not a test (``doc_pages``, the docs runner, and ``doc_driver``, its half
that runs in the fresh venv).

Bytecode is cached (``PYTHONDONTWRITEBYTECODE`` dropped from ``os.environ`` and
``sys.dont_write_bytecode`` off): the suite starts hundreds of Python processes — fresh venvs,
writers, drivers — and each compiled every module it imported from source again when an
environment forbids the cache (about 1.7 s of CPU per fresh-venv process, 0.4 s per checkout
process). Only ``__pycache__`` folders, which git ignores and the wheel copy leaves out, are written.

Entry-point plugins are switched off for the whole suite (``TURNCHECK_PLUGINS=0``, set in
``os.environ`` before anything imports turncheck's command line, so every subprocess a test starts
inherits it): an extension installed beside turncheck cannot change the suite's results. A test
that exercises plugins turns them on in the environment it gives its subprocess.
"""

from __future__ import annotations

import fcntl
import gc
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

if TYPE_CHECKING:
    from docs.tools.doc_figures import Printed

os.environ["TURNCHECK_PLUGINS"] = "0"
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
ROOT = Path(__file__).resolve().parent.parent


HEAVIEST_FIRST: tuple[str, ...] = (
    "tests/test_docs.py",
    "tests/test_scenario_peers.py",
    "tests/test_race_libraries.py",
    "tests/test_check_cli.py",
    "tests/test_stress_adk.py",
    "tests/test_run_bounds.py",
    "tests/test_doc_figures.py",
    "tests/test_bench_compare.py",
    "tests/test_cost_trigger.py",
    "tests/test_testing.py",
    "tests/test_extension.py",
    "tests/test_race_durations.py",
    "tests/test_cli_interrupt.py",
    "tests/test_demo.py",
    "tests/test_wheel.py",
    "tests/test_your_agent_doc.py",
    "tests/test_user_project_wheel.py",
    "tests/test_hostile_outputs.py",
    "tests/test_user_code.py",
    "tests/test_package.py",
)
"""The test modules whose run costs the most CPU, heaviest first: the suite starts with them.

Measured with a per-test CPU probe (the worker's and its reaped children's ``getrusage``) over
the README's command, beside other work (issue 58 item 9): every module of at least 18 CPU-s,
with the two other users of the built wheel beside ``test_wheel.py`` (one worker then makes and
reuses the wheel's venv while the other runs on, instead of both waiting on its lock). Under
``worksteal`` (:func:`pytest_cmdline_main`) the first worker starts at the head of the
collection and the second at its middle, and an idle worker steals the tail of the other's
queue: the alphabet had put the wheel and fresh-venv modules last, and the measured run ended
with both workers in them; first, the run ends on light tests, whichever worker steals them. A
module keeps its tests together (its module fixtures are made once per worker), and every name
here must be a test module of tests/ (tests/test_suite_order.py)."""


def unknown_test_modules(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` that are not a test module of tests/ (``tests/test_*.py``, a file)."""
    return [n for n in names if not (re.fullmatch(r"tests/test_\w+\.py", n) and (ROOT / n).is_file())]


def heaviest_first(items: list[pytest.Item]) -> None:
    """Move the modules of :data:`HEAVIEST_FIRST` to the head of ``items``, in that order; every
    other test keeps its place relative to the rest (a stable sort: the order stays the same in
    every xdist worker, as xdist requires)."""
    rank = {module: i for i, module in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n`` without ``--dist`` schedules by work stealing (xdist's ``worksteal``): a worker that
    runs out of tests takes half of the other's queue, from its tail, so a run does not end with
    one worker waiting on the other's last chunk. Set here, before xdist's own hook picks
    ``load``, not in ``addopts``: a ``--dist`` there is refused by a pytest without xdist (a
    user's, reading this pyproject.toml). A ``--dist`` given on the command line is kept."""
    option = config.option
    if getattr(option, "dist", None) == "no" and getattr(option, "numprocesses", None):
        option.dist = "worksteal"


def pytest_configure(config: pytest.Config) -> None:
    """The scheduling the controller ended with, for its workers to read (they inherit its
    environment; xdist resets their own ``dist`` option): tests/test_suite_order.py checks it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ["TURNCHECK_SUITE_DIST"] = str(getattr(config.option, "dist", "no"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The heaviest modules first (:func:`heaviest_first`); full-scale runs are marked slow:
    skipped unless TURNCHECK_SCALE=full (benchmarks, not CI)."""
    heaviest_first(items)
    if os.environ.get("TURNCHECK_SCALE") == "full":
        return
    skip = pytest.mark.skip(reason="full-scale run: set TURNCHECK_SCALE=full")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Collect the run's garbage once, then freeze what is left, before pytest's own end-of-run
    cleanup collects five times over to surface late unraisable exceptions. A worker that ran the
    peers, framework and store tests holds 1.1–1.4 million objects: the five collections took 5.0
    and 6.4 s beside two busy processes, past the 5 s execnet gives a finished xdist worker before
    it sends the worker a SIGINT — which landed in Hypothesis's gc callback and was printed as a
    ``PytestUnraisableExceptionWarning`` after the run. The one collection still finalizes all
    the garbage there is; the five then scan only what its finalizers leave."""
    gc.collect()
    gc.freeze()


# -- the built wheel -----------------------------------------------------------------------------


def _shared_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder every xdist worker sees (each worker's own is one below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _has_build_backend() -> bool:
    """Whether this interpreter holds what pyproject.toml's ``[build-system]`` requires (each a
    ``name>=version``; any other form counts as missing, and the build is isolated)."""
    from importlib.metadata import PackageNotFoundError, version

    def numbers(text: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", text)[:3])

    needed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    try:
        found = [re.fullmatch(r"([\w.-]+)>=([\d.]+)", r) for r in needed]
        return all(m is not None and numbers(version(m[1])) >= numbers(m[2]) for m in found)
    except PackageNotFoundError:
        return False


@pytest.fixture(scope="session")
def made_once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], None]], Path]:
    """``made_once(name, make)``: the folder ``name`` in the run's temporary folder every xdist
    worker sees, filled by ``make(folder)`` once per test run: the first worker to ask makes it
    under a lock, the others wait and read it (what a module fixture made in each worker, made
    once). A folder ``make`` did not finish (it raised) is made again by the next to ask."""

    def made(name: str, make: Callable[[Path], None]) -> Path:
        shared = _shared_temp(tmp_path_factory)
        folder = shared / name
        with open(shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (shared / f"{name}.made").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                (shared / f"{name}.made").touch()
        return folder

    return made


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's wheel, built once per test run from a copy of the checkout (its ``build/``
    folder would leak stale modules into the wheel) and shared by every xdist worker: the first
    worker builds under a lock, the others wait and take its file."""
    shared = _shared_temp(tmp_path_factory)
    dist = shared / "wheel-dist"
    with open(shared / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not list(dist.glob("turncheck-*.whl")):
            source = shared / "wheel-source"
            junk = shutil.ignore_patterns(".git", ".hypothesis", ".turncheck", "*_cache", "__pycache__", "build",
                                          "*.egg-info", ".benchmarks", "node_modules", "target")  # fmt: skip
            shutil.rmtree(source, ignore_errors=True)
            shutil.copytree(ROOT, source, ignore=junk)
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("PYTEST", "PYTHONPATH", "VIRTUAL_ENV"))
            }
            argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)]
            if _has_build_backend():  # a third of the time of an isolated build, the same wheel
                argv.append("--no-build-isolation")
            built = subprocess.run(argv, cwd=shared, env=env, capture_output=True, text=True, timeout=600)
            if built.returncode != 0:
                pytest.skip(
                    f"cannot build the wheel here (pip wheel needs setuptools>=77): {built.stderr[-300:]}"
                )
    (wheel,) = dist.glob("turncheck-*.whl")
    return wheel


def _install(python: Path, wanted: str, cwd: Path) -> None:
    """Install ``wanted`` into ``python``'s venv at the pins of constraints.txt, with uv (the test
    extra's): the same packages at the same versions as ``pip install``, in a second of CPU where
    pip's resolving and unpacking took fifteen. Skips when the package index cannot be reached,
    fails on any other error. Nothing is byte-compiled: Python compiles (and caches) what a page
    imports when it imports it, as a user's first run does."""
    from uv import find_uv_bin

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    argv = [
        find_uv_bin(),
        "pip",
        "install",
        "-q",
        "--python",
        str(python),
        wanted,
        "-c",
        str(ROOT / "constraints.txt"),
    ]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        message = done.stderr[-2000:]
        if "Failed to fetch" in message:
            pytest.skip(f"the package index cannot be reached to install {wanted}: {message[-300:]}")
        pytest.fail(f"installing {wanted} failed: {message}")


def _fresh_venv(home: Path, wanted: str, cwd: Path) -> Path:
    """A new venv at ``home`` (no system site-packages, so no pytest-xdist or other extra) with
    pip in it, as ``python -m venv`` gives, for the pages' own ``pip install`` lines, and
    ``wanted`` installed; its ``bin`` folder. ``installed`` marks it complete."""
    from uv import find_uv_bin

    if not (home / "installed").exists():
        shutil.rmtree(home, ignore_errors=True)
        argv = [find_uv_bin(), "venv", "-q", "--seed", "--python", sys.executable, str(home)]
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=600)
        _install(home / "bin" / "python", wanted, cwd)
        (home / "installed").touch()
    return home / "bin"


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path) -> Path:
    """The ``bin`` folder of a fresh venv holding the built wheel and its dependencies at the pins
    of constraints.txt: what a user's ``pip install .`` gives. Made once per run under a lock and
    shared by every worker; skips when the package index cannot be reached."""
    shared = _shared_temp(tmp_path_factory)
    with open(shared / "wheel-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _fresh_venv(shared / "wheel-venv", str(built_wheel), shared)


@pytest.fixture(scope="session")
def venv_with_extras(wheel_venv: Path, built_wheel: Path) -> Callable[[frozenset[str]], Path]:
    """The ``bin`` folder of a fresh venv that holds what a user's ``pip install '.[EXTRA]'``
    gives, at the pins of constraints.txt. Made once per run for each set of extras and shared by
    every xdist worker (each under its own lock, beside ``wheel_venv``, whose lock the docs
    runner takes around a page's ``pip`` line)."""
    shared = wheel_venv.parent.parent

    def make(extras: frozenset[str]) -> Path:
        home = shared / f"wheel-venv-{'-'.join(sorted(extras))}"
        with open(home.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return _fresh_venv(home, f"{built_wheel}[{','.join(sorted(extras))}]", shared)

    return make


# -- the command line ----------------------------------------------------------------------------


class CliRun(NamedTuple):
    """What one in-process ``turncheck`` run gave: exit status, stdout, stderr."""

    code: int
    out: str
    err: str


TINY_DEMO = "turncheck demo --scale tiny -o demo --quiet"
"""docs/getting-started.md's first command: the suite's one run of the whole tiny demo."""


@pytest.fixture(scope="session")
def tiny_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Printed, Path, Path]:
    """:data:`TINY_DEMO` run once for the whole test run as the docs' figures run a page's commands
    (:func:`docs.tools.doc_figures.run_printed`: in process, in a folder of its own), by the first
    worker to ask, under a lock; the others read what it left: what it printed, its ``demo/``
    folder, and the folder it was started in. Tests only read them; tests/test_doc_figures.py
    compares the print with the page's block instead of running the demo again."""
    import dataclasses
    import json

    from docs.tools.doc_figures import Printed, run_printed

    shared = _shared_temp(tmp_path_factory) / "tiny-demo"
    cwd, saved = shared / "cwd", shared / "printed.json"
    with open(_shared_temp(tmp_path_factory) / "tiny-demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            cwd.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(dataclasses.asdict(run_printed(TINY_DEMO, cwd))), encoding="utf-8")
    return Printed(**json.loads(saved.read_text(encoding="utf-8"))), cwd / "demo", cwd


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli("scenario", "--list")``: run ``turncheck.cli.app.main`` on the words given and
    return the exit status and what it printed (output captured before it is cleared)."""

    from turncheck.cli.app import main

    def run(*argv: str) -> CliRun:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return CliRun(code, out, err)

    return run


# -- a real browser (Debian's chromium, driven by Playwright) --------------------------------------
# Playwright's own browser download cannot work here, so the browser is the system one
# (``executable_path``); .ci/setup-debian.sh installs chromium and the README test command the
# browser extra. The fixture skips, with the reason, when either is missing. Every page is opened
# from file:// with the network blocked, and every console error or page error is collected so a
# test can assert there were none.

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip


@dataclass
class Opened:
    """A page loaded from a file, and what it reported on the console."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install '.[browser]')"
    )
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium browser: apt-get install chromium (CI: .ci/setup-debian.sh)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where page tests save their screenshots: under ``tmp_path``, so a run leaves the checkout
    as it found it (a re-rendered PNG differs in bytes every time); with ``TURNCHECK_SHOTS=1``,
    docs/assets/screenshots, to refresh the pictures the docs show. The folder exists."""
    folder = (
        ROOT / "docs" / "assets" / "screenshots"
        if os.environ.get("TURNCHECK_SHOTS") == "1"
        else tmp_path / "screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def open_page(browser: Any) -> Callable[..., Opened]:
    """``open_page(path)``: load ``path`` from file://, recording console errors and any request
    that is not file:// or data:."""

    def open_file(path: Path, width: int = 1280, height: int = 900) -> Opened:
        page = browser.new_page(viewport={"width": width, "height": height})
        opened = Opened(page)
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on(
            "request",
            lambda r: None if r.url.startswith(("file:", "data:")) else opened.requests.append(r.url),
        )
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        return opened

    return open_file


_LIMITED_DRIVER = """
import faulthandler, io, contextlib, json, sys, time
from turncheck.cli.app import main
for args in json.loads(sys.argv[1]):
    err = io.StringIO()
    faulthandler.dump_traceback_later(10, exit=True)  # a run past 10 s ends the child, named
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(args)
    faulthandler.cancel_dump_traceback_later()
    print("@answer " + json.dumps([code, time.perf_counter() - t, err.getvalue()]), flush=True)
"""


def _one_gib() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.fixture
def extra_or_skip() -> Callable[[], Any]:
    """``with extra_or_skip(): …``: a run refused for a missing optional dependency
    (:class:`~turncheck.models.tokenizer.MissingExtra`, which names the extra) skips with that
    reason; with the extra installed nothing is caught, so the test is as strict as before."""
    import contextlib

    from turncheck.models.tokenizer import MissingExtra

    @contextlib.contextmanager
    def guard() -> Iterator[None]:
        try:
            yield
        except MissingExtra as exc:
            pytest.skip(str(exc))

    return guard


@pytest.fixture
def run_limited() -> Callable[..., list[tuple[int, float, str]]]:
    """``run_limited(runs, cwd=None)``: run each argument list through ``main`` in ONE child
    process under a 1 GiB address-space limit and a 10 s wall limit per run; per run its exit
    status, seconds and stderr. A run that kills the child (a signal, the 10 s limit) fails the
    test naming that run and the child's last words."""
    import json
    import subprocess
    import sys

    def run(runs: list[list[str]], cwd: Path | None = None) -> list[tuple[int, float, str]]:
        done = subprocess.run(
            [sys.executable, "-c", _LIMITED_DRIVER, json.dumps(runs)], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=10 * len(runs) + 20, preexec_fn=_one_gib, cwd=cwd,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},  # as a user's shell
        )  # fmt: skip
        answers = [
            tuple(json.loads(line[8:])) for line in done.stdout.splitlines() if line.startswith("@answer ")
        ]
        if done.returncode != 0 or len(answers) != len(runs):
            stuck = runs[len(answers)] if len(answers) < len(runs) else None
            raise AssertionError(f"child ended {done.returncode} at {stuck}: {done.stderr[-2000:]}")
        return answers  # type: ignore[return-value]

    return run


@pytest.fixture(scope="module")
def dask_scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """tests/test_executor_dask.py's real cluster (a scheduler, two worker processes), for any
    module; skipped, with the reason, without the optional extra ``dask[distributed]``."""
    pytest.importorskip("distributed", reason="optional extra dask[distributed] is not installed")
    from test_executor_dask import scheduler

    yield from scheduler.__wrapped__(tmp_path_factory)  # type: ignore[attr-defined]
