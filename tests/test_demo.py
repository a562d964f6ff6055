"""``turncheck demo``: end to end at the tiny scale — every promised file written, the expected
verdicts, nothing left in the working directory — and the rule for scenarios it does not know."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from turncheck.cli.demo import SCALES, plan
from turncheck.scenarios import base
from turncheck.scenarios.base import Scenario, ScenarioResult


def test_demo_tiny_end_to_end(tiny_demo: Any) -> None:
    (code, text, err), out, cwd = tiny_demo
    assert code == 0, text + err
    assert err == ""  # --quiet: no progress bars
    summary = json.loads(text)
    files = [Path(f) for f in summary["files"]]
    assert files and all(f.is_file() and f.stat().st_size > 0 for f in files)
    names = {f.relative_to(out).as_posix() for f in files}
    for promised in ("report.html", "results/trigger-gap.json", "results/sweep-trigger-gap.json",
                     "results/sweep-trigger-gap.jsonl", "results/locking.json", "results/checks.json",
                     "results/testbench.json", "traces/trigger-locking-none-gap-1.json"):  # fmt: skip
        assert promised in names, promised
    plots = set(summary["plots"])
    for stem in ("peaks-vs-max-turns--sweep-trigger-gap", "peak-ratio-heatmap--sweep-trigger-gap",
                 "locking-price--locking", "strategies-vs-budget--testbench",
                 "counterexample--trigger-locking-none-gap-1"):  # fmt: skip
        assert stem in plots
        assert f"plots/{stem}.png" in names and f"plots/{stem}.svg" in names
    checks = [s for s in summary["steps"] if "verdict" in s]
    assert [(c["verdict"], c["expected"]) for c in checks] == [("fail", "fail"), ("pass", "pass")]
    assert checks[0]["violated"] == "no-uncounted-gap-turn" and checks[0]["steps"] == 5
    assert summary["judgements"]["fail"] == 0 and summary["judgements"]["pass"] > 20
    ran = {s["result"] for s in summary["steps"] if "result" in s}
    refused = {s["step"].split()[1]: s["skipped"] for s in summary["steps"] if "skipped" in s}
    listed_tiny = {n for n, sc in base.scenarios().items() if "tiny" in sc.presets} - {"peers"}
    # a scenario whose optional extra is not installed is skipped with the reason, never silently
    assert all("pip install" in why or "extra" in why for why in refused.values()), refused
    assert listed_tiny <= ran | set(refused)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count('<img src="data:image/png;base64,') == len(plots)
    assert list(cwd.iterdir()) == []  # nothing written where the demo was started (Hypothesis included)


def test_demo_table_summary_names_the_report(
    cli: Any, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table summary; steps kept to the checks by a one-scenario registry (the rest is above)."""
    only = {"trigger-gap": base.scenarios()["trigger-gap"]}
    monkeypatch.setattr("turncheck.cli.demo.scenarios", lambda: only)
    monkeypatch.chdir(tmp_path)
    code, text, _ = cli("demo", "--scale", "tiny", "-o", str(tmp_path / "d"), "--quiet")
    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith("turncheck demo — tiny scale")
    # the same named invariant on both: the unlocked trigger breaks it with the 5-step run in which
    # a turn arrives uncounted in the gap; mutex holds it
    assert any(line.startswith("  FAIL  check trigger locking=none gap=1 -i no-uncounted-gap-turn: "
                               "no-uncounted-gap-turn broken in 5 steps (expected)")
               for line in lines), text  # fmt: skip
    assert any(
        line.startswith(
            "  PASS  check trigger locking=mutex gap=1 -i no-uncounted-gap-turn -i bounded-peak-turns: "
            "every invariant holds"
        )
        for line in lines
    ), text
    assert lines[-2].startswith("done in ")
    assert lines[-1] == f"report: {tmp_path / 'd' / 'report.html'}"  # the last line: the README says so


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
            assert "zz-slow" in dict(skips) and f"no scale={scale} parameter" in dict(skips)["zz-slow"]
        kinds = [s.kind for s in steps]
        assert kinds.count("check") == 2 and kinds.count("sweep") == 1
        assert steps[0].name == "trigger-gap" and steps[1].kind == "sweep"


def test_the_demo_page_shows_what_a_scenario_writes_beside_its_result(tmp_path: Path) -> None:
    """A scenario's attachments — a measured result of its own (the peers' timing) and traces
    (the peers' pairing breaks) — are on the demo's page, as ``turncheck report DIR`` shows them."""
    from turncheck.cli.demo import DemoRun, Outcome, Step, _write_outputs
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
    _write_outputs(run, lambda done, total: None)
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
    from turncheck.cli.demo import WRITING
    from turncheck.cli.demo_cost import CPU_SECONDS

    assert set(CPU_SECONDS) == set(MEASURED)
    for scale in MEASURED:
        assert list(CPU_SECONDS[scale]) == [s.label for s in plan(scale)[0]] + [WRITING], scale


def test_the_start_line_counts_refused_steps_as_skipped_and_names_unmeasured_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from turncheck.cli.demo import WRITING, Step, cost_line

    steps = [
        Step("scenario", "projection"),
        Step("scenario", "framing", (("records", "-5"),)),
        Step("check", "x"),
    ]
    table = {"quick": {"scenario projection": 2.0, WRITING: 3.0, "scenario framing records=-5": 50.0}}
    monkeypatch.setattr("turncheck.cli.demo_cost.CPU_SECONDS", table)
    line = cost_line("quick", steps)
    assert line.startswith(
        "demo at quick scale: 3 steps, 1 to be skipped here, about 5 s of CPU for the measured"
    )
    assert "1 step(s) not measured" in line
    assert "never measured" in cost_line("full", steps)


def test_the_demo_says_at_its_start_how_long_it_will_take(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turncheck.cli.demo import Step, cost_line

    one = [Step("scenario", "projection")]
    monkeypatch.setattr("turncheck.cli.demo.plan", lambda scale: (one, []))
    code, _, err = cli("demo", "--scale", "quick", "-o", str(tmp_path / "d"))
    assert code == 0 and err.splitlines()[0] == cost_line("quick", one), err
    code, _, err = cli("demo", "--scale", "quick", "-o", str(tmp_path / "e"), "-q")
    assert code == 0 and err == ""
