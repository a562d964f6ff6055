"""A programmatic tool call's ``caller`` (issue 50; vercel/ai#12504): a ``tool_use`` made by code
execution's code names its ``server_tool_use`` in ``caller.tool_id``, and the API refuses a request
holding the call without that server tool use ("source tool ... not found for tool use block ...").
The Anthropic and Vercel importers keep the tie; ``caller-not-sent`` flags a log or window that
pruned the source and kept the call, and accepts the whole conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.importers import import_events
from turncheck.models.provider_rules import PROVIDERS, events_of, provider_findings

SOURCE, CALL = "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK", "toolu_019jKkXz4jAdwHweHBw92CVY"  # the issue's ids
CALLER = {"type": "code_execution_20250825", "tool_id": SOURCE}


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["lint", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def conversation(pruned: bool, caller: dict[str, Any] = CALLER) -> list[dict[str, Any]]:
    """Programmatic tool calling as Anthropic's docs show it: the code execution's
    ``server_tool_use``, the ``tool_use`` its code made (``caller``), our ``tool_result``, the code's
    result; ``pruned`` drops the source (and its result) and keeps the call, as in the issue."""
    source = {"type": "server_tool_use", "id": SOURCE, "name": "code_execution",
              "input": {"code": "price = await lookup({'ticker': 'AAPL'})"}}  # fmt: skip
    call = {"type": "tool_use", "id": CALL, "name": "lookup", "input": {"ticker": "AAPL"}, "caller": caller}
    done = {"type": "code_execution_tool_result", "tool_use_id": SOURCE,
            "content": {"type": "code_execution_result", "stdout": "", "stderr": "", "return_code": 0}}  # fmt: skip
    return [
        {"role": "user", "content": "Use code execution to look up AAPL and calculate 100 shares."},
        {"role": "assistant", "content": [call] if pruned else [source, call]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CALL, "content": "185.42"}]},
        {"role": "assistant", "content": [*([] if pruned else [done]), {"type": "text", "text": "$18,542."}]},
        {"role": "user", "content": "Now do the same for MSFT."},
    ]


def test_the_anthropic_importer_keeps_the_caller_and_the_whole_conversation_is_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path, "whole.json", conversation(pruned=False))
    events = import_events("anthropic", src)
    assert [(e.kind.name, e.call_id, e.caller) for e in events if e.kind.name == "CALL"] == [
        ("CALL", SOURCE, None), ("CALL", CALL, SOURCE)
    ]  # fmt: skip
    assert provider_findings("anthropic", events) == []
    code, report = lint(capsys, "--from", "anthropic", str(src))
    assert code == 0 and report["clean"]


def test_a_pruned_source_is_refused_where_the_call_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path, "pruned.json", conversation(pruned=True))
    events = import_events("anthropic", src)
    assert provider_findings("anthropic", events) == [("caller-not-sent", 1)]
    code, report = lint(capsys, "--from", "anthropic", str(src))
    assert code == 1 and {k: n for k, n in report["counts"].items() if n} == {"caller-not-sent": 1}
    assert main(["import", "--from", "anthropic", str(src), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert "1 caller-not-sent" in capsys.readouterr().err


def test_a_direct_caller_names_no_source(tmp_path: Path) -> None:
    src = write(tmp_path, "direct.json", conversation(pruned=True, caller={"type": "direct"}))
    events = import_events("anthropic", src)
    assert all(e.caller is None for e in events) and provider_findings("anthropic", events) == []


def test_only_anthropic_asks_for_the_source() -> None:
    refused = events_of("U Cb@a Rb T U")
    assert {p: provider_findings(p, refused) for p in PROVIDERS if provider_findings(p, refused)} == {
        "anthropic": [("caller-not-sent", 1)]
    }
    assert provider_findings("anthropic", events_of("U Ca Cb@a Rb Ra T U")) == []


def test_the_vercel_importer_reads_the_issues_pruned_model_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vercel/ai#12504's reproduction after ``pruneMessages``: the dependent ``tool-call`` kept with
    ``providerOptions.anthropic.caller.toolId``, the provider-executed code execution call gone."""
    options = {"anthropic": {"caller": {"type": "code_execution_20250825", "toolId": SOURCE}}}
    source = {"type": "tool-call", "toolCallId": SOURCE, "toolName": "code_execution",
              "input": {"code": "price = await lookup({'ticker': 'AAPL'})"}, "providerExecuted": True}  # fmt: skip
    source_result = {"type": "tool-result", "toolCallId": SOURCE, "toolName": "code_execution",
                     "output": {"type": "json", "value": {"return_code": 0}}}  # fmt: skip
    call = {"type": "tool-call", "toolCallId": CALL, "toolName": "lookup", "input": {"ticker": "AAPL"},
            "providerOptions": options}  # fmt: skip
    result = {"type": "tool-result", "toolCallId": CALL, "toolName": "lookup",
              "output": {"type": "json", "value": {"ticker": "AAPL", "price": 185.42}}}  # fmt: skip

    def messages(pruned: bool) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": [{"type": "text", "text": "Look up AAPL."}]},
            *([] if pruned else [{"role": "assistant", "content": [source, source_result]}]),
            {"role": "assistant", "content": [call]},
            {"role": "tool", "content": [result]},
            {"role": "assistant", "content": [{"type": "text", "text": "The price is $185.42."}]},
            {"role": "user", "content": [{"type": "text", "text": "Now do the same for MSFT."}]},
        ]

    pruned = write(tmp_path, "pruned.json", messages(pruned=True))
    assert [e.caller for e in import_events("vercel", pruned) if e.kind.name == "CALL"] == [SOURCE]
    code, report = lint(capsys, "--from", "vercel", "--provider", "anthropic", str(pruned))
    assert code == 1 and {k: n for k, n in report["counts"].items() if n} == {"caller-not-sent": 1}
    whole = write(tmp_path, "whole.json", messages(pruned=False))
    code, report = lint(capsys, "--from", "vercel", "--provider", "anthropic", str(whole))
    assert code == 0 and report["clean"]
