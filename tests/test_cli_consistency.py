"""The CLI's shared conventions, command by command: ``--format table|json`` wherever results are
printed, progress on stderr only (stdout identical with and without it), ``--quiet`` silences it,
and a failure after a bar drew still ends in a one-line error on a line of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import benchmarks
from turncheck.cli import progress
from turncheck.cli.app import main
from turncheck.cli.lint import ReadProgress
from turncheck.cli.project import blockwise, example_history
from turncheck.models.events import Event, Kind
from turncheck.models.store import TurnLog
from turncheck.models.workload import BLOCK, WorkloadParams, generate_events


@pytest.fixture(autouse=True)
def bars_draw_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the bars of runs that take milliseconds: draw them from the start."""
    monkeypatch.setattr(progress, "DRAW_AFTER", 0.0)


def quiet_and_loud(cli: Any, *argv: str) -> tuple[int, str, str]:
    """Run twice, with and without ``--quiet``: same exit, same stdout, nothing on stderr when
    quiet. Returns the loud run (its stderr holds the progress)."""
    loud = cli(*argv)
    quiet = cli(*argv, "--quiet")
    assert quiet[0] == loud[0] and quiet[1] == loud[1]
    assert quiet[2] == ""
    return loud


def error_stands_alone(err: str) -> str:
    """The error is the last line of stderr, whole, after any bar (bars redraw with ``\\r``)."""
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith("turncheck: error: "), repr(err)
    return last


# -- bench -------------------------------------------------------------------------------------


@pytest.fixture
def fake_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two instant benchmark topics in place of the real (slow) ones."""
    fake: dict[str, benchmarks.Benchmark] = {
        name: lambda scale, lines=lines: [f"{x} ({scale})" for x in lines]  # type: ignore[misc]
        for name, lines in (("alpha", ["a 1", "a 2"]), ("beta", ["b ×3"]))
    }
    monkeypatch.setattr(benchmarks, "BENCHMARKS", fake)


@pytest.mark.usefixtures("fake_benchmarks")
def test_bench_json_is_one_object_per_topic(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli("bench", "all", "--scale", "quick", "--format", "json")
    assert code == 0
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["topic"] for o in objs] == ["alpha", "beta"]
    assert all(list(o)[0] == "format" and o["format"] == "turncheck/1" for o in objs)
    assert objs[0]["lines"] == ["a 1 (quick)", "a 2 (quick)"] and objs[1]["lines"] == ["b ×3 (quick)"]
    assert all(o["scale"] == "quick" and isinstance(o["seconds"], float) for o in objs)
    assert "== bench alpha (quick)" in err and "== bench beta (quick)" in err  # progress, not results
    code, out, err = cli("bench", "beta", "--scale", "quick", "--format", "json", "--quiet")
    assert code == 0 and err == "" and json.loads(out)["lines"] == ["b ×3 (quick)"]


@pytest.mark.usefixtures("fake_benchmarks")
def test_bench_table_unchanged_and_quiet(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = quiet_and_loud(cli, "bench", "alpha", "--scale", "quick")
    assert code == 0 and out == "== bench alpha (quick)\na 1 (quick)\na 2 (quick)\n"
    assert err.strip().startswith("(") and err.strip().endswith(" s)")
    code, out, err = cli("bench", "alpha", "--format", "yaml")
    assert code == 2 and out == "" and "--format" in err


# -- replay ------------------------------------------------------------------------------------


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A counterexample of the unlocked trigger, saved by ``check`` (explorer only: fast)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cx.json"
    assert main(["check", "trigger", "--engine", "explore", "--trace-out", str(path), "--quiet"]) == 1
    capsys.readouterr()
    return tmp_path / "cx.within-max-turns.json"  # the 4-step run: append-sync can take every step


def test_replay_json(cli: Any, capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    saved = json.loads(trace.read_text())
    code, out, _ = cli("replay", str(trace), "--format", "json")
    obj = json.loads(out)
    assert code == 1
    assert obj["verdict"] == "same" and obj["reproduced"] is True and obj["still_fails"] is True
    assert obj["model"] == "trigger" and obj["violated"] == obj["trace_violated"] == saved["violated"]
    assert obj["steps"] == len(saved["actions"]) and obj["step"] == len(saved["actions"])
    # a configuration where the run no longer breaks: append-sync never exceeds maxTurns (trim-to
    # would now fail differently — every strategy is also held to live ≤ maxTurns)
    saved["params"]["locking"] = "append-sync"
    trace.write_text(json.dumps(saved))
    code, out, _ = cli("replay", str(trace), "--format", "json")
    obj = json.loads(out)
    assert code == 0 and obj["verdict"] == "passes" and obj["reproduced"] is False and obj["violated"] is None
    code, out, _ = cli("replay", str(trace))
    assert code == 0 and "no longer fails" in out and not out.startswith("{")
    code, out, err = cli("replay", str(trace), "--format", "xml")
    assert code == 2 and out == "" and "--format" in err


# -- log verify / export -----------------------------------------------------------------------


def small_log(path: Path, turns: int = 3) -> Path:
    with TurnLog.open(path, create=True) as log:
        for t in range(turns):
            seq = log.next_seq
            log.commit(
                [Event(seq, "s", t, Kind.USER, text=f"问 {t}"), Event(seq + 1, "s", t, Kind.TERM, text="ok")]
            )
    return path


def test_log_verify_and_json(cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = small_log(tmp_path / "c.log")
    code, out, err = quiet_and_loud(cli, "log", "verify", str(path))
    assert code == 0 and "3 turn(s)" in out and "clean" in out
    assert "log verify: decoding" in err and "/2 turns" in err  # the last turn is decoded on open
    code, out, _ = cli("log", "verify", str(path), "--format", "json", "--quiet")
    obj = json.loads(out)
    assert code == 0 and obj["framing"] == "frames" and obj["turns"] == 3 and obj["events"] == 6
    assert obj["clean"] is True and obj["damaged"] is False and (obj["first_seq"], obj["last_seq"]) == (0, 5)
    code, out, err = cli("log", "verify", str(path), "--format", "frames")
    assert code == 2 and out == "" and "--format" in err and len(err.splitlines()) == 1
    path.write_bytes(path.read_bytes()[:-5])  # a torn tail: damaged, still readable
    code, out, _ = cli("log", "verify", str(path), "--format", "json", "-q")
    obj = json.loads(out)
    assert code == 1 and obj["damaged"] is True and obj["turns"] == 2 and obj["torn_bytes"] > 0


def test_log_export_progress_on_stderr_only(
    cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = small_log(tmp_path / "c.log")
    code, out, err = quiet_and_loud(cli, "log", "export", str(path))
    assert code == 0 and len(out.splitlines()) == 6 and json.loads(out.splitlines()[0])["text"] == "问 0"
    assert "log export: decoding" in err and "log export: encoding" in err and "3/3 turns" in err


# -- project / lint / generate -----------------------------------------------------------------


def test_project_progress_per_session(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = quiet_and_loud(cli, "project", "--example", "--budget", "300", "--format", "json")
    assert code == 0 and [json.loads(x)["session"] for x in out.splitlines()] == ["support-42", "notes-7"]
    # not a terminal: each bar's last state once, no redraws
    assert "\r" not in err and err.count("\n") == 2
    reading, sessions = err.splitlines()
    size = example_history().stat().st_size
    assert reading.startswith("project: reading ━") and f" {size}/{size} B " in reading
    assert sessions.startswith("project ━") and " 2/2 sessions " in sessions


def test_project_failure_after_the_bar_is_one_line_of_its_own(
    cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "consistency_second_session_refused.py").write_text(
        "from turncheck.models.errors import BadParameter\n"
        "from turncheck.models.projector import STRATEGIES\n"
        "def project(history, budget, cost):\n"
        "    if history.events[0].session == 'notes-7':\n"
        "        raise BadParameter('notes-7 refused')\n"
        "    return STRATEGIES['M1'](history, budget, cost)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["project", "--example", "--strategy", "consistency_second_session_refused:project"]
    code, out, err = cli(*argv)
    assert code == 2 and out == "" and "1/2 sessions" in err
    assert error_stands_alone(err) == "turncheck: error: notes-7 refused"
    code, _, err = cli(*argv, "--quiet")
    assert code == 2 and err == "turncheck: error: notes-7 refused\n"


def test_lint_progress_and_json(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = quiet_and_loud(cli, "lint", str(example_history()), "--format", "json")
    size = example_history().stat().st_size
    assert code == 1 and json.loads(out)["counts"]["dangling-call"] == 1
    assert err.count("\n") == 1 and f"{size}/{size} B" in err  # small file: only the final bar


def test_lint_reports_bytes_per_line_and_ends_the_bar_on_bad_input(
    cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "big.jsonl"
    lines = [
        json.dumps({"seq": i, "session": "a", "turn": i, "kind": "USER", "text": "x" * 200})
        for i in range(400)
    ]
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    calls: list[tuple[int, int]] = []
    reading = ReadProgress(size, lambda done, total: calls.append((done, total)))
    with path.open(encoding="utf-8") as fh:
        assert sum(1 for _ in reading.lines(fh)) == 400
    assert reading.drawn and len(calls) >= 300 and all(total == size for _, total in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and 0 < done[-1] < size  # never "finished" early: the caller ends it
    path.write_text("\n".join(lines) + "\n{broken\n")
    code, out, err = cli("lint", str(path))
    assert code == 2 and out == "" and "lint big.jsonl ━" in err
    assert "malformed JSON" in error_stands_alone(err) and ":401:" in err
    code, _, err = cli("lint", str(path), "-q")
    assert code == 2 and len(err.splitlines()) == 1


def test_generate_progress_per_block(cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    params = WorkloadParams(sessions=2 * BLOCK + 1, turns=2)
    calls: list[tuple[int, int]] = []
    events = list(blockwise(generate_events(params), params, lambda d, t: calls.append((d, t))))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert events == list(generate_events(params))
    code, out, err = quiet_and_loud(cli, "generate", "--sessions", "3", "--turns", "2")
    assert code == 0 and len(out.splitlines()) >= 6 and "generate ━" in err and "1/1 blocks" in err
    target = tmp_path / "g.jsonl"
    code, out, err = cli("generate", "--sessions", "3", "--turns", "2", "-o", str(target), "-q")
    assert (code, out, err) == (0, "", "")  # -q: nothing on stderr but errors, not even "wrote"
    code, out, err = cli("generate", "--sessions", "3", "--turns", "2", "-o", str(target), "--force")
    assert code == 0 and out == "" and f"sessions to {target}" in err.splitlines()[-1]
    code, out, err = cli("generate", "--sessions", "3", "--turns", "2")
    assert target.read_text(encoding="utf-8") == out


def test_short_runs_draw_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(progress, "DRAW_AFTER", 60.0)
    stream = io.StringIO()
    bar = progress.ProgressBar("quick", "steps", stream=stream)
    for i in range(1, 6):
        bar(i, 5)
    assert stream.getvalue() == "" and not bar.drawn
    monkeypatch.setattr(progress, "DRAW_AFTER", 0.0)
    bar = progress.ProgressBar("slow", "steps", stream=stream)
    bar(1, 2)
    bar(2, 2)
    assert bar.drawn and stream.getvalue().rstrip().endswith("2/2 steps 0:00:00")
    assert "\r" not in stream.getvalue()  # into a file: the last state once, no redraws


def _counted_redraws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from rich.progress import Progress

    drawn: list[int] = []
    real = Progress.refresh

    def counted(self: Progress) -> None:
        drawn.append(1)
        real(self)

    monkeypatch.setattr(Progress, "refresh", counted)
    return drawn


def test_a_bar_of_many_quick_steps_redraws_at_most_ten_times_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``race`` reports each schedule (a fraction of a millisecond): a redraw per report rendered
    rich's whole table each time, a third of the command's CPU. The last state is still shown."""
    import io
    import time

    drawn = _counted_redraws(monkeypatch)
    stream = io.StringIO()
    bar = progress.ProgressBar("race", "schedules", stream=stream)
    started = time.monotonic()
    for i in range(1, 5001):
        bar(i, 5000)
    assert 1 <= len(drawn) <= 2 + (time.monotonic() - started) / progress.REDRAW_EVERY
    assert stream.getvalue().rstrip().endswith("5000/5000 schedules 0:00:00")
    bar = progress.ProgressBar("race", "schedules", stream=stream)
    for i in range(1, 1235):
        bar(i, 5000)
    progress.end_line(bar)  # a run failing mid-way: the bar ends at the last report, not a redraw
    assert stream.getvalue().rstrip().endswith("1234/5000 schedules 0:00:00")
