"""``turncheck project``, ``lint``, ``generate``, ``scenario`` and ``bench`` from the outside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.project import example_history

ROOT = Path(__file__).resolve().parent.parent


def test_project_json_has_the_promised_fields(cli: Any, capsys):
    code, out, _ = cli("project", "--example", "--budget", "300", "--strategy", "M0", "--format", "json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["session"] for r in rows] == ["support-42", "notes-7"]
    for key in ("session", "strategy", "budget", "start_seq", "end_seq", "kept_events", "kept_turns",
                "dropped_turns", "cost", "orphanRes", "orphanCall", "pairSplit", "overBudget", "empty",
                "droppedPartial", "fallback", "repairs"):  # fmt: skip
        assert key in rows[0]
    assert rows[0]["cost"] <= 300


def test_project_req_payload_is_exact_and_refusal_names_both_sizes(cli: Any, capsys):
    code, out, _ = cli("project", "--example", "--strategy", "REQ", "--budget", "700", "--session",
                       "notes-7", "--system", "Be brief.", "--current", "代号是什么？", "--emit-payload",
                       "--format", "json", "--escape", "java")  # fmt: skip
    assert code == 0
    row = json.loads(out)
    assert len(row["payload"].encode("utf-8")) == row["payload_bytes"] == row["cost"]
    assert "ORCHID-17" in row["payload"] and row["payload"].endswith('"content":"代号是什么？"}]}')
    code, out, err = cli("project", "--example", "--strategy", "REQ", "--budget", "50", "--current", "hi")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "needs" in err and "50" in err


@pytest.mark.parametrize(
    "line, needle",
    [
        ("{bad json", "malformed JSON"),
        ('{"seq":1,"session":"a","turn":0,"kind":"NOPE"}', "unknown kind"),
        ('{"seq":1,"session":"a","kind":"USER"}', "missing field 'turn'"),
        ('{"seq":1,"session":"a","turn":0,"kind":"CALL"}', "call_id"),
        ('{"seq":1,"session":"a","turn":0,"kind":"USER","text":"\\ud800"}', "lone surrogate"),
    ],
)
def test_bad_input_is_one_line_naming_the_line(cli: Any, tmp_path, capsys, line, needle):
    f = tmp_path / "h.jsonl"
    f.write_text('{"seq":0,"session":"a","turn":0,"kind":"USER","chars":5}\n' + line + "\n")
    code, out, err = cli("project", "--history", str(f), "--budget", "10")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and ":2:" in err


@pytest.mark.parametrize("argv, needle", [
    (["--budget", "0"], "budget"), (["--budget", "-4"], "budget"), (["--strategy", "M7"], "unknown strategy"),
    (["--cost", "nope"], "--cost"), (["--order", "random"], "--order"), (["--session", "zz"], "session"),
])  # fmt: skip
def test_bad_options_are_one_line(cli: Any, capsys, argv, needle):
    code, out, err = cli("project", "--example", *argv)
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1


def test_order_ts_breaks_turns_on_a_tied_log(cli: Any, tmp_path, capsys):
    f = tmp_path / "tied.jsonl"
    rows = [
        {"seq": 0, "session": "a", "turn": 0, "kind": "USER", "ts": 10, "chars": 40},
        {"seq": 1, "session": "a", "turn": 0, "kind": "CALL", "call_id": "x", "ts": 11, "chars": 40},
        {"seq": 2, "session": "a", "turn": 0, "kind": "RESULT", "call_id": "x", "ts": 10, "chars": 40},
        {"seq": 3, "session": "a", "turn": 0, "kind": "TERM", "ts": 12, "chars": 40},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, out, _ = cli("project", "--history", str(f), "--budget", "25", "--order", "ts", "--format", "json")
    r = json.loads(out)
    assert r["mispair"] == 1 or r["orphanRes"] + r["orphanCall"] > 0
    _, out, _ = cli("project", "--history", str(f), "--budget", "25", "--order", "seq", "--format", "json")
    assert json.loads(out)["mispair"] == 0


def test_lint_clean_and_dirty(cli: Any, tmp_path, capsys):
    clean = tmp_path / "clean.jsonl"
    clean.write_text('{"seq":0,"session":"a","turn":0,"kind":"USER","chars":1}\n'
                     '{"seq":1,"session":"a","turn":0,"kind":"TERM","chars":1}\n')  # fmt: skip
    code, out, _ = cli("lint", str(clean))
    assert code == 0 and "clean" in out
    code, out, _ = cli("lint", str(example_history()), "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["counts"]["dangling-call"] == 1 and not report["clean"]
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_text("".join(json.dumps(r) + "\n" for r in [
        {"seq": 0, "session": "a", "turn": 0, "kind": "CALL", "call_id": "x"},
        {"seq": 0, "session": "a", "turn": 0, "kind": "RESULT", "call_id": "y"},
        {"seq": 5, "session": "a", "turn": 1, "kind": "USER", "source": "p"},
        {"seq": 6, "session": "a", "turn": 1, "kind": "USER", "source": "q"},
        {"seq": 7, "session": "a", "turn": 1, "kind": "RESULT", "call_id": "z"},
        {"seq": 8, "session": "a", "turn": 1, "kind": "CALL", "call_id": "z"},
    ]))  # fmt: skip
    code, out, _ = cli("lint", str(dirty))
    assert code == 1
    for problem in ("duplicate-seq", "missing-seq", "orphan-result", "dangling-call", "result-before-call",
                    "turn-not-starting-with-user", "turn-with-several-users", "turn-with-several-sources"):  # fmt: skip
        assert problem in out, problem
    assert "line 2:" in out


def test_generate_is_seeded_and_never_overwrites(cli: Any, tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert cli("generate", "-o", str(a), "--sessions", "3", "--turns", "4")[0] == 0
    assert cli("generate", "-o", str(b), "--sessions", "3", "--turns", "4")[0] == 0
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 0
    before = a.read_bytes()
    code, _, err = cli("generate", "-o", str(a), "--sessions", "9")
    assert code == 2 and "exists" in err and a.read_bytes() == before
    code, _, err = cli("generate", "-o", str(tmp_path / "c.jsonl"), "--p-result", "2")
    assert code == 2 and "p_result" in err and not (tmp_path / "c.jsonl").exists()
    code, out, _ = cli("project", "--history", str(a), "--budget", "2000", "--format", "json")
    assert code == 0 and len(out.splitlines()) == 3


def test_scenario_errors_write_nothing(cli: Any, tmp_path, capsys):
    out_dir = tmp_path / "out"
    code, _, err = cli("scenario", "no-such", "-o", str(out_dir))
    assert code == 2 and "unknown scenario" in err
    code, _, err = cli("scenario", "trigger-gap", "--param", "gap=-1", "-o", str(out_dir))
    assert code == 2 and "gap" in err
    code, _, err = cli("scenario", "trigger-gap", "--param", "bogus=1", "-o", str(out_dir))
    assert code == 2 and "bogus" in err
    assert not out_dir.exists()


def test_scenario_writes_result_files(cli: Any, tmp_path, capsys):
    out_dir = tmp_path / "out"
    code, out, _ = cli("scenario", "trigger-gap", "--param", "writers=4", "--param", "gap=2",
                       "--param", "iterations=2000", "-o", str(out_dir), "--quiet")  # fmt: skip
    assert code == 0 and "peak" in out
    assert (out_dir / "trigger-gap.json").exists() and (out_dir / "trigger-gap.md").exists()
    assert list(out_dir.glob("trigger-gap.*.csv"))
    code, out, _ = cli("scenario", "--list")
    assert "trigger-gap" in out and "projection" in out


def test_bench_unknown_topic_and_scale(cli: Any, capsys):
    assert cli("bench", "nope")[0] == 2
    assert cli("bench", "projector", "--scale", "huge")[0] == 2


def test_projector_benchmark_prints_its_figures():
    from benchmarks import projector as bench_projector

    lines = bench_projector.run("quick")
    text = "\n".join(lines)
    assert "projection median per request" in text and "×" in text and "appends" in text


def test_strict_refuses_a_result_for_an_unknown_call(cli: Any, tmp_path, capsys):
    f = tmp_path / "h.jsonl"
    f.write_text('{"seq":0,"session":"a","turn":0,"kind":"USER","chars":5}\n'
                 '{"seq":1,"session":"a","turn":0,"kind":"RESULT","call_id":"ghost","chars":5}\n')  # fmt: skip
    assert cli("project", "--history", str(f), "--budget", "10")[0] == 0
    code, out, err = cli("project", "--history", str(f), "--budget", "10", "--strict")
    assert code == 2 and out == "" and "ghost" in err and len(err.strip().splitlines()) == 1


def test_strict_refuses_two_users_in_one_turn(cli: Any, tmp_path, capsys):
    f = tmp_path / "h.jsonl"
    f.write_text('{"seq":0,"session":"a","turn":0,"kind":"USER","chars":5}\n'
                 '{"seq":1,"session":"a","turn":0,"kind":"TERM","chars":5}\n'
                 '{"seq":2,"session":"a","turn":0,"kind":"USER","chars":5}\n')  # fmt: skip
    assert cli("project", "--history", str(f), "--budget", "10")[0] == 0
    code, out, err = cli("project", "--history", str(f), "--budget", "10", "--strict")
    assert code == 2 and out == "" and "second USER in turn 0" in err and len(err.strip().splitlines()) == 1


def test_lint_names_a_result_two_turns_after_its_call(cli: Any, tmp_path):
    f = tmp_path / "late.jsonl"
    rows = [{"seq": 0, "session": "a", "turn": 0, "kind": "USER"},
            {"seq": 1, "session": "a", "turn": 0, "kind": "CALL", "call_id": "approve"},
            {"seq": 2, "session": "a", "turn": 0, "kind": "TERM"},
            {"seq": 3, "session": "a", "turn": 1, "kind": "USER"},
            {"seq": 4, "session": "a", "turn": 1, "kind": "TERM"},
            {"seq": 5, "session": "a", "turn": 2, "kind": "USER"},
            {"seq": 6, "session": "a", "turn": 2, "kind": "RESULT", "call_id": "approve"},
            {"seq": 7, "session": "a", "turn": 2, "kind": "TERM"}]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = cli("lint", str(f))
    assert code == 1 and "result-in-later-turn" in out
    assert "line 7: seq 6 session a turn 2 RESULT approve" in out
    rows[6]["turn"] = 0
    f.write_text("".join(json.dumps(r) + "\n" for r in sorted(rows, key=lambda r: (r["turn"], r["seq"]))))
    assert "result-in-later-turn" not in cli("lint", str(f))[1]


@pytest.mark.parametrize("keep", [2, 4, 6])
def test_a_keep_last_n_trimmer_fails_the_default_generated_workload(
    cli: Any, tmp_path: Path, keep: int
) -> None:
    """The commonest trimmer bug — keep the newest N messages — cuts a batch of parallel calls
    from its results; ``generate``'s default workload holds such batches, so replaying it shows
    the bug. The one-call-at-a-time workload (the default before) cannot: with an even N every
    cut falls between whole pairs, and the replay passes."""
    trim = f"messages:{ROOT / 'examples' / 'exec' / 'keep_last.py'}:fn"
    verdicts = {}
    for name, extra in (("default", []), ("sequential", ["--p-parallel", "0"])):
        log = tmp_path / f"{name}.jsonl"
        assert cli("generate", "-q", "-o", str(log), *extra)[0] == 0
        code, out, _ = cli("project", "-q", "-H", str(log), "-b", str(keep), "--strategy", trim,
                           "--per-request", "--fail-on", "orphanRes")  # fmt: skip
        verdicts[name] = (code, out.splitlines()[-1] if code else "")
    assert verdicts["default"][0] == 1 and "orphanRes" in verdicts["default"][1]
    assert verdicts["sequential"][0] == 0
