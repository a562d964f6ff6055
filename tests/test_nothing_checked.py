"""A log that gives a check nothing to judge is INCONCLUSIVE, exit 3, never green.

An empty file, a file of blank lines, or a session file read with the wrong ``--from`` (every
line skipped) linted "clean", exit 0, and ``project --per-request --fail-on`` printed "OK: no
request breaks …", exit 0: a CI gate pointed at a log that was never written passed. Each route
here has the refused input (nothing to check: exit 3, or exit 2 where the reader cannot read an
empty document) and the accepted one (a log with events: exit 0), so the verdict is not simply
"never 0".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ONE_TURN = (
    '{"seq": 0, "session": "s", "turn": 1, "kind": "USER", "chars": 12}\n'
    '{"seq": 1, "session": "s", "turn": 1, "kind": "TERM", "chars": 8}\n'
)


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    texts = {"empty": "", "blank": "\n  \n\n", "one-turn": ONE_TURN}
    for name, text in texts.items():
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return {name: tmp_path / f"{name}.jsonl" for name in texts}


@pytest.mark.parametrize("name", ["empty", "blank"])
def test_lint_of_a_log_with_no_event_is_inconclusive(cli, logs: dict[str, Path], name: str) -> None:
    done = cli("lint", str(logs[name]))
    assert done.code == 3, done
    assert "INCONCLUSIVE: nothing checked" in done.out and "clean" not in done.out
    as_json = cli("lint", "--format", "json", str(logs[name]))
    assert as_json.code == 3 and json.loads(as_json.out)["verdict"] == "nothing checked"


def test_lint_of_a_log_with_events_is_still_clean(cli, logs: dict[str, Path]) -> None:
    done = cli("lint", str(logs["one-turn"]))
    assert done.code == 0 and "clean: no structural problems" in done.out, done
    assert json.loads(cli("lint", "--format", "json", str(logs["one-turn"])).out)["verdict"] == "clean"


def test_a_wrong_reader_that_reads_nothing_does_not_pass(cli) -> None:
    """A pi session read --from claude-code: every line skipped, 0 events; exit 0 before."""
    pi = ROOT / "examples" / "formats" / "pi-session.jsonl"
    wrong = cli("lint", "--from", "claude-code", str(pi))
    assert wrong.code == 3 and "INCONCLUSIVE" in wrong.out, wrong
    assert cli("lint", "--from", "pi", str(pi)).code in (0, 1)


def test_an_empty_request_file_read_with_a_format_is_refused_in_one_line(cli, logs: dict[str, Path]) -> None:
    for source in ("openai-chat", "anthropic", "gemini"):
        done = cli("lint", "--from", source, str(logs["empty"]))
        assert done.code == 2 and done.err.count("\n") == 1, done
        assert "empty: no JSON document or line to read" in done.err and "malformed" not in done.err


def test_an_archive_is_inconclusive_only_when_no_file_held_an_event(cli, logs: dict[str, Path]) -> None:
    both_empty = cli("lint", str(logs["empty"]), str(logs["blank"]))
    assert both_empty.code == 3 and "2 with no event" in both_empty.out, both_empty
    mixed = cli("lint", str(logs["empty"]), str(logs["one-turn"]))
    assert mixed.code == 0 and "1 clean" in mixed.out and "1 with no event" in mixed.out, mixed


@pytest.mark.parametrize("per_request", [True, False], ids=["per-request", "whole-log"])
def test_the_fail_on_gate_on_an_empty_log_is_inconclusive(
    cli, logs: dict[str, Path], per_request: bool
) -> None:
    mode = ["--per-request"] if per_request else []
    argv = ["project", "-q", "-b", "100", "-s", "M5", *mode, "--fail-on", "orphanRes"]
    empty = cli(*argv, "-H", str(logs["empty"]))
    assert empty.code == 3 and "INCONCLUSIVE: nothing checked for --fail-on orphanRes" in empty.out, empty
    assert "OK:" not in empty.out
    full = cli(*argv, "-H", str(logs["one-turn"]))
    assert full.code == 0, full
    as_json = cli(*argv, "--format", "json", "-H", str(logs["empty"]))
    assert as_json.code == 3 and "inconclusive" in json.loads(as_json.out.splitlines()[-1])


def test_without_a_gate_an_empty_log_is_only_a_table(cli, logs: dict[str, Path]) -> None:
    done = cli("project", "-q", "-b", "100", "-s", "M5", "--per-request", "-H", str(logs["empty"]))
    assert done.code == 0 and "INCONCLUSIVE" not in done.out and "0 requests in 0 sessions" in done.out
