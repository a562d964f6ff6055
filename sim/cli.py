"""The ``turncheck`` command line: one Typer app, commands registered by topic modules.

Every command module under ``sim`` exposes ``register(app)``. Errors the domain raises on
purpose (:class:`models.errors.TurncheckError`) become one line on stderr and exit status 2;
nothing is written when an input is refused.
"""

from __future__ import annotations

import sys

import typer

from models.errors import TurncheckError

app = typer.Typer(
    name="turncheck",
    help="Simulate and model-check the context layer of LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    from sim import cli_bench, cli_check, cli_log, cli_project, cli_report, cli_scenario, cli_sweep

    for module in (cli_report, cli_project, cli_scenario, cli_sweep, cli_check, cli_log, cli_bench):
        module.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    try:
        status = app(args=argv, standalone_mode=False)
    except TurncheckError as exc:
        print(f"turncheck: error: {exc}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except SystemExit as exc:  # raised by click for --help and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except KeyboardInterrupt:
        print("turncheck: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            return 1
        raise
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
