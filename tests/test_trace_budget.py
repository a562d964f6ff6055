"""``lint --from TRACE --budget B``: each request a trace recorded is counted in its own model's
tokens (its BPE encoding when tiktoken maps the model, else the estimate) against the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.cost import content_of, make_cost
from turncheck.models.importers import import_log
from turncheck.models.sent_windows import request_cost

RUNS = Path(__file__).parent.parent / "examples" / "traces" / "langsmith-runs.jsonl"


def with_model(tmp_path: Path, model: str) -> Path:
    """The committed LangSmith export (made by the real tracer) with its model renamed, and without
    the usage its replies reported: these tests are about the messages' own count (the provider's
    is tests/test_request_costs.py's)."""
    out = tmp_path / f"runs-{model}.jsonl"
    lines = []
    for line in RUNS.read_text().splitlines():
        run = json.loads(line)
        if run.get("run_type") == "llm":
            run["extra"]["metadata"]["ls_model_name"] = model
            run["outputs"].pop("usage_metadata", None)
            run["extra"]["metadata"].pop("usage_metadata", None)  # the tracer keeps it there too
        lines.append(json.dumps(run))
    out.write_text("\n".join(lines) + "\n")
    return out


def lint(path: Path, budget: int, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    code = main(["lint", "--from", "langsmith", str(path), "--budget", str(budget), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_known_model_is_counted_in_its_own_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tiktoken")
    path = with_model(tmp_path, "gpt-4o")
    sent = import_log("langsmith", path).sent
    assert request_cost("gpt-4o").name == "bpe:o200k_base"
    bpe = make_cost("bpe:o200k_base")
    spent = [sum(bpe.tokens(content_of(e)) for e in s.window.events) for s in sent]  # type: ignore[attr-defined]
    assert spent == sorted(spent) and spent[0] < spent[-1]  # each request holds the one before
    code, report = lint(path, spent[-1] - 1, capsys)  # only the last request is over
    assert code == 1 and report["counts"]["over-budget"] == 1
    (line,) = report["examples"]["over-budget"]
    assert line.endswith(f": {spent[-1]} tokens (bpe:o200k_base, gpt-4o) > budget {spent[-1] - 1}")
    assert lint(path, spent[-1], capsys)[0] == 0


def test_an_unknown_model_is_estimated_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = lint(with_model(tmp_path, "house-model-7"), 1, capsys)
    assert code == 1 and report["counts"]["over-budget"] == len(import_log("langsmith", RUNS).sent)
    assert all("tokens (estimate, house-model-7) > budget 1" in x for x in report["examples"]["over-budget"])


def test_a_budget_needs_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "h.jsonl"
    assert main(["import", "--from", "langsmith", str(RUNS), "-o", str(log)]) == 0
    capsys.readouterr()
    assert main(["lint", str(log), "--budget", "10"]) == 2
    assert "--budget checks the requests of a trace" in capsys.readouterr().err
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert main(["lint", "--from", "openai-chat", str(chat), "--budget", "10"]) == 2
    assert "holds none" in capsys.readouterr().err
    assert main(["lint", "--from", "langsmith", str(RUNS), "--budget", "0"]) == 2
