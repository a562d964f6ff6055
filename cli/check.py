"""``turncheck check`` and ``explore``: model checking from the command line.

``check MODEL`` runs the exhaustive explorer and/or Hypothesis on one model configuration and
exits 0 when every invariant holds and every ``sometimes`` goal was reached, 1 with a
counterexample (printed as a transcript and saved as a replayable JSON trace), 3 when nothing
broke but a goal was never reached (inconclusive — never green), and 2 for bad input; with
``--trace-out`` it searches for a counterexample instead and exits 0 when it saved one, 1 when
there is none (see :func:`exit_code`).
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
from typing import Annotated, Any, Literal

import typer

from turncheck.cli.options import ExploreJobsOpt, FormatOpt, QuietOpt
from turncheck.models.catalog import model_names
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import ProtocolModel
from turncheck.scenarios.base import split_assignments
from turncheck.sim.checking import ENGINES, CheckReport, run_check, select_properties
from turncheck.sim.determinism import check_determinism
from turncheck.sim.explorer import (
    Exploration,
    StderrProgress,
    explore,
    reduction_factor,
)
from turncheck.sim.protocols import load_model
from turncheck.sim.state_graph import write_dot, write_graphml
from turncheck.sim.stateful import DEFAULT_DATABASE
from turncheck.sim.trace import Trace, recording_of, save_trace, transcript

DEFAULT_TRACES = Path(".turncheck") / "traces"

ParamOpt = Annotated[
    list[str] | None, typer.Option("--param", "-p", help="Model parameter k=v (repeatable).")
]
ModelArg = Annotated[str, typer.Argument(help="Model name, or package.module:Class for your own model.")]
MaxStatesOpt = Annotated[int, typer.Option("--max-states", help="Stop the explorer after this many states.")]
MaxDepthOpt = Annotated[int | None, typer.Option("--max-depth", help="Do not expand states this deep.")]
TimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", help="Stop the explorer after this many seconds.")
]


def params_text(model: ProtocolModel[Any, Any]) -> str:
    return " ".join(f"{k}={_plain(v)}" for k, v in model.params.items())


def _plain(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def _check_bounds(max_states: int, max_depth: int | None, timeout: float | None) -> None:
    if max_states < 1:
        raise BadParameter(f"--max-states must be >= 1, got {max_states}")
    if max_depth is not None and max_depth < 0:
        raise BadParameter(f"--max-depth must be >= 0, got {max_depth}")
    if timeout is not None and not timeout > 0:
        raise BadParameter(f"--timeout must be > 0, got {timeout}")


def _exploration_lines(result: Exploration, raw: Exploration | None = None) -> list[str]:
    lines = [
        f"states: {result.distinct:,} distinct ({'up to symmetry' if result.symmetry else 'no symmetry'}), "
        f"{result.generated:,} transitions, depth {result.max_depth_seen}, {result.terminal:,} terminal",
        f"time: {result.seconds:.2f} s, {result.states_per_second:,.0f} distinct states/s",
        f"coverage: {result.completeness()}",
    ]
    if raw is not None:
        factor = reduction_factor(result, raw)
        if factor is not None:
            lines.append(
                f"symmetry: {raw.distinct:,} raw states / {result.distinct:,} classes "
                f"= reduction ×{factor:.2f}"
            )
        else:
            lines.append(f"symmetry: ≥ {raw.distinct:,} raw states (raw search bounded); reduction n/a")
    return lines


def _property_rows(report: CheckReport) -> list[str]:
    ex, hy = report.exploration, report.stateful
    rows = [("property", "kind", "explorer", "hypothesis")]
    for p in report.properties:
        e = h = "-"
        if ex is not None:
            o = ex.outcome(p.name)
            e = o.status + (f" at depth {o.depth}" if o.depth is not None else "")
            if o.status == "holds" and not ex.exhausted:
                e += " (bounded)"
        if hy is not None:
            if p.expectation == "always":
                h = (
                    f"violated after {len(hy.actions)} steps (shrunk)"
                    if hy.violated == p.name
                    else "holds"
                    if hy.violated is None
                    else "-"
                )
            elif hy.violated is None:
                h = "reached" if hy.goals.get(p.name) else "unreached"
        rows.append((p.name, p.expectation, e, h))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _default_trace_path(model: ProtocolModel[Any, Any], ref: str, prop: str) -> Path:
    digest = hashlib.sha256(
        json.dumps([ref, dict(model.params)], sort_keys=True, default=str).encode()
    ).hexdigest()
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in model.name)
    return DEFAULT_TRACES / f"{safe}-{prop}-{digest[:8]}.json"


def _report_json(report: CheckReport, ref: str, trace_path: Path | None) -> dict[str, Any]:
    ex, hy = report.exploration, report.stateful
    out: dict[str, Any] = {
        "model": ref,
        "params": dict(report.model.params),
        "verdict": report.verdict,
        "violated": report.violated,
        "goals": report.goals,
    }
    if ex is not None:
        out["explore"] = {
            "distinct": ex.distinct,
            "transitions": ex.generated,
            "depth": ex.max_depth_seen,
            "exhaustive": ex.exhausted,
            "bound": ex.bound,
            "properties": {o.name: {"status": o.status, "depth": o.depth} for o in ex.properties},
            "worst": {w.metric: w.value for w in ex.worst},
        }
    if hy is not None:
        out["hypothesis"] = {
            "violated": hy.violated,
            "steps": len(hy.actions) if hy.violated else None,
            "goals": hy.goals,
        }
    if report.counterexample is not None:
        out["counterexample"] = {
            "source": report.source,
            "steps": len(report.counterexample.actions),
            "actions": [list(a) for a in report.counterexample.actions],
            "trace": str(trace_path) if trace_path else None,
        }
    if report.cross is not None:
        out["cross_check"] = report.cross.line()
    if report.post is not None:
        out["post_compaction_check"] = report.post.line()
    out["counterexamples"] = {name: len(cx.actions) for name, cx in report.counterexamples}
    return out


def check_command(
    model_ref: ModelArg,
    param: ParamOpt = None,
    invariant: Annotated[
        list[str] | None, typer.Option("--invariant", "-i", help="Check only this invariant (repeatable).")
    ] = None,
    engine: Annotated[
        Literal["hypothesis", "explore", "both"], typer.Option("--engine", help="Which checker runs.")
    ] = "both",
    max_examples: Annotated[int, typer.Option("--max-examples", help="Hypothesis runs.")] = 200,
    steps: Annotated[int, typer.Option("--steps", help="Most actions per Hypothesis run.")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Seed of Hypothesis and of --check-determinism.")] = 0,
    trace_out: Annotated[
        Path | None,
        typer.Option(
            "--trace-out",
            help="Search for a counterexample and save it here (JSON): exit 0 when one is saved, "
            "1 when every invariant holds (found / not found, as grep).",
        ),
    ] = None,
    check_determinism_: Annotated[
        bool, typer.Option("--check-determinism", help="First run the model twice with the same seed.")
    ] = False,
    max_states: MaxStatesOpt = 2_000_000,
    max_depth: MaxDepthOpt = None,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    fmt: FormatOpt = "table",
    database: Annotated[
        Path | None, typer.Option("--database", help="Hypothesis example database directory.")
    ] = None,
    jobs: ExploreJobsOpt = 1,
) -> None:
    """Check a model's invariants and goals; exit 0 pass, 1 counterexample, 3 inconclusive.

    With --trace-out the run searches for a counterexample: exit 0 when one is saved, 1 when
    every invariant holds (as grep: found / not found).
    """
    _check_bounds(max_states, max_depth, timeout)
    if engine not in ENGINES:
        raise BadParameter(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if max_examples < 1 or steps < 1:
        raise BadParameter("--max-examples and --steps must be >= 1")
    assignments = split_assignments(param or [])
    model = load_model(model_ref, assignments)
    props = select_properties(model, invariant or [])
    out: list[str] = []
    if check_determinism_:
        det = check_determinism(lambda: load_model(model_ref, assignments), seed=seed)
        if det.divergence is not None:
            print(f"determinism: NOT deterministic — {det.divergence.line()}")
            raise SystemExit(1)
        out.append(f"determinism: {det.runs} seeded walks ({det.steps} steps) identical on two copies")
    progress = None if quiet or fmt == "json" else StderrProgress()
    report = run_check(
        model,
        props,
        engine=engine,  # type: ignore[arg-type]
        max_examples=max_examples,
        steps=steps,
        seed=seed,
        database=database if database is not None else DEFAULT_DATABASE,
        max_states=max_states,
        max_depth=max_depth,
        timeout=timeout,
        progress=progress,
        jobs=jobs,
    )
    if progress is not None:
        progress.finish()
    trace_path: Path | None = None
    if report.counterexample is not None and report.violated is not None:
        trace = Trace(
            model=model_ref,
            params=dict(model.params),
            actions=tuple(
                tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in report.counterexample.actions
            ),
            violated=report.violated,
            init=report.counterexample.init,
            engine=report.source,
            model_name=model.name,
            extra=recording_of(
                model, report.counterexample.init, report.counterexample.actions, report.violated
            ),
        )
        trace_path = save_trace(trace, trace_out or _default_trace_path(model, model_ref, report.violated))
    other_paths = _save_other_traces(report, model_ref, trace_out)
    code = exit_code(report, searching=trace_out is not None)
    if fmt == "json":
        print(json.dumps(_report_json(report, model_ref, trace_path), ensure_ascii=False))
        raise SystemExit(code)
    lines = _check_lines(report, out, steps, seed, trace_path, other_paths)
    if trace_out is not None and report.verdict != "inconclusive":
        lines.append(
            f"exit {code}: --trace-out asked for a counterexample, and "
            + ("it is saved" if code == 0 else "there is none")
        )
    print("\n".join(lines))
    raise SystemExit(code)


def exit_code(report: CheckReport, *, searching: bool) -> int:
    """``check``'s exit status: a gate by default, a search with ``--trace-out``.

    Without ``--trace-out`` the run is a gate (0 every invariant holds, 1 a counterexample, as
    pytest). ``--trace-out PATH`` asks for a counterexample at PATH, so the run is a search and
    answers as grep does: 0 when it found and saved one — so ``check … --trace-out t.json &&
    turncheck replay t.json`` runs the replay exactly when there is a trace — and 1 when every
    invariant holds. Inconclusive (3) and bad input (2) mean the same in both.
    """
    if searching and report.verdict != "inconclusive":
        return 0 if report.verdict == "fail" else 1
    return report.exit_code


def _save_other_traces(report: CheckReport, model_ref: str, trace_out: Path | None) -> dict[str, Path]:
    """Save the counterexample of every further violated invariant: next to ``--trace-out`` as
    ``STEM.INVARIANT.json``, else at its default path."""
    model = report.model
    paths: dict[str, Path] = {}
    for name, cx in report.others:
        trace = Trace(
            model=model_ref, params=dict(model.params),
            actions=tuple(tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in cx.actions),
            violated=name, init=cx.init, engine="explore", model_name=model.name,
            extra=recording_of(model, cx.init, cx.actions, name),
        )  # fmt: skip
        where = (
            trace_out.with_name(f"{trace_out.stem}.{name}.json")
            if trace_out is not None
            else _default_trace_path(model, model_ref, name)
        )
        paths[name] = save_trace(trace, where)
    return paths


def _check_lines(
    report: CheckReport,
    preamble: list[str],
    steps: int,
    seed: int,
    trace_path: Path | None,
    other_paths: dict[str, Path] | None = None,
) -> list[str]:
    """The table output of ``check``: engines, properties, worst cases, the counterexample."""
    model = report.model
    out = [f"model {model.name} ({params_text(model)})", *preamble]
    if report.exploration is not None:
        out += ["explorer:"] + ["  " + line for line in _exploration_lines(report.exploration)]
    if report.stateful is not None:
        out.append(f"hypothesis: {report.stateful.examples} runs of up to {steps} steps, seed {seed}")
    out += _property_rows(report)
    if report.exploration is not None and report.exploration.worst:
        worst = ", ".join(f"{w.metric} {w.value} (depth {w.depth})" for w in report.exploration.worst)
        out.append(f"worst case: {worst}")
    if report.cross is not None:
        out.append(report.cross.line())
    if report.post is not None:
        out.append(report.post.line())
    if report.counterexample is not None and report.violated is not None:
        cx = report.counterexample
        how = "shortest, by breadth-first search" if report.source == "explore" else "shrunk by Hypothesis"
        out.append("")
        title = f"counterexample: {report.violated} broken in {len(cx.actions)} steps ({how})"
        out.append(transcript(model, cx.states[0], cx.actions, report.violated, title=title))
        hy = report.stateful
        if report.source == "explore" and hy is not None and hy.violated is not None:
            out.append(f"hypothesis shrank its counterexample ({hy.violated}) to {hy.shrunk} steps")
        out.append(f"trace saved: {trace_path}   (turncheck replay {trace_path})")
        out += _other_counterexamples(report, other_paths or {})
    held = [
        p.name
        for p in report.properties
        if p.expectation == "always"
        and report.exploration is not None
        and report.exploration.outcome(p.name).status == "holds"
    ]
    if report.verdict == "fail" and held:
        out.append(f"holds: {', '.join(held)}")
    if len(report.counterexamples) > 1:
        out.append(f"violated: {', '.join(name for name, _ in report.counterexamples)}")
    verdicts = {
        "pass": "PASS: every invariant holds and every goal was reached",
        "fail": f"FAIL: {report.violated} is violated",
        "inconclusive": "INCONCLUSIVE: no invariant broke, but goal(s) never reached: "
        + ", ".join(name for name, hit in report.goals.items() if not hit),
    }
    out.append(verdicts[report.verdict])
    return out


def _other_counterexamples(report: CheckReport, paths: dict[str, Path]) -> list[str]:
    """The shortest run of every further violated invariant; a run identical to one already
    shown is named, not printed again."""
    out: list[str] = []
    shown: dict[tuple[Any, ...], str] = {}
    if report.counterexample is not None and report.violated is not None:
        shown[tuple(report.counterexample.actions)] = report.violated
    for name, cx in report.others:
        key = tuple(cx.actions)
        if key in shown:
            out.append(f"{name}: broken by the same {len(cx.actions)} steps as {shown[key]}")
            continue
        shown[key] = name
        title = (
            f"counterexample: {name} broken in {len(cx.actions)} steps (shortest, by breadth-first search)"
        )
        out += ["", transcript(report.model, cx.states[0], cx.actions, name, title=title)]
        if name in paths:
            out.append(f"trace saved: {paths[name]}   (turncheck replay {paths[name]})")
    return out


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
        bool, typer.Option("--reduction/--no-reduction", help="Also search without symmetry to measure it.")
    ] = True,
    dot: Annotated[Path | None, typer.Option("--dot", help="Write the state graph as DOT.")] = None,
    graphml: Annotated[
        Path | None, typer.Option("--graphml", help="Write the state graph as GraphML.")
    ] = None,
    fmt: FormatOpt = "table",
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the state-space browser page here (small configurations)."),
    ] = None,
    jobs: ExploreJobsOpt = 1,
) -> None:
    """Explore every interleaving: state-space statistics, properties and exact worst cases."""
    _check_bounds(max_states, max_depth, timeout)
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
        jobs=jobs,
    )
    raw = None
    left = None if timeout is None else timeout - (time.perf_counter() - started)  # one budget for both
    if symmetry and reduction and (left is None or left > 0):
        raw = explore(
            model, symmetry=False, max_states=max_states, max_depth=max_depth, timeout=left, jobs=jobs
        )
    if progress is not None:
        progress.finish()
    if want_graph:
        graph = result.graph()
        if dot is not None:
            write_dot(graph, str(dot))
        if graphml is not None:
            write_graphml(graph, str(graphml))
    page = None
    if html is not None:
        from turncheck.reports.state_browser import write_state_space_page

        page = write_state_space_page(model, html, symmetry=symmetry, max_states=max_states,
                                      max_depth=max_depth, timeout=timeout)  # fmt: skip
    from turncheck.sim.checking import cross_check, post_compaction_check

    cross = cross_check(model, result)
    post = post_compaction_check(model, result)
    if fmt == "json":
        obj: dict[str, Any] = {
            "model": model_ref,
            "params": dict(model.params),
            "distinct": result.distinct,
            "transitions": result.generated,
            "depth": result.max_depth_seen,
            "terminal": result.terminal,
            "exhaustive": result.exhausted,
            "bound": result.bound,
            "raw_distinct": raw.distinct if raw is not None else None,
            "reduction": reduction_factor(result, raw) if raw is not None else None,
            "properties": {o.name: {"status": o.status, "depth": o.depth} for o in result.properties},
            "worst": {w.metric: {"value": w.value, "depth": w.depth} for w in result.worst},
            "cross_check": cross.line() if cross is not None else None,
            "post_compaction_check": post.line() if post is not None else None,
        }
        if page is not None:
            obj["html"] = {"page": str(page.path), "states": page.states, "drawn": page.drawn}
        print(json.dumps(obj, ensure_ascii=False))
        return
    out = [f"model {model.name} ({params_text(model)})"]
    out += _exploration_lines(result, raw)
    for o in result.properties:
        where = f" at depth {o.depth}" if o.depth is not None else ""
        out.append(f"  {o.expectation:<9} {o.name}: {o.status}{where}")
    for w in result.worst:
        out.append(f"  worst {w.metric} = {w.value} (first at depth {w.depth})")
    if cross is not None:
        out.append(cross.line())
    if post is not None:
        out.append(post.line())
    for path, kind in ((dot, "DOT"), (graphml, "GraphML")):
        if path is not None:
            out.append(f"state graph ({kind}): {path}")
    if page is not None:
        how = "graph drawn" if page.drawn else "searchable frontier view"
        out.append(f"state-space browser: {page.path} ({page.states:,} states, {how})")
    print("\n".join(out))


def register(app: typer.Typer) -> None:
    known = ", ".join(model_names())
    app.command("check", help=f"Check a model's invariants (models: {known}, or package.module:Class).")(
        check_command
    )
    app.command("explore", help=f"Explore a model's whole state space (models: {known}).")(explore_command)
