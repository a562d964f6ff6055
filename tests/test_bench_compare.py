"""``turncheck bench --compare``: the interleaved measurement, its ratios, and the CLI smoke run.

No figure is asserted against a threshold (a slow machine gives slower figures, not a failure):
the tests check that every topic runs, measures each contender once per round and prints its
ratios, with the load average beside them.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import BENCHMARKS
from benchmarks.compare import (
    TOPICS,
    Comparison,
    Contender,
    Measured,
    fresh_process,
    guard,
    interleave,
    paired_ratio,
)
from benchmarks.compare.check import build_c_bfs, c_bfs, minimal_bfs
from turncheck.models.catalog import build_model
from turncheck.sim.explorer import explore


def test_rounds_interleave_and_rotate() -> None:
    order: list[str] = []
    contenders = [
        Contender("a", "turncheck", lambda: order.append("a"), 10),
        Contender("b", "ceiling", lambda: order.append("b"), 10),
        Contender("c", "peer", lambda: order.append("c"), 5),
    ]
    measured = interleave(contenders, 3)
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert [m.name for m in measured] == ["a", "b", "c"]
    assert all(len(m.cpu) == 3 and m.peak_bytes is None for m in measured)


def test_the_heap_before_the_rounds_is_frozen_out_of_the_collector_only_meanwhile() -> None:
    frozen: list[int] = []
    interleave([Contender("a", "turncheck", lambda: frozen.append(gc.get_freeze_count()), 1)], 2)
    assert len(frozen) == 2 and all(n > 0 for n in frozen)
    assert gc.get_freeze_count() == 0
    with pytest.raises(ZeroDivisionError):
        interleave([Contender("a", "turncheck", lambda: 1 / 0, 1)], 1)
    assert gc.get_freeze_count() == 0


def test_ratios_and_lines() -> None:
    subject = Measured("ours", "turncheck", 100, (2.0, 3.0, 4.0))
    ceiling = Measured("floor", "ceiling", 100, (1.0, 1.5, 9.0))
    peer = Measured("theirs", "peer", 10, (3.0, 3.0, 3.0))
    c = Comparison("a path", "µs per thing", 1e6, (subject, ceiling, peer), target="≤ 2×")
    # paired by round: 2/1, 3/1.5, 4/9 → median 2.0 (the medians' ratio would also be 3/1.5 = 2.0)
    assert c.ratio(ceiling) == pytest.approx(2.0)
    assert c.ratio(peer) == pytest.approx(0.1)  # 0.03 vs 0.3 per unit
    text = "\n".join(c.lines())
    assert "turncheck/ceiling 2.00× (50 % of its rate)" in text
    assert "peer/turncheck 10.0×" in text and "target: ≤ 2×" in text
    d = c.as_dict()
    assert [x["turncheck_over_this"] for x in d["contenders"]] == [None, 2.0, 0.1]
    assert d["contenders"][0]["median"] == pytest.approx(30_000.0)  # 3.0 s / 100 units in µs


def test_a_ratio_pairs_the_rounds_so_one_noisy_round_of_either_side_cannot_move_it() -> None:
    """Round 2 ran under a burst that slowed both sides; in round 3 one slowed the ceiling alone.
    Every round's own ratio is 2× but the third's; the medians' ratio would read 1.2 s / 2.0 s.
    Measurements of different lengths fall back to the medians' ratio."""
    subject = Measured("ours", "turncheck", 1, (1.2, 4.0, 1.0))
    ceiling = Measured("floor", "ceiling", 1, (0.6, 2.0, 5.0))
    c = Comparison("a path", "s per run", 1.0, (subject, ceiling))
    assert c.ratio(ceiling) == pytest.approx(2.0)
    assert subject.median / ceiling.median == pytest.approx(0.6)  # what an unpaired ratio says
    assert paired_ratio(Measured("x", "turncheck", 2, (2.0,)), Measured("y", "ceiling", 1, (1.0, 3.0))) == 0.5


def test_isolated_rounds_measure_their_own_peak_memory() -> None:
    def allocate() -> object:
        return bytearray(64 * 2**20)

    (m,) = interleave([Contender("big", "turncheck", allocate, 1, isolated=True)], 1)
    assert m.peak_bytes is not None and m.peak_bytes >= 60 * 2**20


def test_wall_clock_rounds_count_time_spent_waiting() -> None:
    """A contender whose work runs in other processes is timed by the wall clock: a sleep (no
    CPU in this process) still takes its time."""
    import time

    (wall,) = interleave([Contender("sleeps", "turncheck", lambda: time.sleep(0.05), 1, wall=True)], 2)
    assert min(wall.cpu) >= 0.05
    c = Comparison("parallel", "s per run", 1.0, (wall, wall), clock="wall time")
    assert c.lines()[0].startswith("parallel — wall time per run") and c.as_dict()["clock"] == "wall time"


def test_a_self_measured_contender_reports_its_own_cpu_and_max_rss(tmp_path: Path) -> None:
    """A contender run as a fresh process reports the child's CPU and max RSS, not this process's:
    the figures it returns are the round's, the peak is the highest round's, and it prints and
    renders as a max RSS (no "+": it is not growth over a fork)."""
    from docs.tools.doc_figures import BlockSpec, render_bench

    figures = iter([(0.5, 10 * 2**20), (0.25, 30 * 2**20)])
    (m,) = interleave([Contender("fresh", "turncheck", lambda: next(figures), 1, measures_itself=True)], 2)
    assert m.cpu == (0.5, 0.25) and m.peak_bytes == 30 * 2**20 and m.peak_total
    (growth,) = interleave([Contender("forked", "ceiling", lambda: bytearray(2**20), 1, isolated=True)], 1)
    c = Comparison("a path", "s per run", 1.0, (m, growth))
    assert "peak 30 MiB max RSS" in c.lines()[1] and "peak +" in c.lines()[2]
    d = c.as_dict()
    assert [k["peak_total"] for k in d["contenders"]] == [True, False]
    spec = BlockSpec(("turncheck bench",), "bench", None, (), False, None, src="r.jsonl")
    table = render_bench(spec, [{"topic": "t", "scale": "tiny", "compare": [d]}])
    assert "| 30 MiB max RSS |" in table and "| +" in table


@pytest.mark.skipif(
    sys.platform != "linux", reason="the max RSS carried over exec is Linux's wait4 behaviour"
)
def test_a_fresh_process_reads_the_childs_own_max_rss_not_the_bench_processes() -> None:
    """Linux keeps the memory a child had before exec (this process's, shared or copied) in its
    ru_maxrss: a plain subprocess of a process holding 200 MiB reads over 200 MiB doing nothing.
    The launcher's child reads its own: a bare interpreter well under that, one that fills
    150 MiB at least that, and the exit status and CPU are the child's."""
    held = bytearray(200 * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    plain = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(plain.pid, 0)
    plain.returncode = 0
    assert usage.ru_maxrss * 1024 > 200 * 2**20  # what a direct child reads: the bench's memory
    code, cpu, rss, out = fresh_process([sys.executable, "-c", "print('hi')"], ".")
    assert code == 0 and 0 < cpu < 5 and rss < 100 * 2**20 and out == "hi\n"
    fill = "b = bytearray(150 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nraise SystemExit(3)"
    code, cpu, rss, out = fresh_process([sys.executable, "-c", fill], ".")
    assert code == 3 and rss >= 150 * 2**20 and out == ""
    del held


def test_the_exec_rows_count_the_commands_cpu() -> None:
    """The exec protocol's work is half in the command: its CPU, read from /proc for the processes
    below the bench, is in the figure. A command burning 0.3 s between two reads of the clock
    reads at least that, while this process's own CPU clock sees almost none of it."""
    from benchmarks.compare.exec import _cpu_below

    burn = "import time\ninput()\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\nprint('done', flush=True)\ninput()"
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        clock = _cpu_below()
        before, own = clock(), time.process_time()
        child.stdin.write(b"go\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"done\n"
        assert clock() - before >= 0.29
        assert time.process_time() - own < 0.1  # what a contender timed by process_time would miss
    finally:
        child.communicate(b"\n", timeout=10)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no sched_setaffinity: the exec rows say so")
def test_the_exec_rows_pin_to_one_cpu_only_meanwhile() -> None:
    """The exec topic runs on one CPU (a child started meanwhile inherits it) and gives the
    process its CPUs back after, even when a round fails."""
    from benchmarks.compare.exec import _one_cpu

    allowed = os.sched_getaffinity(0)
    with pytest.raises(ZeroDivisionError), _one_cpu() as note:
        assert len(os.sched_getaffinity(0)) == 1 and note.endswith("pinned to one CPU")
        child = subprocess.run(
            [sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)))"],
            capture_output=True,
            text=True,
        )
        assert child.stdout == "1\n"
        raise ZeroDivisionError("a round failed")
    assert os.sched_getaffinity(0) == allowed


def test_the_guard_judges_a_fresh_process_rows_max_rss_too() -> None:
    """The seed's row's memory is a guarded figure (turncheck's max RSS over the C BFS's): a
    visited set grown by a third fails the guard though the CPU ratio held; growth peaks of
    forked rounds (+0 MiB for a small ceiling) are never divided."""
    ours = Measured("explore", "turncheck", 1, (2.0, 2.0), 400 * 2**20, peak_total=True)
    c_bfs_ = Measured("C BFS", "ceiling", 1, (0.2, 0.2), 80 * 2**20, peak_total=True)
    forked = Measured("minimal BFS", "ceiling", 1, (1.0, 1.0), 0)
    got = guard.figures("check", [Comparison("seed", "s", 1.0, (ours, c_bfs_, forked))])
    assert got == {
        "check: seed | turncheck/C BFS": 10.0,
        "check: seed | turncheck/C BFS, max RSS": 5.0,
        "check: seed | turncheck/minimal BFS": 2.0,
    }
    bigger = Measured("explore", "turncheck", 1, (2.0, 2.0), 540 * 2**20, peak_total=True)
    slowed = guard.figures("check", [Comparison("seed", "s", 1.0, (bigger, c_bfs_, forked))])
    lines, worse = guard.verdict(slowed, got, ["check"])
    assert worse and lines[1].startswith("WORSE: check: seed | turncheck/C BFS, max RSS: 6.75×")


def test_a_failing_isolated_round_is_an_error() -> None:
    def fail() -> object:
        raise ValueError("boom")

    with pytest.raises(RuntimeError, match="failed in its child"):
        interleave([Contender("bad", "turncheck", fail, 1, isolated=True)], 1)


def test_minimal_bfs_counts_the_explorers_states() -> None:
    model = build_model("trigger", {"writers": 3, "gap": 2, "max_turns": 3, "turns": 4})
    assert minimal_bfs(model) == explore(model).distinct == 1983


@pytest.mark.skipif(
    shutil.which("cc") is None, reason="no C compiler (cc) on PATH: the bench skips the C row too"
)
def test_the_c_bfs_counts_the_explorers_states_transitions_depth_and_worst(tmp_path: Path) -> None:
    """The C reference BFS models the same protocol: on configurations with and without a gap,
    bounded and unbounded turns, one writer or several, its counts are the explorer's."""
    binary = build_c_bfs(tmp_path)
    assert isinstance(binary, Path), binary
    for params in (
        {"writers": 3, "gap": 2, "max_turns": 3, "turns": 5},
        {"writers": 2, "gap": 0, "max_turns": 2, "turns": 3},
        {"writers": 1, "gap": 1, "max_turns": 1},
        {"writers": 5, "gap": 3, "max_turns": 2},
        {"writers": 2, "gap": 4, "max_turns": 6, "turns": 2},
    ):
        r = explore(build_model("trigger", params), max_states=None)
        got = c_bfs(binary, params)
        assert got[:4] == (r.distinct, r.generated, r.max_depth_seen, r.worst_of("live_turns")), params
    with pytest.raises(ValueError, match="locking none only"):
        c_bfs(binary, {"writers": 2, "locking": "mutex"})  # type: ignore[dict-item]


def test_without_a_working_compiler_the_c_row_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no cc
    assert build_c_bfs(tmp_path) == "no C compiler (cc) on PATH"
    assert build_c_bfs(tmp_path, compiler=shutil.which("false", path="/bin:/usr/bin")) == (
        f"{shutil.which('false', path='/bin:/usr/bin')} -O2 failed: exit 1"
    )
    assert not (tmp_path / "trigger_bfs").exists()


def test_the_compare_package_is_not_a_topic() -> None:
    assert "compare" not in BENCHMARKS


def test_bench_outside_a_checkout_is_one_line_saying_where_it_runs(
    cli: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "benchmarks", None)  # not importable, as in an installed wheel
    code, out, err = cli("bench", "trigger")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "turncheck bench runs from a turncheck repository checkout" in err


def test_python_dash_m_benchmarks_is_the_bench_command() -> None:
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks", "nope"], cwd=root, capture_output=True, text=True
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("turncheck: error: unknown benchmark 'nope' (known: check, ")


def test_topic_without_comparison_is_a_usage_error(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli("bench", "peers", "--compare", "--scale", "quick")
    assert code == 2 and out == ""
    assert err.startswith("turncheck: error: benchmark 'peers' has no --compare") and err.count("\n") == 1


ISSUE_58_ROWS = (
    ("check", "explorer, trigger writers=", "| turncheck/C BFS of the same model (cc -O2)"),
    ("check", "the seed's row", "| turncheck/C BFS of the same model (cc -O2)"),
    ("check", "the seed's row", "| turncheck/C BFS of the same model (cc -O2), max RSS"),
    ("projector", "projector per request,", "| turncheck/bisect_left on the prefix sums"),
    ("store", "log append,", "| turncheck/same frame bytes, buffered write + fdatasync/256"),
    ("store", "log recovery,", "| turncheck/read + zlib.crc32 over the bytes"),
    ("trigger", "SimPy runner,", "| turncheck/bare SimPy, same event count"),
    ("importer", "importer --from openai-chat,", "| turncheck/msgspec.json.decode of each line"),
    ("startup", "start-up of a real command: a 20-state check", '| turncheck/python -c "import typer"'),
    ("startup", "start-up of turncheck --help,", '| turncheck/python -c "import typer"'),
    ("race", "race, per schedule", "| turncheck/asyncio.run of the same test"),
    ("exec", "exec protocol per request, whole history sent", "| turncheck/the same fn in-process (messages:keep_last.py:fn)"),
    ("exec", "exec protocol per request, incremental", "| turncheck/the same fn in-process (messages:keep_last.py:fn)"),
    ("projector", "per-request replay, one session", "| turncheck/one History, one M5 selection per request"),
    ("projector", "per-request replay of a message trimmer", "| turncheck/keep_recent in a loop on the growing message list"),
)  # fmt: skip
"""Issue 58's table, a row per figure (topic, path prefix, ceiling), C BFS rows where ``cc`` exists
(CI has it). Its suite row is the suite's time, not a bench figure; the SQLite comparison is a peer
row of the append (peers are never guarded)."""


def test_compare_smoke_every_topic_json(cli: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The CI smoke run: every topic at the tiny scale (the suite's time is CI's budget), one JSON
    object per topic, ratios and the load average present (no thresholds)."""
    written = tmp_path / "ratios.json"
    code, out, err = cli("bench", "all", "--compare", "--scale", "tiny", "--format", "json",
                         "--write-baseline", str(written))  # fmt: skip
    assert code == 0
    # the committed baseline names the figures this run measures (regenerate it when they change)
    assert guard.read(written)[1].keys() == guard.read(guard.BASELINE)[1].keys()
    objects = [json.loads(line) for line in out.splitlines()]
    assert (
        [o["topic"] for o in objects]
        == list(TOPICS)
        == ["projector", "store", "importer", "race", "exec", "startup", "trigger", "testbench", "check"]
    )
    # every row of issue 58's table is a figure of this one run, by path and ceiling
    figures = guard.read(written)[1]
    for topic, path, ceiling in ISSUE_58_ROWS:
        if "C BFS" in ceiling and shutil.which("cc") is None:
            continue  # the bench leaves the C rows out, saying why
        assert any(k.startswith(f"{topic}: {path}") and k.endswith(ceiling) for k in figures), (topic, path)
    seed = next(
        c for c in objects[TOPICS.index("check")]["compare"] if c["path"].startswith("the seed's row")
    )
    assert seed["path"].startswith("the seed's row at tiny scale: turncheck explore trigger --param writers=")
    ours = seed["contenders"][0]
    assert ours["role"] == "turncheck" and ours["peak_total"] and 20 < ours["peak_mib"] < 600
    for o in objects:
        assert o["format"] == "turncheck/1" and o["scale"] == "tiny" and o["compare"]
        assert o["load_average"]["start"] is None or len(o["load_average"]["start"]) == 3
        for comparison in o["compare"]:
            roles = [c["role"] for c in comparison["contenders"]]
            assert roles.count("turncheck") >= 1
            assert len(roles) >= 2 or "not installed" in comparison["note"]  # the peers extra absent
            assert all(c["median"] > 0 for c in comparison["contenders"])
            others = [c for c in comparison["contenders"] if c["role"] != "turncheck"]
            assert all(c["turncheck_over_this"] > 0 for c in others)
    assert "== bench check --compare (tiny)" in err
    append = objects[TOPICS.index("store")]["compare"][0]
    assert not append["note"]  # the ceilings wrote files of the log's very size


def test_compare_table_prints_ratios_and_load(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli("bench", "trigger", "--compare", "--scale", "quick", "--quiet")
    assert code == 0 and err == ""
    assert out.startswith("== bench trigger --compare (quick)\n")
    assert "turncheck/ceiling" in out and "load average" in out


def ratio_file(path: Path, ratios: dict[str, float], scale: str = "tiny") -> Path:
    path.write_text(json.dumps({"format": guard.FORMAT, "scale": scale, "ratios": ratios}), encoding="utf-8")
    return path


BASE = {"projector: per request | turncheck/bisect": 2.0, "check: explorer | turncheck/minimal BFS": 1.4}


@pytest.mark.parametrize(
    ("measured", "code", "named"),
    [
        ({**BASE}, 0, "speed guard OK: 2 figures within 1.25× their baseline ratio"),
        ({**BASE, "check: explorer | turncheck/minimal BFS": 1.75}, 0, "speed guard OK"),  # +25 %: the limit
        ({**BASE, "check: explorer | turncheck/minimal BFS": 1.76}, 1, "WORSE: check: explorer"),
        ({**BASE, "projector: per request | turncheck/bisect": 9.0}, 1, "WORSE: projector: per request"),
        ({"check: explorer | turncheck/minimal BFS": 1.0}, 1, "MISSING: projector: per request"),
        ({**BASE, "store: new | turncheck/x": 3.0}, 0, "new (no baseline, not judged): store: new"),
    ],
)
def test_the_guard_exits_1_on_a_slowed_or_missing_figure_and_names_it(
    cli: Any, tmp_path: Path, measured: dict[str, float], code: int, named: str
) -> None:
    """A fake ratio file, not a timed test: a ratio more than 25 % above its baseline fails."""
    base, run = ratio_file(tmp_path / "base.json", BASE), ratio_file(tmp_path / "run.json", measured)
    got, out, err = cli("bench", "--compare", "--baseline", str(base), "--ratios", str(run))
    assert (got, err) == (code, "") and named in out


def test_the_guard_judges_only_the_topics_run(cli: Any, tmp_path: Path) -> None:
    base = ratio_file(tmp_path / "base.json", BASE)
    run = ratio_file(tmp_path / "run.json", {"check: explorer | turncheck/minimal BFS": 1.4})
    code, out, _ = cli("bench", "check", "--compare", "--baseline", str(base), "--ratios", str(run))
    assert code == 0
    assert out.startswith(
        "speed guard OK: 1 figures within 1.25× their baseline ratio; 1 baseline figures of"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "{base}"], "--baseline, --write-baseline and --ratios go with --compare"),
        (["--compare", "--ratios", "{run}"], "--ratios is checked against a --baseline"),
        (
            ["--compare", "--baseline", "{quick}", "--ratios", "{run}"],
            "a baseline of scale quick, measured at tiny",
        ),
        (["--compare", "--baseline", "{bad}", "--ratios", "{run}"], "not a ratio file"),
        (["--compare", "--baseline", "{none}", "--ratios", "{run}"], "no such file"),
    ],
)
def test_a_bad_guard_invocation_is_one_line_exit_2(
    cli: Any, tmp_path: Path, args: list[str], message: str
) -> None:
    files = {
        "base": ratio_file(tmp_path / "base.json", BASE),
        "run": ratio_file(tmp_path / "run.json", BASE),
        "quick": ratio_file(tmp_path / "quick.json", BASE, "quick"),
        "bad": ratio_file(tmp_path / "bad.json", {"x": -1.0}),
        "none": tmp_path / "none.json",
    }
    code, out, err = cli("bench", *[a.format(**files) for a in args])
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_the_committed_baseline_is_a_tiny_ratio_file() -> None:
    scale, ratios = guard.read(guard.BASELINE)
    assert scale == "tiny" and {k.split(":")[0] for k in ratios} == set(TOPICS)


def test_a_baseline_written_over_another_keeps_each_figures_worst_ratio(tmp_path: Path) -> None:
    path = ratio_file(tmp_path / "base.json", {"a: x | turncheck/c": 2.0, "a: gone | turncheck/c": 1.0})
    guard.write(path, "tiny", {"a: x | turncheck/c": 1.5, "a: y | turncheck/c": 3.0})
    assert guard.read(path) == ("tiny", {"a: x | turncheck/c": 2.0, "a: y | turncheck/c": 3.0})
    guard.write(path, "quick", {"a: x | turncheck/c": 1.5})  # another scale: replaced
    assert guard.read(path) == ("quick", {"a: x | turncheck/c": 1.5})


def test_a_one_topic_run_over_a_baseline_keeps_the_other_topics(tmp_path: Path) -> None:
    """``bench startup --compare --write-baseline benchmarks/baseline.json`` kept only the start-up
    figure: the other 13 were dropped because the run had not measured them."""
    path = ratio_file(tmp_path / "base.json", {"a: x | turncheck/c": 2.0, "a: gone | turncheck/c": 1.0,
                                              "b: y | turncheck/c": 4.0})  # fmt: skip
    guard.write(path, "tiny", {"a: x | turncheck/c": 2.5})
    assert guard.read(path) == ("tiny", {"a: x | turncheck/c": 2.5, "b: y | turncheck/c": 4.0})


def test_race_has_a_comparison_only(cli: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli("bench", "race")
    assert code == 2 and out == "" and "unknown benchmark 'race'" in err


@pytest.mark.parametrize("target", ["a-ratio-file", "nowhere"])
def test_write_baseline_refuses_a_symlink_before_the_run(cli: Any, tmp_path: Path, target: str) -> None:
    """``--write-baseline LINK`` measured for seconds, then wrote its ratios into the link's
    target (a user's file, or a name the dangling link points at): refused first, one line; the
    library's ``guard.write`` refuses it too, and writes a file whole (a temporary name, renamed)."""
    users = (
        ratio_file(tmp_path / "users.json", BASE) if target == "a-ratio-file" else tmp_path / "nowhere.json"
    )
    before = users.read_bytes() if users.exists() else None
    link = tmp_path / "link.json"
    link.symlink_to(users)
    code, out, err = cli("bench", "check", "--scale", "tiny", "--compare", "--write-baseline", str(link))
    assert code == 2 and out == "" and err.count("\n") == 1 and "is a symlink" in err
    with pytest.raises(Exception, match="symlink"):
        guard.write(link, "tiny", {"a: x | turncheck/c": 1.5})
    assert (users.read_bytes() if users.exists() else None) == before and link.is_symlink()
    guard.write(tmp_path / "plain.json", "tiny", {"a: x | turncheck/c": 1.5})
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left
