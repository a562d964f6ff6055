"""``[tool.turncheck]`` in the nearest ``pyproject.toml``: a project's own defaults for the flags
its commands would otherwise repeat.

The search goes from the working directory upward and stops at the first ``pyproject.toml`` (as
pytest's rootdir does), at a repository's root (a folder holding ``.git`` or ``.hg``) and at the
filesystem's root: a file in a parent folder (a clone's parent, ``/tmp``) never applies to the
project below it. Each key stands for one flag of the commands listed in :data:`KEYS` and becomes
that flag's default (click's ``default_map``), so a flag given on the command line always wins and
the command checks the value exactly as it checks the flag's.

The keys cover the CI gate's own flags (``project --per-request --fail-on``, ``lint``): a
project writes its log, format, budget and checks once and runs ``turncheck project`` and
``turncheck lint`` bare. ``budget`` is the project's budget for both: ``lint`` flags a trace's
requests over it (in tokens; not with ``cost = "utf8-json"``, a budget in bytes) and lints a log
without model requests as before, where ``--budget`` given as a flag is refused. Config never
runs code and never writes outside the project: a value naming code (``exec:…``,
``module:function``, ``file.py:function``) is refused — programs are named on the command line —
and ``out`` must resolve inside the folder of that ``pyproject.toml``;
the paths ``out`` and ``history`` are relative to that folder. An unknown key, a value of
the wrong type, or a file that cannot be parsed (bad TOML, bad UTF-8, nesting deep enough to
exhaust the parser) is one line naming the file, exit 2, before any command runs, ``--version``
included; a file that cannot be parsed and never mentions ``turncheck`` is not ours and is ignored.
A file over 1 MiB is not parsed (:data:`MAX_CONFIG_BYTES`): ignored, or refused when it says
``turncheck``.
Only the standard library and ``models`` are imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from turncheck.models.errors import BadParameter
from turncheck.models.user_code import names_code

#: key -> (the type its value must have, the parameter it is the default of, the commands)
KEYS: dict[str, tuple[type, str, tuple[str, ...]]] = {
    "budget": (int, "budget", ("project", "lint")),
    "cost": (str, "cost", ("project",)),
    "strategy": (str, "strategy", ("project",)),
    "invariants": (list, "invariant", ("check",)),
    "out": (str, "out", ("scenario", "sweep")),
    "history": (str, "history", ("project", "lint")),
    "from": (str, "source", ("project", "lint")),
    "provider": (str, "provider", ("lint",)),
    "per_request": (bool, "per_request", ("project",)),
    "fail_on": (list, "fail_on", ("project",)),
}

ARGUMENTS: dict[tuple[str, str], str] = {("lint", "history"): "histories"}
"""(command, key) -> the parameter a key defaults where the command names it otherwise: ``lint``
takes several files (``histories``), so its default is the one file in a list."""
PATHS = ("out", "history")
"""Keys naming a file or folder: relative to the ``pyproject.toml``'s folder, never code."""
COMMA_LISTS = ("fail_on",)
"""Keys whose flag takes a comma-separated list: a TOML list, or the flag's own string."""


REPOSITORY_MARKERS = (".git", ".hg")
"""A folder holding one of these is a repository's root: the search goes no higher."""


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The ``[tool.turncheck]`` table of the first ``pyproject.toml`` at or above ``start``
    (stopping at a repository's or the filesystem's root), and its file; None when that file
    has no table, is not a regular file, or there is no such file."""
    for folder in (start, *start.parents):
        path = folder / "pyproject.toml"
        if os.path.lexists(path):
            return _table(path) if path.is_file() else None  # a FIFO, a link to a device: not ours
        if any(os.path.lexists(folder / marker) for marker in REPOSITORY_MARKERS):
            return None
    return None


MAX_CONFIG_BYTES = 1 << 20
"""The largest ``pyproject.toml`` parsed (1 MiB; a real one is a few KiB). A larger one is read
in chunks for the word ``turncheck`` only, in bounded memory: without it the file is not ours
and is ignored, with it it is refused in one line. (tomllib parsed a 200 MB string at about
3 MB/s: ``turncheck --version`` below such a file did not answer for a minute.)"""


def _read_config(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when it is over :data:`MAX_CONFIG_BYTES` and never says
    ``turncheck``; refused when it is over the cap and does."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
            if len(raw) <= MAX_CONFIG_BYTES:
                return raw
            tail = b""
            while raw:
                if b"turncheck" in tail + raw:
                    raise BadParameter(
                        f"{path}: over {MAX_CONFIG_BYTES >> 20} MiB; turncheck parses no larger"
                        " pyproject.toml (move [tool.turncheck] to a smaller one)"
                    )
                tail, raw = raw[-8:], fh.read(MAX_CONFIG_BYTES)
            return None
    except OSError as exc:
        raise BadParameter(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _table(path: Path) -> tuple[Path, dict[str, Any]] | None:
    raw = _read_config(path)
    if raw is None:
        return None
    import tomllib  # every command reads the config, but most folders hold no pyproject.toml to parse

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError covers TOMLDecodeError and an integer over Python's 4 300-digit limit,
        # which tomllib lets through (it was a traceback, exit 70, on --version too)
        if b"turncheck" not in raw:
            return None  # not parsable and not ours: another tool's problem, not a reason to refuse
        reason = "nested too deeply to parse" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        raise BadParameter(f"{path}: not valid TOML ({reason[:200]})") from None
    tool = data.get("tool", {})
    table = tool.get("turncheck") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise BadParameter(f"{path}: [tool.turncheck] must be a table")
    return path, table


def _shown(value: Any) -> str:
    """``repr(value)`` cut to 80 characters: a deep or huge value stays a short line."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= 80 else text[:77] + "..."


def _checked(path: Path, key: str, value: Any) -> Any:
    if key not in KEYS:
        raise BadParameter(
            f"{path}: [tool.turncheck] has no key {_shown(key)} (known: {', '.join(sorted(KEYS))})"
        )
    kind = KEYS[key][0]
    items = [value] if key in COMMA_LISTS and isinstance(value, str) else value
    ok = isinstance(items, kind) and (kind is bool or not isinstance(items, bool))
    if ok and kind is list:
        ok = bool(items) and all(isinstance(v, str) and v for v in items)
    if not ok or (kind is int and value <= 0) or (kind is str and not value):
        want = {int: "a positive integer", str: "a non-empty string", list: "a non-empty list of strings",
                bool: "true or false"}[kind]  # fmt: skip
        raise BadParameter(f"{path}: [tool.turncheck] {key} must be {want}, got {_shown(value)}")
    for item in items if isinstance(items, list) else [items]:
        if key not in PATHS and names_code(item):
            raise BadParameter(
                f"{path}: [tool.turncheck] {key} = {_shown(item)} names code to run; config never starts a"
                " program or imports code: name it on the command line"
            )
    if any("\0" in item for item in (items if isinstance(items, list) else [items]) if isinstance(item, str)):
        raise BadParameter(
            f"{path}: [tool.turncheck] {key} holds a NUL character, which no name or value may hold"
        )
    if key == "out":
        root = path.parent.resolve()
        out = (root / value).resolve()
        if not out.is_relative_to(root):
            raise BadParameter(
                f"{path}: [tool.turncheck] out = {_shown(value)} is outside the project folder {root}"
            )
    if key in PATHS:
        return str(path.parent / value)
    return ",".join(items) if key in COMMA_LISTS else value


def from_table(ctx: Any, param: str) -> bool:
    """Whether ``param``'s value in the click context ``ctx`` is the ``[tool.turncheck]`` table's
    (its default map), not a flag given on the command line."""
    return getattr(ctx.get_parameter_source(param), "name", None) == "DEFAULT_MAP"


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
            name = ARGUMENTS.get((command, key), param)
            defaults.setdefault(command, {})[name] = [checked] if name != param else checked
    if table.get("cost") == "utf8-json":  # bytes, where lint --budget counts tokens
        defaults.get("lint", {}).pop("budget", None)
    return {command: params for command, params in defaults.items() if params}
