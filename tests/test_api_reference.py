"""The API reference can be followed: every name docs/api.md documents is importable from
``turncheck`` (the top-level name, or the module path it gives), docs/checking.md's Python runs
as written, and no docstring sends a reader to a test file that does not exist (issue 32)."""

from __future__ import annotations

import importlib
import re
import textwrap
import unittest
from pathlib import Path

import pytest

import turncheck

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SOURCES = ("models", "sim", "scenarios", "reports", "cli", "integrations", "turncheck")


def _documented() -> list[str]:
    return re.findall(r"^::: (turncheck(?:\.\w+)+)$", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)


def _resolve(dotted: str) -> object:
    """``turncheck.X`` through the package itself; a longer path through its modules."""
    parts = dotted.split(".")
    if len(parts) == 2:
        return getattr(turncheck, parts[1])
    module = importlib.import_module(".".join(parts[:-1]))
    return getattr(module, parts[-1])


def test_every_documented_name_is_importable() -> None:
    names = _documented()
    assert "turncheck.select_properties" in names and "turncheck.SessionStore" in names
    assert [n for n in names if _resolve(n) is None] == []


def test_kind_values_read_as_the_projector_compares_them() -> None:
    h = turncheck.History(
        [
            turncheck.Event(0, "s", 1, turncheck.Kind.CALL, "c", chars=1),
            turncheck.Event(1, "s", 1, turncheck.Kind.RESULT, "c", chars=1),
        ]
    )
    assert h.kind[1] == turncheck.Kind.RESULT and h.partner == [1, 0]
    doc = turncheck.Kind.__doc__ or ""
    assert all(f"``{k.name} = {k.value}``" in doc for k in turncheck.Kind)
    history_doc = turncheck.History.__doc__ or ""
    assert "``kind[i]``" in history_doc and "``partner[i]``" in history_doc


def _python_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [textwrap.dedent(b) for b in re.findall(r"^ *```python\n(.*?)^ *```", text, re.S | re.M)]


def test_checking_page_python_that_imports_turncheck_runs() -> None:
    runnable = [b for b in _python_blocks("checking.md") if re.search(r"^from turncheck", b, re.M)]
    assert any("select_properties" in b for b in runnable)
    for block in runnable:
        namespace: dict[str, object] = {"__name__": "docs_checking"}
        exec(compile(block, "docs/checking.md (python block)", "exec"), namespace)  # noqa: S102
        assert not [k for k, v in namespace.items() if v is None and not k.startswith("__")]
    case = namespace["TestMutexTrigger"]
    assert isinstance(case, type) and issubclass(case, unittest.TestCase)


@pytest.mark.parametrize("folder", SOURCES)
def test_docstrings_name_only_test_files_that_exist(folder: str) -> None:
    named = {
        m
        for path in (ROOT / folder).rglob("*.py")
        for m in re.findall(r"tests/test_\w+\.py", path.read_text(encoding="utf-8"))
    }
    assert sorted(m for m in named if not (ROOT / m).exists()) == []
