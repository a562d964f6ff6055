"""The house's size caps, on every module the wheel installs (issue 56): no module over 600 lines,
no function over 80.

A module or function past its cap is where a second idea has moved in; the cap keeps each one
readable in one sitting. The folders are read from ``pyproject.toml``'s ``package-dir``, so a
package added there is measured without touching this file.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE_CAP = 600
FUNCTION_CAP = 80


def installed_modules() -> Iterator[Path]:
    """Every ``.py`` file under a folder ``pyproject.toml`` maps into the ``turncheck`` package."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    for folder in sorted(set(setup["package-dir"].values())):
        yield from sorted((ROOT / folder).rglob("*.py"))


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
    assert {"turncheck", "models", "sim", "scenarios", "reports", "cli"} <= folders


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
