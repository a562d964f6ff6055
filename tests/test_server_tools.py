"""Anthropic server tools with their use and their calls (issue 50 item 1).

A ``server_tool_use`` (web search) is answered inside the same assistant message by its
``*_tool_result``; a code execution ``server_tool_use`` whose code calls the agent's tools
(programmatic tool calling) stays open while its calls are answered: each ``tool_use`` names it
as ``caller.tool_id``, the agent answers with ``tool_result`` blocks, and the execution's own
result comes in a later assistant message of the turn. The API refuses a call sent without its
source (vercel/ai#12504, "source tool … not found", ``caller-not-sent``) but accepts the source
still running. Before this test a request in the middle of such a turn was refused by our rules
(``call-not-answered-next`` and ``results-not-first`` on the running source, ``result-not-next`` on
its result two messages later): a false alarm on the shape the programmatic tool calling docs
show. Each route that carries a caller is checked: Anthropic bodies, and Vercel AI SDK messages
(``providerOptions.anthropic.caller``) under ``--provider anthropic``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main

ASK = {"role": "user", "content": "sum the sales"}
SOURCE = {"type": "server_tool_use", "id": "srvtoolu_c", "name": "code_execution", "input": {"code": "..."}}
DONE = {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_c",
        "content": {"type": "code_execution_result", "stdout": "42", "stderr": "", "return_code": 0, "content": []}}  # fmt: skip
SEARCH = {"type": "server_tool_use", "id": "srvtoolu_s", "name": "web_search", "input": {"query": "sales"}}
FOUND = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_s", "content": []}


def made(cid: str) -> dict[str, Any]:
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_c"}
    return {"type": "tool_use", "id": cid, "name": "sales", "input": {}, "caller": caller}


def answered(*cids: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c, "content": "7"} for c in cids]}


def said(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


CLEAN = {
    "in the middle of the code's first call": [ASK, said(text("run"), SOURCE, made("p1")), answered("p1")],
    "two calls of the code in one message": [ASK, said(SOURCE, made("p1"), made("p2")), answered("p1", "p2")],
    "a second round of the code": [ASK, said(SOURCE, made("p1")), answered("p1"), said(made("p2")), answered("p2")],
    "the code done": [ASK, said(SOURCE, made("p1")), answered("p1"), said(made("p2")), answered("p2"), said(DONE, text("42")), ASK],
    "a web search answered in its message": [ASK, said(SEARCH, FOUND, text("found")), ASK],
}  # fmt: skip
REFUSED = {
    "the source pruned": ([ASK, said(made("p1")), answered("p1")], "caller-not-sent"),
    "the source pruned, second round kept": ([ASK, said(text("x")), ASK, said(made("p2")), answered("p2")], "caller-not-sent"),
    "a call of the code not answered": ([ASK, said(SOURCE, made("p1"), made("p2")), answered("p1"), said(text("?"))], "call-not-answered-next"),
    "text before the code's call's result": ([ASK, said(SOURCE, made("p1")), {"role": "user", "content": [text("wait"), *answered("p1")["content"]]}], "results-not-first"),
    "a web search result without its use": ([ASK, said(FOUND, text("found")), ASK], "result-not-next"),
}  # fmt: skip


def lint(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["lint", *args, str(path)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("name", list(CLEAN))
def test_a_source_still_running_or_a_server_tool_answered_in_its_message_is_accepted(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(CLEAN[name]), encoding="utf-8")
    code, out = lint(path, capsys, "--from", "anthropic")
    assert "refuses it)" not in out, out  # no provider rule broken (a log ending mid-turn: dangling-call)
    assert "nothing anthropic refuses" in out or "dangling-call" in out, out
    replay = ["project", "--from", "anthropic", "-H", str(path), "--per-request", "-s", "M0", "-b", "100000"]
    assert main([*replay, "--fail-on", "anthropic", "-q"]) == 0


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_pruned_source_or_a_broken_pair_around_server_tools_is_refused(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages, rule = REFUSED[name]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    code, out = lint(path, capsys, "--from", "anthropic")
    assert code == 1 and f"{rule}: " in out, out


def vercel(messages: list[Any]) -> list[Any]:
    """The same turn as the AI SDK's ModelMessage[]: the code execution a provider-executed
    tool-call, its calls tool-calls naming it in providerOptions.anthropic.caller."""
    out: list[Any] = []
    for m in messages:
        parts: list[Any] = []
        content = m["content"] if isinstance(m["content"], list) else [text(m["content"])]
        for block in content:
            kind = block["type"]
            if kind == "text":
                parts.append(block)
            elif kind == "server_tool_use":
                parts.append({"type": "tool-call", "toolCallId": block["id"], "toolName": block["name"], "input": {}, "providerExecuted": True})  # fmt: skip
            elif kind == "tool_use":
                options = {"anthropic": {"caller": {"type": "code_execution_20250825", "toolId": "srvtoolu_c"}}}
                parts.append({"type": "tool-call", "toolCallId": block["id"], "toolName": "sales", "input": {}, "providerOptions": options})  # fmt: skip
            else:  # a result: the tool's in a tool message, the server tool's in the assistant's
                parts.append({"type": "tool-result", "toolCallId": block["tool_use_id"], "toolName": "t",
                              "output": {"type": "text", "value": "7"}})  # fmt: skip
        role = "tool" if parts and all(p["type"] == "tool-result" for p in parts) and m["role"] == "user" else m["role"]
        out.append({"role": role, "content": parts})
    return out


@pytest.mark.parametrize(
    ("name", "refused"),
    [("a second round of the code", None), ("the code done", None), ("the source pruned", "caller-not-sent")],
)
def test_a_vercel_log_of_programmatic_calls_is_judged_as_the_anthropic_one(
    name: str, refused: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = CLEAN[name] if refused is None else REFUSED[name][0]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(vercel(messages)), encoding="utf-8")
    code, out = lint(path, capsys, "--from", "vercel", "--provider", "anthropic")
    if refused is None:
        assert "refuses it)" not in out, out
    else:
        assert code == 1 and f"{refused}: " in out, out
