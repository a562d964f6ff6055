"""``project --per-request --fail-on PROVIDER`` names the API's rules a window breaks (issue 50).

The FAIL line said only ``gemini`` (or ``anthropic``…): which of the API's rules the request
breaks, and at which event, was left to a second command. Each provider check now names its rules
there, each with the event it names, and ``--format json`` lists them under ``rules``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turncheck.cli.app import main

TRIM = '''
def keep_last_4(messages, budget):
    return messages[-4:]
'''


def gemini_log() -> list[dict[str, object]]:
    def call(name: str) -> dict[str, object]:
        return {"functionCall": {"name": name, "args": {}}}

    def response(name: str) -> dict[str, object]:
        return {"functionResponse": {"name": name, "response": {"r": 1}}}

    ask = {"role": "user", "parts": [{"text": "q"}]}
    return [ask, {"role": "model", "parts": [call("f"), call("g")]}, {"role": "user", "parts": [response("f"), response("g")]},
            {"role": "model", "parts": [{"text": "x"}]}, ask]  # fmt: skip


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_failing_window_names_the_rules_it_breaks(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "trim.py").write_text(TRIM, encoding="utf-8")
    log = tmp_path / "contents.json"
    log.write_text(json.dumps(gemini_log()), encoding="utf-8")
    capsys.readouterr()
    code = main(["project", "--from", "gemini", "-H", str(log), "--per-request", "-b", "100000", "-q",
                 "-s", f"messages:{tmp_path / 'trim.py'}:keep_last_4", "--fail-on", "gemini,orphanRes", "--format", fmt])  # fmt: skip
    out = capsys.readouterr().out.splitlines()[-1]
    assert code == 1
    if fmt == "json":
        fail = json.loads(out)["fail"]
        assert fail["checks"] == ["gemini", "orphanRes"]
        assert fail["rules"] == {"gemini": ["response-count-mismatch at RESULT#3(f@1)"]}
    else:
        assert out.startswith("FAIL: session contents, request 2 (after 7 events): "
                              "gemini (response-count-mismatch at RESULT#3(f@1)), orphanRes; "), out  # fmt: skip


def test_the_pytest_fixtures_counterexample_names_the_rules_too(tmp_path: Path) -> None:
    """``turncheck.testing.check_projector`` (what the pytest fixture runs) says the same."""
    from hypothesis import settings

    from turncheck.testing import check_projector

    (tmp_path / "trim.py").write_text(TRIM, encoding="utf-8")
    with pytest.raises(AssertionError) as failed:
        check_projector(f"messages:{tmp_path / 'trim.py'}:keep_last_4", checks=("anthropic",),
                        settings=settings(max_examples=200, deadline=None, derandomize=True, database=None))  # fmt: skip
    first = str(failed.value).splitlines()[0]
    assert "breaks anthropic (" in first and " at " in first, first
