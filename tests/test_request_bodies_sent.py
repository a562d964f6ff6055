"""A JSONL of request bodies is a list of requests the client sent: each is judged where it ends.

``lint --from FORMAT bodies.jsonl`` reads the bodies as one growing log, whose last body is its
turn in progress. A body in the middle that went out ending on tool calls (a client that sent the
model's calls back before their results) was refused by the API — Chat Completions: "An
assistant message with 'tool_calls' must be followed by tool messages responding to each
'tool_call_id'"; Responses: "No tool output found for function call" (openai/openai-agents-python
#2317) — yet a later body that answers the calls made the log look whole, and ``lint`` said clean.
The same file with the middle body holding the results is clean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main

CHAT_USER = {"role": "user", "content": "weather in Oslo?"}
CHAT_CALL = {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}  # fmt: skip
CHAT_RESULT = {"role": "tool", "tool_call_id": "c1", "content": "rain"}
CHAT_END = [{"role": "assistant", "content": "rain"}, {"role": "user", "content": "thanks"}]

RESP_USER = {"role": "user", "content": "weather in Oslo?"}
RESP_CALL = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
RESP_RESULT = {"type": "function_call_output", "call_id": "c1", "output": "rain"}
RESP_END = [{"role": "assistant", "content": [{"type": "output_text", "text": "rain"}]}, {"role": "user", "content": "thanks"}]  # fmt: skip

ANT_USER = {"role": "user", "content": "weather in Oslo?"}
ANT_CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "weather", "input": {}}]}
ANT_RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "rain"}]}
ANT_END = [{"role": "assistant", "content": [{"type": "text", "text": "rain"}]}, {"role": "user", "content": "thanks"}]

CASES = {  # format: (list key, user, call, result, end, the rule a body ending on the call breaks)
    "openai-chat": ("messages", CHAT_USER, CHAT_CALL, CHAT_RESULT, CHAT_END, "call-not-answered-next"),
    "openai-responses": ("input", RESP_USER, RESP_CALL, RESP_RESULT, RESP_END, "output-missing"),
    "anthropic": ("messages", ANT_USER, ANT_CALL, ANT_RESULT, ANT_END, "call-not-answered-next"),
}


def bodies(path: Path, key: str, *requests: list[Any]) -> Path:
    path.write_text("".join(json.dumps({"model": "m", key: r}) + "\n" for r in requests), encoding="utf-8")
    return path


def lint(path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["lint", "--from", fmt, str(path)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_middle_body_ending_on_calls_is_refused_though_a_later_body_answers_them(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, user, call, result, end, rule = CASES[fmt]
    path = bodies(tmp_path / "bad.jsonl", key, [user], [user, call], [user, call, result, *end])
    code, out = lint(path, fmt, capsys)
    assert code == 1 and f"{rule}:" in out and f"{path}:2: record 2:" in out and "CALL c1" in out, out


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_the_same_bodies_with_the_results_sent_are_clean(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, user, call, result, end, _ = CASES[fmt]
    path = bodies(tmp_path / "good.jsonl", key, [user], [user, call, result], [user, call, result, *end])
    code, out = lint(path, fmt, capsys)
    assert code == 0 and "clean" in out, out


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_last_body_ending_on_calls_is_refused_too(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last body is a request as sent, as every other: ending on calls, it went out without
    their results. (A stored history ending on a call — a call still running — is no request.)"""
    key, user, call, _, _, rule = CASES[fmt]
    path = bodies(tmp_path / "last.jsonl", key, [user], [user, call])
    code, out = lint(path, fmt, capsys)
    assert code == 1 and f"{rule}:" in out, out
