"""The ``turncheck`` command line: one typer app, commands registered by topic modules.

Every command module in :mod:`turncheck.cli` exposes ``register(app)``. The one rule kept here:
**no traceback reaches a user**. typer (click) parses the arguments; whatever it refuses — an
unknown command or option, a missing argument, a value of the wrong type or outside its choices —
and every error the domain raises on purpose (:class:`~turncheck.models.errors.TurncheckError`)
or the operating system reports for a path (:class:`OSError`) becomes exactly one line on stderr,
``turncheck: error: …``, and exit status 2. Commands check their inputs before writing, so a
refused command has written nothing. Only a bug in turncheck itself prints a traceback, followed
by a line asking to report it, and exits 70 (``EX_SOFTWARE``).

Exit statuses: 0 success; 1 a check that ran and found a violation (or a failed judgement);
2 a usage, input or I/O error; 70 a bug in turncheck; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from typing import Annotated

import typer

import turncheck
from turncheck.cli.interrupt import swallowed_interrupts_redelivered
from turncheck.cli.messages import one_line
from turncheck.models.errors import TurncheckError
from turncheck.models.registry import load_plugins

# The exceptions module of the click that typer runs on: typer >= 0.29 vendors click as
# ``typer._click``, older typers use ``click`` itself. ``typer.BadParameter`` is public in both
# and lives in that module, so this finds the right classes without naming a private module.
_click_exceptions = sys.modules[typer.BadParameter.__module__]
ClickException: type[Exception] = _click_exceptions.ClickException
ClickAbort: type[BaseException] = getattr(_click_exceptions, "Abort", typer.Abort)
NoArgsIsHelp: type[Exception] | None = getattr(_click_exceptions, "NoArgsIsHelpError", None)

EXIT_USAGE = 2
EXIT_BUG = 70
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="turncheck",
    help="Simulate and model-check the context layer of LLM agents.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        print(f"turncheck {turncheck.__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Simulate and model-check the context layer of LLM agents.

    Exit status: 0 ok, 1 a violation or failed judgement, 2 a usage, input or I/O error,
    70 a bug in turncheck (please report it), 130 interrupted.
    """


def _register_commands() -> None:
    from turncheck.cli import (
        bench,
        check,
        import_log,
        listing,
        log,
        project,
        replay,
        report,
        scenario,
        stress,
        sweep,
    )

    for module in (report, project, scenario, sweep, check, replay, log, bench, stress, import_log, listing):
        module.register(app)


# Extensions (the entry-point group turncheck.plugins) are imported before the commands list
# their choices; one that fails to import is reported by main() as one line, not at import.
with contextlib.suppress(TurncheckError):
    load_plugins()
_register_commands()


def _usage_message(exc: Exception) -> str:
    format_message = getattr(exc, "format_message", None)
    return str(format_message()) if callable(format_message) else str(exc)


def _usage_line(exc: Exception) -> str:
    """click's message for a usage error, with the command it concerns and where help is."""
    message = _usage_message(exc)
    ctx = getattr(exc, "ctx", None)
    path = str(getattr(ctx, "command_path", "") or "turncheck")
    if not path.startswith("turncheck"):
        path = "turncheck"
    return f"{message} (see '{path} --help')"


def _os_error_line(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else None
    reason = exc.strerror or type(exc).__name__
    return f"{where}: {reason}" if where is not None else reason


def error(message: str) -> int:
    """Print the one line of a refused command and return its exit status."""
    print(f"turncheck: error: {one_line(message)}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m turncheck``; returns the exit status."""
    try:
        with swallowed_interrupts_redelivered():
            load_plugins()  # raises the failure of an extension that could not be imported
            status = app(args=argv, standalone_mode=False, prog_name="turncheck")
    except TurncheckError as exc:
        return error(str(exc))
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except (KeyboardInterrupt, ClickAbort):
        return interrupted()
    except BrokenPipeError:
        return 0  # the reader went away (``| head``): nothing to say
    except ClickException as exc:
        if NoArgsIsHelp is not None and isinstance(exc, NoArgsIsHelp):
            print(_usage_message(exc))  # a bare command or group: its help, as --help shows it
            return 0
        return error(_usage_line(exc))
    except OSError as exc:
        return error(_os_error_line(exc))
    except Exception:
        traceback.print_exc()
        print(
            f"turncheck {turncheck.__version__}: this is a bug in turncheck, not in your input; "
            "please report it with the command you ran and the traceback above",
            file=sys.stderr,
        )
        return EXIT_BUG
    if status == EXIT_INTERRUPTED:  # typer turns Ctrl-C into a silent exit code 130
        return interrupted()
    return status if isinstance(status, int) else 0


def interrupted() -> int:
    """The one line of a run stopped by Ctrl-C, and its exit status."""
    print("turncheck: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
