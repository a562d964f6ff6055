"""Every object a command prints with ``--format json`` names its format (``cli/stdout_json.py``):
``turncheck/1``, or the document's own format (a scenario result); result files carry no such key.
``list`` is checked in tests/test_registry.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.project import example_history
from turncheck.cli.stdout_json import STDOUT_FORMAT


def objects(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()] if not out.startswith("{\n") else [json.loads(out)]


def test_every_json_object_on_stdout_carries_the_format_key(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    history = str(example_history())
    runs = [
        ("project", "--example", "-q"),
        ("project", "--example", "-q", "-b", "60", "--per-request", "--fail-on", "orphanCall"),
        ("lint", history),
        ("check", "projector", "-q", "--engine", "explore"),
        ("explore", "projector", "-q"),
    ]
    for argv in runs:
        done = cli(*argv, "--format", "json")
        printed = objects(done.out)
        assert printed and all(next(iter(o)) == "format" and o["format"] == STDOUT_FORMAT for o in printed), (
            argv
        )
    trace = json.loads(cli("check", "projector", "-q", "--engine", "explore", "--format", "json").out)
    replayed = cli("replay", trace["counterexample"]["trace"], "--format", "json")
    assert json.loads(replayed.out)["format"] == STDOUT_FORMAT


def test_a_scenario_result_keeps_its_own_format_and_its_file_is_unchanged(cli: Any, tmp_path: Path) -> None:
    done = cli("scenario", "clock-skew", "--scale", "tiny", "-q", "--format", "json", "-o", str(tmp_path))
    assert json.loads(done.out)["format"] == "turncheck-result/1"
    assert (tmp_path / "clock-skew.json").read_text(encoding="utf-8") == done.out
