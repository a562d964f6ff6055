"""The eight bad shapes of every format — not the format, wrong types, missing ids, … — each one
line naming the record, exit 2, nothing written (``import``, and ``lint --from`` the same)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main

CALL = {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}  # fmt: skip
NOT_JSON = '[{"role": '
NO_ID = {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}
GEN = {"id": "g", "type": "GENERATION", "startTime": "2026-01-01T00:00:00Z", "input": [], "output": None}
RUN = {
    "id": "r",
    "run_type": "llm",
    "start_time": "2026-01-01T00:00:00",
    "inputs": {"messages": []},
    "outputs": None,
}


def OTLP_SPAN(changes: dict[str, Any]) -> dict[str, Any]:  # noqa: N802  (reads as a constant)
    """A collector-shaped document holding one span, with ``changes`` made to it."""
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "startTimeUnixNano": "1", "attributes": [], **changes}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def SDK_SPAN(inputs: Any) -> dict[str, Any]:  # noqa: N802
    """An ``opentelemetry-sdk`` ``to_json`` chat span whose input messages are ``inputs``."""
    messages = inputs if isinstance(inputs, str) else json.dumps(inputs)
    return {"context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "cd" * 8}, "start_time": "2026-01-01T00:00:00Z",
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages}}  # fmt: skip


SHAPES: dict[str, list[tuple[Any, str]]] = {  # format -> (file content, what the line says)
    "openai-chat": [
        (NOT_JSON, "malformed JSON"),
        ({"messages": 3}, "expected a list of records"),
        ([3], "record 1: expected a message object, got int"),
        ([{"role": "narrator", "content": "x"}], "record 1: unknown message role 'narrator'"),
        ([{"role": "user", "content": 5}], "record 1: content must be text or a list of parts, got int"),
        (
            [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}],
            "record 1: a tool call without an id",
        ),
        ([CALL, {"role": "tool", "content": "x"}], "record 2: a tool result without a call id"),
        (
            [{"role": "user", "content": [{"image_url": {"url": "x"}}]}],  # a part without a type
            "record 1: content part of type None is not text",
        ),
    ],
    "openai-responses": [
        (NOT_JSON, "malformed JSON"),
        ({"input": "hi"}, "expected a list of records"),
        (["hi"], "record 1: expected an input item object, got str"),
        ([{"id": "ws_1"}], "record 1: an input item without a 'type'"),
        (
            [{"role": "user", "content": {"text": "x"}}],
            "record 1: content must be text or a list of parts, got dict",
        ),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "record 1: a tool call without an id"),
        ([{"type": "function_call_output", "output": "1"}], "record 1: a tool result without a call id"),
        (
            [{"role": "user", "content": [{"image_url": "x"}]}],
            "record 1: content part of type None is not text",
        ),
    ],
    "anthropic": [
        (NOT_JSON, "malformed JSON"),
        ({"messages": {}}, "expected a list of records"),
        ([None], "record 1: expected a message object, got NoneType"),
        ([{"role": "system", "content": "x"}], "record 1: unknown message role 'system'"),
        ([{"role": "user", "content": 1}], "record 1: content must be text or a list of blocks, got int"),
        (
            [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}],
            "record 1: a tool call without an id",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "content": "1"}]}],
            "record 1: a tool result without a call id",
        ),
        (
            [{"role": "user", "content": [{"source": {}}]}],
            "record 1: a content block without a 'type'",
        ),
    ],
    "gemini": [
        (NOT_JSON, "malformed JSON"),
        ({"contents": 1}, "expected a list of records"),
        ([{"role": "user", "parts": "hi"}], "record 1: expected a Content object with a 'parts' list"),
        ([{"role": "system", "parts": []}], "record 1: unknown role 'system'"),
        ([{"role": "user", "parts": [{"text": 3}]}], "record 1: a text part must hold a string"),
        (
            [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}],
            "record 1: a function call without a name",
        ),
        (
            [{"role": "user", "parts": [{"functionResponse": {"id": 7, "name": "f"}}]}],
            "record 1: a function part's id must be a string",
        ),
        (
            [{"role": "user", "parts": [{}]}],
            "record 1: a part holding nothing",
        ),
    ],
    "vercel": [
        (NOT_JSON, "malformed JSON"),
        ({"messages": "hi"}, "expected a list of records"),
        ([[]], "record 1: expected a message object, got list"),
        ([{"role": "data", "content": "x"}], "record 1: unknown message role 'data'"),
        ([{"role": "tool", "content": "1"}], "record 1: content must be a list of parts, got str"),
        (
            [{"role": "assistant", "content": [{"type": "tool-call", "toolName": "f", "input": {}}]}],
            "record 1: a tool call without an id",
        ),
        (
            [
                {
                    "role": "tool",
                    "content": [
                        {"type": "tool-result", "toolName": "f", "output": {"type": "text", "value": "1"}}
                    ],
                }
            ],
            "record 1: a tool result without a call id",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "f", "args": {}}],
                }
            ],
            "record 1: a tool-call part with 'args' (AI SDK 4); expected 'input'",
        ),
    ],
    "adk": [
        (NOT_JSON, "malformed JSON"),
        ({"events": 3}, "expected a list of records"),
        ([3], "record 1: expected an ADK event object, got int"),
        ([{"author": "user"}], "record 1: 'timestamp' must be a number of seconds"),
        (
            [{"timestamp": 1, "content": {"role": "system", "parts": [{"text": "x"}]}}],
            "record 1: unknown role 'system'",
        ),
        (
            [{"timestamp": 1, "content": {"role": "model", "parts": [{"function_call": {"args": {}}}]}}],
            "record 1: a function call without a name",
        ),
        (
            [{"timestamp": 1, "actions": {"compaction": {"start_timestamp": "0", "end_timestamp": 1}}}],
            "record 1: a compaction's start_timestamp must be a number of seconds",
        ),
        (
            [{"timestamp": 1, "actions": {"compaction": {"start_timestamp": 0, "end_timestamp": 1}}}],
            "record 1: a compaction's compacted_content must be a Content with 'parts'",
        ),
    ],
    "langchain": [
        (NOT_JSON, "malformed JSON"),
        (7, "expected a list of records"),
        ([{"type": "human"}], "record 1: expected {'type'"),
        ([{"type": "chat", "data": {"content": "x"}}], "record 1: unknown message type 'chat'"),
        (
            [{"type": "human", "data": {"content": 2}}],
            "record 1: content must be text or a list of parts, got int",
        ),
        (
            [{"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f", "args": {}}]}}],
            "record 1: a tool call without an id",
        ),
        ([{"type": "tool", "data": {"content": "1"}}], "record 1: a tool result without a call id"),
        (
            [{"type": "human", "data": {"content": [{"image_url": "x"}]}}],
            "record 1: content part of type None is not text",
        ),
    ],
    "llamaindex": [
        (NOT_JSON, "malformed JSON"),
        ("true", "expected a list of records"),
        ([{"content": "x"}], "record 1: expected a ChatMessage dump with a 'role'"),
        ([{"role": "function", "content": "x"}], "record 1: unknown role 'function'"),
        ([{"role": "user", "content": 4}], "record 1: content must be text or a list of parts, got int"),
        (
            [{"role": "assistant", "blocks": [{"block_type": "tool_call", "tool_kwargs": {}}]}],
            "record 1: a tool call without an id",
        ),
        ([{"role": "tool", "content": "1"}], "record 1: a tool result without a call id"),
        ([{"role": "user", "blocks": [{"text": "x"}]}], "record 1: a content block without a 'block_type'"),
    ],
    "langfuse": [
        (NOT_JSON, "malformed JSON"),
        ({"id": "t"}, "expected a Langfuse trace with 'observations', a list of traces"),
        ([3], "trace 1: expected a trace object with a string 'id'"),
        ([{"id": "t"}], "trace 1: trace 't' has no 'observations' list"),
        ({"id": "t", "observations": [{"type": "GENERATION"}]}, "an observation without a string 'id'"),
        (
            {"id": "t", "observations": [dict(GEN, startTime="today")]},
            "observation 'g': startTime 'today' is not an ISO 8601 time",
        ),
        (
            {"id": "t", "observations": [dict(GEN, input="hi")]},
            "observation 'g': input is not a list of chat messages",
        ),
        (
            {"id": "t", "observations": [dict(GEN, input=[NO_ID])]},
            "observation 'g': input message 1: a tool call without an id",
        ),
        ({"id": "t", "observations": [dict(GEN, output=5)]}, "observation 'g': output is not a chat message"),
        (
            {"data": [{"id": "t", "observations": ["o1"]}]},
            "trace 1: observations are ids only (the trace list)",
        ),
    ],
    "langsmith": [
        (NOT_JSON, "malformed JSON"),
        ([3], "record 1: expected a LangSmith run object with a string 'id'"),
        ([{"id": "r"}], "record 1: run 'r' has no 'run_type'"),
        ([dict(RUN, start_time=None)], "run 'r': start_time must be an ISO 8601 time string"),
        ([dict(RUN, inputs={"prompts": ["hi"]})], "run 'r': inputs hold no 'messages' list"),
        ([dict(RUN, outputs="hi")], "run 'r': outputs must be an object, got str"),
        ([dict(RUN, outputs={"choices": [{"text": "hi"}]})], "run 'r': output choices without a message"),
        ([dict(RUN, outputs={"generations": [[]]})], "run 'r': outputs' generations without a message"),
        (
            [dict(RUN, inputs={"messages": [{"role": "tool", "content": "1"}]})],
            "run 'r': input message 1: a tool result without a call id",
        ),
    ],
    "otel": [
        (NOT_JSON, "malformed JSON"),
        ({"messages": []}, 'expected OTLP JSON {"resourceSpans": […]} or opentelemetry-sdk spans'),
        ({"resourceSpans": {}}, "'resourceSpans' must be a list, got dict"),
        (OTLP_SPAN({"spanId": None}), "record 1: a span without a span id"),
        (OTLP_SPAN({"traceId": "not-an-id"}), "record 1: a span's trace id is not a 32-digit hex id"),
        (OTLP_SPAN({"attributes": {}}), "a span's attributes must be a list"),
        (SDK_SPAN("[{"), "gen_ai.input.messages is not JSON"),
        (SDK_SPAN([{"role": "narrator", "parts": []}]), "input message 1: unknown message role 'narrator'"),
        (
            SDK_SPAN([{"role": "tool", "parts": [{"type": "tool_call_response", "response": "1"}]}]),
            "input message 1: a tool_call_response without an id",
        ),
        (
            SDK_SPAN([{"role": "user", "parts": [{"mime_type": "image/png"}]}]),
            "input message 1: a part without a 'type'",
        ),
        ({"resourceSpans": []}, "no model-call span (gen_ai.operation.name chat"),
        (SDK_SPAN("[" * 50000), "gen_ai.input.messages nested too deeply"),
        (
            OTLP_SPAN(
                {
                    "startTimeUnixNano": "9" * 5000,
                    "attributes": [
                        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                        {"key": "gen_ai.input.messages", "value": {"stringValue": "[]"}},
                    ],
                }
            ),
            "a span without a readable start time",
        ),
    ],
}
CASES = [
    (fmt, i, content, needle) for fmt, shapes in SHAPES.items() for i, (content, needle) in enumerate(shapes)
]


@pytest.mark.parametrize(("fmt", "shape", "content", "needle"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_bad_shape_is_one_line_exit_2_nothing_written(
    fmt: str, shape: int, content: Any, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    check(["import", "--from", fmt, str(path), "-o", str(tmp_path / "out.jsonl")], needle, tmp_path, capsys)
    check(["lint", "--from", fmt, str(path)], needle, tmp_path, capsys)


def written(tmp_path: Path) -> list[str]:
    """The files in ``tmp_path``, less SQLite's own ``-wal``/``-shm`` of a WAL database it opened."""
    return sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm")))


def check(argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = written(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and needle in err, err
    assert written(tmp_path) == before


def sqlite_log(tmp_path: Path, items: list[Any], raw: str | None = None) -> Path:
    """A database the OpenAI Agents SDK's SQLiteSession wrote (``raw``: then one row overwritten)."""
    from agents import SQLiteSession

    db = tmp_path / "session.db"

    async def write() -> None:
        session = SQLiteSession("conv", db_path=db)
        await session.add_items(items)
        session.close()

    asyncio.run(write())
    if raw is not None:
        con = sqlite3.connect(db)
        con.execute("UPDATE agent_messages SET message_data = ? WHERE id = 1", (raw,))
        con.commit()
        con.close()
    return db


SQLITE: list[tuple[Any, str | None, str]] = [  # (items, raw row 1, what the line says)
    ("not a database", None, "not an OpenAI Agents SDK session database"),
    ([], None, "not an OpenAI Agents SDK session database"),  # replaced below by a database without the table
    ([{"role": "user", "content": "x"}], "{not json", "agent_messages row 1: message_data is not JSON"),
    ([{"role": "user", "content": "x"}], "3", "agent_messages row 1: expected an input item object, got int"),
    (
        [{"id": "ig_1"}],
        None,
        "agent_messages row 1: an input item without a 'type'",
    ),
    (
        [{"role": "user", "content": 9}],
        None,
        "agent_messages row 1: content must be text or a list of parts, got int",
    ),
    (
        [{"type": "function_call", "name": "f", "arguments": "{}"}],
        None,
        "agent_messages row 1: a tool call without an id",
    ),
    (
        [{"type": "function_call_output", "output": "1"}],
        None,
        "agent_messages row 1: a tool result without a call id",
    ),
]


@pytest.mark.parametrize("shape", range(len(SQLITE)))
def test_each_bad_agents_sqlite_shape_is_one_line(
    shape: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agents", reason="the peers extra (openai-agents) is not installed")
    items, raw, needle = SQLITE[shape]
    if isinstance(items, str):
        db = tmp_path / "session.db"
        db.write_text(items)
    elif not items:
        db = tmp_path / "session.db"
        sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.close()
    else:
        db = sqlite_log(tmp_path, items, raw)
    before = db.read_bytes()
    check(
        ["import", "--from", "agents-sqlite", str(db), "-o", str(tmp_path / "out.jsonl")],
        needle,
        tmp_path,
        capsys,
    )
    check(["lint", "--from", "agents-sqlite", str(db)], needle, tmp_path, capsys)
    assert db.read_bytes() == before
