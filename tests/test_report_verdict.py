"""The demo's page answers the newcomer first (issue 55): the trimming verdict per strategy, then
the README's two commands to check one's own trimmer, a glossary of the words the page uses, no
raw ``null``, tables that fit a 1280 px window — and a screenshot of the first screen at 1280 px
shows the verdict."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from turncheck.reports.html import params_html
from turncheck.reports.verdict import (
    NOT_MEASURED,
    OWN_CLI,
    OWN_PYTEST,
    glossary_html,
    strategy_verdicts,
    verdict_html,
)
from turncheck.scenarios.base import ScenarioResult, Table

ROOT = Path(__file__).resolve().parent.parent
FIRST_SCREEN = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def demo_page(tiny_demo: Any) -> Path:
    printed, out, _ = tiny_demo
    assert printed.status == 0, printed.stdout + printed.stderr
    return Path(out) / "report.html"


def _visible_text(html: str) -> str:
    return re.sub(r"<script.*?</script>|<style.*?</style>|<[^>]+>", " ", html, flags=re.S)


def bench(*rows: tuple[int, str, int, int, int, int], orphans: bool = True) -> ScenarioResult:
    cols = ("budget", "strategy", "windows", "overBudget", "empty", "orphanRes")
    kept = cols if orphans else cols[:-1]
    table = Table("strategies", "t", kept, tuple(r if orphans else r[:-1] for r in rows))
    return ScenarioResult("testbench", {}, 1, (table,))


def test_the_own_check_box_shows_the_readmes_commands_verbatim() -> None:
    """One source for the two commands: when the README's change, this fails until the page's do."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert OWN_CLI in readme
    assert OWN_PYTEST in readme


def test_verdicts_sum_every_budget_and_name_the_fault() -> None:
    result = bench((400, "M0", 100, 0, 0, 7), (4000, "M0", 100, 0, 0, 3), (400, "M3", 100, 0, 40, 0),
                   (4000, "M3", 100, 0, 5, 0), (400, "M5", 100, 0, 0, 0), (4000, "M5", 100, 0, 0, 0))  # fmt: skip
    by = {v.who: v for v in strategy_verdicts([result])}
    assert (by["M0"].windows, by["M0"].orphans) == (200, 10) and not by["M0"].peer
    assert by["M0"].verdict() == "sends 10 orphaned results" and not by["M0"].safe
    assert by["M3"].verdict() == "empty in 45 of 200"
    assert by["M5"].verdict() == "no fault found" and by["M5"].safe
    assert by["M0"].what.startswith("Naive: the longest suffix")  # the strategy's own docstring
    page = verdict_html([result], {"testbench": "result-3"})
    assert page.startswith('<section class="verdict" id="verdict">') and 'href="#result-3"' in page
    assert "Safe on this data: M5 (no orphaned tool result" in page


def test_a_figure_the_result_lacks_is_not_measured_never_zero() -> None:
    result = bench((400, "M0", 100, 0, 0, 0), orphans=False)
    (m0,) = strategy_verdicts([result])
    assert m0.orphans is None and not m0.safe  # unknown is neither a fault nor safe…
    assert m0.verdict() == "no fault found (not measured: orphans)"  # …and is said so
    assert f'<td class="num">{NOT_MEASURED}</td>' in verdict_html([result], {})
    assert verdict_html([ScenarioResult("locking", {}, 1, ())], {}) == ""  # nothing to judge: no section


def test_the_glossary_lists_only_the_words_the_page_uses() -> None:
    html = glossary_html("<p>the closed form says 14; ORCHID-17 absent</p><script>var manifold</script>")
    assert "<dt>closed form</dt>" in html and "<dt>ORCHID-17</dt>" in html
    assert (
        "<dt>manifold</dt>" not in html and "<dt>maxTurns</dt>" not in html
    )  # a script's words are not the page's
    assert glossary_html("<p>nothing to explain here</p>") == ""
    orphan = glossary_html("<td>orphanRes</td>")
    assert (
        "must be a response to a preceeding message with &#x27;tool_calls&#x27;" in orphan
    )  # the API's text


def test_a_parameter_left_unset_is_said_so_not_printed_as_null() -> None:
    shown = params_html({"gap": None, "iterations": 200, "writers": None})
    assert "null" not in shown and "None" not in shown
    assert shown == (
        "<code>iterations=200</code>; left at the scenario's default: <code>gap</code>, <code>writers</code>"
    )
    assert params_html({"gap": None}) == "left at the scenario's default: <code>gap</code>"


def test_the_demo_page_opens_with_the_verdict_then_the_own_check(demo_page: Path) -> None:
    html = demo_page.read_text(encoding="utf-8")
    order = [html.index(f'id="{part}"') for part in ("verdict", "check-your-own", "findings", "glossary")]
    assert order == sorted(order), order
    text = _visible_text(html)
    raw = r"\bnull\b|\bNone\b(?! of)|\bNaN\b"  # Python's or JSON's empty value, not the English word
    assert not re.search(raw, text), re.findall(r".{60}(?:" + raw + r").{20}", text)
    rest = _visible_text(re.sub(r'<section class="glossary".*?</section>', "", html, flags=re.S))
    for word in ("closed form", "manifold", "ORCHID-17"):  # the examples of unexplained jargon
        assert (word in rest) == (f"<dt>{word}</dt>" in html), word  # explained exactly when used


def test_the_first_screen_at_1280_px_shows_the_trimming_verdict(
    open_page: Any, shots: Path, demo_page: Path
) -> None:
    """The suite's screenshot of the page's first screen: the verdict's heading and its table of
    strategies, whole, inside it (the libraries' table, when a peers result is there, follows)."""
    opened = open_page(demo_page, **FIRST_SCREEN)
    page = opened.page
    page.screenshot(path=str(shots / "report-first-screen.png"))  # the viewport only: the first screen
    verdict = page.locator("#verdict")
    for part in (verdict.locator("h2"), verdict.locator("table").first):
        box = part.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= FIRST_SCREEN["height"], box
        assert box["x"] + box["width"] <= FIRST_SCREEN["width"], box
    first = page.evaluate("document.querySelector('main > section').id")
    assert first == "verdict"  # nothing before it but the title
    rows = verdict.locator("table").first.locator("tbody tr")
    assert rows.count() >= 6 and "M0" in rows.first.inner_text()
    assert page.locator("#check-your-own").bounding_box() is not None
    assert opened.errors == []
    page.close()


def test_every_table_of_the_demo_page_fits_a_1280_px_window(open_page: Any, demo_page: Path) -> None:
    """Wide tables set their column names to wrap and their type smaller: none runs past its box."""
    opened = open_page(demo_page, width=1280)
    wide = opened.page.evaluate(
        """() => [...document.querySelectorAll('div.scroll')].filter(b => b.offsetParent)
               .filter(b => b.scrollWidth > b.clientWidth + 1)
               .map(b => [b.closest('section')?.id, b.scrollWidth, b.clientWidth])"""
    )
    opened.page.close()
    assert wide == []


def test_the_peer_libraries_get_a_table_of_their_own_from_clean_data_only() -> None:
    cols = ("strategy", "case", "requests", "orphanRes", "overBudget", "empty")
    rows = (("peer:lib", "p_result 1.00", 47, 3, 0, 0), ("peer:lib", "p_result 0.90", 47, 9, 9, 9),
            ("peer:safe", "p_result 1.00", 47, 0, 0, 0))  # fmt: skip
    peers = ScenarioResult("peers", {}, 5, (Table("peers", "t", cols, rows),))
    by = {v.who: v for v in strategy_verdicts([peers])}
    assert (
        by["peer:lib"].peer and by["peer:lib"].verdict() == "sends 3 orphaned results"
    )  # the clean case only
    assert by["peer:safe"].safe
    page = verdict_html([peers], {"peers": "result-6"})
    assert "1 of 2 safe on clean data, per request." in page and 'href="#result-6"' in page
    assert "<th>requests judged</th>" in page and "what it does" not in page
