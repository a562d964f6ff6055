"""A peer's shortest pairing break as a projector trace: found, replayed, shown in the viewer.

The library runs for real (AutoGen's token-limited context, offline); the trace is written by
the ``peers`` scenario's own helper, replayed by ``turncheck replay --html`` and shown by
``turncheck report`` under the peers section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.integrations.scenarios.peer_trace import peer_traces, trace_rows
from turncheck.models.catalog import build_model
from turncheck.models.projector_model import NO_ORPHAN_CALLS, ProjectorModel
from turncheck.sim.trace import load_trace, replay

PEER = "peer:autogen-token-limited"


def test_the_default_projector_model_is_unchanged() -> None:
    m = ProjectorModel()
    assert "pairing" not in m.params and NO_ORPHAN_CALLS not in {p.name for p in m.properties()}
    assert NO_ORPHAN_CALLS in {p.name for p in ProjectorModel(pairing=True).properties()}


def test_m5_breaks_no_pairing_in_the_model() -> None:
    assert peer_traces("M5", events=5) == []


def test_shortest_traces_replay_and_show_in_the_viewer_and_report(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    pytest.importorskip("autogen_core", reason="autogen-core (frameworks extra) is not installed")
    attachments: dict[str, str] = {}
    rows = trace_rows(PEER, ["orphanRes", "orphanCall"], attachments)
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        ("no-orphan-results", 3, 4, "U C0 R0[3]"),
        ("no-orphan-calls", 4, 4, "U C0 R0[3] U"),
    ]
    for name, text in attachments.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path = tmp_path / rows[1][5]
    trace = load_trace(path)
    assert replay(build_model("projector", trace.params), trace).verdict == "same"
    page = tmp_path / "t.html"
    assert main(["replay", str(path), "--html", str(page)]) == 1  # still fails: exit 1
    html = page.read_text()
    assert "no-orphan-calls" in html and "tcv-data" in html
    report = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "peers.traces"), "-o", str(report), "-q"]) == 0
    text = report.read_text()
    assert text.count(f"Shortest pairing break of {PEER}") == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).resolve().parent.parent / "docs" / "peer-repros").glob("*.trace.json")),
    ids=lambda p: p.name,
)  # fmt: skip
def test_the_saved_traces_still_break_the_same_way(path: Path) -> None:
    import importlib.util

    from turncheck.models.peer import PEERS

    trace = load_trace(path)
    module = PEERS[trace.params["strategy"]].module
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    assert replay(build_model("projector", trace.params), trace).verdict == "same"
