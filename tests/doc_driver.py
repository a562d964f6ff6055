"""Runs one docs page's steps as a user would, and says what each printed: the other half of
:mod:`doc_pages`.

``python doc_driver.py JOB.json RESULTS.json`` is started by the test with a venv's own python
in a scratch folder, so everything a step touches comes from what that venv installed — never from
the checkout: the folder this file lives in is taken off ``sys.path`` and the scratch folder put in
its place, as ``python`` run in that folder has it. The steps, in page order:

* ``{"python": CODE, "name": …}``: the page's python block, one namespace per page; the first
  one that raises ends the run (what comes after it builds on it);
* ``{"turncheck": ARGV}``: :func:`turncheck.cli.app.main`, in this process (imports happen once
  per page), its stdout and stderr captured and its exit status kept; with ``"env"`` (variables
  the page sets for it), ``python -m turncheck`` in a process of its own with them set;
* ``{"tool": ARGV}``: ``pip``/``pytest`` as the venv's own modules, ``python`` as its
  interpreter, ``java`` as found on ``PATH``, a process each (``pip
  install`` with ``.`` standing for the built wheel, at the pins of constraints.txt, under the
  venv's lock: xdist workers share the venv);
* ``{"write": NAME, "text": …}``: a file the page shows (``# pyproject.toml``, a titled ``jsonl``
  block) the later steps read, written in the page's folder (``NAME`` may name a subfolder);
* ``{"json": NAME, "text": …}``: a file an earlier step wrote, each field the page shows as shown.

The runner's own tests import :func:`run` to run steps in the test process (a block that works
only from the checkout, a file a page shows): one runner either way. Only the standard library and turncheck
are imported here.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any


def run(steps: list[dict[str, Any]], module: str, venv: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Each step's result, in order: ``{"error"}`` for python and files (None when it ran),
    ``{"out", "err", "code"}`` for commands. The python blocks share one namespace named
    ``module``; ``venv`` (its python, the wheel, constraints.txt, its lock) runs the tools."""
    from turncheck.cli.app import main

    namespace: dict[str, Any] = {"__name__": module}
    results: list[dict[str, Any]] = []
    for step in steps:
        out, err = io.StringIO(), io.StringIO()
        if "python" in step:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    exec(compile(step["python"], step["name"], "exec"), namespace)  # noqa: S102
                except BaseException:  # noqa: BLE001 - a failing block is the result, named
                    results.append({"error": traceback.format_exc(), "out": out.getvalue()})
                    break
            results.append({"error": None})
        elif "env" in step:
            done = subprocess.run([sys.executable, "-m", "turncheck", *step["turncheck"]], capture_output=True,
                                  text=True, env={**os.environ, **step["env"]}, timeout=600)  # fmt: skip
            results.append({"out": done.stdout, "err": done.stderr, "code": done.returncode})
        elif "turncheck" in step:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(step["turncheck"])
            results.append({"out": out.getvalue(), "err": err.getvalue(), "code": code})
        elif "tool" in step:
            assert venv is not None, f"{step['tool'][0]} runs only in a venv"
            results.append(_tool(step["tool"], venv))
        elif "json" in step:
            results.append({"error": _fields_differ(step["json"], step["text"])})
        else:
            written = Path(step["write"])
            written.parent.mkdir(parents=True, exist_ok=True)
            written.write_text(step["text"], encoding="utf-8")
            results.append({"error": None})
    return results


def _fields_differ(name: str, shown_text: str) -> str | None:
    """None when every field the page shows is in the file ``name`` with the value shown."""
    try:
        shown, written = json.loads(shown_text), json.loads(Path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"{name}: {e}"
    wrong = next((k for k in shown if k not in written or written[k] != shown[k]), None)
    if wrong is None:
        return None
    return f"{name}: {wrong} is {written.get(wrong, '(absent)')!r}, shown {shown[wrong]!r}"


def _tool(argv: list[str], venv: dict[str, str]) -> dict[str, Any]:
    """pip changes the venv: alone; a pytest run reads it: beside others, never during a pip."""
    if argv[:2] == ["pip", "install"]:
        args = [venv["wheel"] if a == "." else a for a in argv[2:] if a != "-e"]
        argv = ["pip", "install", "-q", "-c", venv["constraints"], *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH", "VIRTUAL_ENV"))}
    command = {"python": [venv["python"], *argv[1:]], "java": argv}.get(
        argv[0], [venv["python"], "-m", *argv]
    )
    with open(venv["lock"], "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if argv[0] == "pip" else fcntl.LOCK_SH)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    return {"out": done.stdout, "err": done.stderr, "code": done.returncode}


if __name__ == "__main__":
    sys.path[0] = os.getcwd()
    job_file, results_file = sys.argv[1:]
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    answers = run(job["steps"], job["module"], job["venv"])
    Path(results_file).write_text(json.dumps(answers), encoding="utf-8")
