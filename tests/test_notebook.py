"""Rich display in notebooks and table export (issue 32).

The committed example notebook, examples/notebook/turncheck.ipynb, runs in a real Jupyter kernel
started headless by nbclient (the ``notebook`` extra; skipped with the reason without it), once
per module; each result type must show as escaped HTML there and its table must reach pandas. The
rest is in-process: escaping of hostile text, the message without pandas, the empty cases.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turncheck as tc
from turncheck.models.tokenizer import MissingExtra
from turncheck.scenarios.base import ScenarioResult, Table

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "notebook" / "turncheck.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """The notebook run top to bottom in a fresh python3 kernel: cell id → its outputs."""
    nbformat = pytest.importorskip(
        "nbformat", reason="needs the notebook extra: pip install 'turncheck[notebook]'"
    )
    nbclient = pytest.importorskip(
        "nbclient", reason="needs the notebook extra: pip install 'turncheck[notebook]'"
    )
    pytest.importorskip("ipykernel", reason="needs the notebook extra: pip install 'turncheck[notebook]'")
    pytest.importorskip("pandas", reason="the notebook's to_pandas() cells need pandas (the notebook extra)")
    home = tmp_path_factory.mktemp("jupyter")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", str(home / "ipython"))
        mp.setenv("JUPYTER_RUNTIME_DIR", str(home / "runtime"))
        mp.setenv("JUPYTER_PLATFORM_DIRS", "1")
        nb = nbformat.read(NOTEBOOK, as_version=4)
        client = nbclient.NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(home)}}
        )
        client.execute()
    yield {c["id"]: c.get("outputs", []) for c in nb.cells if c["cell_type"] == "code"}


def _html(outputs: list[dict[str, Any]]) -> str:
    (html,) = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    return html


def _rows(html: str) -> list[list[str]]:
    return [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", html)]


def test_the_notebook_runs_without_errors(executed: dict[str, list[dict[str, Any]]]) -> None:
    errors = [o for outs in executed.values() for o in outs if o["output_type"] == "error"]
    assert not errors


def test_a_window_shows_its_events_cost_and_orphans(executed: dict[str, list[dict[str, Any]]]) -> None:
    html = _html(executed["window"])
    assert "window M0 would send: 3 of 5 events, from position 2" in html
    assert "cost 138 of budget 140, 1 orphan RESULT(s)" in html
    assert [r[:2] for r in _rows(html)[1:]] == [
        ["seq 2: RESULT c1 (turn 1)", "orphan"],
        ["seq 3: TERM (turn 1)", ""],
        ["seq 4: USER (turn 2)", ""],
    ]
    assert 'class="scroll"' in html and "<script" not in html


def test_the_window_report_and_the_frames(executed: dict[str, list[dict[str, Any]]]) -> None:
    report = _html(executed["report"])
    assert "<th>orphanRes</th>" in report and "<th>dupCallId</th>" in report
    frame = _html(executed["frame"])
    assert "<th>kind</th>" in frame and "RESULT" in frame
    records = executed["records"][0]["data"]["text/plain"]
    assert "'kind': 'RESULT'" in records and "'placeholder': False" in records
    assert "strategy" in _html(executed["sweep-frame"])


def test_an_exploration_and_its_trace(executed: dict[str, list[dict[str, Any]]]) -> None:
    html = _html(executed["explore"])
    assert "exploration of trigger" in html and "coverage: exhaustive" in html
    assert ["within-max-turns", "always", "violated at depth 4"] in _rows(html)
    trace = _html(executed["trace"])
    assert "<b>Counterexample: within-max-turns</b> (trigger), 4 steps" in trace
    assert "invariant within-max-turns broken after step 4" in trace
    assert "the trigger&#x27;s nominal promise" in trace  # escaped, not raw


def test_a_scenario_result_shows_judgements_and_tables(executed: dict[str, list[dict[str, Any]]]) -> None:
    html = _html(executed["sweep"])
    assert html.startswith("<p><b>clock-skew</b>: seed ")
    assert "<li>PASS  ts alone orphans results" in html
    assert "Clock skew and read order" in html and "<th>orphanRes</th>" in html


HOSTILE = '<script>alert("x")</script>&'


def test_hostile_text_is_escaped_everywhere() -> None:
    h = tc.History([tc.Event(0, HOSTILE, 1, tc.Kind.CALL, HOSTILE, chars=10)])
    w = tc.project(h, 1000, "M0", tc.make_cost("estimate"))
    table = Table("t", HOSTILE, ("a", HOSTILE), ((HOSTILE, 1),), HOSTILE)
    result = ScenarioResult(HOSTILE, {HOSTILE: HOSTILE}, 1, (table,), (tc.Judgement(HOSTILE, True, HOSTILE),))
    trace = tc.Trace(HOSTILE, {"p": HOSTILE}, ((HOSTILE,),), HOSTILE)
    for html in (w._repr_html_(), table._repr_html_(), result._repr_html_(), trace._repr_html_()):
        assert "<script" not in html and "&lt;script&gt;" in html


def test_records_of_each_type() -> None:
    h = tc.History(
        [tc.Event(0, "s", 1, tc.Kind.USER, chars=4), tc.Event(1, "s", 1, tc.Kind.CALL, "c", chars=4)]
    )
    w = tc.project(h, 1000, "M2", tc.make_cost("estimate"))
    assert [(r["kind"], r["placeholder"]) for r in w.to_records()] == [
        ("USER", False), ("CALL", False), ("RESULT", True),
    ]  # fmt: skip
    assert w.report.to_records() == [w.report._asdict()]
    t = Table("a", "A", ("x", "y"), ((1, "u"), (2, None)))
    assert t.to_records() == [{"x": 1, "y": "u"}, {"x": 2, "y": None}]
    two = ScenarioResult("s", {}, 0, (t, Table("b", "B", ("z",), ())))
    assert two.to_records("a") == t.to_records()
    with pytest.raises(tc.TurncheckError, match=r"has 2 tables \(a, b\): name one"):
        two.to_records()


def test_to_pandas_without_pandas_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # what `import pandas` meets when it is absent
    with pytest.raises(MissingExtra) as err:
        Table("a", "A", ("x",), ((1,),)).to_pandas()
    assert (
        str(err.value)
        == "to_pandas() needs pandas, which is not installed: pip install 'pandas<4,>=3.1.1' 'nbclient<1,>=0.11'"
        " 'ipykernel<8,>=7.4' 'nbformat<6,>=5.11.1' (turncheck's notebook extra)"
    )


def test_to_pandas_keeps_the_columns_of_an_empty_table() -> None:
    pd = pytest.importorskip("pandas", reason="needs pandas (the notebook extra)")
    frame = tc.project(tc.History(), 10, "M0", tc.make_cost("estimate")).to_pandas()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 0 and "kind" in frame.columns


def test_a_trace_only_for_a_violated_property() -> None:
    model = tc.build_model("trigger", {"locking": "none", "gap": 1})
    result = tc.explore(model)
    assert result.trace(model, "within-max-turns").actions[-1] == ("append", 0)
    with pytest.raises(tc.TurncheckError, match="trigger-fires was not violated"):
        result.trace(model, "trigger-fires")
