"""The example projector docs/your-agent.md publishes passes turncheck's own checks.

A tool that checks projectors must not publish a broken one: the function is taken from the
page's text (imports and the ``def``, nothing else), so an edit to the page is what is checked.
The README's ``messages:`` trimmer is run by its own pytest test in tests/test_readme.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import settings

from turncheck.cli.app import main
from turncheck.testing import check_projector

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("docs/your-agent.md",)


def example(page: str) -> str:
    """The imports and ``def keep_whole_calls`` of the page's one Python block that defines it."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S)
              if "def keep_whole_calls(" in b]  # fmt: skip
    assert len(blocks) == 1, page
    tree = ast.parse(blocks[0])
    keep = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
            or (isinstance(n, ast.FunctionDef) and n.name == "keep_whole_calls")]  # fmt: skip
    return "\n".join(ast.get_source_segment(blocks[0], n) or "" for n in keep) + "\n"


def published(page: str) -> dict[str, object]:
    """The page's example run: its imports' names and ``keep_whole_calls``."""
    namespace: dict[str, object] = {}
    exec(compile(example(page), page, "exec"), namespace)
    return namespace


def test_the_published_projector_passes_check_projector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "doc_trim.py").write_text(example(PAGES[0]))
    monkeypatch.chdir(tmp_path)
    code = main(["check", "projector", "-p", "strategy=doc_trim.py:keep_whole_calls"])
    assert code == 0, capsys.readouterr().out
    quick = settings(max_examples=300, database=None, deadline=None)
    check_projector(published(PAGES[0])["keep_whole_calls"], settings=quick)  # type: ignore[arg-type]
