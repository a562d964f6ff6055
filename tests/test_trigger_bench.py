"""The trigger and check benchmarks follow the ``run(scale) -> list[str]`` convention.

``turncheck bench TOPIC`` prints the lines; ``run`` itself returns them and prints nothing.
Figures are never asserted (a loaded machine gives slower figures, not a failing test) — only
that the lines name what the issues ask for.
"""

from __future__ import annotations

import pytest

from benchmarks import check as bench_check
from benchmarks import trigger as bench_trigger


def test_trigger_benchmark_returns_its_lines_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    lines = bench_trigger.run("quick")
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    text = "\n".join(lines)
    assert "trigger-gap: 8 rows" in text
    assert text.count("events/s") == 2 and "per CPU second" in text and "load average" in text


def test_check_benchmark_returns_its_lines_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    lines = bench_check.run("quick")
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    text = "\n".join(lines)
    assert "65,053 distinct states" in text and "exhaustive" in text
    assert "distinct states/s" in text and "per CPU second" in text and "model floor" in text
    assert "closed form M + 2·A·G − 1 = 14" in text
    assert "hypothesis, unlocked trigger gap=1" in text
