"""The CI gate as users wire it: the GitHub Action (action.yml) and the pre-commit hooks
(.pre-commit-hooks.yaml), configured as docs/config.md shows, run on the guide's log with its
fixed trimmer and with the broken one.

The action's ``run:`` steps run as GitHub runs a composite action's ``shell: bash`` steps
(``bash --noprofile --norc -eo pipefail``), in order, its ``if: inputs.X != ''`` conditions
evaluated and its inputs substituted into each step's ``env`` — its scripts hold none — and the
first failing step ending it. The hooks run through pre-commit itself, twice: from the
documented repository configuration, its ``repo:`` a git clone of this checkout (pre-commit
builds the hooks' virtualenv and pip-installs the clone, offline: see
:func:`test_the_documented_repository_hooks_run_from_a_clone_of_the_checkout`), and from a local
configuration holding each published hook as it is, but ``language: system`` (turncheck is
already installed here).
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


def documented(name: str, doc: str | None = None) -> Any:
    """The YAML block of docs/config.md (or of ``doc``, its text) that opens with ``# name``."""
    page = DOC.read_text(encoding="utf-8") if doc is None else doc
    for body in re.findall(r"^```yaml\n(.*?)^```", page, re.S | re.M):
        if body.startswith(f"# {name}\n"):
            return yaml.safe_load(body)
    raise AssertionError(f"docs/config.md shows no {name}")


def documented_inputs() -> dict[str, str]:
    steps = documented(".github/workflows/turncheck.yml")["jobs"]["gate"]["steps"]
    (step,) = [s for s in steps if s.get("uses") == "./.github/actions/turncheck"]
    return {k: str(v) for k, v in step["with"].items()} | {"install": ""}


def published_hooks(hooks: str | None = None) -> dict[str, dict[str, Any]]:
    """The hooks of .pre-commit-hooks.yaml (or of ``hooks``, its text), by id."""
    text = HOOKS.read_text(encoding="utf-8") if hooks is None else hooks
    return {h["id"]: h for h in yaml.safe_load(text)}


def documented_hooks(doc: str | None = None, hooks: str | None = None) -> dict[str, dict[str, Any]]:
    """The documented local hooks, each the published hook of its id plus where and what it runs."""
    (repo,) = documented(".pre-commit-config.yaml, local hooks", doc)["repos"]
    assert repo["repo"] == "local"
    published = published_hooks(hooks)
    for hook in repo["hooks"]:
        own = {"args", "files", "language"}
        assert hook["language"] == "system" and "additional_dependencies" not in hook, hook["id"]
        assert hook["id"] in published, f"{hook['id']} is not a published hook"
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


def run_config(
    config: dict[str, Any], hook_id: str, cwd: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``pre-commit run HOOK_ID --all-files`` in a git repository of ``cwd`` configured by
    ``config``, its environments under ``cwd/.cache``; ``extra`` joins the environment."""
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install '.[test]')")
    if shutil.which("git") is None:
        pytest.skip("pre-commit needs git")
    (cwd / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = environment() | {"PRE_COMMIT_HOME": str(cwd / ".cache"), "GIT_CONFIG_GLOBAL": os.devnull} | extra
    for git in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *git], cwd=cwd, env=env, check=True, capture_output=True)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook_id, "--all-files"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)  # fmt: skip


def run_hook(hook: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit run HOOK --all-files`` in a git repository of ``cwd`` whose configuration is
    ``hook``, local, with ``language: system``."""
    local = hook | {"language": "system"}
    return run_config({"repos": [{"repo": "local", "hooks": [local]}]}, hook["id"], cwd)


REPOSITORY = "<the git URL you install turncheck from>"
REVISION = "<a tag or commit of it>"


def documented_repository(doc: str | None = None, hooks: str | None = None) -> dict[str, Any]:
    """The documented repository hooks: ``repo:`` and ``rev:`` the placeholders the page
    explains, each hook a published id given only ``files`` and ``args`` — the local variant's,
    and holding the published hook's own ``args`` (pre-commit replaces them with the user's)."""
    (repo,) = documented(".pre-commit-config.yaml", doc)["repos"]
    assert (repo["repo"], repo["rev"]) == (REPOSITORY, REVISION), repo
    published, local = published_hooks(hooks), documented_hooks(doc, hooks)
    assert [h["id"] for h in repo["hooks"]] == list(local), "the two variants run other hooks"
    for hook in repo["hooks"]:
        assert hook["id"] in published and set(hook) <= {"id", "files", "args"}, hook
        assert published[hook["id"]]["language"] == "python", "the page says pre-commit installs the clone"
        assert hook == {k: local[hook["id"]][k] for k in hook}, hook["id"]
        own = [str(a) for a in published[hook["id"]].get("args", [])]
        args = [str(a) for a in hook["args"]]
        assert any(args[i : i + len(own)] == own for i in range(len(args) - len(own) + 1)), hook["id"]
    return repo


def checkout_clone(dest: Path) -> str:
    """A git repository at ``dest`` holding this checkout's files as they are now — tracked and
    untracked but not ignored, so uncommitted work is in — committed there; its commit."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("the repository hooks are cloned from a git checkout of turncheck")
    env = environment() | {"GIT_CONFIG_GLOBAL": os.devnull}
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            env=env, capture_output=True, check=True).stdout  # fmt: skip
    for rel in filter(None, listed.decode().split("\0")):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    author = ["-c", "user.name=turncheck tests", "-c", "user.email=tests@turncheck.invalid"]
    for git in (["init", "-q"], ["add", "-A"], [*author, "commit", "-q", "-m", "the checkout as tested"]):
        subprocess.run(["git", *git], cwd=dest, env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dest, env=env, capture_output=True, text=True)
    return head.stdout.strip()


OFFLINE = {
    # pre-commit makes the hooks' virtualenv with virtualenv and runs ``pip install .`` in the
    # clone: the env sees this interpreter's site-packages (turncheck's dependencies, already
    # installed, satisfy pip), builds with the setuptools installed there, and never asks an index.
    "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
    "VIRTUALENV_NO_SETUPTOOLS": "1",
    "VIRTUALENV_NO_WHEEL": "1",
    "PIP_NO_INDEX": "1",
    "PIP_NO_BUILD_ISOLATION": "0",  # pip's spelling of --no-build-isolation
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


def test_the_documented_repository_hooks_run_from_a_clone_of_the_checkout(
    workdir: Path, tmp_path: Path
) -> None:
    """docs/config.md's repository configuration, ``repo:`` a git clone of this checkout at a
    commit of its current files and ``rev:`` that commit, run through pre-commit: it clones the
    revision, builds the ``language: python`` virtualenv and pip-installs the clone into it, then
    runs the hooks with that install — passing the guide's fixed trimmer and a model that holds,
    failing the broken trimmer. Offline (:data:`OFFLINE`): no package index is asked, so a
    dependency missing from this interpreter's site-packages fails the install here, saying so."""
    clone = tmp_path / "turncheck-clone"
    rev = checkout_clone(clone)
    repo = documented_repository() | {"repo": str(clone), "rev": rev}
    hooks = {h["id"]: h for h in repo["hooks"]}
    project = workdir / "project"
    shutil.copytree(workdir / "examples", project / "examples")
    fixed = run_config({"repos": [repo]}, "turncheck-project", project, **OFFLINE)
    assert fixed.returncode == 0 and "Passed" in fixed.stdout, fixed.stdout + fixed.stderr
    (env,) = (project / ".cache").glob("repo*/py_env-*")  # the one env pre-commit built
    imported = subprocess.run([str(env / "bin" / "python"), "-c", "import turncheck.cli; print(turncheck.cli.__file__)"],
                              cwd=tmp_path, env=environment(), capture_output=True, text=True)  # fmt: skip
    assert Path(imported.stdout.strip()).is_relative_to(env), imported.stdout + imported.stderr
    held = run_config({"repos": [repo]}, "turncheck-check", project, **OFFLINE)
    assert held.returncode == 0 and "Passed" in held.stdout, held.stdout + held.stderr
    broken = [TRIM + "keep_recent" if a.startswith(TRIM) else a for a in hooks["turncheck-project"]["args"]]
    repo["hooks"] = [h | {"args": broken} if h["id"] == "turncheck-project" else h for h in repo["hooks"]]
    done = run_config({"repos": [repo]}, "turncheck-project", project, **OFFLINE)
    assert done.returncode == 1 and "FAIL: session ticket-1043, request 1" in done.stdout, done.stdout


def test_the_repository_hooks_documented_are_the_published_ones() -> None:
    """The drift :func:`documented_repository` refuses, each on a copy of the real files: a hook
    id the repository does not publish, a published ``--fail-on`` the documented args drop, and
    published args the documented ones no longer hold; the real files pass."""
    page, hooks = DOC.read_text(encoding="utf-8"), HOOKS.read_text(encoding="utf-8")
    documented_repository(page, hooks)
    fail_on = r',\s*--fail-on, "orphanRes,orphanCall,overBudget"\]'
    drifted = {
        "a hook renamed": (page, hooks.replace("- id: turncheck-check", "- id: turncheck-model-check")),
        "--fail-on dropped": (re.sub(fail_on, "]", page, count=1), hooks),
        "published args changed": (
            page,
            hooks.replace('"orphanRes,orphanCall,overBudget"', '"orphanRes,empty"'),
        ),
    }
    for what, (doc, published) in drifted.items():
        assert (doc, published) != (page, hooks), what
        with pytest.raises(AssertionError):
            documented_repository(doc, published)


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
