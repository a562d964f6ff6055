"""The house's size caps, on every module the wheel installs (issue 56): no module over 600 lines,
no function over 80, at most 18 000 code lines outside ``integrations/`` and 1 800 lines in ``cli/``.

A module or function past its cap is where a second idea has moved in; the cap keeps each one
readable in one sitting. The folders are read from ``pyproject.toml``'s ``package-dir``, so a
package added there is measured without touching this file.

A *code line* is a line holding a token that is neither a comment nor a docstring — blank lines,
comments and docstrings (a bare string statement: a module's, class's or function's docstring, or
an attribute's under it) are where the invariants are written, and are not counted. The
integrations (the code that knows another product) grow with each product supported, so the
core's budget is counted outside them.
"""

from __future__ import annotations

import ast
import io
import tokenize
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULE_CAP = 600
FUNCTION_CAP = 80
CORE_CODE_CAP = 18_000
CLI_CAP = 1_800
INTEGRATIONS = "integrations"


def _folders() -> list[str]:
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return sorted(set(setup["package-dir"].values()))


def installed_modules() -> Iterator[Path]:
    """Every ``.py`` file under a folder ``pyproject.toml`` maps into the ``turncheck`` package."""
    for folder in _folders():
        yield from sorted((ROOT / folder).rglob("*.py"))


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


def code_lines(source: str) -> int:
    """The lines of ``source`` holding code: not blank, not only a comment, not in a docstring."""
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docs)


def long_functions(source: str, cap: int = FUNCTION_CAP) -> list[tuple[str, int]]:
    """(name, lines) of each function or method in ``source`` longer than ``cap`` lines, counted
    from its ``def`` to its last line (decorators not counted, nested functions measured too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > cap:
                found.append((node.name, lines))
    return found


def test_the_walk_reads_every_package_folder() -> None:
    folders = {p.relative_to(ROOT).parts[0] for p in installed_modules()}
    assert {"turncheck", "models", "sim", "scenarios", "reports", "cli", INTEGRATIONS} <= folders


def test_no_module_is_over_600_lines() -> None:
    over = {
        str(p.relative_to(ROOT)): n
        for p in installed_modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_CAP
    }
    assert not over, f"modules over {MODULE_CAP} lines (split by idea): {over}"


def test_no_function_is_over_80_lines() -> None:
    over = {
        f"{p.relative_to(ROOT)}:{name}": n
        for p in installed_modules()
        for name, n in long_functions(p.read_text(encoding="utf-8"))
    }
    assert not over, f"functions over {FUNCTION_CAP} lines: {over}"


def test_the_measure_finds_a_long_function_and_passes_a_short_one() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_CAP - 1))
    at_cap = f"def fits():\n{body}"
    over = f"class C:\n    async def grows(self):\n{''.join('    ' + line for line in body.splitlines(True))}        y = 0\n"
    assert long_functions(at_cap) == []
    assert long_functions(over) == [("grows", FUNCTION_CAP + 1)]


def test_code_lines_count_code_only() -> None:
    source = '"""Module doc,\ntwo lines."""\n\n# a comment\nX = 1  # counted\n"""X\'s doc."""\n\n\ndef f(\n    a,\n):\n    """Doc."""\n    return """a\nb"""\n'
    assert code_lines(source) == 6  # X = 1; def f( / a, / ):; return """a / b"""


# Measured when integrations/ was split off (issue 56, item 1): 25 943 code lines outside it
# (models 9 100, sim 6 761, cli 3 564, scenarios 3 014, reports 2 988, turncheck 516) and cli/
# 4 805 lines; at the session that merged it, 26 208 and 4 815. The move alone does not meet
# either cap; items 2-4 of the issue are to. The failures name the figures as measured.
@pytest.mark.xfail(
    strict=True, reason="the core's code lines are over the cap of 18 000: issue 56, items 2-4"
)
def test_at_most_18000_code_lines_outside_integrations() -> None:
    per_folder = {
        folder: sum(code_lines(p.read_text(encoding="utf-8")) for p in sorted((ROOT / folder).rglob("*.py")))
        for folder in _folders()
        if folder != INTEGRATIONS
    }
    assert sum(per_folder.values()) <= CORE_CODE_CAP, f"code lines outside {INTEGRATIONS}/: {per_folder}"


@pytest.mark.xfail(strict=True, reason="cli/ is over its cap of 1 800 lines: issue 56, item 3")
def test_cli_is_at_most_1800_lines() -> None:
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "cli").rglob("*.py"))
    assert lines <= CLI_CAP, f"cli/ is {lines} lines"
