"""Hints for a missing extra never install turncheck by name (issue 55): no package index serves
``turncheck``, so ``pip install 'turncheck[peers]'`` fails or installs whatever claims the name.
A hint names the extra's own requirements, as the installed distribution declares them."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from turncheck.models.extras import extra_requirements, install_hint

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_the_hint_installs_the_extras_own_packages(extra: str) -> None:
    hint = install_hint(extra)
    argv = shlex.split(hint.split(" (", 1)[0])
    assert argv[:2] == ["pip", "install"] and "turncheck" not in " ".join(argv), hint
    assert sorted(_name(r) for r in argv[2:]) == sorted(_name(r) for r in EXTRAS[extra]), hint
    assert sorted(_name(r) for r in extra_requirements(extra)) == sorted(_name(r) for r in EXTRAS[extra])


def test_an_unknown_extra_points_at_the_checkout() -> None:
    assert install_hint("no-such-extra") == "pip install '.[no-such-extra]' in turncheck's checkout"


def test_no_message_or_page_installs_turncheck_by_name() -> None:
    """The code's messages and the docs' lines: ``pip install 'turncheck[…]'`` or ``pip install
    turncheck`` would reach a package index for a name no index serves."""
    by_name = re.compile(r"pip install\s+['\"]?turncheck\b")
    folders = ("models", "sim", "scenarios", "reports", "cli", "integrations", "turncheck", "docs")
    files = [p for f in folders for p in (ROOT / f).rglob("*") if p.suffix in (".py", ".md", ".yml", ".yaml")]
    files += [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml"]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files for m in by_name.finditer(p.read_text("utf-8"))]
    assert found == []
