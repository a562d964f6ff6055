"""``turncheck replay TRACE.json``: re-execute a saved counterexample against the current code.

Exit 1 while it still fails (the same way or differently), 0 once it no longer does, 2 for a
trace that cannot belong to its model. A trace never loads code by itself: a user's model or
projector it names is loaded only when the command line names it too (``--model``, ``--param``).
``--html`` also writes the interactive trace viewer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from turncheck.cli.options import FormatOpt, QuietOpt
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter

if TYPE_CHECKING:
    from turncheck.models.protocol import ProtocolModel
    from turncheck.sim.trace import Trace


def replay_command(
    trace_path: Annotated[Path, typer.Argument(help="A trace saved by turncheck check.")],
    model_ref: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model to replay on: a catalog name (must match the trace), or package.module:Class "
            "/ path/file.py:Class — the only way a user's code is loaded; a trace's own 'model' field "
            "never loads code.",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the interactive trace viewer page here.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="Confirm a trace parameter that names code (e.g. strategy=my_trim:cut): "
            "only code named on the command line is loaded.",
        ),
    ] = None,
) -> None:
    """Re-execute a saved counterexample; exit 1 if it still fails, 0 if it no longer does.

    Code is loaded only from what the command line names: a trace is data, and one received
    from someone else may sit next to a ``.py`` file its ``model`` field names. A catalog model
    is built from the trace alone; a user's class needs ``--model REF``. It prints nothing on
    stderr but errors, so --quiet changes nothing; it is accepted like on every command."""
    from turncheck.models.parameters import split_assignments
    from turncheck.sim.trace import load_trace, replay

    trace = load_trace(trace_path)
    _check_code_in_params(trace_path, trace, split_assignments(param or []))
    model = _replay_model(trace_path, trace, model_ref)
    result = replay(model, trace)
    if html is not None:
        from turncheck.reports.viewer import write_trace_page

        write_trace_page(trace, html, model=model)
    if fmt == "json":
        print_json(result.to_json(trace_path, model, trace))
    else:
        print("\n".join(result.lines(trace_path, model, trace)))
        if html is not None:
            print(f"trace viewer: {html}")
    raise typer.Exit(1 if result.still_fails else 0)


def _check_code_in_params(trace_path: Path, trace: Trace, confirmed: dict[str, str]) -> None:
    """Refuse a trace whose parameters name user code the command line did not name: building
    its model would import that code, and a trace is data."""
    from turncheck.models.user_code import names_code

    for name, value in trace.params.items():
        if not names_code(value):
            continue
        given = confirmed.get(name)
        if given is None:
            raise BadParameter(
                f"{trace_path}: trace parameter {name} names user code {value!r}; a trace never loads "
                f"code — name it yourself: turncheck replay {trace_path} --param {name}={value}"
            )
        if given != value:
            raise BadParameter(f"{trace_path}: trace parameter {name} is {value!r}, not {given!r}")


def _replay_model(trace_path: Path, trace: Trace, model_ref: str | None) -> ProtocolModel[Any, Any]:
    """The model to replay ``trace`` on, loading code only from ``model_ref`` (the command line).

    A trace naming a catalog model is rebuilt from its name; a trace naming user code
    (``…:Class``) is refused unless ``--model`` names the code to load. The trace's recorded
    model name must match what was built either way.
    """
    from turncheck.sim.protocols import is_user_reference, load_model

    if model_ref is None:
        if is_user_reference(trace.model):
            raise BadParameter(
                f"{trace_path}: trace names user code {trace.model!r}; a trace never loads code — "
                f"name it yourself: turncheck replay {trace_path} --model {trace.model}"
            )
        model = load_model(trace.model, trace.params)
    elif is_user_reference(model_ref):
        model = load_model(model_ref, trace.params)
    else:
        if model_ref not in (trace.model, trace.model_name) or is_user_reference(trace.model):
            raise BadParameter(f"{trace_path}: trace belongs to model {trace.model!r}, not {model_ref!r}")
        model = load_model(model_ref, trace.params)
    recorded = trace.model_name
    if recorded and recorded != trace.model and model.name != recorded:
        raise BadParameter(
            f"{trace_path}: trace was recorded on model {recorded!r}, {model_ref or trace.model} is {model.name!r}"
        )
    return model


def register(app: typer.Typer) -> None:
    app.command("replay", help="Re-execute a saved counterexample trace.")(replay_command)
