"""Options shared by many commands, declared once so they are spelled and checked the same way.

Choices are ``Literal`` types: typer turns them into click choices, so ``--help`` lists them,
shell completion offers them and a wrong value is a usage error (one line, exit 2) before the
command body runs. Every command that writes files takes ``-o/--out``; every command that can
show progress takes ``-q/--quiet`` (quiet: nothing on stderr but errors); every command that
runs work in parallel takes ``--jobs``, ``--executor`` and ``--scheduler``; every command with
sizes takes ``--scale tiny|quick|full`` and defaults to ``quick``.

A command whose help names what is registered (the strategies) is built with
:func:`names_in_help`: the names are looked up when that help is shown, not when the command
line starts, so ``turncheck --help`` imports nothing to name them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Literal

import typer
from typer.core import TyperCommand

from turncheck.scenarios.presets import Scale

Format = Literal["table", "json"]
ExecutorKind = Literal["local", "dask"]


def format_option(help: str = "table (for people) or json (for scripts).") -> typer.models.OptionInfo:  # noqa: A002
    """``--format table|json`` with the command's own words for what json prints."""
    return typer.Option("--format", help=help)


FormatOpt = Annotated[Format, format_option()]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Nothing on stderr but errors: no progress.")]
QuietAlreadyOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Nothing on stderr but errors: this command writes nothing else there.")
]
"""``-q`` of a command that writes nothing on stderr but errors: accepted as on every command
(users type it after any), with nothing to silence."""
ScaleOpt = Annotated[
    Scale,
    typer.Option(
        "--scale", help="tiny (seconds), quick (about a minute at most) or full (the seeds' sizes)."
    ),
]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes on this machine.")]
ExecutorOpt = Annotated[
    ExecutorKind, typer.Option("--executor", help="local (process pool) or dask (needs --scheduler).")
]
SchedulerOpt = Annotated[
    str | None, typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786.")
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Random seed: same seed, same result files.")]


def out_option(help: str) -> typer.models.OptionInfo:  # noqa: A002  (typer's own keyword)
    """``-o/--out`` with the command's own description of what is written there."""
    return typer.Option("--out", "-o", help=help)


OutDirOpt = Annotated[Path, out_option("Directory for the result files.")]


def names_in_help(names: Callable[[], Iterable[str]]) -> type[TyperCommand]:
    """A command class whose help text's ``{names}`` reads ``names()``, comma-joined, each time
    the help is shown — the built-ins and what extensions registered, never a stale copy. Give
    such a command a ``short_help`` of its own: the listing of ``turncheck --help`` then asks
    no registry."""

    class NamesInHelp(TyperCommand):
        @property  # type: ignore[override]
        def help(self) -> str | None:
            text: str | None = self.__dict__.get("_help")
            return None if text is None else text.replace("{names}", ", ".join(names()))

        @help.setter
        def help(self, text: str | None) -> None:
            self.__dict__["_help"] = text

    return NamesInHelp


def strategy_names() -> list[str]:
    """The projector's strategy names (for help texts; imports the projector when called)."""
    from turncheck.models.projector import STRATEGIES

    return list(STRATEGIES)
