"""Rendering of scenario results as data: JSON, CSV and Markdown in the seeds' table shapes.

Rendering only; nothing here runs an experiment. Output is byte-stable: keys sorted where the
order carries no meaning, floats written with ``repr`` (shortest round-trip), rows in the
order the scenario produced them.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turncheck.models.display import cell_text as cell_text
from turncheck.models.output_files import write_outputs

if TYPE_CHECKING:
    from turncheck.scenarios.base import Cell, ScenarioResult, Table

log = logging.getLogger(__name__)

RESULT_FORMAT = "turncheck-result/1"


def _markdown_cell(value: Cell) -> str:
    return cell_text(value).replace("|", "\\|").replace("\n", " ")


def markdown_rows(
    columns: Sequence[str], rows: Iterable[Sequence[Cell]], right: Sequence[bool] | None = None
) -> list[str]:
    """A Markdown table's lines: the head, the rule (``---:`` where ``right`` says a column is
    numeric), one line per row with every cell as :func:`cell_text` writes it, ``|`` escaped.
    The one writer of Markdown tables (result files, generated doc blocks)."""
    align = right if right is not None else [False] * len(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---:" if r else "---" for r in align) + "|"]
    lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in rows]
    return lines


def table_markdown(table: Table) -> str:
    parts = [f"### {table.title}", "", *markdown_rows(table.columns, table.rows)]
    if table.reading:
        parts += ["", table.reading]
    return "\n".join(parts) + "\n"


def table_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow(["" if c is None else c for c in row])
    return buf.getvalue()


def result_markdown(result: ScenarioResult) -> str:
    lines = [f"## Scenario `{result.scenario}`", "", f"seed {result.seed}; parameters: "]
    lines[-1] += ", ".join(f"{k}={v}" for k, v in sorted(result.params.items()))
    lines.append("")
    for t in result.tables:
        lines.append(table_markdown(t))
    if result.judgements:
        lines.append("```")
        lines.extend(j.line() for j in result.judgements)
        lines.append("```")
        lines.append("")
    return "\n".join(lines)


def result_to_json(result: ScenarioResult) -> dict[str, Any]:
    return {
        "format": RESULT_FORMAT,
        "scenario": result.scenario,
        "seed": result.seed,
        "params": dict(sorted(result.params.items())),
        "tables": [
            {
                "name": t.name,
                "title": t.title,
                "columns": list(t.columns),
                "rows": [list(r) for r in t.rows],
                "reading": t.reading,
            }
            for t in result.tables
        ],
        "judgements": [{"name": j.name, "passed": j.passed, "detail": j.detail} for j in result.judgements],
    }


def result_from_json(data: Mapping[str, Any]) -> ScenarioResult:
    """A result object as :func:`write_result` writes it (its format checked by the caller,
    :func:`~turncheck.reports.results_dir.result_from_object`)."""
    # here, not at the top: a command that prints a markdown table (project) imports no scenario code
    from turncheck.scenarios.base import Judgement, ScenarioResult, Table

    tables = tuple(
        Table(
            name=t["name"],
            title=t["title"],
            columns=tuple(t["columns"]),
            rows=tuple(tuple(r) for r in t["rows"]),
            reading=t.get("reading", ""),
        )
        for t in data["tables"]
    )
    judgements = tuple(
        Judgement(j["name"], bool(j["passed"]), j["detail"]) for j in data.get("judgements", [])
    )
    return ScenarioResult(data["scenario"], data["params"], int(data["seed"]), tables, judgements)


def dumps_result(result: ScenarioResult) -> str:
    return json.dumps(result_to_json(result), ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def write_result(
    result: ScenarioResult, out_dir: str | Path, beside: Mapping[str, str] | None = None
) -> list[Path]:
    """Write ``NAME.json``, ``NAME.md``, one ``NAME.TABLE.csv`` per table, the result's
    attachments (:class:`ScenarioResult`) and the files ``beside`` (name -> text, a sweep's
    JSONL); returns the paths.

    Everything is rendered before the first byte is written, and the set is written whole or
    not at all, never through a symlinked member (:func:`models.output_files.write_outputs`).
    """
    out = Path(out_dir)
    files: dict[Path, str] = {
        out / f"{result.scenario}.json": dumps_result(result),
        out / f"{result.scenario}.md": result_markdown(result),
    }
    for t in result.tables:
        files[out / f"{result.scenario}.{t.name}.csv"] = table_csv(t)
    for name, attached in result.attachments.items():  # measured files, traces: beside the result
        files[out / name] = attached if isinstance(attached, str) else dumps_result(attached)
    files.update({out / name: text for name, text in (beside or {}).items()})
    write_outputs(files, folder=out)
    for path in files:
        log.info("wrote %s", path)
    return list(files)
