"""``turncheck check`` and ``explore``: model checking from the command line.

``check MODEL`` runs the exhaustive explorer and/or Hypothesis on one model configuration and
exits 0 when every invariant holds, every ``sometimes`` goal was reached and every ``eventually``
property holds on every fair run (the explorer's; Hypothesis does not check them), 1 with a
counterexample (printed as a transcript and saved as a replayable JSON trace: at ``--trace-out``
when given — saving an artifact never changes the verdict), 3 when nothing broke but a goal was
never reached (inconclusive — never green), and 2 for bad input.
``explore MODEL`` prints state-space statistics, per-property results, exact worst cases, the
symmetry reduction factor and, for the trigger model, the cross-check against the closed-form
bound; it can export the state graph as DOT or GraphML. ``replay TRACE.json`` (:mod:`turncheck.cli.replay`) re-executes a saved
counterexample against the current code: exit 1 if it still fails, 0 if it no longer does.

MODEL is a catalog name (``turncheck check --help`` lists them) or a user's class written
``package.module:Class`` or ``path/to/file.py:Class``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from turncheck.cli.options import FormatOpt, QuietOpt
from turncheck.cli.outputs import check_output_file
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter
from turncheck.models.output_files import refuse_symlinked_folders
from turncheck.sim.run_bounds import stop_by

if TYPE_CHECKING:
    from turncheck.models.protocol import ProtocolModel
    from turncheck.sim.checking import CheckReport
    from turncheck.sim.exploration import RawStates
    from turncheck.sim.explorer import Exploration
    from turncheck.sim.witness import ConcretePath

DEFAULT_TRACES = Path(".turncheck") / "traces"

ParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        "-p",
        help="Model parameter k=v (repeatable); integers within ±131072, and the run within a "
        "2 GiB memory budget (TURNCHECK_MEMORY_BUDGET, MiB) or stopped with one line.",
    ),
]
ModelArg = Annotated[str, typer.Argument(help="Model name, or package.module:Class for your own model.")]
MaxStatesOpt = Annotated[int, typer.Option("--max-states", help="Stop the explorer after this many states.")]
MaxDepthOpt = Annotated[int | None, typer.Option("--max-depth", help="Do not expand states this deep.")]
TimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", help="Stop the explorer after this many seconds.")
]


EngineOpt = Annotated[
    Literal["hypothesis", "explore", "both", "simpy"],
    typer.Option(
        "--engine",
        help="Which checker runs: both = explore + hypothesis; simpy = random runs of the model in "
        "simulated time (each action takes the time the model gives it), not exhaustive.",
    ),
]
SeedOpt = Annotated[
    int, typer.Option("--seed", help="Seed of Hypothesis, of simpy's runs and of --check-determinism.")
]


def _check_bounds(max_states: int, max_depth: int | None, timeout: float | None) -> None:
    if max_states < 1:
        raise BadParameter(f"--max-states must be >= 1, got {max_states}")
    if max_depth is not None and max_depth < 0:
        raise BadParameter(f"--max-depth must be >= 0, got {max_depth}")
    if timeout is not None and not timeout > 0:
        raise BadParameter(f"--timeout must be > 0, got {timeout}")
    if timeout is not None:  # from here, building the model included; the engines stop sooner, between steps
        stop_by(timeout)


def check_command(
    model_ref: ModelArg,
    param: ParamOpt = None,
    invariant: Annotated[
        list[str] | None, typer.Option("--invariant", "-i", help="Check only this invariant (repeatable).")
    ] = None,
    engine: EngineOpt = "both",
    max_examples: Annotated[int, typer.Option("--max-examples", help="Hypothesis (or simpy) runs.")] = 200,
    steps: Annotated[int, typer.Option("--steps", help="Most actions per Hypothesis (or simpy) run.")] = 40,
    seed: SeedOpt = 0,
    trace_out: Annotated[
        Path | None,
        typer.Option(
            "--trace-out",
            help="Save the counterexample here (JSON) instead of under .turncheck/traces; "
            "the exit status is the same with or without it.",
        ),
    ] = None,
    check_determinism_: Annotated[
        bool, typer.Option("--check-determinism", help="First run the model twice with the same seed.")
    ] = False,
    max_states: MaxStatesOpt = 2_000_000,
    max_depth: MaxDepthOpt = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds the whole check may take: the explorer first, Hypothesis in what is left; "
            "each stops at its next step and says so (a step that does not end: one line, exit 2).",
        ),
    ] = None,
    quiet: QuietOpt = False,
    fmt: FormatOpt = "table",
    database: Annotated[
        Path | None, typer.Option("--database", help="Hypothesis example database directory.")
    ] = None,
) -> None:
    """Check a model's invariants, goals and eventually-properties; exit 0 pass, 1 counterexample
    (a lasso for an eventually-property), 3 inconclusive."""
    from turncheck.models.parameters import split_assignments
    from turncheck.sim.checking import DEFAULT_DATABASE, run_check, select_properties
    from turncheck.sim.explorer import StderrProgress
    from turncheck.sim.protocols import load_model

    _check_bounds(max_states, max_depth, timeout)
    if trace_out is not None:
        check_output_file(trace_out, "--trace-out", make_folders=False)
    # the folders check makes itself under .turncheck: never a symlink onto somewhere else
    own = [p for p, given in ((DEFAULT_TRACES, trace_out), (DEFAULT_DATABASE, database)) if given is None]
    refuse_symlinked_folders(*([DEFAULT_TRACES.parent] if own else []), *own)
    if max_examples < 1 or steps < 1:
        raise BadParameter("--max-examples and --steps must be >= 1")
    assignments = split_assignments(param or [])
    model = load_model(model_ref, assignments)
    props = select_properties(model, invariant or [])
    preamble = [_determinism(model_ref, assignments, seed)] if check_determinism_ else []
    progress = None if quiet or fmt == "json" else StderrProgress()
    report = run_check(
        model,
        props,
        engine=engine,
        max_examples=max_examples,
        steps=steps,
        seed=seed,
        database=database if database is not None else DEFAULT_DATABASE,
        max_states=max_states,
        max_depth=max_depth,
        timeout=timeout,
        progress=progress,
    )
    if progress is not None:
        progress.finish()
    traces = _save_traces(report, model_ref, trace_out)
    trace_path = traces.pop(report.violated, None) if report.violated is not None else None
    code = report.exit_code
    if fmt == "json":
        print_json(report.to_json(model_ref, trace_path))
        raise typer.Exit(code)
    print("\n".join(report.lines(steps, seed, trace_path, traces, preamble)))
    raise typer.Exit(code)


def _determinism(model_ref: str, assignments: dict[str, str], seed: int) -> str:
    """``--check-determinism``: the line saying two copies walked alike; exit 1 if they did not."""
    from turncheck.sim.determinism import check_determinism
    from turncheck.sim.protocols import load_model

    det = check_determinism(lambda: load_model(model_ref, assignments), seed=seed)
    if det.divergence is not None:
        print(f"determinism: NOT deterministic — {det.divergence.line()}")
        raise typer.Exit(1)
    return f"determinism: {det.runs} seeded walks ({det.steps} steps) identical on two copies"


def _save_traces(report: CheckReport, model_ref: str, trace_out: Path | None) -> dict[str, Path]:
    """Save the counterexample of every violated invariant: the reported one at ``--trace-out``,
    each further one next to it as ``STEM.INVARIANT.json``; without ``--trace-out`` each at its
    default path, named by the model, the invariant and a digest of the configuration."""
    from turncheck.models.output_files import write_outputs
    from turncheck.sim.trace import Trace, recording_of

    model = report.model
    digest = hashlib.sha256(
        json.dumps([model_ref, dict(model.params)], sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in model.name)
    paths: dict[str, Path] = {}
    files: dict[Path, str] = {}
    for name, cx in report.counterexamples:
        trace = Trace(
            model=model_ref, params=dict(model.params), actions=_actions(cx), violated=name,
            init=cx.init, engine=report.source, model_name=model.name,
            extra=recording_of(model, cx.init, cx.actions, name, cx.loop), loop=cx.loop,
        )  # fmt: skip
        if trace_out is None:
            where = DEFAULT_TRACES / f"{safe}-{name}-{digest}.json"
        else:
            where = trace_out if not paths else trace_out.with_name(f"{trace_out.stem}.{name}.json")
        paths[name] = where
        files[where] = trace.dumps()
    # all or none, never through a symlink; --trace-out's folder must exist, the default one is made
    write_outputs(files, folder=DEFAULT_TRACES.parent if trace_out is None else None)
    return paths


def _actions(cx: ConcretePath) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in cx.actions)


def _reduction(
    model: ProtocolModel[Any, Any], result: Exploration, asked: bool | None, max_states: int,
    max_depth: int | None, left: float | None,
) -> RawStates | None:  # fmt: skip
    """The raw states beside an exploration: none with ``--no-reduction`` (``asked`` False), a
    search without symmetry up to ``--max-states`` with ``--reduction``, else (the default) up
    to :data:`~turncheck.sim.explorer.RAW_SEARCH_STATES` at most."""
    from turncheck.sim.explorer import RAW_SEARCH_STATES, raw_states

    if asked is False:
        return None
    return raw_states(
        model, result, max_states if asked else min(max_states, RAW_SEARCH_STATES), max_depth, left
    )


def explore_command(
    model_ref: ModelArg,
    param: ParamOpt = None,
    max_states: MaxStatesOpt = 2_000_000,
    max_depth: MaxDepthOpt = None,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    symmetry: Annotated[
        bool, typer.Option("--symmetry/--no-symmetry", help="Deduplicate up to symmetry.")
    ] = True,
    reduction: Annotated[
        bool | None,
        typer.Option(
            "--reduction/--no-reduction",
            help="Measure the symmetry reduction; a model that cannot size its classes needs a second "
            "search without symmetry: by default it stops at 100,000 states (then the factor is a lower "
            "bound), with --reduction at --max-states.",
        ),
    ] = None,
    dot: Annotated[Path | None, typer.Option("--dot", help="Write the state graph as DOT.")] = None,
    graphml: Annotated[
        Path | None, typer.Option("--graphml", help="Write the state graph as GraphML.")
    ] = None,
    fmt: FormatOpt = "table",
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the state-space browser page here (small configurations)."),
    ] = None,
) -> None:
    """Explore every interleaving: state-space statistics, properties and exact worst cases."""
    from turncheck.models.parameters import split_assignments
    from turncheck.sim.checking import ExploreReport, cross_check, post_compaction_check
    from turncheck.sim.explorer import StderrProgress, explore
    from turncheck.sim.protocols import load_model

    _check_bounds(max_states, max_depth, timeout)
    for option, path in (("--dot", dot), ("--graphml", graphml)):
        if path is not None:
            check_output_file(path, option)
    model = load_model(model_ref, split_assignments(param or []))
    progress = None if quiet or fmt == "json" else StderrProgress()
    want_graph = dot is not None or graphml is not None
    started = time.perf_counter()
    result = explore(
        model,
        symmetry=symmetry,
        max_states=max_states,
        max_depth=max_depth,
        timeout=timeout,
        record_edges=want_graph,
        progress=progress,
    )
    left = None if timeout is None else timeout - (time.perf_counter() - started)  # one budget for both
    raw = _reduction(model, result, reduction if symmetry else False, max_states, max_depth, left)
    if progress is not None:
        progress.finish()
    if want_graph:
        _write_graphs(result, dot, graphml)
    page = None
    if html is not None:
        from turncheck.reports.state_browser import write_state_space_page

        page = write_state_space_page(model, html, symmetry=symmetry, max_states=max_states,
                                      max_depth=max_depth, timeout=timeout)  # fmt: skip
    report = ExploreReport(
        model_ref, model, result, raw, cross_check(model, result), post_compaction_check(model, result)
    )
    if fmt == "json":
        obj = report.to_json()
        if page is not None:
            obj["html"] = {"page": str(page.path), "states": page.states, "drawn": page.drawn}
        print_json(obj)
        return
    out = report.lines()
    graphs = ((dot, "DOT"), (graphml, "GraphML"))
    out += [f"state graph ({kind}): {path}" for path, kind in graphs if path is not None]
    if page is not None:
        how = "graph drawn" if page.drawn else "searchable frontier view"
        out.append(f"state-space browser: {page.path} ({page.states:,} states, {how})")
    print("\n".join(out))


def _write_graphs(result: Exploration, dot: Path | None, graphml: Path | None) -> None:
    from turncheck.sim.state_graph import write_dot, write_graphml

    graph = result.graph()
    if dot is not None:
        write_dot(graph, str(dot))
    if graphml is not None:
        write_graphml(graph, str(graphml))


def register(app: typer.Typer) -> None:
    # the models are not named here: listing them imports every model (numpy among them), and
    # --help must stay cheap; `turncheck list models` and an unknown name's error list them
    app.command(
        "check",
        help="Check a model's invariants (turncheck list models names them, or package.module:Class).",
    )(check_command)
    app.command("explore", help="Explore a model's whole state space (turncheck list models names them).")(
        explore_command
    )
