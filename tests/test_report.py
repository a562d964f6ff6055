"""``turncheck report``: one self-contained page, every table, plot and judgement, all file text escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_plots import locking_result, peaks_result, trigger_trace

from turncheck.reports.html import ReportSummary, write_report
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import Judgement, ScenarioResult, Table
from turncheck.sim.trace import Trace, save_trace

EVIL = '<script>alert("x")</script>'


def projection_with_event_text() -> ScenarioResult:
    """A projection-shaped result whose cells carry event text, as a real log can."""
    table = Table(
        "stages", f"Request for {EVIL}", ("stage", "event text", "bytes"),
        (("narrow", f"user said {EVIL}", 264), ("widen", "ORCHID-17 & <b>bold</b>", 480)),
        reading=f"reading with {EVIL}",
    )  # fmt: skip
    return ScenarioResult(
        "projection", {"model": EVIL}, 5, (table,), (Judgement(f"judged {EVIL}", False, f"detail {EVIL}"),)
    )


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("results")
    for r in (peaks_result(), locking_result(), projection_with_event_text()):
        write_result(r, d)
    save_trace(trigger_trace(), d / "traces" / "cx.json")
    evil_trace = Trace("no_such.mod:Lock", {"note": EVIL}, (("writer", 1, EVIL),), EVIL, engine=EVIL)
    save_trace(evil_trace, d / "traces" / "evil.json")
    (d / "other.json").write_text('{"format": "something-else"}', encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def written(results_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[ReportSummary, str]:
    out = tmp_path_factory.mktemp("page") / "report.html"
    summary = write_report(results_dir, out)
    return summary, out.read_text(encoding="utf-8")


def test_report_escapes_event_text_and_loads_nothing_from_outside(written: tuple[ReportSummary, str]) -> None:
    summary, page = written
    # the page's only scripts are the trace viewer's (reports/viewer.py): its code once, and one JSON
    # data block per trace in which no "<" can occur; nothing from a file got through as a script
    own = re.sub(r'<script type="application/json" class="tcv-data">[^<]*</script>', "", page)
    assert page.count('class="tcv-data"') == summary.traces
    assert "<script" not in own.lower().replace("<script>/* turncheck trace viewer", "", 1)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "ORCHID-17 &amp;" in page
    # self-contained: every src is a data: URI, every href an anchor on the page
    assert not re.search(r'\s(src|href)="(?!data:|#)', page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    images = re.findall(r'<img src="data:image/png;base64,', page)
    assert len(images) == len(summary.plots) >= 5
    assert summary.results == 3 and summary.traces == 2
    assert summary.passed == 0 and summary.failed == 1
    assert [str(p.name) for p, _ in summary.skipped] == ["other.json"]


def test_report_shows_every_table_judgement_parameter_and_seed(written: tuple[ReportSummary, str]) -> None:
    _, page = written
    for text in ("sweep-trigger-gap", "locking", "projection", "seed <code>7</code>", "seed <code>3</code>",
                 "<code>slots=100</code>", "FAIL</span>  judged", "Counterexample: bounded-peak-turns (trigger)",
                 "Transcript (replayed against the current code)", "invariant bounded-peak-turns broken"):  # fmt: skip
        assert text in page, text
    outside_viewers = re.sub(r'<section class="tcv".*?</section>', "", page, flags=re.S)
    assert outside_viewers.count("<table>") == 3
    # one-line readings under every plot
    assert page.count("<figcaption><b>") == page.count("<img ")
    assert "drawn from the saved actions" not in page  # titles are in the images, not the page text


def test_report_command(cli: Any, results_dir: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "r.html"
    code, text, _ = cli("report", str(results_dir), "-o", str(out), "--format", "json")
    obj = json.loads(text)
    assert code == 0 and out.stat().st_size > 50_000
    assert obj["judgements"] == {"pass": 0, "fail": 1} and obj["report"] == str(out)
    assert obj["results"] == 3 and obj["traces"] == 2 and len(obj["plots"]) >= 5


def test_plot_command_writes_png_and_svg(cli: Any, results_dir: Path, tmp_path: Path, capsys: Any) -> None:
    code, text, _ = cli("plot", str(results_dir), "-o", str(tmp_path / "p"), "--format", "json")
    obj = json.loads(text)
    assert code == 0 and len(obj["plots"]) >= 5
    for plot in obj["plots"]:
        assert all(Path(f).stat().st_size > 0 for f in plot["files"]) and plot["reading"]


def test_bad_input_is_one_line_and_writes_nothing(
    cli: Any, tmp_path: Path, capsys: Any, results_dir: Path
) -> None:
    out = tmp_path / "never.html"
    code, _, err = cli("report", str(tmp_path / "missing"), "-o", str(out))
    assert code == 2 and "no such directory" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    broken = tmp_path / "broken"
    write_result(locking_result(), broken)
    damaged = broken / "damaged.json"
    damaged.write_text('{"format": "turncheck-result/1", "scenario": "x"}', encoding="utf-8")
    code, _, err = cli("report", str(broken), "-o", str(out))
    assert code == 2 and "damaged.json: damaged result file" in err and not out.exists()
    code, _, err = cli("report", str(results_dir), "-o", str(tmp_path), "--format", "json")
    assert code == 2 and "is a directory" in err
    code, _, err = cli("report", str(results_dir), "--format", "yaml")
    assert code == 2 and "--format" in err


def test_extend_column_wise_equals_adding_one_by_one():
    import random

    from turncheck.models.report import COUNTERS, Aggregate, Report

    rng = random.Random(7)
    rows = [Report(*(rng.choice((0, 0, 1, 3, 250)) for _ in COUNTERS)) for _ in range(300)]
    one, many = Aggregate(400), Aggregate(400)
    for r in rows:
        one.add(r)
    many.extend(rows[:120])
    many.extend([])
    many.extend(iter(rows[120:]))
    assert many.as_dict() == one.as_dict() and many.hits == one.hits and many.maxCost == one.maxCost
