"""``lint`` and ``project`` without ``--from`` on a file another format reads: the one-line
refusal (exit 2) names the ``--from`` to give; our own log refused for a later line, and a JSON
document no format reads, keep their plain refusal (issue 55)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
CHAT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "21C"},
    {"role": "assistant", "content": "21C"},
]
ANTHROPIC = {
    "model": "claude",
    "max_tokens": 64,
    "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "21C"}]},
    ],
}
GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {}}}]},
    ]
}
RESPONSES = [
    {"role": "user", "content": "weather?"},
    {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "21C"},
]


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2)


def request_lines(messages: list[dict[str, Any]]) -> str:
    """JSONL of request bodies, each the whole conversation so far."""
    return "".join(json.dumps({"model": "m", "messages": messages[:n]}) + "\n" for n in (2, 4, 5))


DOCUMENTS = {
    "messages-pretty": ("a.json", pretty(CHAT), "openai-chat"),
    "messages-one-line": ("a.json", json.dumps(CHAT), "openai-chat"),
    "request-body": ("body.json", json.dumps({"model": "m", "messages": CHAT}), "openai-chat"),
    "request-bodies-jsonl": ("requests.jsonl", request_lines(CHAT), "openai-chat"),
    "anthropic": ("a.json", pretty(ANTHROPIC), "anthropic"),
    "gemini": ("g.json", json.dumps(GEMINI), "gemini"),
    # a conversation's first Gemini request body: Chat Completions' reader took {"role": "user",
    # "parts": …} for a message with no content and came first
    "gemini-first-body": ("g.jsonl", json.dumps({"contents": GEMINI["contents"][:1]}) + "\n", "gemini"),
    "responses-items": ("r.json", json.dumps(RESPONSES), "openai-responses"),
    "otel-spans": (None, "examples/your-agent/trace.jsonl", "otel"),
    "langfuse": (None, "examples/traces/langfuse-session.json", "langfuse"),
    "langsmith": (None, "examples/traces/langsmith-runs.jsonl", "langsmith"),
    # the session files of examples/formats: a pi session also has Claude Code's "cwd" (Claude
    # Code's reader finds no event in it, and was suggested first)
    "pi": (None, "examples/formats/pi-session.jsonl", "pi"),
    "pi-compaction": (None, "examples/formats/pi-stale-compaction.jsonl", "pi"),
    "claude-code": (None, "examples/formats/claude-code-session.jsonl", "claude-code"),
    "goose": (None, "examples/formats/goose-session.jsonl", "goose"),
    "pydantic-ai": (None, "examples/formats/pydantic-ai-clean.json", "pydantic-ai"),
    "strands-bedrock": (None, "examples/formats/strands-clean.json", "bedrock"),
}


def written(tmp_path: Path, name: str | None, text: str) -> Path:
    if name is None:
        return ROOT / text
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "text", "fmt"), list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_a_document_in_a_known_format_names_its_from(cli, tmp_path: Path, name, text, fmt) -> None:
    path = written(tmp_path, name, text)
    for argv in (("lint", str(path)), ("project", "-q", "-H", str(path))):
        done = cli(*argv)
        assert done.code == 2 and done.out == "", done
        assert done.err.count("\n") == 1 and f"reads as --from {fmt}" in done.err, done.err
    assert cli("lint", "-q", "--from", fmt, str(path)).code in (0, 1)  # the suggestion reads it


def test_a_plain_message_list_names_every_format_that_reads_it(cli, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    done = cli("lint", str(path))
    assert done.code == 2 and "reads as --from openai-chat (it also reads as " in done.err
    assert "anthropic" in done.err


def test_an_agents_sdk_database_names_agents_sqlite(cli, tmp_path: Path) -> None:
    path = tmp_path / "conversations.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)")
    con.execute(
        "INSERT INTO agent_messages VALUES (1, 's', ?)", (json.dumps({"role": "user", "content": "hi"}),)
    )
    con.commit()
    con.close()
    done = cli("lint", str(path))
    assert done.code == 2 and done.err.count("\n") == 1 and "reads as --from agents-sqlite" in done.err


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"x": 1}),  # JSON, in no format's shape
        '{"messages": [',  # not JSON at all
        '{"seq": 0, "session": "s", "turn": 0, "kind": "USER", "chars": 3}\n[{"role": "user", "content": "hi"}]\n',
    ],
    ids=["no-format", "not-json", "ours-then-a-bad-line"],
)
def test_without_a_format_that_reads_it_the_refusal_is_unchanged(cli, tmp_path: Path, text: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    done = cli("lint", str(path))
    assert done.code == 2 and done.err.count("\n") == 1 and "--from" not in done.err, done.err


@pytest.mark.parametrize("command", ["lint", "project"])
def test_a_wrong_from_that_reads_nothing_is_said_so(cli, command: str) -> None:
    """A pi session read --from claude-code: that reader skips every line, and lint printed
    "0 events in 0 sessions … clean" with nothing else; now a warning names the reader that
    reads it. The right --from prints no such warning."""
    path = ROOT / "examples" / "formats" / "pi-session.jsonl"
    argv = ["-q", "-H", str(path), "-b", "4000"] if command == "project" else [str(path)]
    wrong = cli(command, "--from", "claude-code", *argv)
    assert f"warning: {path}: no event read as --from claude-code; it reads as --from pi" in wrong.err, wrong
    right = cli(command, "--from", "pi", *argv)
    assert "no event read" not in right.err and right.code in (0, 1), right
