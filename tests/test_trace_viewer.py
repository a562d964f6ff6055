"""The interactive trace viewer: what it records per step, the page it writes, and the page in
a real headless Chromium (skipped with the reason when chromium or playwright is missing)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.catalog import build_model
from turncheck.reports.trace_view import diff_fields, trace_view
from turncheck.reports.viewer import SIZE_TARGET, json_script, write_trace_page
from turncheck.sim.explorer import explore
from turncheck.sim.trace import Trace
from turncheck.sim.witness import metric_witness


def _check_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The issue's command: a shortest counterexample of the trigger without locking, gap 1."""
    trace = tmp_path / "t.json"
    assert (
        main(
            [
                "check",
                "trigger",
                "--param",
                "locking=none",
                "--param",
                "gap=1",
                "--trace-out",
                str(trace),
                "--database",
                str(tmp_path / "db"),
            ]
        )
        == 1  # a gate with or without --trace-out: `check … --trace-out t.json; turncheck replay …`
    )
    capsys.readouterr()
    return trace


def _witness_trace() -> Trace:
    """The explorer's witness of the worst peak: it goes on past the break, through the gap."""
    model = build_model("trigger", {"locking": "none", "gap": 1})
    path = metric_witness(model, explore(model), "peak_turns")
    return Trace("trigger", dict(model.params), tuple(tuple(a) for a in path.actions), "bounded-peak-turns",
                 path.init, "explore", "trigger")  # fmt: skip


def test_replay_html_writes_a_small_self_contained_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _check_trace(tmp_path, capsys)
    page = tmp_path / "t.html"
    assert main(["replay", str(trace), "--html", str(page)]) == 1  # it still fails
    assert f"trace viewer: {page}" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    assert len(text.encode()) < SIZE_TARGET
    # nothing is loaded from anywhere: no src/href to another file or host
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:|//|[^"'#])""", text)
    data = json.loads(
        re.search(r'<script type="application/json" class="tcv-data">(.*?)</script>', text).group(1)
    )
    assert data["broken_at"] == 5 and len(data["steps"]) == 6
    assert data["steps"][5]["holds"]["no-uncounted-gap-turn"] is False
    assert all(s["holds"]["no-uncounted-gap-turn"] for s in data["steps"][:5])


def test_the_issues_shell_line_writes_the_gap_turn_page(tmp_path: Path) -> None:
    """``check … --trace-out t.json; replay t.json --html t.html``, run by a real shell: check
    exits 1 (a counterexample, saved), the replay runs after it and writes the page of the 5-step
    run whose last turn arrives inside the gap."""
    tc = f"{shlex.quote(sys.executable)} -m turncheck"
    line = (
        f"{tc} check trigger --param locking=none --param gap=1 --trace-out t.json --quiet"
        f" --database db; {tc} replay t.json --html t.html"
    )
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # the replay's answer: it still fails
    assert "still fails the same way: no-uncounted-gap-turn broken at step 5" in done.stdout
    text = (tmp_path / "t.html").read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json" class="tcv-data">(.*?)</script>', text).group(1)
    )
    assert data["broken_at"] == 5 and "uncounted" in json.dumps(data["steps"][5])


def test_replay_html_into_a_directory_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _check_trace(tmp_path, capsys)
    assert main(["replay", str(trace), "--html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("turncheck: error:") and err.count("\n") == 1 and "is a directory" in err


def test_each_step_marks_what_changed_and_the_uncounted_gap_turn() -> None:
    view = trace_view(_witness_trace())
    assert view.broken_at == 4 and len(view.steps) == 10  # shown past the break
    step4 = view.steps[4]
    changed = {f.name for f in step4.fields if f.changed}
    assert {"live turns", "count read", "compactor", "trigger has fired"} <= changed
    assert "store locked (slots)" not in changed
    step5 = view.steps[5]
    assert step5.marks == ("uncounted gap turn",) and step5.lane == "writer 1"
    assert step5.window is not None
    assert [i.marks for i in step5.window.items][-1] == ("uncounted", "new")
    assert "1 arrived inside the gap" in step5.window.summary
    assert all(not s.marks for s in view.steps[:5])


def test_projector_steps_carry_the_window_sent_with_cost_and_orphans() -> None:
    model = build_model("projector", {"strategy": "M0"})
    # M0 keeps the newest suffix within budget 4: TERM and the 3-token RESULT, not its CALL
    actions = (("user",), ("call", 0), ("result", 0, 3), ("term",))
    view = trace_view(Trace("projector", dict(model.params), actions, "no-orphan-results"))
    last = view.steps[-1]
    assert last.window is not None
    assert [(i.label, i.marks, i.cost) for i in last.window.items] == [
        ("seq 2: RESULT c0 (turn 1)", ("orphan",), 3),
        ("seq 3: TERM (turn 1)", (), 1),
    ]
    assert last.window.summary == "cost 4 of budget 4, 1 orphan RESULT(s)"
    assert last.holds["no-orphan-results"] is False and view.broken_at == 4
    assert view.steps[3].holds["no-orphan-results"] is True
    history = next(f for f in last.fields if f.name == "history")
    assert history.new == (3,) and history.changed


def test_diff_marks_nothing_at_the_initial_state_and_new_list_items() -> None:
    first = diff_fields(None, [("a", "1"), ("l", ["x"])])
    assert not any(f.changed for f in first)
    later = diff_fields([("a", "1"), ("l", ["x"])], [("a", "2"), ("l", ["x", "y"])])
    assert [f.changed for f in later] == [True, True] and later[1].new == (1,)


def test_text_from_a_trace_cannot_close_the_data_script() -> None:
    block = json_script({"text": "</script><script>alert(1)</script>"}, "tcv-data")
    assert block.count("</script>") == 1


def test_a_users_model_is_shown_from_its_saved_actions_not_imported(tmp_path: Path) -> None:
    trace = Trace("no_such_pkg.mod:Model", {}, (("writer", 1, "append"),), "p")
    view = trace_view(trace)
    assert not view.replayed and view.steps[1].text == "writer 1 append"
    page = write_trace_page(trace, tmp_path / "u.html")
    assert "not in the catalog" in page.read_text(encoding="utf-8")


# -- in a real browser ----------------------------------------------------------------------------


def _state_row(page, name: str):  # type: ignore[no-untyped-def]
    return page.locator(f'section.tcv .tcv-state tr[data-field="{name}"]')


def test_browser_steps_through_the_check_trace(
    open_page: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace = _check_trace(tmp_path, capsys)
    page_file = tmp_path / "t.html"
    assert main(["replay", str(trace), "--html", str(page_file)]) == 1
    opened = open_page(page_file)
    page = opened.page
    viewer = page.locator("section.tcv")
    assert viewer.get_attribute("data-current") == "0"
    assert page.locator(".tcv-pos").inner_text() == "step 0 of 5"
    assert page.locator("button[data-act=prev]").is_disabled()
    page.click("button[data-act=next]")
    assert viewer.get_attribute("data-current") == "1"
    current = page.locator(".tcv-lanes td.tcv-current")
    assert "appends a turn (live 0 → 1)" in current.first.inner_text()
    assert page.locator('.tcv-lanes tr[data-lane="writer 0"] td.tcv-current').count() == 1
    assert "tcv-changed" in (_state_row(page, "live turns").get_attribute("class") or "")
    assert _state_row(page, "live turns").locator("td").inner_text() == "1"
    assert "tcv-changed" not in (_state_row(page, "compactor").get_attribute("class") or "")
    # arrow keys: step 4, the trigger reads count=3; no turn is uncounted yet
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert viewer.get_attribute("data-current") == "4"
    assert "3 live turn(s)" in page.locator(".tcv-win .tcv-summary").inner_text()
    assert page.locator(".tcv-win li.uncounted").count() == 0
    assert page.locator('.tcv-props tr[data-property="no-uncounted-gap-turn"] td').inner_text() == "holds"
    # step 5: writer 1's turn arrives inside the gap, uncounted, and the invariant breaks
    page.keyboard.press("ArrowRight")
    assert viewer.get_attribute("data-current") == "5"
    assert page.locator("button[data-act=next]").is_disabled()
    prop = page.locator('.tcv-props tr[data-property="no-uncounted-gap-turn"] td')
    assert prop.inner_text() == "BROKEN"
    assert "broken: no-uncounted-gap-turn" in page.locator(".tcv-now").inner_text()
    assert page.locator(".tcv-win li.uncounted").count() == 1
    assert "step 5: writer 1" in page.locator(".tcv-win li.uncounted").inner_text()
    assert "1 arrived inside the gap" in page.locator(".tcv-win .tcv-summary").inner_text()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert viewer.get_attribute("data-current") == "3"
    assert page.locator('.tcv-props tr[data-property="no-uncounted-gap-turn"] td').inner_text() == "holds"
    assert "slot ends" in page.locator(".tcv-lanes td.tcv-current.tcv-act").inner_text()
    assert opened.errors == [] and opened.requests == []
    page.close()


def test_browser_shows_the_uncounted_gap_turn_at_the_step_it_arrives(
    open_page: Any, shots: Path, tmp_path: Path
) -> None:
    page_file = write_trace_page(_witness_trace(), tmp_path / "w.html")
    opened = open_page(page_file, height=1000)
    page = opened.page
    page.locator("section.tcv").focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert page.locator(".tcv-win li.uncounted").count() == 0
    page.keyboard.press("ArrowRight")
    assert page.locator("section.tcv").get_attribute("data-current") == "5"
    assert "uncounted gap turn" in page.locator(".tcv-now").inner_text()
    assert page.locator(".tcv-win li.uncounted").count() == 1
    assert "step 5: writer 1" in page.locator(".tcv-win li.uncounted").inner_text()
    assert "1 arrived inside the gap" in page.locator(".tcv-win .tcv-summary").inner_text()
    page.screenshot(path=str(shots / "trace-viewer.png"), full_page=True)
    page.click("button[data-act=first]")
    assert page.locator("section.tcv").get_attribute("data-current") == "0"
    assert opened.errors == [] and opened.requests == []
    page.close()


def test_browser_shows_the_projector_window(open_page: Any, shots: Path, tmp_path: Path) -> None:
    model = build_model("projector", {"strategy": "M0"})
    actions = (("user",), ("call", 0), ("result", 0, 3), ("term",))
    trace = Trace("projector", dict(model.params), actions, "no-orphan-results")
    opened = open_page(write_trace_page(trace, tmp_path / "p.html"))
    page = opened.page
    page.click("button[data-act=last]")
    assert page.locator(".tcv-win li").count() == 2
    assert "seq 2: RESULT c0 (turn 1) — cost 3" in page.locator(".tcv-win li.orphan").inner_text()
    assert "1 orphan RESULT(s)" in page.locator(".tcv-win .tcv-summary").inner_text()
    assert page.locator('.tcv-state tr[data-field="history"] li.tcv-newitem').inner_text().startswith("seq 3")
    page.screenshot(path=str(shots / "trace-viewer-projector.png"), full_page=True)
    page.click("button[data-act=prev]")
    assert page.locator(".tcv-win li.orphan").count() == 0
    assert opened.errors == []
    page.close()


def test_a_model_with_one_window_per_key_shows_each_with_its_source() -> None:
    model = build_model("keys", {"sessions": 2, "keys": 1, "turns": 1})
    view = trace_view(
        Trace("keys", dict(model.params), (("append", 0), ("append", 1)), "single-source-windows")
    )
    last = view.steps[-1]
    assert view.broken_at == 2 and last.window is not None
    assert [i.label for i in last.window.items] == [
        "k0 · seq 0: USER (turn 0, from s0)",
        "k0 · seq 1: USER (turn 0, from s1)",
    ]
    assert last.window.summary.endswith("events of more than one session")


def test_a_long_run_stays_under_the_size_target(tmp_path: Path) -> None:
    model = build_model("trigger", {"writers": 3, "gap": 2, "turns": 0})
    actions: list[tuple[object, ...]] = []
    state = next(iter(model.init_states()))
    # 100 steps: 2.5 times the longest run Hypothesis tries by default (check --steps 40)
    for _ in range(100):  # the first enabled action each time: appends, ticks and compactions
        action = model.actions(state)[0]
        actions.append(tuple(action))
        state = model.step(state, action)
    page = write_trace_page(
        Trace("trigger", dict(model.params), tuple(actions), "bounded-peak-turns"), tmp_path / "l.html"
    )
    size = page.stat().st_size
    assert len(trace_view(load_trace_like(model, actions)).steps) == 101
    assert size < SIZE_TARGET, size


def load_trace_like(model: object, actions: list[tuple[object, ...]]) -> Trace:
    return Trace("trigger", dict(model.params), tuple(actions), "bounded-peak-turns")  # type: ignore[attr-defined]
