"""``[tool.turncheck]`` in the nearest ``pyproject.toml``: a project's own defaults for the flags
its commands would otherwise repeat.

The table is found as ruff and pytest find theirs: the first ``pyproject.toml`` holding it, from
the working directory upward. Each key stands for one flag of the commands listed in
:data:`KEYS` and becomes that flag's default (click's ``default_map``), so a flag given on the
command line always wins and the command checks the value exactly as it checks the flag's. An
unknown key or a value of the wrong type is refused here, naming the file: one line, exit 2,
before any command runs. ``out`` is relative to the folder of that ``pyproject.toml``; the other
values are used as if typed on the command line. Only the standard library is imported.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from turncheck.models.errors import BadParameter

#: key -> (the type its value must have, the parameter it is the default of, the commands)
KEYS: dict[str, tuple[type, str, tuple[str, ...]]] = {
    "budget": (int, "budget", ("project",)),
    "cost": (str, "cost", ("project",)),
    "strategy": (str, "strategy", ("project",)),
    "invariants": (list, "invariant", ("check",)),
    "out": (str, "out", ("scenario", "sweep")),
}


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``pyproject.toml`` at or above ``start`` with a ``[tool.turncheck]`` table,
    and that table; None when there is none."""
    for folder in (start, *start.parents):
        path = folder / "pyproject.toml"
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BadParameter(f"{path}: not valid TOML ({exc})") from None
        table = data.get("tool", {}).get("turncheck")
        if table is not None:
            if not isinstance(table, dict):
                raise BadParameter(f"{path}: [tool.turncheck] must be a table")
            return path, table
    return None


def _checked(path: Path, key: str, value: Any) -> Any:
    if key not in KEYS:
        raise BadParameter(f"{path}: [tool.turncheck] has no key {key!r} (known: {', '.join(sorted(KEYS))})")
    kind = KEYS[key][0]
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok and kind is list:
        ok = bool(value) and all(isinstance(v, str) for v in value)
    if not ok or (kind is int and value <= 0) or (kind is str and not value):
        want = {int: "a positive integer", str: "a non-empty string", list: "a non-empty list of strings"}[
            kind
        ]
        raise BadParameter(f"{path}: [tool.turncheck] {key} must be {want}, got {value!r}")
    if key == "out":
        return str(path.parent / value)
    return value


def default_map(start: Path | None = None) -> dict[str, dict[str, Any]] | None:
    """click's ``default_map`` of the nearest ``[tool.turncheck]``: command -> parameter -> value."""
    found = find_config(Path.cwd() if start is None else start)
    if found is None:
        return None
    path, table = found
    defaults: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        checked = _checked(path, key, value)
        _, param, commands = KEYS[key]
        for command in commands:
            defaults.setdefault(command, {})[param] = checked
    return defaults
