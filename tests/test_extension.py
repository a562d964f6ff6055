"""Extending turncheck from one module, the way a third party does: an installed distribution
lists the module under the entry-point group ``turncheck.plugins``; the module registers a
strategy, a protocol model, a scenario, a plot and a benchmark with the public
``turncheck.register_*`` functions — and each then shows where the built-ins do, with no other
file changed. Discovery is real: the module and its ``*.dist-info`` are written to a folder on
``PYTHONPATH`` and ``python -m turncheck`` runs in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

EXTENSION = textwrap.dedent(
    '''
    """A third party's turncheck extension: one of each kind."""

    from dataclasses import dataclass

    from matplotlib.figure import Figure

    import turncheck
    from turncheck import Judgement, Plot, Property, Scenario, ScenarioResult, Table


    @turncheck.register_strategy("LAST", colour="#00aaaa", marker="o")
    def last_turn(history, budget, cost):
        """Keep the newest turn only, whatever the budget."""
        starts = history.seg_starts
        return turncheck.window_from_start(history, budget, cost, starts[-1] if starts else len(history), "LAST")


    @dataclass(frozen=True)
    class CounterModel:
        """Two writers add to a counter up to a limit; the counter never passes it."""

        limit: int = 2
        name: str = "ext-counter"

        @property
        def params(self):
            return {"limit": self.limit}

        def init_states(self):
            return [0]

        def actions(self, state):
            return ["add"] if state < self.limit else []

        def step(self, state, action):
            return state + 1

        def properties(self):
            return (Property("at-most-limit", "always", lambda s: s <= self.limit, "never past the limit"),)

        def metrics(self, state):
            return {"count": state}

        def canonical(self, state):
            return state

        def format_action(self, state, action):
            return f"{action} -> {state + 1}"


    class LostUpdate(turncheck.ProtocolModel):
        """Two writers add one by reading then writing; an auditor counts when both are done."""

        name = "ext-lost-update"

        def __init__(self, writers: int = 2) -> None:
            self.writers = writers
            self.params = {"writers": writers}

        def init_states(self):
            yield (0, (0,) * self.writers, (0,) * self.writers, -1)

        def actions(self, state):
            counter, phases, _seen, audited = state
            out = [("read", w) for w, p in enumerate(phases) if p == 0]
            out += [("write", w) for w, p in enumerate(phases) if p == 1]
            if audited < 0 and all(p == 2 for p in phases):
                out.append(("audit",))
            return out

        def step(self, state, action):
            counter, phases, seen, audited = state
            if action[0] == "audit":
                return (counter, phases, seen, counter)
            w, phases, seen = action[1], list(phases), list(seen)
            if action[0] == "read":
                phases[w], seen[w] = 1, counter
            else:
                phases[w], counter = 2, seen[w] + 1
            return (counter, tuple(phases), tuple(seen), audited)

        def properties(self):
            n = self.writers
            return (Property("audit-counts-every-write", "always", lambda s: s[3] < 0 or s[3] == n,
                             "the audited counter equals the number of writes"),)

        def format_action(self, state, action):
            if action[0] == "audit":
                return f"auditor counts {state[0]}"
            verb = "reads" if action[0] == "read" else "writes"
            return f"writer {action[1]} {verb}"

        def actor(self, state, action):
            return "auditor" if action[0] == "audit" else f"writer {action[1]}"

        def lane_order(self):
            return ("auditor", "writer")


    turncheck.register_model(
        "ext-lost-update", LostUpdate,
        demo=turncheck.DemoCheck("fail", "read-then-write loses an update", {"writers": "2"}),
    )
    turncheck.register_model("ext-counter", CounterModel)


    @dataclass(frozen=True)
    class EchoParams:
        rows: int = 100


    def run(params, progress):
        progress(0, 1)
        rows = tuple((k, k * k) for k in range(params.rows))
        progress(1, 1)
        table = Table("squares", "Squares of the first integers", ("k", "k squared"), rows)
        judged = Judgement("squares grow", all(b <= d for (_, b), (_, d) in zip(rows, rows[1:])), f"{len(rows)} rows")
        return ScenarioResult("ext-echo", {"rows": params.rows}, 0, (table,), (judged,))


    turncheck.register_scenario(
        Scenario("ext-echo", EchoParams, run, "The extension's scenario: squares.",
                 presets={"tiny": {"rows": "4"}, "quick": {"rows": "10"}}, order=5)
    )


    def draw(result):
        fig = Figure(figsize=(3, 2))
        rows = result.table("squares").rows
        fig.add_subplot().bar([r[0] for r in rows], [r[1] for r in rows], label="k squared")
        return fig


    def reading(result):
        return f"{len(result.table('squares').rows)} squares, drawn by the extension"


    turncheck.register_plot(Plot("ext-bars", "Squares as bars", draw, reading, draws=("ext-echo",)))
    '''
)


def install(site: Path, module: str, source: str, entry: str = "") -> None:
    """Write ``module`` and a distribution listing it under ``turncheck.plugins`` into ``site``."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[turncheck.plugins]\n{entry or module} = {module}\n", encoding="utf-8"
    )


def turncheck(
    site: Path, cwd: Path, *argv: str, plugins: str = "my_turncheck_ext"
) -> subprocess.CompletedProcess[str]:
    """``python -m turncheck`` with ``site`` on the import path and only the ``plugins`` named
    switched on (the suite runs with them off, tests/conftest.py; any other plugin installed in
    this environment stays off)."""
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg", "TURNCHECK_PLUGINS": plugins}
    return subprocess.run(
        [sys.executable, "-m", "turncheck", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


RUNS = r"""
import contextlib, io, json, sys
from turncheck.cli import demo
from turncheck.cli.app import main
keep, found = json.loads(sys.argv[2]), demo.scenarios
if keep:  # the demo's plan over the scenarios named, as discovered (extensions included)
    demo.scenarios = lambda: {k: v for k, v in found().items() if k in keep}
done = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    done.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(done))
"""


class Run(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def turncheck_runs(site: Path, cwd: Path, *argvs: list[str], plugins: str = "my_turncheck_ext",
                   demo_scenarios: tuple[str, ...] = ()) -> list[Run]:  # fmt: skip
    """Each of ``argvs`` through turncheck's ``main``, in order, in one new interpreter with
    ``site`` on the import path and only the ``plugins`` named switched on (the suite runs with
    them off, tests/conftest.py; any other plugin installed here stays off): entry-point
    discovery is real and happens once, as in any process, and the commands share the start-up
    (the import of the command line and the extension) that separate processes would each pay.
    ``demo_scenarios``, when given, keeps a ``demo``'s plan to those scenarios (the checks stay)."""
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg", "TURNCHECK_PLUGINS": plugins}
    argv = [sys.executable, "-c", RUNS, json.dumps(argvs), json.dumps(demo_scenarios)]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [Run(r["code"], r["out"], r["err"]) for r in json.loads(done.stdout.splitlines()[-1])]


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "my_turncheck_ext", EXTENSION)
    return site


def test_an_extension_module_is_listed_run_and_drawn(site: Path, tmp_path: Path) -> None:
    listed, scenarios, helped, outside, checked, demo = turncheck_runs(
        site, tmp_path,
        ["list", "--format", "json"],
        ["scenario", "--list"],
        ["project", "--help"],
        ["bench", "--scale", "tiny"],  # no benchmarks/ here: one line
        ["check", "ext-counter", "--param", "limit=3"],
        ["demo", "--scale", "tiny", "--out", "out", "--quiet", "--format", "json"],
        demo_scenarios=("ext-echo", "trigger-gap", "testbench"),  # the rest: tests/test_demo.py
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    names = json.loads(listed.stdout)
    assert names["strategies"][-1] == "LAST" and names["strategies"][0] == "M0"  # built-ins first
    assert names["models"][-1] == "ext-counter"
    assert names["scenarios"][-1] == "ext-echo" and names["scenarios"][0] == "trigger-gap"
    assert names["plots"][-1] == "ext-bars"
    assert names["extensions"] == ["my_turncheck_ext"]

    assert "ext-echo: The extension's scenario" in scenarios.stdout
    assert "LAST" in helped.stdout
    assert (
        outside.returncode == 2
        and outside.stderr.count("\n") == 1
        and "repository checkout" in outside.stderr
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    out = tmp_path / "out"
    echo = json.loads((out / "results" / "ext-echo.json").read_text(encoding="utf-8"))
    assert echo["params"] == {"rows": 4}  # its own tiny preset
    summary = json.loads(demo.stdout)
    steps = [s["step"] for s in summary["steps"]]
    assert steps.index("scenario ext-echo rows=4") < steps.index(
        "scenario trigger-gap iterations=2000"
    )  # order=5
    # the strategy runs in the testbench next to M0–M5 and is drawn among them
    testbench = (out / "results" / "testbench.json").read_text(encoding="utf-8")
    assert '"LAST"' in testbench
    assert "ext-bars--ext-echo" in summary["plots"]
    assert (out / "plots" / "ext-bars--ext-echo.png").stat().st_size > 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<figure id="ext-bars--ext-echo">' in page and "<h2>ext-echo</h2>" in page
    assert "4 squares, drawn by the extension" in page
    svg = (out / "plots" / "strategies-vs-budget--testbench.svg").read_text(encoding="utf-8")
    assert "#00aaaa" in svg  # drawn in the colour the strategy declared
    # the model: checked by the demo as it declared, its counterexample replayed and drawn in the
    # report in the model's own lane order (the auditor first, which no default would do)
    assert "check ext-lost-update writers=2" in steps
    trace = out / "traces" / "ext-lost-update-writers-2.json"
    assert json.loads(trace.read_text(encoding="utf-8"))["violated"] == "audit-counts-every-write"
    assert "counterexample--ext-lost-update-writers-2" in summary["plots"]
    viewers = re.findall(r'<script type="application/json" class="tcv-data">(.*?)</script>', page)
    lost = [json.loads(v) for v in viewers if '"ext-lost-update"' in v]
    assert lost and lost[0]["lanes"] == ["auditor", "writer 0", "writer 1"] and lost[0]["replayed"] is True


def test_an_extension_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "broken_ext", "raise RuntimeError('no luck')\n", entry="broken")
    for argv in (("list",), ("scenario", "--list")):
        run = turncheck(site, tmp_path, *argv, plugins="broken")
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr == (
            "turncheck: error: extension 'broken' (turncheck.plugins = 'broken_ext') failed to load: "
            "RuntimeError: no luck\n"
        )


def test_an_extension_cannot_take_a_built_in_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "greedy_ext", "import turncheck\nturncheck.register_strategy('M0', lambda h, b, c: None)\n")
    run = turncheck(site, tmp_path, "list", plugins="greedy_ext")
    assert run.returncode == 2
    assert "DuplicateRegistration: strategy 'M0' is registered twice" in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_plugins_switched_off_leave_the_results_as_without_them(site: Path, tmp_path: Path) -> None:
    """``TURNCHECK_PLUGINS=0``, as the suite runs: with the extension installed, the names and
    the testbench's result file are byte for byte what they are with no extension at all; with
    it named, its additions are there (every other installed plugin stays off either way)."""
    install(site, "greedy_ext", "import turncheck\nturncheck.register_strategy('M0', lambda h, b, c: None)\n")
    bare = tmp_path / "bare"
    bare.mkdir()
    runs: dict[str, tuple[dict[str, list[str]], bytes]] = {}
    for name, where, plugins in (("absent", bare, "0"), ("off", site, "0"), ("on", site, "my_turncheck_ext")):
        listed, scenario = turncheck_runs(
            where, tmp_path, ["list", "--format", "json"],
            ["scenario", "testbench", "--scale", "tiny", "--out", name, "--quiet", "--format", "json"],
            plugins=plugins,
        )  # fmt: skip
        assert listed.returncode == scenario.returncode == 0, listed.stderr + scenario.stderr
        runs[name] = json.loads(listed.stdout), (tmp_path / name / "testbench.json").read_bytes()
    assert runs["off"] == runs["absent"]  # and the greedy extension, installed too, never loaded
    names, result = runs["off"]
    assert names["strategies"] == ["M0", "M1", "M2", "M3", "M4", "M5", "REQ", "SUM", "SLIDE"]
    assert names["extensions"] == []
    assert b'"LAST"' not in result
    on, on_result = runs["on"]
    assert on["extensions"] == ["my_turncheck_ext"]
    for kind, added in (("strategies", "LAST"), ("models", "ext-counter"), ("scenarios", "ext-echo"),
                        ("plots", "ext-bars")):  # fmt: skip
        assert on[kind][: len(names[kind])] == names[kind] and on[kind][-1] == added  # built-ins first
    assert b'"LAST"' in on_result
