"""``turncheck demo``: every experiment at a small scale, a failing and a passing check, plots, a page.

The demo is the first thing a new user runs. It answers, in about a minute, what the project is
for: how far a compaction trigger overshoots ``maxTurns`` (``trigger-gap`` and a sweep over
``max_turns``), what each locking strategy's bound costs (``locking``), what the model checker
finds when nothing is locked and proves when something is (``check trigger``), and how the
trimming strategies and the libraries people use compare (``testbench``, ``peers``, …). It writes
the result files, the counterexample trace, every plot as PNG and SVG, and ``report.html``.

Which parameters each scenario runs with at each scale, in which order, whether it is skipped
and which sweep follows it, each scenario declares itself (:class:`~turncheck.scenarios.base.Scenario`;
the presets are the same ones ``turncheck scenario NAME --scale S`` uses). A
scenario with no preset at the scale asked for is skipped and the summary says so — a default
run may take minutes. A scenario
whose parameters are refused (an optional extra not installed, say) is skipped with the reason,
never silently.

Steps run in this process one after another, each with its own progress bar, or with
``jobs > 1`` in worker processes under one bar; files are written by this process in step order
either way, so the outputs do not depend on ``jobs``. Timings are printed, never written into
result files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from turncheck.models.catalog import DEMO_CHECKS, MODELS
from turncheck.models.errors import TurncheckError
from turncheck.models.output_files import refuse_symlinked_folders
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import (
    CHECKS_ORDER,
    Judgement,
    ScenarioResult,
    Table,
    get_scenario,
    parse_params,
    scenarios,
)
from turncheck.scenarios.presets import SCALES, has_preset, preset
from turncheck.sim.executor import LocalExecutor, no_progress

# (model, parameters, invariants checked (all when empty), the verdict the demo expects, why).
# Both trigger checks hold the same named invariant — "no turn arrives uncounted in the gap" —
# so the unlocked one fails with the 5-step run that shows the mechanism and mutex passes it.
CHECKS: tuple[tuple[str, dict[str, str], tuple[str, ...], str, str], ...] = (
    (
        "trigger",
        {"locking": "none", "gap": "1"},
        ("no-uncounted-gap-turn",),
        "fail",
        "no lock: a turn appended in the gap is not counted by the compaction in flight",
    ),
    (
        "trigger",
        {"locking": "mutex", "gap": "1"},
        ("no-uncounted-gap-turn", "bounded-peak-turns"),
        "pass",
        "mutex: read and delete are one critical section that appends also take",
    ),
)
CHECK_EXAMPLES = {"full": 500, "quick": 100, "tiny": 25}
WRITING = "plots and report"  # the last phase's progress label, and its row in cli/demo_cost.py
START = (
    "start-up"  # the CPU before the first step (interpreter, imports, the plan): a row of cli/demo_cost.py
)


@dataclass(frozen=True)
class Step:
    """One unit of demo work; plain data, so a worker process can run it."""

    kind: Literal["scenario", "sweep", "check"]
    name: str
    params: tuple[tuple[str, str], ...] = ()
    grid: tuple[str, ...] = ()
    expect: str = ""
    why: str = ""
    examples: int = 100
    invariants: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        words = " ".join(f"{k}={v}" for k, v in self.params)
        if self.kind == "sweep":
            words = " ".join(f"--grid {g}" for g in self.grid)
        if self.invariants:
            words += " " + " ".join(f"-i {name}" for name in self.invariants)
        return f"{self.kind} {self.name}" + (f" {words}" if words else "")


@dataclass(frozen=True)
class CheckOutcome:
    """What a check found, as plain data (the report object holds closures a worker cannot ship)."""

    model: str
    params: dict[str, Any]
    verdict: str
    violated: str | None
    init: int
    actions: tuple[tuple[Any, ...], ...]
    source: str
    distinct: int | None
    exhaustive: bool | None
    hypothesis_runs: int | None
    hypothesis_steps: int | None
    cross: str


@dataclass(frozen=True)
class Outcome:
    """A step's result (a scenario result, a sweep's merged result and lines, or a check), or why
    it was skipped; ``seconds`` is for the summary only."""

    step: Step
    result: ScenarioResult | None = None
    lines: tuple[str, ...] = ()
    check: CheckOutcome | None = None
    skipped: str = ""
    seconds: float = 0.0


def plan(scale: str) -> tuple[list[Step], list[tuple[str, str]]]:
    """The steps at ``scale`` and the scenarios skipped, with why.

    Order is the story the summary and the page tell, each scenario's declared
    :attr:`~turncheck.scenarios.base.Scenario.order`: the trigger's peaks and the sweep over
    maxTurns, locking, the two checks (at :data:`~turncheck.scenarios.base.CHECKS_ORDER`), then
    the other scenarios, each at its preset for ``scale`` (:mod:`turncheck.scenarios.presets`),
    followed by the sweep it declares.
    """
    steps: list[Step] = []
    skips: list[tuple[str, str]] = []
    checked = False
    for scenario in sorted(scenarios().values(), key=lambda sc: (sc.order, sc.name)):
        name = scenario.name
        if not checked and scenario.order > CHECKS_ORDER:
            steps += _check_steps(scale)
            checked = True
        if scale in scenario.demo_skip:
            skips.append((name, scenario.demo_skip[scale]))
        elif has_preset(scenario, scale):
            steps.append(Step("scenario", name, tuple(preset(scenario, scale).items())))
        else:
            skips.append((name, full_only(name, scale)))
        if scale in scenario.demo_sweep:
            grid, fixed = scenario.demo_sweep[scale]
            steps.append(Step("sweep", name, tuple(fixed.items()), grid))
    if not checked:
        steps += _check_steps(scale)
    return steps, skips


def full_only(name: str, scale: str) -> str:
    """Why a scenario with no preset at ``scale`` (and no ``scale`` parameter) is not in that
    demo, in the user's words: its defaults are its full scale, which the demo at ``scale`` does
    not run (has_preset: ``full`` always is declared)."""
    return f"runs at full scale only, not in the {scale} demo (turncheck scenario {name})"


def _check_steps(scale: str) -> list[Step]:
    """The demo's own checks, then every registered model's declared :class:`DemoCheck`, in the
    catalogue's order (listing it imports every model: a model registers its check as it is
    imported, and a lookup by name imports that model alone)."""
    checks = [(name, DEMO_CHECKS[name]) for name in MODELS if name in DEMO_CHECKS]
    declared = [(name, dict(d.params), (), d.expect, d.why) for name, d in checks]
    return [Step("check", model, tuple(params.items()), expect=expect, why=why, examples=CHECK_EXAMPLES[scale],
                 invariants=names) for model, params, names, expect, why in (*CHECKS, *declared)]  # fmt: skip


def _run_check(step: Step) -> CheckOutcome:
    from turncheck.sim.checking import run_check, select_properties
    from turncheck.sim.protocols import load_model

    model = load_model(step.name, dict(step.params))
    # no database: Hypothesis's own files go to a folder removed afterwards (sim.stateful)
    report = run_check(model, select_properties(model, step.invariants), engine="both", max_examples=step.examples,
                       seed=0, database=None)  # fmt: skip
    ex, hy, cx = report.exploration, report.stateful, report.counterexample
    actions = tuple(tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in cx.actions) if cx else ()
    return CheckOutcome(
        step.name, dict(model.params), report.verdict, report.violated, cx.init if cx else 0, actions,
        report.source, ex.distinct if ex else None, ex.exhausted if ex else None, hy.examples if hy else None,
        (len(hy.actions) if hy.violated else None) if hy else None, report.cross.line() if report.cross else "",
    )  # fmt: skip


def run_step(step: Step, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Run one step (in this process or a worker); a refused scenario becomes a skip."""
    started = time.perf_counter()
    bar = progress or no_progress
    try:
        if step.kind == "scenario":
            sc = get_scenario(step.name)
            result = sc.run(parse_params(sc, dict(step.params)), bar)
            return Outcome(step, result=result, seconds=time.perf_counter() - started)
        if step.kind == "sweep":
            from turncheck.scenarios.sweep import sweep

            res = sweep(step.name, step.grid, fixed=dict(step.params), progress=bar)
            return Outcome(step, result=res.merged(), lines=tuple(res.json_lines()),
                           seconds=time.perf_counter() - started)  # fmt: skip
        bar(0, 1)
        check = _run_check(step)
        bar(1, 1)
        return Outcome(step, check=check, seconds=time.perf_counter() - started)
    except TurncheckError as exc:
        return Outcome(step, skipped=f"refused: {exc}", seconds=time.perf_counter() - started)


def _trace_name(step: Step, c: CheckOutcome) -> str:
    words = "".join(f"-{k}-{v}" for k, v in step.params)
    return f"{c.model}{words}.json"


def checks_result(outcomes: Sequence[Outcome], traces: dict[int, Path], out: Path) -> ScenarioResult:
    """The checks as a result file: one row per check and a judgement per expected verdict."""
    columns = ("check", "expected", "verdict", "violated", "steps", "found by", "states explored",
               "exhaustive", "hypothesis runs", "cross-check", "trace")  # fmt: skip
    rows = []
    judgements = []
    for k, o in enumerate(outcomes):
        c = o.check
        if c is None:
            continue
        params = " ".join(f"--param {key}={v}" for key, v in o.step.params) + "".join(
            f" -i {name}" for name in o.step.invariants
        )
        trace = traces.get(k)
        shown = str(trace.relative_to(out)) if trace is not None else None
        rows.append((f"check {c.model} {params}", o.step.expect, c.verdict, c.violated,
                     len(c.actions) if c.violated else None, c.source or None, c.distinct, c.exhaustive,
                     c.hypothesis_runs, c.cross or None, shown))  # fmt: skip
        if c.violated:
            how = "shortest, by exhaustive search" if c.source == "explore" else "shrunk by Hypothesis"
            detail = f"{c.violated} broken in {len(c.actions)} steps ({how}); trace {shown}"
        else:
            detail = f"every invariant holds; {c.distinct} states explored" + (
                " exhaustively" if c.exhaustive else " (bounded)"
            )
        detail += f"; {o.step.why}"
        judgements.append(Judgement(f"check {c.model} {params} {'fails' if o.step.expect == 'fail' else 'passes'}",
                                    c.verdict == o.step.expect, detail))  # fmt: skip
    table = Table(
        "checks", "Model checking: the unlocked trigger fails, the locked one passes", columns, tuple(rows),
        "Each check runs the exhaustive explorer and Hypothesis on the trigger model (writers=2, maxTurns=2, "
        "writers that never stop). A failing check saves its counterexample as a trace that `turncheck replay` "
        "re-executes; the timeline plot below it is drawn from that trace.",
    )  # fmt: skip
    return ScenarioResult("checks", {"checks": [o.step.label for o in outcomes if o.check]}, 0, (table,),
                          tuple(judgements))  # fmt: skip


@dataclass
class DemoRun:
    """What the demo did: outcomes in step order, files written, plots, the page, and timings."""

    out: Path
    scale: str
    outcomes: list[Outcome] = field(default_factory=list)
    skips: list[tuple[str, str]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    report: Path | None = None
    passed: int = 0
    failed: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def lines(self) -> list[str]:
        """The demo's closing summary: what ran, PASS/FAIL lines, where everything is."""
        skipped = sum(bool(o.skipped) for o in self.outcomes) + len(self.skips)
        count = len(self.outcomes) + len(self.skips)
        ran = f" ({count - skipped} ran, {skipped} skipped)" if skipped else ""
        lines = [f"turncheck demo — {self.scale} scale, {count} steps{ran}, files under {self.out}/"]
        for o in self.outcomes:
            s = o.step
            if o.skipped:
                lines.append(f"  skip  {s.label}: {o.skipped}")
            elif o.check is not None:
                c = o.check
                verdict = c.verdict.upper()
                note = "expected" if c.verdict == s.expect else f"EXPECTED {s.expect.upper()}"
                if c.violated:
                    what = f"{c.violated} broken in {len(c.actions)} steps"
                else:
                    what = f"every invariant holds, {c.distinct} states explored" + (
                        " exhaustively" if c.exhaustive else ""
                    )
                lines.append(f"  {verdict:<4}  {s.label}: {what} ({note})  {o.seconds:.1f} s")
            elif o.result is not None:
                r = o.result
                rows = sum(len(t.rows) for t in r.tables)
                bad = [j for j in r.judgements if not j.passed]
                mark = "FAIL" if bad else "ran"
                judged = (
                    f", {len(r.judgements) - len(bad)}/{len(r.judgements)} judgements PASS"
                    if r.judgements
                    else ""
                )
                lines.append(
                    f"  {mark:<4}  {s.label}: {len(r.tables)} table(s), {rows} rows{judged}  {o.seconds:.1f} s"
                )
                lines += [f"          {j.line()}" for j in bad]
        for name, why in self.skips:
            lines.append(f"  skip  scenario {name}: {why}")
        lines.append(f"plots: {len(self.plots)} (PNG + SVG) in {self.out / 'plots'}/")
        lines += [f"  could not draw {m}" for m in self.missing]
        lines.append(f"judgement lines: {self.passed} PASS, {self.failed} FAIL")
        lines.append(f"done in {self.seconds:.1f} s")
        lines.append(f"report: {self.report}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The summary as data (``--format json``); paths as strings, timings included (printed only)."""
        steps = []
        for o in self.outcomes:
            entry: dict[str, Any] = {"step": o.step.label, "seconds": round(o.seconds, 2)}
            if o.skipped:
                entry["skipped"] = o.skipped
            if o.result is not None:
                entry["result"] = o.result.scenario
                entry["judgements"] = [
                    {"name": j.name, "passed": j.passed, "detail": j.detail} for j in o.result.judgements
                ]
            if o.check is not None:
                entry.update(verdict=o.check.verdict, expected=o.step.expect, violated=o.check.violated,
                             steps=len(o.check.actions) if o.check.violated else None)  # fmt: skip
            steps.append(entry)
        return {
            "out": str(self.out), "scale": self.scale, "steps": steps,
            "skipped": [{"scenario": n, "reason": w} for n, w in self.skips],
            "plots": self.plots, "missing_plots": self.missing,
            "judgements": {"pass": self.passed, "fail": self.failed},
            "files": [str(p) for p in self.files], "report": str(self.report), "seconds": round(self.seconds, 2),
        }  # fmt: skip


def run_demo(
    out: str | Path,
    scale: str = "quick",
    jobs: int = 1,
    progress_for: Callable[[str], Callable[[int, int], None]] | None = None,
    announce: Callable[[str], None] | None = None,
) -> DemoRun:
    """Run every step, write results, traces, plots (PNG+SVG) and ``report.html`` under ``out``;
    ``announce`` is first given the line saying how long the run will take (:func:`cost_line`).

    Raises
    ------
    BadParameter
        Unknown scale, jobs < 1, or ``out`` is an existing file.
    """
    from turncheck.models.errors import BadParameter

    if scale not in SCALES:
        raise BadParameter(f"--scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if jobs < 1:
        raise BadParameter(f"--jobs must be >= 1, got {jobs}")
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise BadParameter(f"output directory {root} exists and is not a directory")
    refuse_symlinked_folders(*(root / d for d in _OWN))
    bars = progress_for or (lambda label: no_progress)
    started = time.perf_counter()
    steps, skips = plan(scale)
    if announce is not None:
        announce(cost_line(scale, steps, jobs, skipped=[name for name, _ in skips]))
    run = DemoRun(root, scale, skips=skips)
    if jobs == 1:
        runs = [refused_here(step) is None for step in steps]  # the first line's "N to run"
        for i, step in enumerate(steps):
            label = f"[{sum(runs[: i + 1])}/{sum(runs)}] {step.kind} {step.name}"
            run.outcomes.append(run_step(step, bars(label) if runs[i] else None))
    else:
        run.outcomes = LocalExecutor(jobs).map(
            run_step, steps, bars(f"demo: {len(steps)} steps on {jobs} workers")
        )
    before = _present(root)
    try:
        write_outputs(run, bars(WRITING))
    except BaseException:  # interrupted or failed while writing: take back only what this run made
        _remove_new(root, before)
        raise
    run.seconds = time.perf_counter() - started
    return run


def refused_here(step: Step) -> str | None:
    """Why ``step`` is refused on this machine before it starts (an extra not installed, a bridge
    not built: its parameters are refused), or None when it will run."""
    try:
        if step.kind == "scenario":
            parse_params(get_scenario(step.name), dict(step.params))
    except TurncheckError as exc:
        return str(exc)
    return None


def cost_line(
    scale: str, steps: Sequence[Step], jobs: int = 1, skipped: Sequence[str] = (), speed: float | None = None
) -> str:
    """How many steps will run and be skipped, and how long the run will take, from the CPU each
    step took when last measured (``cli/demo_cost.py``, written by ``benchmarks/demo_cost.py``).

    The count is the one the closing summary prints: every planned step plus every scenario the
    plan leaves out (``skipped``), and a step whose parameters are refused here (an extra not
    installed) is counted as skipped and costs nothing, nor does its share of the plots and the
    report (``WRITING_SHARES``: counting the peers' plots on an install that cannot run the peers
    put the line well over the run). Steps with no figure (a model registered since, a changed
    preset) are named as not measured, never guessed. ``speed`` scales the sum (1.0: the host's
    speed when measured). The line reads no speed probe of its own: on the idle 2-core host one
    probe reading (two thirds of a second) moved by a fifth within a minute, and scaling by it put
    the line further from the run than the table alone in each of three pairs of runs measured.
    """
    from turncheck.cli.demo_cost import CPU_SECONDS, WRITING_SHARES

    known = CPU_SECONDS.get(scale, {})
    runs = [refused_here(step) is None for step in steps]
    refused = [step.name for step, ok in zip(steps, runs, strict=True) if not ok]
    labels = [START, WRITING, *(step.label for step, ok in zip(steps, runs, strict=True) if ok)]
    shares = WRITING_SHARES.get(scale, {})  # the plots and report a step that runs adds
    measured = [known[label] + shares.get(label, 0.0) for label in labels if label in known]
    skips = [*refused, *skipped]
    total = len(steps) + len(skipped)
    head = f"demo at {scale} scale: {total} steps" + (
        f", {total - len(skips)} to run and {len(skips)} skipped here ({', '.join(skips)}; the summary says why)"
        if skips
        else ""
    )
    if not measured:
        return f"{head}; their cost at this scale was never measured (python benchmarks/demo_cost.py {scale})"
    spread = f", over {jobs} workers" if jobs > 1 else ""
    missing = len(labels) - len(measured)
    tail = f" for the measured ones, {missing} step(s) not measured" if missing else ""
    factor = 1.0 if speed is None else speed
    return (
        f"{head}, about {sum(measured) * factor:.0f} s of CPU{spread}{tail} "
        "(as measured by benchmarks/demo_cost.py)"
    )


_OWN = ("results", "traces", "plots")


def _present(root: Path) -> set[Path]:
    """The paths under ``root`` before the demo writes: its top level and, in depth, the folders
    it writes into."""
    if not root.is_dir():
        return set()
    return {root, *root.iterdir(), *(p for d in _OWN for p in (root / d).rglob("*"))}


def _remove_new(root: Path, before: set[Path]) -> None:
    """Remove the files and folders under ``root`` that were not there ``before``: an interrupted
    demo leaves the folder as it found it, and never touches a file it did not create."""
    made = [p for d in _OWN for p in (root / d).rglob("*")] + [root / d for d in _OWN] + list(root.glob("*"))
    for p in made:
        if p not in before and (p.is_symlink() or p.is_file()):
            p.unlink()
    for d in sorted({p for p in made if p.is_dir()} | {root}, key=lambda x: len(x.parts), reverse=True):
        if d not in before and not any(d.iterdir()):
            d.rmdir()


def write_outputs(run: DemoRun, progress: Callable[[int, int], None]) -> None:
    """Write ``run``'s results, traces, plots and report under ``run.out``; a skipped step's
    outcome writes nothing (benchmarks/demo_cost.py measures each step's share of this phase so)."""
    from turncheck.reports.html import render_report
    from turncheck.reports.plots import gallery
    from turncheck.reports.results_dir import ResultsDir, TraceFile, file_kind, load_result
    from turncheck.reports.viewer import write_page
    from turncheck.sim.trace import Trace, load_trace, save_trace

    root = run.out
    results_dir = root / "results"
    result_files: list[Path] = []
    traces: dict[int, Path] = {}
    attached_traces: list[Path] = []  # a scenario's own traces (the peers' pairing breaks)
    for k, o in enumerate(run.outcomes):
        if o.result is not None:
            lines = {f"{o.result.scenario}.jsonl": "\n".join(o.lines) + "\n"} if o.lines else {}
            paths = write_result(o.result, results_dir, beside=lines)
            run.files += paths
            result_files.append(paths[0])
            for p in paths[1 : len(paths) - len(lines)]:  # attachments: a measured result, or traces
                kind = file_kind(p)
                if kind == "result":
                    result_files.append(p)
                elif kind == "trace":
                    attached_traces.append(p)
        c = o.check
        if c is not None and c.violated:
            trace = Trace(c.model, c.params, c.actions, c.violated, c.init, c.source, c.model)
            traces[k] = save_trace(trace, root / "traces" / _trace_name(o.step, c))
            run.files.append(traces[k])
    if any(o.check for o in run.outcomes):
        checks = checks_result(run.outcomes, traces, root)
        paths = write_result(checks, results_dir)
        run.files += paths
        result_files.append(paths[0])
    from turncheck.reports.results_dir import ResultFile

    directory = ResultsDir(
        root,
        tuple(ResultFile(p, load_result(p)) for p in result_files),
        tuple(TraceFile(p, load_trace(p)) for p in (*traces.values(), *attached_traces)),
        (),
    )
    drawn, missing = gallery(directory, progress)
    for d in drawn:
        run.files += d.write(root / "plots")
        run.plots.append(d.name)
    run.missing = [f"{m.name} from {m.source.name}: {m.reason}" for m in missing]
    page = render_report(directory, drawn, missing, f"turncheck demo ({run.scale} scale)")
    run.report = root / "report.html"
    write_page(run.report, page)
    run.files.append(run.report)
    judgements = [j for rf in directory.results for j in rf.result.judgements]
    run.passed = sum(j.passed for j in judgements)
    run.failed = sum(not j.passed for j in judgements)
