"""``turncheck.testing`` and the pytest plugin, used exactly as a user would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from turncheck import build_model, machine_for
from turncheck.models.cost import Utf8JsonCost
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.testing import check_projector, histories, multi_session

USER_PROJECT = Path(__file__).parent / "user_project"
QUICK = settings(max_examples=60, database=None, deadline=None)


def test_a_users_test_file_finds_the_orphan_in_a_shrunk_history(tmp_path: Path) -> None:
    """The user's ≤ 15-line test file, run by pytest in its own process and directory."""
    source = USER_PROJECT / "users_test_file.py"
    assert len(source.read_text().splitlines()) <= 15
    shutil.copy(source, tmp_path / "test_my_trim.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_trim.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    message = re.search(r"AssertionError: (projector .*?)\n(.*?window sent.*?)\n", done.stdout, re.S)
    assert message is not None, done.stdout
    head, body = message.groups()
    assert "keep_what_fits breaks orphanRes" in head
    shown = re.findall(r"^E\s+seq \d+", body, re.M)
    assert 1 <= len(shown) <= 5 and f"{len(shown)}-event history" in head
    assert "RESULT" in body


def test_check_projector_passes_a_pair_safe_projector_and_fails_a_naive_one() -> None:
    check_projector("M5", checks=["orphanRes", "pairSplit"], settings=QUICK)
    with pytest.raises(
        AssertionError, match=r"projector M0 breaks orphanRes at request \d+ of this \d-event"
    ):
        check_projector("M0", settings=QUICK)


def test_the_fixture_and_marker(check_projector) -> None:  # noqa: F811  (the plugin's fixture)
    check_projector("M5", settings=QUICK)


@pytest.mark.turncheck(checks=["empty"])
def test_the_marker_sets_the_checks(check_projector) -> None:  # noqa: F811
    with pytest.raises(AssertionError, match="breaks empty"):
        check_projector("M3", settings=QUICK)


@QUICK
@given(events=multi_session(sessions=3, text=True))
def test_multi_session_logs_keep_each_sessions_order(events) -> None:
    assert [e.seq for e in events] == list(range(len(events)))
    for s in {e.session for e in events}:
        mine = [e for e in events if e.session == s]
        assert [e.turn for e in mine] == sorted(e.turn for e in mine)
    h = History([e for e in events if e.session == "s0"], costs=(Utf8JsonCost(),))
    assert h.prefix(Utf8JsonCost())[-1] >= 0


def test_state_machines_run_under_the_active_profile_with_readable_steps() -> None:
    settings.register_profile("turncheck-test-few", max_examples=5, database=None, derandomize=True)
    previous = settings.default
    settings.load_profile("turncheck-test-few")
    try:
        runs = [0]
        machine_for(build_model("projector", {"strategy": "M5"}), runs=runs).TestCase().runTest()
        assert 1 <= runs[0] <= 20  # 5 valid examples (a few more machines start and are discarded)
        failing = machine_for(build_model("projector", {"strategy": "M0"})).TestCase()
        with pytest.raises(AssertionError) as info:
            failing.runTest()
    finally:
        settings.register_profile("turncheck-test-previous", previous)
        settings.load_profile("turncheck-test-previous")
    more = [0]
    machine_for(build_model("projector", {"strategy": "M5"}), runs=more).TestCase().runTest()
    assert more[0] > 50  # the default profile: 100 examples
    text = str(info.value) + "\n".join(getattr(info.value, "__notes__", []))
    assert "property no-orphan-results violated" in text
    assert "step 1: writer appends USER (turn 1)" in text and "Draw 1 (action)" not in text


@settings(max_examples=30, database=None)
@given(events=histories(text=True, dangling=True))
def test_hostile_text_histories_are_costed_byte_exactly(events) -> None:
    cost = Utf8JsonCost()
    h = History(events, costs=(cost,))
    from turncheck.models.projector import window_from_start

    w = window_from_start(h, 10**6, cost, 0)
    assert len(w.payload(cost).encode()) == w.cost


def test_each_check_keeps_its_saved_failures_under_its_own_key(tmp_path: Path) -> None:
    from hypothesis.database import DirectoryBasedExampleDatabase

    db = DirectoryBasedExampleDatabase(tmp_path / "db")
    with_db = settings(QUICK, database=db)
    folders: list[set[str]] = []
    for checks, key in (
        (["orphanRes"], "test_a"),
        (["orphanRes", "empty"], "test_a"),
        (["orphanRes"], "test_b"),
    ):
        with pytest.raises(AssertionError, match="projector M0 breaks"):
            check_projector("M0", checks=checks, settings=with_db, key=key)
        folders.append({d.name for d in (tmp_path / "db").iterdir()})
    # each check saves under keys of its own: none replays another's failures, nor another test's
    assert folders[0] < folders[1] < folders[2]


def test_a_slow_projector_is_no_failure_by_default() -> None:
    """The default settings drop the profile's deadline: one example replays a whole history, so
    a projector slowed by a busy machine (here, its first call) must not fail the check."""
    from turncheck.models.projector import resolve_strategy

    m5 = resolve_strategy("M5")
    calls = [0]

    def slow_at_first(history: History, budget: int, cost: object) -> object:
        calls[0] += 1
        if calls[0] == 1:
            import time

            time.sleep(0.3)  # past Hypothesis's default 200 ms deadline
        return m5(history, budget, cost)  # type: ignore[arg-type]

    before = settings.get_current_profile_name()
    settings.register_profile("few-with-deadline", max_examples=5, database=None)  # deadline kept
    settings.load_profile("few-with-deadline")
    try:
        check_projector(slow_at_first)
    finally:
        settings.load_profile(before)
    assert calls[0] > 1


def test_a_failure_whose_request_needs_the_reply_after_it_is_reported_whole() -> None:
    """``.ci/lowest`` once failed here with a bare ``assert found is not None``: Hypothesis's
    failing prefix ended at the RESULT whose request exists only because a reply follows (calls
    c0 and c1 still open), so the prefix replayed clean; the report is then Hypothesis's own."""
    from hypothesis import strategies as st

    events = [
        Event(0, "s", 0, Kind.USER), Event(1, "s", 0, Kind.CALL, "c0", ts=1.0),
        Event(2, "s", 0, Kind.CALL, "c1", ts=2.0), Event(3, "s", 0, Kind.CALL, "c2", ts=3.0, chars=8),
        Event(4, "s", 0, Kind.RESULT, "c2", ts=4.0), Event(5, "s", 0, Kind.TERM, ts=5.0),
    ]  # fmt: skip
    with pytest.raises(AssertionError, match="projector M0 breaks orphanRes"):
        check_projector("M0", checks=["orphanRes"], history=st.just(events), budget=st.just(1),
                        settings=settings(database=None, max_examples=5, deadline=None))  # fmt: skip
