"""The ``turncheck`` command line: one typer app, commands registered by topic modules.

Every command module in :mod:`turncheck.cli` exposes ``register(app)`` and imports, at its top,
only typer and what its options are spelled with: a command imports the engines, numpy or
matplotlib it needs when it runs, so ``--help``, a completion TAB or a usage error costs little
more than typer itself (tests/test_cli_startup.py holds this).

The one rule kept here: **no traceback reaches a user**. A refused command — whatever click
refuses (an unknown command or option, a missing argument, a value of the wrong type or outside
its choices: a :class:`typer.TyperException`), every error the domain raises on purpose
(:class:`~turncheck.models.errors.TurncheckError`) and what the operating system reports for a
path (:class:`OSError`) — is exactly one line on stderr, ``turncheck: error: …``, and exit
status 2. Commands check their inputs before writing, so a refused command has written nothing.
A fault raised in the user's own loaded code (a model, a trimmer) is theirs: one line naming the
exception and the line of their file, exit 2. Only a bug in turncheck itself prints a traceback,
followed by a line asking to report it, and exits 70 (``EX_SOFTWARE``).

A run that reaches the memory budget, or its ``--timeout`` in the middle of a step that never
ends, is stopped there by the run watch (:mod:`turncheck.sim.run_bounds`): one line naming the
bound, exit 2, as is an allocation the system refuses (``MemoryError``).

Exit statuses: 0 success; 1 a check that ran and found a violation (or a failed judgement);
2 a usage, input or I/O error, or a bound reached mid-step; 70 a bug in turncheck; 130 interrupted.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import sys
import traceback
from typing import TYPE_CHECKING, Annotated, Any

import typer

import turncheck
from turncheck.cli.config import default_map
from turncheck.cli.interrupt import ignore_unawaited_coroutines, swallowed_interrupts_redelivered
from turncheck.cli.messages import one_line
from turncheck.models.errors import TurncheckError
from turncheck.sim.run_bounds import caused_by_memory, out_of_memory_line, watched

if TYPE_CHECKING:
    from typer._click import Command, Context, Parameter

EXIT_USAGE = 2
EXIT_INCONCLUSIVE = 3  # nothing broke, but the run could not cover what it was asked to: never green
EXIT_BUG = 70
EXIT_INTERRUPTED = 130


def print_help_if_bare(ctx: typer.Context) -> None:
    """A bare group (``turncheck``, ``turncheck log``) prints its help, as ``--help`` does, exit 0."""
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())


VERBOSE_HANDLER = "turncheck-verbose"
"""The name of the stderr handler ``-v`` puts on turncheck's loggers, removed when the command ends."""


def _log_to_stderr(verbosity: int) -> None:
    """``-v``: turncheck's INFO lines (engine chosen, states explored, files written) on stderr,
    ``-vv`` its DEBUG lines too. Only stderr: stdout and the result files are the same with or
    without it. ``logging`` is imported here, for ``-v`` alone (3 ms of every start otherwise)."""
    if verbosity > 0:
        import logging

        _stop_logging()  # -v given before and after the command: one handler, the louder level
        logger = logging.getLogger("turncheck")
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name(VERBOSE_HANDLER)
        handler.setFormatter(logging.Formatter("turncheck: %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)


def _stop_logging() -> None:
    logging = sys.modules.get("logging")
    if logging is None:  # never imported: no -v ran, so no handler of ours to remove
        return
    logger = logging.getLogger("turncheck")
    for handler in [h for h in logger.handlers if h.get_name() == VERBOSE_HANDLER]:
        logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


def _show_version(value: bool) -> None:
    if value:
        print(f"turncheck {turncheck.__version__}")
        raise typer.Exit(0)


def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="Log what runs to stderr: -v INFO, -vv DEBUG (before or after the command).",
        ),
    ] = 0,
) -> None:
    """Simulate and model-check the context layer of LLM agents.

    Exit status: 0 ok, 1 a violation or failed judgement, 2 a usage, input or I/O error,
    70 a bug in turncheck (please report it), 130 interrupted.
    """
    _log_to_stderr(verbose)
    print_help_if_bare(ctx)


COMMAND_MODULES = {
    "demo": "report", "report": "report", "plot": "report", "project": "project", "lint": "project",
    "generate": "project", "scenario": "scenario", "sweep": "sweep", "check": "check",
    "explore": "check", "cases": "cases", "replay": "replay", "log": "log", "bench": "bench",
    "stress": "stress", "race": "race", "import": "import_log", "list": "listing", "init": "init",
}  # fmt: skip
"""Which module registers each command: a run of one command imports and builds that module's
commands alone — the others' modules and typer's work on their parameters are most of what a
small run would otherwise spend starting (tests/test_cli_startup.py checks the table against
what the modules register)."""

MODULES = tuple(dict.fromkeys(COMMAND_MODULES.values()))
"""The command modules of :mod:`turncheck.cli`, in the order ``turncheck --help`` lists them."""


@functools.cache
def _app_of(modules: tuple[str, ...], only: str | None = None) -> typer.Typer:
    """A ``turncheck`` app with the commands of ``modules`` (all of them: :data:`app`); with
    ``only``, that command alone of theirs: a run builds the command it runs, not its module's
    others (``check`` without ``explore``: typer's work on their options is part of every start)."""
    built = typer.Typer(
        name="turncheck",
        help="Simulate and model-check the context layer of LLM agents.",
        invoke_without_command=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    built.callback()(_root)
    for name in modules:
        importlib.import_module(f"turncheck.cli.{name}").register(built)
    if only is not None:
        built.registered_commands = [c for c in built.registered_commands if c.name == only]
        built.registered_groups = [g for g in built.registered_groups if g.name == only]
    return built


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole command line, every command registered (docs, tests, extensions)."""
    if name == "app":
        return _app_of(MODULES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _modules_for(argv: list[str] | None) -> tuple[tuple[str, ...], str | None]:
    """The modules a run needs and the command it runs: the named command alone, else (help, a
    typo, completion) every module and command. The root's options (``-v``, ``-V``, ``-h``) take
    no value, so the command is the first word that is not an option."""
    args = sys.argv[1:] if argv is None else argv
    word = next((a for a in args if not a.startswith("-")), None)
    module = COMMAND_MODULES.get(word or "")
    if module is None or "_TURNCHECK_COMPLETE" in os.environ:  # completion lists every command
        return MODULES, None
    return (module,), word


@functools.cache
def _command(modules: tuple[str, ...] = MODULES, only: str | None = None) -> Command:
    """The click command behind the app of ``modules`` (``only`` that command of theirs), built
    once per process.

    ``app(...)`` rebuilds it from every command's signature on each call (a tenth of a second or
    more, most of a small run); one build serves every call, in-process callers (tests,
    notebooks) included.
    """
    command = typer.main.get_command(_app_of(modules, only))
    _verbose_after_the_command(command)
    return command


def _verbose_after_the_command(group: Command) -> None:
    """``-v/--verbose`` after the command too (``turncheck check … -v``), as users type it: each
    subcommand, and each group of them (``cases``, ``log``), gets a copy of the root's count
    option that logs as the root's does. Only where the command has no ``-v`` of its own."""
    (root,) = [p for p in group.params if p.name == "verbose"]
    option = copy.copy(root)
    option.expose_value = False
    option.callback = lambda _ctx, _param, value: _log_to_stderr(value)
    option.help = "Log what runs to stderr: -v INFO, -vv DEBUG (here or before the command)."  # type: ignore[attr-defined]
    stack = list(getattr(group, "commands", {}).values())
    while stack:
        sub = stack.pop()
        stack += getattr(sub, "commands", {}).values()
        taken = {name for param in sub.params for name in getattr(param, "opts", ())}
        if not taken & {"-v", "--verbose"}:  # a group too: ``turncheck cases -v run``
            sub.params.append(option)
        _quiet_on_the_group(sub, taken)
    _quiet_on_the_group(group, {name for param in group.params for name in getattr(param, "opts", ())})


def _quiet_on_the_group(group: Command, taken: set[str]) -> None:
    """``-q/--quiet`` right after a group (``turncheck cases -q list``, ``turncheck -q demo``) is
    the subcommand's own ``-q``: a copy of a subcommand's option whose callback makes ``quiet`` the
    default of every command under the group that has one (through the context's ``default_map``,
    as ``[tool.turncheck]`` does; a flag given after the subcommand still wins)."""
    quiet = _quiet_options(group)
    if not quiet or taken & {"-q", "--quiet"}:
        return
    option = copy.copy(quiet[0])
    option.expose_value = False
    option.help = "Quiet the subcommand as its own -q does (here or after it)."  # type: ignore[attr-defined]

    def callback(ctx: Context, _param: Parameter, value: Any) -> None:
        if value:
            ctx.default_map = _quiet_defaults(group, dict(ctx.default_map or {}))

    option.callback = callback
    group.params.append(option)


def _quiet_options(group: Command) -> list[Parameter]:
    subs = list(getattr(group, "commands", {}).values())
    return [p for sub in subs for p in sub.params if p.name == "quiet"] + [
        p for sub in subs for p in _quiet_options(sub)
    ]


def _quiet_defaults(group: Command, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` (a ``default_map``) with ``quiet`` on for every command under ``group`` that has it."""
    for name, sub in getattr(group, "commands", {}).items():
        mine = dict(given.get(name) or {})
        if any(p.name == "quiet" for p in sub.params):
            mine["quiet"] = True
        given[name] = _quiet_defaults(sub, mine)
    return given


def _refusal(exc: Exception) -> str:
    """The one line of a refused command: ours as raised, click's with where help is."""
    if isinstance(exc, typer.TyperException):
        ctx = getattr(exc, "ctx", None)  # a usage error knows the command it concerns
        return f"{exc.format_message()} (see '{ctx.command_path if ctx else 'turncheck'} --help')"
    if isinstance(exc, OSError) and not isinstance(exc, TurncheckError):
        reason = exc.strerror or type(exc).__name__
        return f"{exc.filename}: {reason}" if exc.filename is not None else reason
    return str(exc)


def error(message: str) -> int:
    """Print the one line of a refused command and return its exit status."""
    print(f"turncheck: error: {one_line(message)}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m turncheck``; returns the exit status.

    typer runs the command (``standalone_mode=False``: it returns the status, turns Ctrl-C into
    130 and leaves the errors to this function), with the defaults of the nearest
    ``[tool.turncheck]`` (:mod:`turncheck.cli.config`) under the flags given.
    """
    watch = None
    try:
        defaults = default_map()
        with swallowed_interrupts_redelivered(), watched() as watch:
            status = _command(*_modules_for(argv)).main(
                args=argv, standalone_mode=False, prog_name="turncheck", default_map=defaults
            )
    except (TurncheckError, typer.TyperException, OSError) as exc:
        return error(_refusal(exc))
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    except MemoryError:  # an allocation refused (a memory limit) before the budget was seen
        return error(out_of_memory_line())
    except Exception as exc:
        from turncheck.models.user_code import fault_in_user_code

        if caused_by_memory(exc):  # wrapped: Hypothesis's flaky-test error over a MemoryError
            return error(out_of_memory_line())

        if (fault := fault_in_user_code(exc)) is not None:  # the user's model or trimmer failed
            return error(f"your code raised {fault}")
        traceback.print_exc()
        print(
            f"turncheck {turncheck.__version__}: this is a bug in turncheck, not in your input; "
            "please report it with the command you ran and the traceback above",
            file=sys.stderr,
        )
        return EXIT_BUG
    finally:
        _stop_logging()
    if status == EXIT_INTERRUPTED and watch is not None and watch.reason is not None:
        return error(watch.reason)  # the run watch stopped it (sim.run_bounds)
    if status == EXIT_INTERRUPTED:  # typer turns Ctrl-C into a silent exit code 130
        return interrupted()
    return status if isinstance(status, int) else 0


def interrupted() -> int:
    """The one line of a run stopped by Ctrl-C, and its exit status. A race schedule cut short
    leaves coroutines the user's test made and never got to await; collected at exit, each would
    add Python's "coroutine … was never awaited" warning after the line (seen under load on
    ``race``), so that warning is ignored from here on."""
    ignore_unawaited_coroutines()
    print("turncheck: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
