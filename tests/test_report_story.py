"""The report tells the story: findings first (generated from the result files, each linking to
its section), numbers that never wrap, long tables collapsed behind <details>, and a user's own
model's transcript in the model's own words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.my_lock import FlagLock
from turncheck.models.catalog import build_model
from turncheck.reports.findings import findings
from turncheck.reports.html import LONG_TABLE, write_report
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import Judgement, ScenarioResult, Table, get_scenario, no_progress, parse_params
from turncheck.sim.checking import run_check, select_properties
from turncheck.sim.trace import Trace, load_trace, recording_of, save_trace

ROOT = Path(__file__).resolve().parent.parent


def real(name: str, **params: str) -> ScenarioResult:
    sc = get_scenario(name)
    result: ScenarioResult = sc.run(parse_params(sc, params), no_progress)
    return result


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("story")
    write_result(real("trigger-gap", iterations="3000"), d)
    write_result(real("locking", slots="40", writers="1,4", gap="0,2", budget="0"), d)
    long = Table(
        "many", "A long table", ("k", "value"), tuple((i, 10_000 + i) for i in range(LONG_TABLE + 8))
    )
    # a long parameter (as a demo's list of checks or a sweep's grid): it must not widen the page
    checks = [
        f"check trigger locking=mutex gap={g} -i no-uncounted-gap-turn -i bounded-peak-turns"
        for g in range(9)
    ]
    write_result(ScenarioResult("projection", {"checks": checks}, 1, (long,)), d)
    # a user's own model: FlagLock from examples/, its counterexample saved by reference
    model = build_model("trigger", {"locking": "none", "gap": "1"})
    report = run_check(model, select_properties(model, ["no-uncounted-gap-turn"]), engine="explore")
    assert report.counterexample is not None
    save_trace(Trace("trigger", dict(model.params), report.counterexample.actions, "no-uncounted-gap-turn",
                     report.counterexample.init), d / "traces" / "gap.json")  # fmt: skip
    steps = (("check", 0), ("check", 1), ("set", 0), ("set", 1))
    words = recording_of(FlagLock(workers=2), 0, steps, "one-compactor")[
        "words"
    ]  # as `turncheck check` saves
    save_trace(Trace("examples.my_lock:FlagLock", {"workers": 2}, steps, "one-compactor", extra={"words": words}),
               d / "traces" / "flag.json")  # fmt: skip
    save_trace(Trace("nowhere.mod:Lock", {}, (("go", 1),), "never"), d / "traces" / "bare.json")
    out = tmp_path_factory.mktemp("page") / "report.html"
    write_report(d, out)
    return out


@pytest.fixture(scope="module")
def page(page_file: Path) -> str:
    return page_file.read_text(encoding="utf-8")


def test_findings_open_the_page_and_link_to_their_sections(page: str) -> None:
    start = page.index('<section class="findings" id="findings">')
    assert start < page.index('<div class="summary">') < page.index("<nav>")
    block = page[start : page.index("</section>", start)]
    assert "maxTurns bounds the delete, not the log" in block and "right after each compaction" in block
    assert 'href="#result-0">→ trigger-gap' in block and "→ locking" in block
    assert '<section id="result-0"><h2>trigger-gap</h2>' in page


def test_findings_read_their_numbers_from_the_result() -> None:
    result = real("trigger-gap", writers="4", gap="2", iterations="3000")
    (f,) = findings([result])
    row = result.table("peaks").records()[0]
    assert f"the peak at any moment is {row['peak']}" in f.sentence
    assert f"right after each compaction it is {row['post_peak']}" in f.sentence
    assert findings([ScenarioResult("projection", {}, 1, ())]) == []  # nothing to say: no filler


def test_a_result_without_a_sentence_speaks_through_its_judgements() -> None:
    table = Table("t", "Key collapse: 20 sessions on 4 keys", ("a",), ())
    passed = [Judgement(f"check {k}", True, f"detail {k}") for k in range(4)]
    (f,) = findings([ScenarioResult("key-collapse", {}, 1, (table,), tuple(passed))])
    assert f.headline == "Key collapse: 20 sessions on 4 keys."
    assert f.sentence == "check 0: detail 0; check 1: detail 1; 2 more pass."
    failing = (*passed, Judgement("bound holds", False, "peak 9 > 8"))
    (f,) = findings([ScenarioResult("key-collapse", {}, 1, (table,), failing)])
    assert f.headline == "1 of 5 judgement lines fail." and f.sentence == "bound holds: peak 9 > 8."
    assert "rows in" not in f.sentence


def test_numbers_never_wrap_and_long_tables_collapse(page: str) -> None:
    assert "10\u202f007" in page and "10\u2009007" not in page  # a narrow NO-BREAK space groups digits
    assert "td.num,.meta code{white-space:nowrap}" in page
    assert f"<summary>all {LONG_TABLE + 8} rows of “A long table”</summary>" in page


@pytest.mark.parametrize("width", [1280, 1024])
def test_the_page_never_scrolls_sideways(open_page: Any, page_file: Path, width: int) -> None:
    """Long parameters wrap inside their code span; tables and traces scroll inside their own box."""
    assert '<code class="long">checks=' in page_file.read_text(encoding="utf-8")
    opened = open_page(page_file, width=width)
    scroll_width, inner = opened.page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    opened.page.close()
    assert inner == width and scroll_width <= inner, f"page is {scroll_width} px wide in a {inner} px window"
    assert not opened.errors


def test_user_models_transcript_is_in_its_own_words(page: str) -> None:
    assert "   4  worker 1 sets the flag and compacts" in page
    assert "in the words of examples.my_lock:FlagLock, recorded when the check ran" in page
    assert "recorded actions of nowhere.mod:Lock (the trace carries no words" in page
    assert "[&#x27;check&#x27;, 0]" not in page  # not the raw action tuples
    assert "appends a turn (live 3 → 4)" in page and "the gap, uncounted" in page  # the catalog model's too


def test_check_saves_the_models_words_with_its_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from turncheck.cli.app import main

    trace = tmp_path / "flag.json"
    code = main(
        ["check", "examples.my_lock:FlagLock", "--engine", "explore", "--quiet", "--trace-out", str(trace)]
    )
    capsys.readouterr()
    assert code == 1  # a counterexample, saved at --trace-out
    saved = load_trace(trace)
    assert saved.extra["words"][-1] == "worker 1 sets the flag and compacts"


def test_token_estimate_and_framing_findings_read_their_numbers(extra_or_skip: Any) -> None:
    with extra_or_skip():
        est = real("token-estimate", sessions="4", turns="10")
    frame = real("framing", records="2000")
    f_est, f_frame = findings([est, frame])
    everything = [x for x in est.table("estimator-error").records() if x["textKind"] == "all"]
    for row in everything:
        assert f"{round(-float(row['error@1.5 %']))} % under" in f_est.sentence
    resync = {(x["framing"], x["reader"]): x for x in frame.table("flipped_digit").records()}
    assert f"(phantom {resync[('lines', 'store resync')]['phantom']})" in f_frame.sentence
    assert f_frame.scenario == "framing" and "(2000 records)" in f_frame.sentence


@pytest.mark.parametrize("width,scrolls", [(1280, False), (800, True)])
def test_a_wide_table_fits_or_scrolls_in_its_own_box_and_shows_that_it_does(
    open_page: Any, page_file: Path, width: int, scrolls: bool
) -> None:
    """The locking table (one column per figure of a cell) fits a 1280 px window: its column
    names wrap and its type is smaller. In a narrower window it is wider than the page's column:
    it scrolls inside its box, and the box's edge shadow tells the reader there is more."""
    opened = open_page(page_file, width=width)
    boxes = opened.page.evaluate(
        """() => [...document.querySelectorAll('div.scroll > table')].filter(t => t.offsetParent).map(t => {
            const box = t.parentElement, style = getComputedStyle(box);
            return {overflow: style.overflowX, cue: style.backgroundImage.includes('radial-gradient'),
                    wide: box.scrollWidth > box.clientWidth + 1, right: box.getBoundingClientRect().right,
                    cols: t.rows[0].cells.length};
        })"""
    )
    opened.page.close()
    assert any(b["cols"] >= 17 for b in boxes), boxes
    assert any(b["wide"] for b in boxes) == scrolls, boxes
    assert all(b["overflow"] == "auto" and b["cue"] and b["right"] <= width for b in boxes), boxes
