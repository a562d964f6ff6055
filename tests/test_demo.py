"""``turncheck demo``: end to end at the tiny scale — every promised file written, the expected
verdicts, nothing left in the working directory — and the rule for scenarios it does not know."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from turncheck.cli.demo import SCALES, plan
from turncheck.scenarios import base
from turncheck.scenarios.base import Scenario, ScenarioResult


def test_demo_tiny_end_to_end(tiny_demo: Any) -> None:
    """The getting-started page's ``turncheck demo --scale tiny -o demo --quiet``, as printed."""
    printed, out, cwd = tiny_demo
    assert printed.status == 0, printed.stdout + printed.stderr
    assert printed.stderr == ""  # --quiet: no progress bars
    lines = printed.stdout.splitlines()
    assert lines[0].startswith("turncheck demo — tiny scale") and lines[0].endswith("files under demo/")
    names = {f.relative_to(out).as_posix() for f in out.rglob("*") if f.is_file() and f.stat().st_size > 0}
    for promised in ("report.html", "results/trigger-gap.json", "results/sweep-trigger-gap.json",
                     "results/sweep-trigger-gap.jsonl", "results/locking.json", "results/checks.json",
                     "results/testbench.json", "traces/trigger-locking-none-gap-1.json"):  # fmt: skip
        assert promised in names, promised
    plots = {n.removeprefix("plots/").removesuffix(".png") for n in names if n.endswith(".png")}
    for stem in ("peaks-vs-max-turns--sweep-trigger-gap", "peak-ratio-heatmap--sweep-trigger-gap",
                 "locking-price--locking", "strategies-vs-budget--testbench",
                 "counterexample--trigger-locking-none-gap-1"):  # fmt: skip
        assert stem in plots and f"plots/{stem}.svg" in names
    assert f"plots: {len(plots)} (PNG + SVG) in demo/plots/" in lines
    # the same named invariant on both: the unlocked trigger breaks it with the 5-step run in which
    # a turn arrives uncounted in the gap; mutex holds it
    checks = [line.split()[:4] for line in lines if line.startswith(("  FAIL  check", "  PASS  check"))]
    assert checks == [
        ["FAIL", "check", "trigger", "locking=none"],
        ["PASS", "check", "trigger", "locking=mutex"],
    ]
    assert any(line.startswith("  FAIL  check trigger locking=none gap=1 -i no-uncounted-gap-turn: "
                               "no-uncounted-gap-turn broken in 5 steps (expected)")
               for line in lines), printed.stdout  # fmt: skip
    assert any(
        line.startswith(
            "  PASS  check trigger locking=mutex gap=1 -i no-uncounted-gap-turn -i bounded-peak-turns: "
            "every invariant holds"
        )
        and "(expected)" in line
        for line in lines
    ), printed.stdout
    judged = re.fullmatch(r"judgement lines: (\d+) PASS, (\d+) FAIL", lines[-3])
    assert judged and int(judged[1]) > 20 and judged[2] == "0", lines[-3]
    assert lines[-2].startswith("done in ")
    assert lines[-1] == "report: demo/report.html"  # the last line: the README says so
    steps = [re.match(r"  (ran|skip)  +scenario ([\w-]+)\b[^:]*: ?(.*)", line) for line in lines]
    ran = {m[2] for m in steps if m and m[1] == "ran"}
    refused = {m[2]: m[3] for m in steps if m and m[1] == "skip"}
    listed_tiny = {n for n, sc in base.scenarios().items() if "tiny" in sc.presets} - {"peers"}
    # a scenario whose optional extra is not installed is skipped with the reason, never silently
    missing = {n: why for n, why in refused.items() if n in listed_tiny}
    assert all("pip install" in why or "extra" in why for why in missing.values()), missing
    assert listed_tiny <= ran | set(refused)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count('<img src="data:image/png;base64,') == len(plots)
    assert [p.name for p in cwd.iterdir()] == ["demo"]  # nothing else where it started (Hypothesis included)


def test_demo_json_summary(cli: Any, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--format json``; steps kept to the checks by a one-scenario registry (the whole demo is above)."""
    only = {"trigger-gap": base.scenarios()["trigger-gap"]}
    monkeypatch.setattr("turncheck.cli.demo.scenarios", lambda: only)
    monkeypatch.chdir(tmp_path)
    code, text, err = cli("demo", "--scale", "tiny", "-o", "d", "--quiet", "--format", "json")
    assert code == 0 and err == "", err
    summary = json.loads(text)
    assert summary["out"] == "d" and summary["scale"] == "tiny" and summary["report"] == "d/report.html"
    files = [Path(f) for f in summary["files"]]
    assert files and all(f.is_file() and f.stat().st_size > 0 for f in files)
    assert "d/results/trigger-gap.json" in summary["files"] and "d/report.html" in summary["files"]
    assert {f"d/plots/{stem}.{fmt}" for stem in summary["plots"] for fmt in ("png", "svg")} <= set(
        summary["files"]
    )
    checks = [s for s in summary["steps"] if "verdict" in s]
    assert [(c["verdict"], c["expected"]) for c in checks] == [("fail", "fail"), ("pass", "pass")]
    assert checks[0]["violated"] == "no-uncounted-gap-turn" and checks[0]["steps"] == 5
    assert checks[1]["violated"] is None and checks[1]["steps"] is None
    ran = [s for s in summary["steps"] if "result" in s]
    assert [s["result"] for s in ran] == ["trigger-gap", "sweep-trigger-gap"]
    assert all(j["passed"] for s in ran for j in s["judgements"]) and ran[0]["judgements"]
    judged = sum(len(s["judgements"]) for s in ran) + len(checks)  # a check as expected is a PASS line
    assert summary["judgements"] == {"pass": judged, "fail": 0}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_bad_demo_input_writes_nothing(cli: Any, tmp_path: Path, capsys: Any) -> None:
    code, _, err = cli("demo", "--scale", "huge", "-o", str(tmp_path / "d"))
    assert code == 2 and "--scale" in err and not (tmp_path / "d").exists()
    (tmp_path / "file").write_text("x")
    code, _, err = cli("demo", "--scale", "tiny", "-o", str(tmp_path / "file"))
    assert code == 2 and "not a directory" in err
    code, _, err = cli("demo", "--format", "xml", "-o", str(tmp_path / "d"))
    assert code == 2 and not (tmp_path / "d").exists()


@dataclass(frozen=True)
class QuickParams:
    scale: Literal["tiny", "quick", "full"] = "full"


@dataclass(frozen=True)
class SlowParams:
    size: int = 10**9


def _noop(params: Any, progress: Any) -> ScenarioResult:
    return ScenarioResult("x", {}, 0, ())


def test_unknown_scenarios_run_only_when_they_declare_a_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    known = dict(base.scenarios())
    known["zz-quick"] = Scenario("zz-quick", QuickParams, _noop, "declares scales")
    known["zz-slow"] = Scenario("zz-slow", SlowParams, _noop, "no scale field")
    monkeypatch.setattr("turncheck.cli.demo.scenarios", lambda: known)
    for scale in SCALES:
        steps, skips = plan(scale)
        quick = [s for s in steps if s.name == "zz-quick"]
        assert [s.params for s in quick] == [(("scale", scale),)]
        if scale == "full":  # a scenario's defaults are its full scale
            assert ("zz-slow", ()) in [(s.name, s.params) for s in steps]
        else:
            assert "zz-slow" in dict(skips) and "runs at full scale only" in dict(skips)["zz-slow"]
        kinds = [s.kind for s in steps]
        assert kinds.count("check") == 2 and kinds.count("sweep") == 1
        assert steps[0].name == "trigger-gap" and steps[1].kind == "sweep"


def test_the_demo_page_shows_what_a_scenario_writes_beside_its_result(tmp_path: Path) -> None:
    """A scenario's attachments — a measured result of its own (the peers' timing) and traces
    (the peers' pairing breaks) — are on the demo's page, as ``turncheck report DIR`` shows them."""
    from turncheck.cli.demo import DemoRun, Outcome, Step, write_outputs
    from turncheck.models.catalog import build_model
    from turncheck.scenarios.base import Table
    from turncheck.sim.explorer import explore
    from turncheck.sim.trace import Trace
    from turncheck.sim.witness import counterexample

    model = build_model("projector", {"strategy": "M0"})
    cx = counterexample(model, explore(model), "no-orphan-results")
    actions = tuple(tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in cx.actions)
    trace = Trace(
        "projector", dict(model.params), actions, "no-orphan-results", cx.init, "explore", "projector"
    )
    timing = ScenarioResult("demo-echo-timing", {}, 0, (Table("t", "Measured", ("n",), ((1,),)),))
    main = ScenarioResult(
        "demo-echo", {}, 0, (Table("rows", "Rows", ("n",), ((1,),)),),
        attachments={"demo-echo.timing.json": timing, "demo-echo.traces/m0.trace.json": json.dumps(trace.to_json())},
    )  # fmt: skip
    run = DemoRun(tmp_path, "tiny", outcomes=[Outcome(Step("scenario", "demo-echo"), result=main)])
    write_outputs(run, lambda done, total: None)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h2>demo-echo-timing</h2>" in page and "Measured" in page
    assert "m0.trace.json" in page and "no-orphan-results" in page


def test_a_demo_interrupted_while_writing_leaves_the_folder_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import turncheck.cli.demo as demo
    import turncheck.reports.plots as plots

    steps, skips = demo.plan("tiny")
    monkeypatch.setattr(demo, "plan", lambda scale: (steps[:2], skips))

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # after the results and traces are written, before the plots

    monkeypatch.setattr(plots, "gallery", interrupted)
    out = tmp_path / "d"
    (out / "results").mkdir(parents=True)
    mine = out / "results" / "mine.json"
    mine.write_text("{}")
    with pytest.raises(KeyboardInterrupt):
        demo.run_demo(out, "tiny")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["results", "results/mine.json"]
    with pytest.raises(KeyboardInterrupt):
        demo.run_demo(tmp_path / "new", "tiny")
    assert not (tmp_path / "new").exists()


def test_every_step_the_demo_plans_has_a_measured_cost_and_no_stale_row_is_kept() -> None:
    """cli/demo_cost.py is generated (benchmarks/demo_cost.py --write): a preset, check or scenario
    changed without a new measurement fails here, so the start line never sums stale figures."""
    from benchmarks.demo_cost import MEASURED
    from turncheck.cli.demo import START, WRITING
    from turncheck.cli.demo_cost import CPU_SECONDS, WRITING_SHARES

    assert set(CPU_SECONDS) == set(MEASURED) == set(WRITING_SHARES)
    for scale in MEASURED:
        assert list(CPU_SECONDS[scale]) == [START] + [s.label for s in plan(scale)[0]] + [WRITING], scale
        assert set(WRITING_SHARES[scale]) <= {s.label for s in plan(scale)[0]}, scale


def test_a_step_refused_here_takes_its_share_of_the_writing_out_of_the_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An install without the peers' extra writes none of the peers' plots: the line counted them
    and said far more than the run took."""
    from turncheck.cli.demo import START, WRITING, Step, cost_line

    steps = [Step("scenario", "projection"), Step("scenario", "framing", (("records", "-5"),))]
    runs = {START: 1.0, WRITING: 2.0, "scenario projection": 3.0, "scenario framing records=-5": 4.0}
    monkeypatch.setattr("turncheck.cli.demo_cost.CPU_SECONDS", {"quick": runs})
    monkeypatch.setattr(
        "turncheck.cli.demo_cost.WRITING_SHARES",
        {"quick": {"scenario projection": 10.0, "scenario framing records=-5": 20.0}},
    )
    assert ", about 16 s of CPU (" in cost_line("quick", steps, speed=1.0)  # framing refused: not its 20
    assert ", about 3 s of CPU (" in cost_line("quick", steps[1:], speed=1.0)  # start-up and writing
    monkeypatch.setattr("turncheck.cli.demo.refused_here", lambda step: None)  # both run
    assert ", about 40 s of CPU (" in cost_line("quick", steps, speed=1.0)


def test_the_cost_bench_finds_the_steps_an_install_without_extras_refuses() -> None:
    """The steps whose writing share is measured: those a plain ``pip install .`` refuses (the
    quick demo's peers league needs the peers extra), found with every extra's modules absent."""
    import importlib.util

    from benchmarks.demo_cost import extras_only_modules, refused_without_extras

    absent = extras_only_modules()  # the installed ones: an extra not installed has no modules here
    assert "pytest" in absent
    assert all(name in absent for name in ("tiktoken", "faker") if importlib.util.find_spec(name))
    assert not {"numpy", "matplotlib", "simpy", "msgspec"} & absent
    peers = [s.label for s in plan("quick")[0] if s.name == "peers"]
    assert peers and set(peers) <= set(refused_without_extras("quick"))
    assert not {s.label for s in plan("quick")[0] if s.kind == "check"} & set(refused_without_extras("quick"))


def test_the_start_line_counts_refused_steps_as_skipped_and_names_unmeasured_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from turncheck.cli.demo import START, WRITING, Step, cost_line

    steps = [
        Step("scenario", "projection"),
        Step("scenario", "framing", (("records", "-5"),)),
        Step("check", "x"),
    ]
    table = {
        "quick": {START: 1.0, "scenario projection": 2.0, WRITING: 3.0, "scenario framing records=-5": 50.0}
    }
    monkeypatch.setattr("turncheck.cli.demo_cost.CPU_SECONDS", table)
    line = cost_line("quick", steps, skipped=["testbench-fit"], speed=1.0)
    assert line.startswith(  # the count the closing summary prints: planned steps and plan skips
        "demo at quick scale: 4 steps, 2 to run and 2 skipped here (framing, testbench-fit; the summary says why), "
        "about 6 s of CPU for the measured"
    )
    assert "1 step(s) not measured" in line  # the check x
    assert ", about 12 s of CPU" in cost_line("quick", steps, speed=2.0)  # a machine twice as busy
    assert "never measured" in cost_line("full", steps)
    assert "skipped" not in cost_line("quick", steps[:1], speed=1.0)


def test_the_speed_probe_reads_the_cpu_of_a_fixed_piece_of_work() -> None:
    from turncheck.cli.cpu_speed import probe_once, probe_seconds

    assert 0 < probe_once() < 1.0 and 0 < probe_seconds(3) < 1.0

def test_a_scenario_left_out_of_a_scale_says_so_in_the_users_words() -> None:
    from turncheck.cli.demo import full_only

    steps, skips = plan("quick")
    reasons = dict(skips)
    assert reasons["testbench-fit"] == full_only("testbench-fit", "quick")
    assert "preset" not in reasons["testbench-fit"] and "scale=" not in reasons["testbench-fit"]


def test_the_demo_says_at_its_start_how_long_it_will_take(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turncheck.cli.demo import Step, cost_line

    one = [Step("scenario", "projection")]
    monkeypatch.setattr("turncheck.cli.demo.plan", lambda scale: (one, []))
    code, _, err = cli("demo", "--scale", "quick", "-o", str(tmp_path / "d"))
    assert code == 0 and err.splitlines()[0] == cost_line("quick", one, speed=1.0), err
    code, _, err = cli("demo", "--scale", "quick", "-o", str(tmp_path / "e"), "-q")
    assert code == 0 and err == ""


def test_the_progress_counts_the_steps_the_first_line_says_will_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first line said "2 to run and 1 skipped" while the bars counted [1/3] … [3/3], the
    refused step among them (the quick demo: "13 to run", then [14/14])."""
    from turncheck.cli.demo import Step, run_demo

    steps = [Step("scenario", "projection"), Step("scenario", "framing", (("records", "-5"),)),
             Step("scenario", "projection")]  # fmt: skip
    monkeypatch.setattr("turncheck.cli.demo.plan", lambda scale: (steps, []))
    labels: list[str] = []
    first: list[str] = []

    def bars(label: str) -> Any:
        labels.append(label)
        return lambda done, total: None

    run = run_demo(tmp_path / "d", "quick", progress_for=bars, announce=first.append)
    assert "2 to run and 1 skipped" in first[0]
    assert [x for x in labels if x.startswith("[")] == ["[1/2] scenario projection", "[2/2] scenario projection"]
    assert [o.skipped.startswith("refused") for o in run.outcomes] == [False, True, False]


def test_the_cost_bench_measures_only_the_steps_that_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/demo_cost.py reads one CPU mark per progress bar: a step refused here (an
    extra not installed) starts none, so it must not be a row (it raised ValueError from ``zip``
    on an install without extras)."""
    import benchmarks.demo_cost as demo_cost
    from turncheck.cli.demo import WRITING, plan

    steps = plan("tiny")[0]
    refused = steps[1].label
    monkeypatch.setattr(demo_cost, "refused_here", lambda step: "needs an extra" if step.label == refused else None)
    labels = demo_cost.measured_labels("tiny")
    assert labels == [step.label for step in steps if step.label != refused] + [WRITING]
