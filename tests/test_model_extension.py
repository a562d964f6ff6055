"""A new protocol model in one file: checked, replayed and drawn lane by lane, with nothing else
changed.

The model lives in one temporary module (``tmp_path``), is named on the command line as
``package.module:Class`` and subclasses the public base ``turncheck.ProtocolModel``. It declares
its own lanes (``actor``) and their order (``lane_order``: the auditor first, which no default
order would put there), its metrics and its limit. ``turncheck check`` finds the lost update,
``turncheck replay --model … --html`` replays the saved trace on the class the command line
named, and the report's timeline — drawn from the trace alone, without importing the module —
keeps the model's own lane order.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.reports.plots.timeline import plot_counterexample, timeline_of
from turncheck.sim.trace import load_trace

PACKAGE = "tc_extension_lost_update"
REF = f"{PACKAGE}.counter:LostUpdate"
LANES = ["auditor", "writer 0", "writer 1"]  # the model's order; the default would put writers first

MODULE = '''
"""Writers add one to a shared counter by reading it, then writing what they read plus one; an
auditor counts the writes when every writer is done. Read and write are two steps, so an update
can be lost."""

from turncheck import ProtocolModel, Property
from turncheck.models.protocol import Limit

IDLE, READ, DONE = 0, 1, 2


class LostUpdate(ProtocolModel[tuple, tuple]):
    name = "lost-update"

    def __init__(self, writers: int = 2) -> None:
        self.writers = writers
        self.params = {"writers": writers}

    def init_states(self):
        yield (0, (IDLE,) * self.writers, (0,) * self.writers, -1)

    def actions(self, state):
        counter, phases, _seen, audited = state
        out = [("read", w) for w, p in enumerate(phases) if p == IDLE]
        out += [("write", w) for w, p in enumerate(phases) if p == READ]
        if audited < 0 and all(p == DONE for p in phases):
            out.append(("audit",))
        return out

    def step(self, state, action):
        counter, phases, seen, audited = state
        if action[0] == "audit":
            return (counter, phases, seen, counter)
        w = action[1]
        phases, seen = list(phases), list(seen)
        if action[0] == "read":
            phases[w], seen[w] = READ, counter
        else:
            phases[w], counter = DONE, seen[w] + 1
        return (counter, tuple(phases), tuple(seen), audited)

    def properties(self):
        n = self.writers
        return (
            Property("audit-counts-every-write", "always", lambda s: s[3] < 0 or s[3] == n,
                     "the audited counter equals the number of writes"),
            Property("audited", "sometimes", lambda s: s[3] >= 0, "the auditor runs"),
        )

    def metrics(self, state):
        return {"counter": state[0], "writes": sum(p == DONE for p in state[1])}

    def format_action(self, state, action):
        if action[0] == "audit":
            return f"auditor counts {state[0]}"
        w = action[1]
        if action[0] == "read":
            return f"writer {w} reads {state[0]}"
        return f"writer {w} writes {state[2][w] + 1}"

    def actor(self, state, action):
        return "auditor" if action[0] == "audit" else f"writer {action[1]}"

    def lane_order(self):
        return ("auditor", "writer")

    def limit(self):
        return Limit("counter", "writers", float(self.writers))
'''


@pytest.fixture
def extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The model's one module, in a package in the working directory (as for ``python -m``)."""
    package = tmp_path / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "counter.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield package
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _lane_positions(header: str) -> list[int]:
    return [header.index(lane) for lane in LANES]


def _check(capsys: pytest.CaptureFixture[str], trace: Path) -> str:
    code = main(["check", REF, "--trace-out", str(trace), "--max-examples", "20", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1, out + err  # a counterexample, saved at --trace-out
    return out


def test_check_finds_the_lost_update_and_prints_the_models_lanes_in_its_order(
    extension: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "lost.json"
    out = _check(capsys, trace)
    assert "FAIL: audit-counts-every-write is violated" in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("step") and "auditor" in line)
    positions = _lane_positions(header)
    assert positions == sorted(positions), header
    assert "counts 1" in out  # the model's own words, in its own lane (its name stripped)
    saved = json.loads(trace.read_text(encoding="utf-8"))
    assert saved["model"] == REF and saved["model_name"] == "lost-update"
    assert saved["lanes"] == LANES
    assert saved["actors"][-1] == "auditor" and len(saved["actors"]) == saved["steps"] == 5
    assert saved["timeline"]["broken_at"] == 5
    assert saved["timeline"]["metrics"][-1] == {"counter": 1, "writes": 2}


def test_replay_html_replays_on_the_named_class_with_its_lanes(
    extension: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "lost.json"
    _check(capsys, trace)
    page = tmp_path / "lost.html"
    code = main(["replay", str(trace), "--model", REF, "--html", str(page)])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "still fails the same way: audit-counts-every-write broken at step 5" in out
    data = re.search(
        r'<script type="application/json" class="tcv-data">(.*?)</script>', page.read_text("utf-8")
    )
    assert data is not None
    view = json.loads(data.group(1).replace("\\u003c", "<"))
    assert view["replayed"] is True and view["verdict"] == "same"
    assert view["lanes"] == LANES
    assert [s["lane"] for s in view["steps"][1:]] == [
        "writer 0",
        "writer 1",
        "writer 0",
        "writer 1",
        "auditor",
    ]
    assert view["steps"][-1]["metrics"] == {"counter": 1, "writes": 2}
    assert view["steps"][-1]["holds"]["audit-counts-every-write"] is False


def test_the_timeline_is_drawn_lane_ordered_from_the_trace_without_importing_the_model(
    extension: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "lost.json"
    _check(capsys, trace)
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    (extension / "counter.py").unlink()  # a report must not need (nor load) the model's code
    tl = timeline_of(load_trace(trace))
    assert tl.lanes == tuple(LANES)
    assert [s.lane for s in tl.steps] == ["writer 0", "writer 1", "writer 0", "writer 1", "auditor"]
    assert tl.steps[-1].text == "counts 1" and tl.broken_at == 5
    assert tl.metrics["counter"] == (0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    assert tl.limit == ("counter", "writers", 2.0)
    fig = plot_counterexample(trace)
    lanes_axis = fig.axes[0]
    assert [t.get_text() for t in lanes_axis.get_yticklabels()] == LANES
    assert {line.get_label() for line in lanes_axis.get_lines()} >= set(LANES)
    assert not any(m == PACKAGE or m.startswith(PACKAGE + ".") for m in sys.modules)


def test_a_class_without_the_base_is_wrapped_not_modified(
    extension: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same model written without subclassing: the adapter supplies the defaults (lanes read
    off the text, in the default order) and the user's object gains no attribute."""
    plain = (
        textwrap.dedent(MODULE)
        .replace("class LostUpdate(ProtocolModel[tuple, tuple]):", "class LostUpdate:")
        .replace("    def actor(self, state, action):", "    def _actor(self, state, action):")
        .replace("    def lane_order(self):", "    def _lane_order(self):")
    )
    (extension / "counter.py").write_text(plain, encoding="utf-8")
    from turncheck.sim.protocols import load_model

    model = load_model(REF, {})
    inner = model.inner  # type: ignore[attr-defined]
    assert not hasattr(inner, "canonical") and not hasattr(inner, "columns")
    assert model.order_lanes(["auditor", "writer 1", "writer 0"]) == ("writer 0", "writer 1", "auditor")
    trace = tmp_path / "plain.json"
    _check(capsys, trace)
    # "auditor counts 1" names no known role: its lane is "step", after the writers
    assert json.loads(trace.read_text(encoding="utf-8"))["lanes"] == ["writer 0", "writer 1", "step"]


def test_a_class_missing_part_of_the_core_is_refused_in_one_line(
    extension: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = textwrap.dedent(MODULE).replace(
        "    def step(self, state, action):", "    def _step(self, state, action):"
    )
    (extension / "counter.py").write_text(broken, encoding="utf-8")
    assert main(["check", REF, "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        f"turncheck: error: {REF!r} does not follow the model interface: no step (see models/protocol.py)"
    ]


def test_a_malformed_record_is_ignored_and_the_trace_drawn_from_its_actions(
    extension: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "lost.json"
    _check(capsys, trace)
    saved = json.loads(trace.read_text(encoding="utf-8"))
    saved["lanes"] = ["someone else"]  # not the lanes of its actors: the record is not trusted
    trace.write_text(json.dumps(saved), encoding="utf-8")
    tl = timeline_of(load_trace(trace))
    assert tl.verdict == "recorded" and not tl.replayed
    assert [s.text for s in tl.steps][:2] == ["read 0", "read 1"]
