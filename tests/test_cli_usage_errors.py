"""Every class of usage error, sent to every command: one line on stderr, exit 2, nothing written.

The table is built from the typer app itself, so a command added later is covered without
editing this file: for each command, an unknown option; a missing required argument; a value
that is not a number for a numeric option; a value outside the choices of a choice option. Each
runs in a fresh, empty working directory that must still be empty afterwards.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from turncheck.cli.app import app, main


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if hasattr(command, "commands"):
            yield from _commands(command, path)
        else:
            yield path, command


def _first_required_arguments(command: Any) -> list[str]:
    """Placeholder values for the command's required arguments, so the error under test is the
    one the case sends and not a missing argument."""
    values = []
    for param in command.params:
        if param.param_type_name == "argument" and param.required:
            values.append("placeholder")
    return values


def _kind(param: Any) -> str:
    """``number``, ``choice`` or ``other``, from click's type or typer's annotation."""
    click_type = getattr(getattr(param, "type", None), "name", None)
    if click_type is not None:
        if click_type in ("integer", "float", "integer range", "float range"):
            return "number"
        return "choice" if click_type == "choice" else "other"
    annotation = param.type_descriptor.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if annotation in (int, float):
        return "number"
    return "choice" if typing.get_origin(annotation) is typing.Literal else "other"


def _cases() -> Iterator[Any]:
    root = typer.main.get_command(app)
    for path, command in _commands(root):
        args = _first_required_arguments(command)
        yield pytest.param(
            [*path, *args, "--no-such-option"], "No such option", id=f"{' '.join(path)}:option"
        )
        if args:
            yield pytest.param(list(path), "Missing argument", id=f"{' '.join(path)}:missing")
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag or not param.opts:
                continue
            kind = _kind(param)
            option = param.opts[0]
            if kind == "number":
                yield pytest.param(
                    [*path, *args, option, "abc"], "Invalid value", id=f"{' '.join(path)}:{option}:type"
                )
            elif kind == "choice":
                yield pytest.param(
                    [*path, *args, option, "no-such-choice"],
                    "Invalid value",
                    id=f"{' '.join(path)}:{option}:choice",
                )
    yield pytest.param(["no-such-command"], "No such command", id="unknown-command")


@pytest.mark.parametrize(("argv", "says"), list(_cases()))
def test_usage_error_is_one_line_exit_2_nothing_written(
    argv: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("turncheck: error: ") and says in lines[0], err
    assert os.listdir(tmp_path) == [], "a refused command wrote files"


def test_the_table_covers_every_command_and_every_error_class() -> None:
    ids = [p.id for p in _cases()]
    root = typer.main.get_command(app)
    for path, _ in _commands(root):
        assert f"{' '.join(path)}:option" in ids
    for suffix in (":missing", ":type", ":choice"):
        assert any(i.endswith(suffix) for i in ids), suffix


def test_bare_command_and_group_print_their_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "Usage: turncheck" in capsys.readouterr().out
    assert main(["log"]) == 0
    assert "Usage: turncheck log" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import turncheck

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"turncheck {turncheck.__version__}\n"


def test_io_error_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code = main(["scenario", "projection", "--scale", "tiny", "-o", str(tmp_path / "file" / "sub"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "is a file, not a directory" in err
    assert os.listdir(tmp_path) == ["file"]


def test_error_text_from_a_file_cannot_add_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    from turncheck.cli.app import error

    assert error("session 'a\nturncheck: error: spoofed \x1b[31mred'") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\\n" in err and "\\x1b" in err


def test_a_bug_prints_a_traceback_and_asks_for_a_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from turncheck.cli import scenario as cli_scenario

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli_scenario, "get_scenario", broken)
    code = main(["scenario", "projection"])
    err = capsys.readouterr().err
    assert code == 70 and "Traceback" in err and "this is a bug in turncheck" in err
