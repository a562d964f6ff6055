"""The results report embeds the trace viewer under every counterexample it shows; with several
viewers on one page, the arrow keys step the one that has the focus."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import explore
from turncheck.sim.trace import Trace, save_trace
from turncheck.sim.witness import metric_witness


@pytest.fixture(scope="module")
def demo_dir(tiny_demo: Any) -> Path:
    printed, out, _ = tiny_demo
    assert printed.status == 0, printed.stdout + printed.stderr
    return out


def _viewers(html: str) -> list[str]:
    return re.findall(r'<section class="tcv" id="([^"]+)"', html)


def test_demo_report_embeds_a_viewer_for_every_trace(demo_dir: Path) -> None:
    traces = sorted((demo_dir / "traces").glob("*.json"))
    html = (demo_dir / "report.html").read_text(encoding="utf-8")
    assert len(traces) >= 1
    assert _viewers(html) == [f"viewer-{k}" for k in range(len(traces))]
    assert html.count("<script>/* turncheck trace viewer") == 1  # the script is inlined once, not per trace


def _two_trace_report(demo_dir: Path, tmp_path: Path, capsys: Any) -> Path:
    results = tmp_path / "results"
    shutil.copytree(demo_dir, results)
    (results / "report.html").unlink()
    model = build_model("trigger", {"locking": "none", "gap": 1})
    path = metric_witness(model, explore(model), "peak_turns")
    save_trace(Trace("trigger", dict(model.params), tuple(tuple(a) for a in path.actions), "bounded-peak-turns",
                     path.init, "explore", "trigger"), results / "traces" / "worst-peak.json")  # fmt: skip
    page = tmp_path / "report.html"
    assert main(["report", str(results), "-o", str(page), "--quiet"]) == 0
    capsys.readouterr()
    return page


def test_report_viewers_step_independently(
    open_page: Any, shots: Path, demo_dir: Path, tmp_path: Path, capsys: Any
) -> None:
    page_file = _two_trace_report(demo_dir, tmp_path, capsys)
    assert len(_viewers(page_file.read_text(encoding="utf-8"))) == 2
    opened = open_page(page_file)
    page = opened.page
    first, second = page.locator("#viewer-0"), page.locator("#viewer-1")
    second.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert second.get_attribute("data-current") == "2"
    assert first.get_attribute("data-current") == "0"
    first.locator("button[data-act=last]").click()
    assert first.get_attribute("data-current") == first.get_attribute("data-steps")
    assert second.get_attribute("data-current") == "2"
    assert opened.errors == [] and opened.requests == []
    first.screenshot(path=str(shots / "report-viewer.png"))
    page.close()


def test_demo_report_fits_a_1280_px_window(open_page: Any, demo_dir: Path) -> None:
    """No horizontal scrollbar at a normal window width: long parameters wrap, tables scroll in their box."""
    opened = open_page(demo_dir / "report.html", width=1280)
    scroll_width, inner = opened.page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    opened.page.close()
    assert scroll_width <= inner == 1280, f"page is {scroll_width} px wide in a {inner} px window"


# The parts of the report docs/reports.md shows, found as a reader finds them. With
# TURNCHECK_SHOTS=1 the pictures are those docs/assets/screenshots holds (the tiny demo's report).
PARTS = {
    "report-findings.png": "#findings",
    "report-heatmap.png": "#peak-ratio-heatmap--trigger-gap",
    "report-locking-plot.png": "#locking-price--locking",
}

# The locking result's widest table, and below it a copy scrolled to its right end, each cut
# to its header and about four rows: the shading says which edge has more.
BOTH_EDGES = """() => {
  const section = [...document.querySelectorAll('section')].find(s => s.querySelector('h2')?.textContent === 'locking');
  const box = [...section.querySelectorAll('.scroll')].find(b => b.scrollWidth > b.clientWidth);
  const pair = document.createElement('div');
  pair.id = 'both-edges';
  box.replaceWith(pair);
  const scrolled = box.cloneNode(true);
  for (const b of [box, scrolled]) { b.style.maxHeight = '9.6em'; b.style.overflowY = 'hidden'; pair.append(b); }
  scrolled.scrollLeft = scrolled.scrollWidth;
  return [box.scrollWidth - box.clientWidth, box.scrollLeft, scrolled.scrollLeft];
}"""


def test_the_parts_the_docs_show_render_whole(open_page: Any, shots: Path, demo_dir: Path) -> None:
    """Each part is on the page, drawn, and inside a 1280 px window; in a narrower window a table
    wider than the page scrolls inside its own box (the reader reaches its last column), not the page."""
    opened = open_page(demo_dir / "report.html", width=1280)
    page = opened.page
    for name, selector in PARTS.items():
        part = page.locator(selector)
        assert part.count() == 1, selector
        box = part.bounding_box()
        drawn = box is not None and box["width"] > 300 and box["height"] > 150
        assert drawn and box["x"] + box["width"] <= 1280, (name, box)
        if part.locator("img").count():
            assert part.locator("img").evaluate("i => i.complete && i.naturalWidth > 0"), name
        part.screenshot(path=str(shots / name))
    assert opened.errors == []
    page.close()
    # at 1280 px every table fits (tests/test_report_verdict.py); a narrower window shows the fallback
    narrow = open_page(demo_dir / "report.html", width=800)
    hidden, left, scrolled = narrow.page.evaluate(BOTH_EDGES)
    assert hidden > 100 and left == 0 and scrolled == hidden  # more to the right, reached by scrolling
    narrow.page.locator("#both-edges").screenshot(path=str(shots / "report-wide-table.png"))
    assert narrow.errors == []
    narrow.page.close()
