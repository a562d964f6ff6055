"""The command-line reference as Markdown, generated from the typer app itself.

The documentation site's CLI page is this function's output (a mkdocs hook calls it at build
time), so the reference cannot drift from the commands: every command and sub-command, its
help text, its arguments and options with their choices and defaults, as ``--help`` prints them.
"""

from __future__ import annotations

from typing import Any

import typer

from turncheck.cli.app import app
from turncheck.reports.tables import markdown_rows


def _cell(text: str) -> str:
    return " ".join(str(text).split())


def _command_markdown(cmd: Any, path: str, level: int) -> list[str]:
    out = [f"{'#' * level} `{path}`", ""]
    help_text = (cmd.help or "").strip()
    if help_text:
        out += [help_text, ""]
    usage = " ".join(cmd.collect_usage_pieces(typer.Context(cmd, info_name=path)))
    out += ["```text", f"{path} {usage}".rstrip(), "```", ""]
    ctx = typer.Context(cmd, info_name=path)
    rows = []
    for p in cmd.params:
        record = None if getattr(p, "hidden", False) else p.get_help_record(ctx)
        if record is None and p.param_type_name == "argument":
            record = ((p.metavar or p.name or "").upper(), p.help or "")
        if record is not None:
            rows.append((f"`{_cell(record[0])}`", _cell(record[1])))
    if rows:
        out += [*markdown_rows(("argument or option", "what it does"), rows), ""]
    sub = getattr(cmd, "commands", None)
    if sub:
        for name in sorted(sub):
            out += _command_markdown(sub[name], f"{path} {name}", level + 1)
    return out


def cli_reference(level: int = 2) -> str:
    """Markdown for every ``turncheck`` command, in alphabetical order, one section each."""
    root = typer.main.get_command(app)
    commands: dict[str, Any] = getattr(root, "commands", {})
    out = [(root.help or "").strip(), ""]
    for name in sorted(commands):
        out += _command_markdown(commands[name], f"turncheck {name}", level)
    return "\n".join(out).rstrip() + "\n"
