"""``turncheck stress --html``: a real stress history paged through in the trace viewer.

The view is built from the store's journal (deterministic given a journal, so the small cases
are pinned exactly); the page tests run real writer processes against a real SQLite file and
drive the page in a real headless Chromium (skipped with the reason when it is missing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser_page import browser, open_file  # noqa: F401  (browser is a fixture)

from turncheck.cli.app import main
from turncheck.models.session_store import JournalEntry
from turncheck.reports.stress_view import SHOWN_TURNS, SPAN, lane_of, stress_view
from turncheck.reports.viewer import SIZE_TARGET
from turncheck.sim.stress.history import check_run
from turncheck.sim.stress.runner import RawRun, StressParams
from turncheck.sim.stress.stores import StoreSpec


def _run(journal: tuple[JournalEntry, ...], locking: str = "none", m: int = 2) -> RawRun:
    p = StressParams(StoreSpec("sqlite", "x"), locking, writers=2, gap_ms=1, max_turns=m, seconds=1)
    live: list[int] = []
    for e in journal:
        live = [t for t in live if t not in e.removed] + list(e.added)
    return RawRun(p, (), journal, tuple(live), 0.0, 1.0)


def _append(seq: int, writer: int, turn: int) -> JournalEntry:
    return JournalEntry(seq, f"w{writer}.0-{turn}", "append", (turn,), ())


def test_lanes_are_the_processes() -> None:
    assert lane_of("w3.1-17") == "writer 3" and lane_of("c.0-2") == "compactor"


def test_the_turns_appended_inside_the_gap_are_uncounted_and_the_break_is_marked() -> None:
    # M=2: turn 3 takes live above M (the trigger reads 3), turns 4 and 5 land before the act
    journal = (
        _append(1, 0, 1), _append(2, 1, 2), _append(3, 0, 3), _append(4, 1, 4), _append(5, 0, 5),
        JournalEntry(6, "c.0-1", "compact", (), (1,), 3),
    )  # fmt: skip
    run = _run(journal)
    report = check_run(run)
    view = stress_view(run, report)
    assert not report.ok and view.violated == "bounded-peak-turns"
    # from the last calm commit (seq 2, live 2 = M) on: steps 0..4 are seq 2..6
    assert [s.text.split(":")[0] for s in view.steps[1:]] == ["seq 3", "seq 4", "seq 5", "seq 6"]
    assert view.broken_at == 1 and view.steps[1].holds == {"bounded-peak-turns": False}
    assert view.steps[0].holds == {"bounded-peak-turns": True}
    assert [s.marks for s in view.steps[1:]] == [(), ("uncounted gap turn",), ("uncounted gap turn",), ()]
    window = view.steps[3].window
    assert window is not None
    assert [(w.label, w.marks) for w in window.items] == [
        ("turn 1", ()), ("turn 2", ()), ("turn 3", ()),
        ("turn 4", ("uncounted",)), ("turn 5", ("uncounted", "new")),
    ]  # fmt: skip
    assert "2 arrived inside the gap" in window.summary
    after_compaction = view.steps[4]
    assert after_compaction.lane == "compactor" and after_compaction.metrics["live_turns"] == 4
    assert view.lanes == ("writer 0", "writer 1", "compactor")


def test_a_long_run_shows_a_bounded_span_and_says_so() -> None:
    n = 3 * SPAN + SHOWN_TURNS
    run = _run(tuple(_append(i, i % 2, i) for i in range(1, n + 1)), locking="mutex", m=n)
    report = check_run(run)
    view = stress_view(run, report)
    assert report.ok and view.broken_at is None
    assert len(view.steps) == SPAN + 1 and view.steps[-1].metrics["live_turns"] == n  # ends at the peak
    last = view.steps[-1].window
    assert last is not None and len(last.items) == SHOWN_TURNS + 1
    assert last.items[0].label == f"… {n - SHOWN_TURNS} older turn(s)"
    assert f"commits {n - SPAN + 1}–{n} of {n}" in view.message


def _page_data(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" class="tcv-data">(.*?)</script>', text)
    assert found is not None
    return json.loads(found.group(1))


def test_stress_html_on_a_real_sqlite_store(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    browser: Any,  # noqa: F811
) -> None:
    page = tmp_path / "s.html"
    code = main(["stress", "--locking", "none", "--writers", "3", "--seconds", "1", "--quiet",
                 "--html", str(page)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1 and f"trace viewer: {page}" in out
    assert page.stat().st_size < SIZE_TARGET
    data = _page_data(page)
    assert data["broken_at"] is not None and data["model"] == "stress" and data["verdict"] == "violated"
    uncounted = [s["index"] for s in data["steps"] if "uncounted gap turn" in s.get("marks", [])]
    assert uncounted, "no turn arrived inside a gap: the unlocked run should show them"
    opened = open_file(browser, page)
    viewer = opened.page.locator("section.tcv")
    viewer.focus()
    for _ in range(uncounted[0]):
        opened.page.keyboard.press("ArrowRight")
    assert viewer.get_attribute("data-current") == str(uncounted[0])
    assert "uncounted gap turn" in opened.page.locator(".tcv-now").inner_text()
    assert opened.page.locator(".tcv-win li.uncounted").count() >= 1
    assert opened.errors == [] and opened.requests == []
    opened.page.close()


def test_stress_html_of_a_bound_that_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "m.html"
    code = main(["stress", "--locking", "mutex", "--writers", "3", "--seconds", "1", "--quiet",
                 "--html", str(page)])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    data = _page_data(page)
    assert data["broken_at"] is None and data["verdict"] == "ok"
    assert all(s["holds"]["bounded-peak-turns"] for s in data["steps"])


def test_stress_html_into_a_directory_is_one_line_exit_2_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["stress", "--seconds", "0.2", "--quiet", "--html", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("turncheck: error:") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
