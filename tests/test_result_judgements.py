"""Every committed result file's judgements are recomputed from its rows (issue 31).

A result file is evidence: a row hand-edited to a peak above its worst case must turn its PASS
line into a FAIL, not sit under it. Each scenario whose results are committed names the function
that judges its rows here; a committed result of a scenario not named fails the test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turncheck.reports.results_dir import load_result
from turncheck.reports.tables import dumps_result
from turncheck.scenarios.base import Judgement
from turncheck.scenarios.real_locking import judge as judge_real_locking

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"


def _real_locking(rows: list[dict[str, Any]], judgements: tuple[Judgement, ...]) -> tuple[Judgement, ...]:
    skipped = [j.detail for j in judgements if j.name == "store skipped"]  # the run's machine, not its rows
    return judge_real_locking(rows, skipped)


JUDGES: dict[str, Callable[[list[dict[str, Any]], tuple[Judgement, ...]], tuple[Judgement, ...]]] = {
    "real-locking": _real_locking,
}


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_committed_judgements_are_those_of_the_rows(path: Path) -> None:
    result = load_result(path)
    assert result.scenario in JUDGES, f"{path.name}: no judge registered for {result.scenario!r}"
    recomputed = JUDGES[result.scenario](result.tables[0].records(), result.judgements)
    assert recomputed == result.judgements, f"{path.name}: judgements differ from its rows' (regenerate it)"
    assert dumps_result(result) == path.read_text(encoding="utf-8")


def test_a_forged_peak_turns_the_committed_pass_into_a_fail(tmp_path: Path) -> None:
    obj = json.loads((RESULTS / "real-locking-full.json").read_text(encoding="utf-8"))
    table = obj["tables"][0]
    col = {c: i for i, c in enumerate(table["columns"])}
    row = next(r for r in table["rows"] if r[col["locking"]] == "mutex")
    row[col["measured_peak"]] = 300  # only the figure: the derived columns left as they were
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(obj), encoding="utf-8")
    result = load_result(forged)
    recomputed = _real_locking(result.tables[0].records(), result.judgements)
    failed = [j.name for j in recomputed if not j.passed]
    assert len(failed) == 2 and recomputed != result.judgements
