"""Docs pages run as written: the one runner of tests/test_docs.py, tests/test_your_agent_doc.py
and tests/test_exec_protocol.py.

A page is read into steps, the steps run by :mod:`doc_driver` — in a fresh venv holding the built
wheel (``wheel_venv``), one process per page, in a scratch folder holding a copy of the
repository's ``examples/``, ``benchmarks/`` (``turncheck bench`` runs from a checkout),
``pyproject.toml`` and a link to its ``bridges/`` (the repository root, as far as a page uses it) —
and what each command printed is checked against what the page shows. Which pages run where is
tests/test_docs.py's to say: the default suite runs the pages whose whole run costs a few seconds
(``RUN_PAGES``), the slow tier (``SLOW_PAGES``, marked ``slow``, run by ``.ci/run`` after the
README's test command) those whose commands take minutes, heavy extras, a PostgreSQL server or the
built bridges — by the same rules:

* ``console`` blocks are ``$ command`` lines, each followed by what it prints: every shown line
  appears, in order, in what it printed (a ``...`` line elides lines, a trailing ``...`` the end of
  a line, such as a timing). A page in :data:`WHOLE` shows what each command prints, whole: no
  line but those shown or elided, a last shown line ending in ``...`` eliding the lines after it.
* ``$ echo $?`` shows the exit status of the command before it; a command whose status the page
  does not show must exit 0 or 1 (1 is a finding; 2, a refused input, or 70, a crash, is a docs
  command that does not work, even one that shows no output).
* ``turncheck`` commands run through the installed package's ``main`` in the driver's process,
  which finds a checkout's bridges as an editable install does (``TURNCHECK_NODE_BRIDGE`` and
  ``TURNCHECK_JAVA_BRIDGE`` name the repository's ``bridges/`` unless already set); one preceded
  by ``NAME=VALUE`` words (``TURNCHECK_PLUGINS=0 turncheck list``) runs as a process of its own,
  ``python -m turncheck``, with those variables set: what a process reads once, at start, is then
  read as from the reader's shell; ``pip``/``pytest``/``python`` (venv only) run as the venv's
  own, ``java`` as the one on ``PATH``, and each line shown appears in what they printed, spacing
  and timings aside (pytest's layout is pytest's, and varies by version).
* ``python`` blocks run in order, one namespace per page: their ``assert`` lines are the figures
  the page states. A block whose first line is ``# PATH.py`` is that committed file, line for line
  after it, and is not run; one whose first line is ``# from PATH`` is an excerpt of that file:
  each run of lines between elision lines (``...`` alone, indented or not) is in it verbatim, in
  the order shown. On a page in :data:`EXCERPTS` every other block of the language named there
  (python, javascript) is a verbatim excerpt of the file named there.
* a block of another language (``javascript``, ``java``, ``json``…) titled ``title="DIR/NAME"``
  (a path from the repository's root, which the site shows above the block) is an excerpt of
  that committed file, by the rule above (the whole file when it elides nothing).
* a ``json`` block titled ``title="NAME"`` is a file an earlier step wrote: each field shown has
  the value shown in it (fields not shown are the reader's to skip).
* a ``jsonl`` block titled ``title="DIR/NAME.jsonl"`` is a file the page gives the reader to save:
  it is written there (in the scratch folder) for the blocks after it.
* a ``toml`` block opening with ``# NAME.toml`` is written to the scratch folder before the blocks
  after it run; a ``bash`` line ``pip install . PKG…`` installs what the venv lacks (``.`` and
  ``-e .`` are the wheel the venv already holds). Any other block kind is the caller's to check
  (``setup``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import doc_driver

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.S | re.M)
TITLE = re.compile(r'\btitle="([^"/]+)"')
SOURCE_TITLE = re.compile(r'\btitle="((?:[\w.-]+/)+[\w.-]+)"')  # a committed file, named from the root
FILE_TITLE = re.compile(r'\btitle="((?:[\w-]+/)*[\w.-]+\.jsonl)"')  # relative, inside the page's folder
GENERATED = re.compile(r"<!-- figures .*?<!-- /figures -->", re.S)  # checked by tests/test_doc_figures.py
WHOLE = {"your-agent.md", "exec-protocol.md"}
EXCERPTS = {("exec-protocol.md", "javascript"): "examples/exec/keep_last.mjs"}
TOOLS = ("pip", "pytest", "python", "java")
ENV_WORD = re.compile(r"[A-Z_][A-Z0-9_]*=.*")  # NAME=VALUE before a command
DRIVER = Path(doc_driver.__file__)


def blocks(text: str) -> list[tuple[str, str]]:
    return [(lang, code) for lang, _info, code in fenced(text)]


def fenced(text: str) -> list[tuple[str, str, str]]:
    """Each fenced block's language, the rest of its opening line (a ``title="…"``) and body."""
    return [(m.group(1), m.group(2), m.group(3)) for m in FENCE.finditer(GENERATED.sub("", text))]


@dataclass
class Step:
    """One thing a page runs, and what the page says it gives."""

    run: dict[str, Any]
    command: str = ""
    shown: list[str] = field(default_factory=list)
    status: int | None = None


def install_line(line: str) -> tuple[set[str], list[str]]:
    """The extras of turncheck and the other packages a ``pip install`` line names (``.``,
    ``-e .``, ``.[x,y]``, ``turncheck[x]`` are turncheck; ``-c FILE``/``-r FILE`` name files)."""
    words = shlex.split(line)[2:]
    files = {i + 1 for i, w in enumerate(words) if w in ("-c", "-r")}
    named = [w for i, w in enumerate(words) if not w.startswith("-") and i not in files]
    ours = [m for m in (re.match(r"^(?:\.|turncheck)(?:\[([\w,-]+)\])?$", w) for w in named) if m]
    extras = {e for m in ours if m.group(1) for e in m.group(1).split(",")}
    return extras, [w for w in named if not re.match(r"^(?:\.|turncheck)(?:\[|$)", w)]


def setup_lines(code: str) -> list[str]:
    """The commands of a ``bash`` block: continued lines joined, comments dropped, ``&&`` split."""
    lines = (raw.split("#", 1)[0] for raw in code.replace("\\\n", " ").splitlines())
    return [part.strip() for line in lines for part in line.split("&&") if part.strip()]


def install_lines(code: str) -> list[str]:
    return [line for line in setup_lines(code) if line.startswith("pip install")]


def page_extras(text: str) -> set[str]:
    """The extras a page's install lines name: a page that names none runs in the fresh venv."""
    return {e for lang, code in blocks(text) if lang in ("bash", "sh") for line in install_lines(code)
            for e in install_line(line)[0]}  # fmt: skip


def read(page: str, text: str, setup: Callable[[str, str], None] | None = None) -> list[Step]:
    """The steps of a page's blocks, in order; files it shows are checked here."""
    steps: list[Step] = []
    module = f"docs_{page.replace('-', '_').removesuffix('.md')}"
    for n, (lang, info, code) in enumerate(fenced(text)):
        first, _, rest = code.partition("\n")
        title = TITLE.search(info)
        if lang == "python" and first.startswith("# from "):
            excerpt(page, first.removeprefix("# from "), rest)
        elif lang == "python" and first.startswith("# ") and first.endswith(".py"):
            assert (ROOT / first[2:]).read_text(encoding="utf-8") == rest, (
                f"{page}: {first[2:]} is not as shown"
            )
        elif lang not in ("python", "jsonl") and (source := SOURCE_TITLE.search(info)):
            excerpt(page, source[1], code)
        elif (page, lang) in EXCERPTS:
            excerpted = EXCERPTS[page, lang]
            assert code in (ROOT / excerpted).read_text(encoding="utf-8"), (
                f"{page}: snippet is not in {excerpted}:\n{code}"
            )
        elif lang == "python":
            steps.append(Step({"python": code, "name": f"{page} (python block {n + 1})", "module": module}))
        elif lang == "json" and title:
            steps.append(Step({"json": title[1], "text": code, "name": f"{page} ({title[1]})"}))
        elif lang == "console":
            steps.extend(_console(page, code))
        elif lang == "jsonl" and (path := FILE_TITLE.search(info)):
            steps.append(Step({"write": path[1], "text": code}))
        elif lang == "toml":
            name = first.removeprefix("# ").strip()
            assert name.endswith(".toml") and "/" not in name, f"{page}: a toml block starts '# NAME.toml'"
            steps.append(Step({"write": name, "text": code}))
        else:
            if lang in ("bash", "sh"):
                for line in install_lines(code):
                    if install_line(line)[1]:
                        steps.append(Step({"tool": shlex.split(line)}, line))
            if setup is None:
                raise AssertionError(f"{page}: a {lang or 'plain'} block that nothing runs")
            setup(lang, code)
    return steps


def excerpt(page: str, source: str, code: str) -> None:
    """Assert each run of lines between elision lines of ``code`` is in ``source``, in order."""
    text, at = "\n" + (ROOT / source).read_text(encoding="utf-8"), 0
    runs = re.split(r"^[ \t]*\.\.\.[ \t]*\n", code, flags=re.M)
    for piece in (r.strip("\n") for r in runs):
        if piece:
            found = text.find(f"\n{piece}\n", at)
            assert found >= 0, (
                f"{page}: these lines are not in {source} (after the lines before them):\n{piece}"
            )
            at = found + len(piece) + 1


def _console(page: str, block: str) -> list[Step]:
    steps: list[Step] = []
    for line in block.splitlines():
        if line == "$ echo $?":
            assert steps and steps[-1].status is None, f"{page}: echo $? after no command"
            steps[-1].status = -1  # the next line is the status
        elif line.startswith("$ "):
            argv = shlex.split(line[2:], comments=True)
            env = dict(w.split("=", 1) for w in itertools.takewhile(ENV_WORD.fullmatch, argv))
            argv = argv[len(env) :]
            assert argv[0] in ("turncheck", *TOOLS), f"{page}: a command the runner cannot run: {line}"
            assert not env or argv[0] == "turncheck", f"{page}: variables only before turncheck: {line}"
            run: dict[str, Any] = {"turncheck": argv[1:]} if argv[0] == "turncheck" else {"tool": argv}
            if env:
                run["env"] = env
            steps.append(Step(run, line[2:]))
        else:
            assert steps, f"{page}: output before any command: {line!r}"
            if steps[-1].status == -1:
                steps[-1].status = int(line)
            else:
                steps[-1].shown.append(line)
    return steps


def scratch(folder: Path) -> Path:
    shutil.copytree(ROOT / "examples", folder / "examples")
    shutil.copytree(ROOT / "benchmarks", folder / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bridges").symlink_to(ROOT / "bridges")  # built in place (node_modules, target/): not copied
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    return folder


def run(
    steps: list[Step], folder: Path, venv: Path | None = None, wheel: Path | None = None,
    timeout: float = 900, env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """What each step gave: in ``venv`` (the ``bin`` folder of ``wheel_venv``, whose lock its
    pip steps take), a driver process in ``folder`` whose environment has ``env`` too (what a
    reader's shell would hold: ``PGHOST`` for a page that uses a PostgreSQL server); without, in
    this process (its cwd)."""
    module = next((s.run["module"] for s in steps if "module" in s.run), "docs_page")
    plain = [{k: v for k, v in s.run.items() if k != "module"} for s in steps]
    if venv is None or not steps:
        return doc_driver.run(plain, module)
    tools = {
        "python": str(venv / "python"),
        "wheel": str(wheel),
        "constraints": str(ROOT / "constraints.txt"),
        "lock": str(venv.parent.parent / "wheel-venv.lock"),
    }  # fmt: skip  (conftest.py's wheel_venv)
    job, answers = folder / ".doc-job.json", folder / ".doc-results.json"
    job.write_text(json.dumps({"steps": plain, "module": module, "venv": tools}), encoding="utf-8")
    own = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH", "VIRTUAL_ENV"))}
    own = {f"TURNCHECK_{b.upper()}_BRIDGE": str(ROOT / "bridges" / b) for b in ("node", "java")} | own
    done = subprocess.run([tools["python"], str(DRIVER), str(job), str(answers)], cwd=folder, env=own | (env or {}),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip
    assert done.returncode == 0 and answers.exists(), (
        f"the driver ended {done.returncode}: {done.stderr[-3000:]}"
    )
    results: list[dict[str, Any]] = json.loads(answers.read_text(encoding="utf-8"))
    return results


def check(page: str, steps: list[Step], results: list[dict[str, Any]]) -> int:
    """Assert every step gave what the page shows; how many commands ran."""
    commands = 0
    for step, got in zip(steps, results, strict=False):
        if "error" in got:
            assert got["error"] is None, f"{step.run['name']} raised:\n{got['error']}"
            continue
        commands += 1
        said = f"{page}: $ {step.command}"
        if step.status is not None:
            assert got["code"] == step.status, (
                f"{said} exited {got['code']}, the page shows {step.status}: {got['err'][-2000:]}"
            )
        else:
            assert got["code"] in (0, 1), f"{said} exited {got['code']}: {got['err'][-2000:]}"
        if "tool" in step.run:
            missing = [line for line in step.shown if _normal(line) not in _normal(got["out"])]
            assert not missing, f"{said}: missing {missing[0]!r}\n{got['out']}"
        else:
            problem = shown_in(got["out"].splitlines(), step.shown, whole=page in WHOLE)
            assert problem is None, f"{said} {problem}; it printed:\n{got['out']}{got['err'][-2000:]}"
    assert len(results) == len(steps), f"{page}: ran {len(results)} of {len(steps)} steps"
    return commands


def shown_in(printed: list[str], shown: list[str], whole: bool) -> str | None:
    """None when the lines shown are what was printed (module docstring), else what is wrong."""
    at, gap = 0, not whole
    for want in shown:
        if want == "...":
            gap = True
            continue
        while gap and at < len(printed) and not _shows(printed[at], want):
            at += 1
        if at >= len(printed) or not _shows(printed[at], want):
            return f"did not print {want!r}" + ("" if gap else f" as line {at + 1}")
        at, gap = at + 1, not whole
    if not gap and at < len(printed) and not (shown and shown[-1].endswith("...")):
        return f"printed more than is shown: {printed[at]!r}"
    return None


def _shows(printed: str, want: str) -> bool:
    """A shown line stands for the printed one; each ``...`` in it stands for any text (a count,
    a path), and a last one for the rest of the line."""
    if "..." not in want:
        return printed.rstrip() == want.rstrip()
    parts = want.rstrip().split("...")
    tail = "" if parts[-1] == "" else re.escape(parts[-1]) + r"\Z"
    pattern = ".*?".join(re.escape(p) for p in parts[:-1]) + ".*?" + tail
    if not tail:  # a last '...' ends the line: what stands before it is a prefix, spaces trimmed
        pattern = ".*?".join(re.escape(p) for p in [*parts[:-2], parts[-2].rstrip()]) + ".*"
    return re.match(pattern, printed.rstrip(), re.S) is not None


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r" in \d+\.\d+s", "", text)).strip()


def run_page(page: str, folder: Path, venv: Path | None = None, wheel: Path | None = None,
             setup: Callable[[str, str], None] | None = None, text: str | None = None) -> int:  # fmt: skip
    """Read, run and check ``page`` (``text`` stands for its file); how many commands ran."""
    steps = read(page, (DOCS / page).read_text(encoding="utf-8") if text is None else text, setup)
    return check(page, steps, run(steps, folder, venv, wheel))
