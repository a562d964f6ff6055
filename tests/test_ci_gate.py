"""The CI gate as users wire it: the GitHub Action (action.yml) and the pre-commit hooks
(.pre-commit-hooks.yaml), configured as docs/config.md shows, run on the guide's log with its
fixed trimmer and with the broken one.

The action's ``run:`` steps run as GitHub runs a composite action's ``shell: bash`` steps
(``bash --noprofile --norc -eo pipefail``), in order, its ``if: inputs.X != ''`` conditions
evaluated and its inputs substituted into each step's ``env`` — its scripts hold none — and the
first failing step ending it. The hooks run through pre-commit itself, from a local
configuration holding each published hook as it is, but ``language: system`` (turncheck is
already installed here; ``language: python`` would install it from the index).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip(
    "yaml", reason="PyYAML is not installed (pip install '.[test]': pre-commit needs it)"
)

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
DOC = ROOT / "docs" / "config.md"
BIN = Path(sys.executable).parent
TRIM = "messages:examples/your-agent/trim.py:"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    if not (BIN / "turncheck").exists():
        pytest.skip(f"no turncheck script beside {sys.executable} (pip install -e .)")
    shutil.copytree(ROOT / "examples" / "your-agent", tmp_path / "examples" / "your-agent")
    return tmp_path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH"))}
    return env | {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}


def run_action(inputs: dict[str, str], cwd: Path) -> list[int]:
    """The exit status of every step that ran, in order (the last non-zero one ended the action)."""
    spec = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert spec["runs"]["using"] == "composite" and set(inputs) <= set(spec["inputs"]), inputs
    values = {name: str(i.get("default", "")) for name, i in spec["inputs"].items()} | inputs
    statuses = []
    for step in spec["runs"]["steps"]:
        assert step["shell"] == "bash" and "${{" not in step["run"], step["name"]
        if "if" in step:
            condition = re.fullmatch(r"inputs\.([\w-]+) != ''", step["if"])
            assert condition, step["if"]
            if values[condition.group(1)] == "":
                continue
        env = {
            k: re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: values[m.group(1)], v)
            for k, v in step.get("env", {}).items()
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=cwd, env=environment() | env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        statuses.append(done.returncode)
        if done.returncode:
            assert "Traceback" not in done.stderr, done.stderr
            break
    return statuses


def documented(name: str) -> Any:
    """The YAML block of docs/config.md that opens with ``# name``."""
    for body in re.findall(r"^```yaml\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M):
        if body.startswith(f"# {name}\n"):
            return yaml.safe_load(body)
    raise AssertionError(f"docs/config.md shows no {name}")


def documented_inputs() -> dict[str, str]:
    steps = documented(".github/workflows/turncheck.yml")["jobs"]["gate"]["steps"]
    (step,) = [s for s in steps if s.get("uses") == "./.github/actions/turncheck"]
    return {k: str(v) for k, v in step["with"].items()} | {"install": ""}


def documented_hooks() -> dict[str, dict[str, Any]]:
    """The documented local hooks, each the published hook of its id plus where and what it runs."""
    (repo,) = documented(".pre-commit-config.yaml")["repos"]
    published = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    for hook in repo["hooks"]:
        own = {"args", "files", "language"}
        assert hook["language"] == "system" and "additional_dependencies" not in hook, hook["id"]
        assert {k: v for k, v in hook.items() if k not in own} == {
            k: v for k, v in published[hook["id"]].items() if k not in own | {"description"}
        }, hook["id"]
    return {h["id"]: h for h in repo["hooks"]}


def test_the_documented_action_passes_the_fixed_trimmer_and_a_model_that_holds(workdir: Path) -> None:
    assert run_action(documented_inputs(), workdir) == [0, 0]


def test_the_action_fails_on_the_broken_trimmer(workdir: Path) -> None:
    assert run_action(documented_inputs() | {"strategy": TRIM + "keep_recent"}, workdir) == [1]


def test_the_action_fails_on_a_counterexample(workdir: Path) -> None:
    assert run_action({"install": "", "check": "projector -p strategy=M1 --engine explore"}, workdir) == [1]


def run_hook(hook: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit run HOOK --all-files`` in a git repository of ``cwd`` whose configuration is
    ``hook``, local, with ``language: system``."""
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install '.[test]')")
    if shutil.which("git") is None:
        pytest.skip("pre-commit needs git")
    local = hook | {"language": "system"}
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (cwd / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = environment() | {"PRE_COMMIT_HOME": str(cwd / ".cache"), "GIT_CONFIG_GLOBAL": os.devnull}
    for git in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *git], cwd=cwd, env=env, check=True, capture_output=True)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook["id"], "--all-files"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_documented_project_hook_passes_the_fix_and_fails_the_broken_trimmer(workdir: Path) -> None:
    hook = documented_hooks()["turncheck-project"]
    fixed = run_hook(hook, workdir)
    assert fixed.returncode == 0 and "Passed" in fixed.stdout, fixed.stdout + fixed.stderr
    broken = [TRIM + "keep_recent" if a.startswith(TRIM) else a for a in hook["args"]]
    done = run_hook(hook | {"args": broken}, workdir)
    assert done.returncode == 1 and "FAIL: session ticket-1043, request 1" in done.stdout, done.stdout


def test_the_check_hook_fails_on_a_counterexample(workdir: Path) -> None:
    hook = documented_hooks()["turncheck-check"]
    args = ["strategy=M1" if a == "strategy=M5" else a for a in hook["args"]]
    done = run_hook(hook | {"args": args}, workdir)
    assert done.returncode == 1 and "FAIL: no-orphan-results is violated" in done.stdout, done.stdout


def test_the_action_installs_its_own_checkout_never_a_name_no_index_serves(tmp_path: Path) -> None:
    """turncheck is on no package index, so ``install``'s default is ``self``: the action's own
    checkout (``$GITHUB_ACTION_PATH``, the revision the workflow's ``uses:`` pins). The install
    step runs here with a ``python`` on ``PATH`` that prints what it was asked to do."""
    spec = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert spec["inputs"]["install"]["default"] == "self"
    (step,) = [s for s in spec["runs"]["steps"] if "INSTALL" in s.get("env", {})]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").write_text('#!/bin/sh\necho "$@"\n', encoding="utf-8")
    (shim / "python").chmod(0o755)
    for install, expected in (("self", str(tmp_path / "action")), ("pkg==1.0", "pkg==1.0")):
        env = {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "INSTALL": install,
               "GITHUB_ACTION_PATH": str(tmp_path / "action")}  # fmt: skip
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
        assert done.returncode == 0 and done.stdout.split() == ["-m", "pip", "install", "--quiet", expected]
