"""``--from vercel`` on messages the real AI SDK builds: bridges/node/formats/vercel-messages.mjs
runs ``generateText`` (the ``ai`` package at its package-lock.json pin) against the SDK's own
mock model, two turns with a reasoning part and a parallel call, and prints the ModelMessage[].
Skipped, with the reason, without Node or the built bridge. Its bad shapes are in
tests/test_import_bad_shapes.py with every format's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.integrations.peers.bridge import NODE
from turncheck.models.events import read_jsonl
from turncheck.models.importers import import_events
from turncheck.models.provider_rules import provider_findings

PARALLEL_LOG = ["USER", "CALL", "CALL", "RESULT", "RESULT", "TERM", "USER", "CALL", "RESULT", "TERM"]


@pytest.fixture(scope="module")
def conversation() -> dict[str, Any]:
    if (reason := NODE.missing()) is not None:
        pytest.skip(reason)
    made = subprocess.run(
        ["node", "formats/vercel-messages.mjs"], cwd=NODE.folder(), capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    value: dict[str, Any] = json.loads(made.stdout)
    return value


def test_the_sdk_wrote_a_reasoning_part_and_a_parallel_call(conversation: dict[str, Any]) -> None:
    parts = conversation["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["reasoning", "tool-call", "tool-call"]
    assert set(parts[1]) >= {"toolCallId", "toolName", "input"}
    assert set(conversation["messages"][2]["content"][0]) >= {"toolCallId", "toolName", "output"}


def test_import_round_trips_the_conversation(
    conversation: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(conversation))
    out = tmp_path / "chat.jsonl"
    assert main(["import", "--from", "vercel", str(src), "-o", str(out)]) == 0
    events = read_jsonl(out)
    assert [e.kind.name for e in events] == PARALLEL_LOG
    assert [e.call_id for e in events if e.call_id] == "call_1 call_2 call_1 call_2 call_3 call_3".split()
    assert [e.turn for e in events] == [0] * 6 + [1] * 4
    assert (events[1].text, events[3].text) == ('{"city":"Paris"}', '{"celsius":21,"city":"Paris"}')
    assert events[5].text == "Paris 21°C, Oslo 9°C."
    assert main(["lint", "--from", "vercel", str(src)]) == 0
    assert "clean: no structural problems" in capsys.readouterr().out
    as_list = tmp_path / "list.json"
    as_list.write_text(json.dumps([{"role": "system", "content": "be brief"}, *conversation["messages"]]))
    requests = tmp_path / "requests.jsonl"  # every request the app sent: the whole conversation so far
    msgs = conversation["messages"]
    requests.write_text("".join(json.dumps({"messages": msgs[:n]}) + "\n" for n in (1, 3, 5, 7)))
    assert [e.kind.name for e in import_events("vercel", as_list)] == PARALLEL_LOG
    assert [e.kind.name for e in import_events("vercel", requests)] == PARALLEL_LOG[:-1]


def test_the_calls_after_a_reasoning_part_are_tied_for_the_responses_rules(
    conversation: dict[str, Any], tmp_path: Path
) -> None:
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(conversation))
    events = import_events("vercel", src)
    assert [e.tied_to for e in events if e.kind.name == "CALL"] == [None, "call_1", None]
    assert provider_findings("openai-responses", events) == []
    assert provider_findings("openai-responses", events[2:]) == [
        ("reasoning-not-sent", 0),
        ("orphan-output", 1),
    ]


def test_lint_names_an_orphaned_result(
    conversation: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stored window that starts on the tool message of a call it no longer holds."""
    src = tmp_path / "window.json"
    src.write_text(json.dumps(conversation["messages"][6:]))
    out = tmp_path / "window.jsonl"
    assert main(["lint", "--from", "vercel", str(src)]) == 1
    assert (
        f"{src}: session 'window': record 1: seq 0 session window turn 0 RESULT call_3"
        in capsys.readouterr().out
    )
    assert main(["import", "--from", "vercel", str(src), "-o", str(out)]) == 0
    assert [e.kind.name for e in read_jsonl(out)] == ["RESULT", "TERM"]


def test_a_provider_executed_tool_answers_in_the_assistant_message(tmp_path: Path) -> None:
    src = tmp_path / "server.json"
    src.write_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "search"}, {"type": "image", "image": "AA=="}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "ws_1", "toolName": "web_search", "input": {}, "providerExecuted": True},
            {"type": "tool-result", "toolCallId": "ws_1", "toolName": "web_search",
             "output": {"type": "text", "value": "found"}},
            {"type": "text", "text": "here"}]},
    ]))  # fmt: skip
    events = import_events("vercel", src)
    assert [(e.kind.name, e.text) for e in events] == [  # the image is sent: opaque content, costed
        ("USER", 'search{"image":"AA==","type":"image"}'), ("CALL", "{}"), ("RESULT", "found"), ("TERM", "here")
    ]  # fmt: skip
