"""``turncheck explore MODEL --html``: the state-space browser's data, its page, and the page in a
real headless Chromium (skipped with the reason when chromium or playwright is missing)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.catalog import build_model
from turncheck.reports.state_browser import GRAPH_LIMIT, PAGE_LIMIT, state_space_data, write_state_space_page
from turncheck.sim.explorer import explore


def _data(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    return json.loads(
        re.search(r'<script type="application/json" class="tce-data">(.*?)</script>', text).group(1)
    )


def test_explore_html_small_space_is_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "s.html"
    assert main(["explore", "trigger", "-q", "--no-reduction", "--html", str(page)]) == 0
    # the default trigger's writers are unbounded (turns=0): 28 states, against 124 with turns=4
    assert f"state-space browser: {page} (28 states, graph drawn)" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    assert text.count("<circle ") == 28 and "exhaustive: every reachable state" in text
    assert f"at most {PAGE_LIMIT:,} states" in text and f"up to {GRAPH_LIMIT:,} states" in text
    data = _data(page)
    # issue 14: every strategy is also held to no-uncounted-gap-turn and within-max-turns
    vs = {v["name"]: v for v in data["violations"]}
    assert set(vs) == {"bounded-peak-turns", "no-uncounted-gap-turn", "within-max-turns"}
    v = vs["bounded-peak-turns"]
    assert len(v["path"]) == v["depth"] + 1 == 5
    assert "bounded-peak-turns" in data["states"][v["id"]]["p"]
    assert all(data["states"][i]["p"] == [] for i in v["path"][:-1])
    assert vs["no-uncounted-gap-turn"]["depth"] == 5  # the turn appended uncounted in the gap


def test_successors_are_the_models_actions_named_in_domain_words() -> None:
    model = build_model("trigger", {"turns": 2})
    result = explore(model, record_edges=True)
    data = state_space_data(model, result)
    (init,) = data["inits"]
    texts = sorted(t for t, _dst in data["states"][init]["s"])
    # one append per class of interchangeable writers: both start alike, so writer 0's stands for both
    assert texts == ["slot ends", "writer 0 appends a turn (live 0 → 1)"]


def test_a_large_space_gets_the_search_view_and_a_bounded_one_says_so(tmp_path: Path) -> None:
    model = build_model("projector", {})
    big = write_state_space_page(model, tmp_path / "p.html")
    assert big.states == 585 and not big.drawn and big.exhaustive
    assert 'class="tce-q"' in big.path.read_text(encoding="utf-8")
    cut = write_state_space_page(model, tmp_path / "c.html", max_states=50)
    assert cut.states == 50 and not cut.exhaustive
    assert "bounded, NOT exhaustive: the search stopped at max states (50)" in cut.path.read_text(
        encoding="utf-8"
    )


def test_explore_html_into_a_directory_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", "trigger", "-q", "--html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("turncheck: error:") and err.count("\n") == 1 and "is a directory" in err


def test_browser_expands_successors_and_follows_the_shortest_violation(
    open_page: Any, shots: Path, tmp_path: Path
) -> None:
    page_file = write_state_space_page(build_model("trigger", {}), tmp_path / "s.html").path
    opened = open_page(page_file, height=1000)
    page = opened.page
    body = page.locator("body")
    assert body.get_attribute("data-current") == "0"
    assert page.locator(".tce-nodes circle.cur").get_attribute("data-id") == "0"
    page.locator(".tce-succ", has_text="writer 0 appends a turn").click()
    first = body.get_attribute("data-current")
    assert first != "0"
    assert "tce-changed" in (
        page.locator('.tce-state tr[data-field="live turns"]').get_attribute("class") or ""
    )
    page.locator("[data-jump='violation:bounded-peak-turns']").click()
    assert "step 0 of 4" in page.locator(".tce-pathbar").inner_text()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert "step 4 of 4" in page.locator(".tce-pathbar").inner_text()
    cell = page.locator('.tce-state tr[data-property="bounded-peak-turns"] td')
    assert cell.inner_text() == "BROKEN"
    assert page.locator(".tce-edges line.onpath").count() == 4
    page.screenshot(path=str(shots / "state-space-graph.png"), full_page=True)
    page.keyboard.press("ArrowLeft")
    assert cell.inner_text() == "holds"
    page.locator("[data-jump='worst:peak_turns']").click()
    page.locator("[data-act=path-next]").click()
    assert "step 1 of" in page.locator(".tce-pathbar").inner_text()
    assert opened.errors == [] and opened.requests == []
    page.close()


def test_browser_searches_a_large_space(open_page: Any, shots: Path, tmp_path: Path) -> None:
    page_file = write_state_space_page(build_model("projector", {}), tmp_path / "p.html").path
    opened = open_page(page_file, height=1000)
    page = opened.page
    assert page.locator("svg.tce-graph").count() == 0
    assert page.locator(".tce-count").inner_text() == "585 of 585 states match (first 100 shown)"
    assert page.locator(".tce-frontier li").count() == 1  # the initial state's one successor: USER
    page.fill(".tce-q", "placeholder")
    assert page.locator(".tce-count").inner_text() == "0 of 585 states match"
    page.fill(".tce-q", "RESULT c1 [3 tok]")
    hits = page.locator(".tce-found li")
    assert 0 < hits.count() <= 100
    hits.first.locator("a").click()
    history = page.locator('.tce-state tr[data-field="history"]').inner_text()
    assert "RESULT c1 [3 tok]" in history
    page.locator("[data-jump='violation:no-orphan-results']").click()
    assert "step 0 of 5" in page.locator(".tce-pathbar").inner_text()
    page.fill(".tce-q", "")
    page.screenshot(path=str(shots / "state-space-search.png"), full_page=False)
    assert opened.errors == [] and opened.requests == []
    page.close()


def test_pages_are_byte_identical_for_the_same_input(tmp_path: Path) -> None:
    from turncheck.reports.viewer import write_trace_page
    from turncheck.sim.trace import Trace

    pages = [write_state_space_page(build_model("trigger", {}), tmp_path / f"s{k}.html").path for k in (1, 2)]
    assert pages[0].read_bytes() == pages[1].read_bytes()
    trace = Trace(
        "trigger", {"gap": 1}, (("append", 0), ("append", 1), ("tick",), ("append", 0)), "bounded-peak-turns"
    )
    views = [write_trace_page(trace, tmp_path / f"t{k}.html") for k in (1, 2)]
    assert views[0].read_bytes() == views[1].read_bytes()
