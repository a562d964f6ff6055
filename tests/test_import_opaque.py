"""Never refuse a well-formed history for a part it does not know (issue 51, item 2).

Every reader keeps a part it does not map as opaque content (:mod:`models.chat_log`): its JSON in
the text of the message it sits in, where it stands — costed, ordered, never paired — and the
parts are counted in one warning line. An OTel ``compaction`` part (semantic-conventions-genai
PR #162) is a SUMMARY. A clean history with such parts lints 0, a broken one 1; only a record
that is not the format (a part without a type) is one line, exit 2 (tests/test_import_bad_shapes.py).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_import_otel import answer, console_file, record, user

from turncheck.cli.app import main
from turncheck.models.events import Kind
from turncheck.models.importers import import_log

BLOB = {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0KGgo="}
URI = {"type": "uri", "modality": "image", "uri": "https://example.com/cat.png"}
SERVER_CALL = {"type": "server_tool_call", "id": "srv_1", "name": "web_search",
               "server_tool_call": {"type": "web_search", "query": "cats"}}  # fmt: skip


def tool_turn(call_id: str = "call_1") -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": call_id, "name": "look", "arguments": {}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": "a cat"}]},
    ]


def otel_file(path: Path, calls: list[tuple[list[Any], list[Any]]]) -> Path:
    """Spans the real opentelemetry-sdk records for ``calls``, written by its ConsoleSpanExporter."""
    attrs = {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": "conv-1"}
    return console_file(path, record([(inputs, outputs, attrs) for inputs, outputs in calls]))


def lint(path: Path, fmt: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["lint", "--from", fmt, str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_otel_unknown_parts_are_opaque_content_clean_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = {"role": "user", "parts": [{"type": "text", "content": "what is this?"}, BLOB, URI]}
    searched = {"role": "assistant", "parts": [SERVER_CALL, {"type": "text", "content": "a cat"}]}
    path = otel_file(tmp_path / "spans.json", [([asked], [searched])])
    code, out, err = lint(path, "otel", capsys)
    assert code == 0, out + err
    assert "clean" in out
    assert err.strip().endswith(
        "3 parts of types blob, server_tool_call, uri were kept as opaque content (costed and ordered as sent, never paired)"
    )
    assert err.count("\n") == 1  # one warning line
    events = import_log("otel", path).events
    assert [e.kind for e in events] == [Kind.USER, Kind.TERM]
    assert (
        events[0].text.startswith("what is this?{")
        and '"uri":"https://example.com/cat.png"' in events[0].text
    )
    assert events[0].text.index("blob") < events[0].text.index("uri")  # in the order sent
    assert "web_search" in events[1].text  # costed in the message it sits in
    assert main(["lint", "--from", "otel", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["opaque"] == {"blob": 1, "server_tool_call": 1, "uri": 1}
    assert main(["project", "--from", "otel", "-H", str(path), "-b", "100", "-q"]) == 0
    assert "3 parts of types blob, server_tool_call, uri were kept" in capsys.readouterr().err


def test_otel_opaque_parts_never_hide_a_broken_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A result whose call was trimmed away is still an orphan beside opaque parts (exit 1), and an
    opaque part carrying an id is never paired with a result of that id."""
    call, result = tool_turn("srv_1")
    sent = [{"role": "user", "parts": [{"type": "text", "content": "go"}, BLOB]},
            {"role": "assistant", "parts": [SERVER_CALL]}, result]  # fmt: skip
    path = otel_file(tmp_path / "spans.json", [(sent, [answer("done")])])
    code, out, err = lint(path, "otel", capsys)
    assert code == 1, out + err
    assert "orphan-result" in out and "srv_1" in out
    assert "2 parts of types blob, server_tool_call" in err


def test_otel_compaction_part_is_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR #162's shape: ``{"type": "compaction", "id"}`` in the assistant message the provider
    returned it in (content absent: the provider's opaque continuity value), then sent back."""
    compacted = {"role": "assistant", "parts": [{"type": "compaction", "id": "cmp_1"},
                                                {"type": "text", "content": "noted"}]}  # fmt: skip
    first = [user("look"), *tool_turn()]
    then = [*first, compacted, user("and now?")]
    path = otel_file(tmp_path / "spans.json", [(first, [compacted]), (then, [answer("a dog")])])
    code, out, err = lint(path, "otel", capsys)
    assert code == 0, out + err
    assert "opaque" not in err
    events = import_log("otel", path).events
    summary = next(e for e in events if e.kind is Kind.SUMMARY)
    assert summary.covers == (0, 2) and summary.text == ""
    assert [e.kind for e in events][summary.seq + 1 :] == [Kind.TERM, Kind.USER, Kind.TERM]


def test_a_part_type_added_later_is_read_by_every_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One unknown part per reader, in a clean history: exit 0, its JSON costed in its message."""
    new = {"type": "hologram", "frames": 3}
    cases: dict[str, Any] = {
        "openai-chat": [{"role": "user", "content": [{"type": "text", "text": "hi"}, new]},
                        {"role": "assistant", "content": "hello"}],
        "openai-responses": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}, new]},
                             {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                             {"role": "assistant", "content": "hello"}],
        "anthropic": [{"role": "user", "content": [{"type": "text", "text": "hi"}, new]},
                      {"role": "assistant", "content": [new, {"type": "text", "text": "hello"}]}],
        "gemini": [{"role": "user", "parts": [{"text": "hi"}, {"inlineData": {"mimeType": "image/png", "data": "AA=="}}]},
                   {"role": "model", "parts": [{"text": "hello"}]}],
        "vercel": [{"role": "user", "content": [{"type": "text", "text": "hi"}, new]},
                   {"role": "assistant", "content": "hello"}],
        "langchain": [{"type": "human", "data": {"content": [{"type": "text", "text": "hi"}, new]}},
                      {"type": "ai", "data": {"content": "hello"}}],
        "llamaindex": [{"role": "user", "blocks": [{"block_type": "text", "text": "hi"},
                                                   {"block_type": "image", "url": "https://x/y.png"}]},
                       {"role": "assistant", "content": "hello"}],
    }  # fmt: skip
    for fmt, records in cases.items():
        path = tmp_path / f"{fmt}.json"
        path.write_text(json.dumps(records))
        code, out, err = lint(path, fmt, capsys)
        assert code == 0, (fmt, out, err)
        assert "kept as opaque content" in err, fmt
        first = import_log(fmt, path).events[0]
        assert first.kind is Kind.USER and first.text.startswith("hi{"), (fmt, first)


def test_opaque_content_in_a_message_of_calls_rides_on_its_newest_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Anthropic: an unknown block beside a ``tool_use`` is costed on that call, after its own
    text; the pair stays whole (exit 0)."""
    path = tmp_path / "a.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                                          {"type": "container_upload", "file_id": "f_1"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]}]},
        {"role": "assistant", "content": "seen"},
    ]))  # fmt: skip
    code, out, err = lint(path, "anthropic", capsys)
    assert code == 0, out + err
    assert "2 parts of types container_upload, image" in err
    kinds = [(e.kind, e.call_id, e.text) for e in import_log("anthropic", path).events]
    assert kinds[1] == (Kind.CALL, "t1", '{}{"file_id":"f_1","type":"container_upload"}')
    assert kinds[2][:2] == (Kind.RESULT, "t1") and '"url":"u"' in kinds[2][2]


def test_agents_sqlite_keeps_an_unknown_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The OpenAI Agents SDK's SQLiteSession stores Responses items; a hosted tool's item
    (``image_generation_call``) is opaque content, not a refusal."""
    db = tmp_path / "s.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)")
    con.execute("CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY)")
    items = [{"role": "user", "content": "draw"}, {"type": "image_generation_call", "id": "ig_1", "result": "AA=="},
             {"role": "assistant", "content": "drawn"}]  # fmt: skip
    con.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES ('s', ?)",
                    [(json.dumps(i),) for i in items])  # fmt: skip
    con.commit()
    con.close()
    code, out, err = lint(db, "agents-sqlite", capsys)
    assert code == 0, out + err
    assert "1 part of type image_generation_call was kept as opaque content" in err


def test_trace_and_session_formats_keep_unknown_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Langfuse and LangSmith read Chat Completions / LangChain messages, ADK reads Gemini parts:
    the same policy reaches them through the shared readers."""
    image = {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}
    asked = [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}]
    langfuse = [
        {
            "id": "t",
            "observations": [
                {
                    "id": "g",
                    "type": "GENERATION",
                    "startTime": "2026-01-01T00:00:00Z",
                    "input": asked,
                    "output": {"role": "assistant", "content": "a cat"},
                }
            ],
        }
    ]
    langsmith = {
        "id": "r",
        "run_type": "llm",
        "trace_id": "t",
        "start_time": "2026-01-01T00:00:00",
        "inputs": {"messages": asked},
        "outputs": {"choices": [{"message": {"role": "assistant", "content": "a cat"}}]},
    }
    adk = {"id": "s", "events": [
        {"author": "user", "timestamp": 1.0, "content": {"role": "user", "parts": [
            {"text": "hi"}, {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/x.png"}}]}},
        {"author": "agent", "timestamp": 2.0, "content": {"role": "model", "parts": [{"text": "a cat"}]}}]}  # fmt: skip
    for fmt, content, kind in (("langfuse", langfuse, "image_url"), ("langsmith", langsmith, "image_url"),
                               ("adk", adk, "fileData")):  # fmt: skip
        path = tmp_path / f"{fmt}.json"
        path.write_text(json.dumps(content))
        code, out, err = lint(path, fmt, capsys)
        assert code == 0, (fmt, out, err)
        assert f"1 part of type {kind} was kept as opaque content" in err, (fmt, err)
        assert import_log(fmt, path).events[0].text.startswith("hi{"), fmt


def test_gemini_contents_the_real_sdk_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``google-genai``'s own parts: an image from ``Part.from_bytes`` (``inlineData``) and the
    code-execution tool's ``executableCode`` / ``codeExecutionResult``, both spellings."""
    genai = pytest.importorskip("google.genai.types")
    contents = [
        genai.Content(role="user", parts=[genai.Part(text="what is this?"),
                                          genai.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")]),
        genai.Content(role="model", parts=[
            genai.Part(executable_code=genai.ExecutableCode(code="print(1)", language="PYTHON")),
            genai.Part(code_execution_result=genai.CodeExecutionResult(outcome="OUTCOME_OK", output="1")),
            genai.Part(text="a png")]),
    ]  # fmt: skip
    for by_alias, kinds in ((True, "codeExecutionResult, executableCode, inlineData"),
                            (False, "code_execution_result, executable_code, inline_data")):  # fmt: skip
        path = tmp_path / f"contents-{by_alias}.json"
        path.write_text(
            json.dumps([c.model_dump(mode="json", by_alias=by_alias, exclude_none=True) for c in contents])
        )
        code, out, err = lint(path, "gemini", capsys)
        assert code == 0, out + err
        assert f"3 parts of types {kinds} were kept as opaque content" in err
        user_, model_ = import_log("gemini", path).events
        assert user_.text.startswith("what is this?{") and model_.kind is Kind.TERM
        assert model_.text.endswith("a png") and "print(1)" in model_.text


def test_tool_items_that_pair_by_id_are_calls_not_opaque(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Responses ``custom_tool_call`` / ``computer_call`` and its ``*_output``, an Anthropic
    ``mcp_tool_use`` and its ``mcp_tool_result``: paired as function calls are, so a whole pair is
    clean and an output whose call is gone is an orphan (exit 1) — never opaque, never exit 2."""
    responses = [{"role": "user", "content": "patch it"},
                 {"type": "custom_tool_call", "call_id": "ct_1", "name": "apply_patch", "input": "*** Begin Patch"},
                 {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "done"},
                 {"type": "computer_call", "call_id": "cc_1", "action": {"type": "screenshot"}, "status": "completed"},
                 {"type": "computer_call_output", "call_id": "cc_1",
                  "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA=="}},
                 {"role": "assistant", "content": "patched"}]  # fmt: skip
    anthropic = [{"role": "user", "content": "list files"},
                 {"role": "assistant", "content": [
                     {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ls", "server_name": "fs", "input": {}},
                     {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
                      "content": [{"type": "text", "text": "a.txt"}]},
                     {"type": "text", "text": "one file"}]}]  # fmt: skip
    for fmt, records in (("openai-responses", responses), ("anthropic", anthropic)):
        path = tmp_path / f"{fmt}.json"
        path.write_text(json.dumps(records))
        code, out, err = lint(path, fmt, capsys)
        assert code == 0 and "opaque" not in err, (fmt, out, err)
    events = import_log("openai-responses", tmp_path / "openai-responses.json").events
    assert [(e.kind.name, e.call_id) for e in events][1:5] == [
        ("CALL", "ct_1"), ("RESULT", "ct_1"), ("CALL", "cc_1"), ("RESULT", "cc_1")
    ]  # fmt: skip
    assert '"input":"*** Begin Patch"' in (events[1].text or "") and "computer_screenshot" in (
        events[4].text or ""
    )
    orphan = tmp_path / "orphan.json"
    orphan.write_text(json.dumps([responses[0], responses[2], responses[-1]]))
    code, out, err = lint(orphan, "openai-responses", capsys)
    assert code == 1 and "orphan-output" in out and "ct_1" in out


def test_a_langchain_answers_thinking_is_skipped_not_opaque(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ChatAnthropic``'s answer with extended thinking: the thinking block is the model's own
    (skipped, as the Anthropic reader skips it), an image beside it is opaque content."""
    path = tmp_path / "lc.json"
    path.write_text(json.dumps([
        {"type": "human", "data": {"content": "hi"}},
        {"type": "ai", "data": {"content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                            {"type": "text", "text": "hello"}, {"type": "image", "url": "u"}]}},
    ]))  # fmt: skip
    code, out, err = lint(path, "langchain", capsys)
    assert code == 0 and "1 part of type image was kept" in err, out + err
    assert import_log("langchain", path).events[1].text == 'hello{"type":"image","url":"u"}'


NEW = {"hologram": {"frames": 3}}


def product_histories(broken: bool) -> dict[str, Any]:
    """One history per product reader holding a part, block or event of a kind added after the
    reader was written; ``broken`` drops the call whose result follows, so the result is orphaned."""
    pa_call = {"part_kind": "tool-call", "tool_name": "look", "args": {}, "tool_call_id": "c1"}
    pa = [
        {
            "kind": "request",
            "parts": [{"part_kind": "user-prompt", "content": "hi"}, {"part_kind": "hologram", "frames": 3}],
        },
        {"kind": "response", "parts": [{"part_kind": "hologram", "frames": 3}, pa_call]},
        {
            "kind": "request",
            "parts": [
                {"part_kind": "tool-return", "tool_name": "look", "content": "a cat", "tool_call_id": "c1"}
            ],
        },
        {"kind": "response", "parts": [{"part_kind": "text", "content": "a cat"}]},
    ]
    bedrock = [
        {"role": "user", "content": [{"text": "hi"}, NEW]},
        {
            "role": "assistant",
            "content": [NEW, {"toolUse": {"toolUseId": "c1", "name": "look", "input": {}}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "a"}, NEW]}}]},
        {"role": "assistant", "content": [{"text": "a cat"}]},
    ]

    def pi_entry(i: int, message: dict[str, Any], kind: str = "message") -> dict[str, Any]:
        return {"type": kind, "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "message": message}

    pi = [
        pi_entry(0, {"role": "user", "content": "hi"}),
        {"type": "hologram_change", "id": "e1", "parentId": "e0", "frames": 3},
        pi_entry(
            2,
            {
                "role": "assistant",
                "content": [
                    {"type": "hologram", "frames": 3},
                    {"type": "toolCall", "id": "c1", "name": "look", "arguments": {}},
                ],
            },
        ),
        pi_entry(
            3, {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "a cat"}]}
        ),
        pi_entry(4, {"role": "assistant", "content": [{"type": "text", "text": "a cat"}]}),
    ]
    openhands = [
        {
            "kind": "MessageEvent",
            "id": "e1",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        },
        {"kind": "HologramEvent", "id": "e2", "frames": 3},
        {"kind": "ActionEvent", "id": "e3", "tool_call_id": "c1", "tool_call": {"arguments": "{}"}},
        {
            "kind": "ObservationEvent",
            "id": "e4",
            "tool_call_id": "c1",
            "observation": {"content": [{"type": "text", "text": "a"}]},
        },
        {
            "kind": "MessageEvent",
            "id": "e5",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "a cat"}]},
        },
    ]
    chat = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "hologram", "frames": 3}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "custom", "custom": {"name": "look", "input": "cats"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a cat"},
            {"role": "assistant", "content": "a cat"}]  # fmt: skip
    if broken:
        pa.pop(1)
        bedrock[1]["content"].pop(1)
        pi[2]["message"]["content"].pop(1)
        openhands.pop(2)
        chat[1]["tool_calls"] = []
        chat[1]["content"] = "looking"
    return {"pydantic-ai": pa, "bedrock": bedrock, "pi": pi, "openhands": openhands, "openai-chat": chat}


@pytest.mark.parametrize("broken", [False, True])
def test_product_readers_keep_a_kind_added_later(
    broken: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by held-out files (issue 51): pydantic-ai, bedrock, pi and openhands refused a part,
    block or event of a kind they did not know with exit 2, and openai-chat refused a ``custom``
    tool call; now each is kept (a pi entry type pi never sends, skipped) and the verdict is the
    history's: exit 0 clean, exit 1 with the orphaned result."""
    for fmt, records in product_histories(broken).items():
        path = tmp_path / f"{fmt}.jsonl"
        lines = records if fmt in ("pi", "openhands") else [{"messages": records}]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))
        code, out, err = lint(path, fmt, capsys)
        assert code == (1 if broken else 0), (fmt, out, err)
        assert "Traceback" not in err
        if broken:
            assert "orphan-result" in out, (fmt, out)
        assert "kept as opaque content" in err, (fmt, err)
        assert "hologram" in err.lower(), (fmt, err)


def test_otel_parts_only_earlier_requests_sent_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out trace (issue 51): the warning counted only the parts of each
    conversation's last call, so a ``blob`` sent — and checked — by the requests before a
    compaction went unnamed. Now each type counts the most parts one request sent."""
    compaction = {"type": "compaction", "id": "cmp_1", "content": "earlier turns"}
    asked = {"role": "user", "parts": [{"type": "text", "content": "look"}, BLOB, URI]}
    summary = {"role": "assistant", "parts": [compaction]}
    path = otel_file(tmp_path / "trace.json", [
        ([asked], [answer("a cat")]),
        ([asked, answer("a cat"), user("again")], [summary]),
        ([summary, user("next")], [answer("done")]),
    ])  # fmt: skip
    code, out, err = lint(path, "otel", capsys)
    assert code == 0, (out, err)
    assert "2 parts of types blob, uri were kept as opaque content" in err, err


@pytest.mark.parametrize(
    ("fmt", "role", "block"),
    [("anthropic", "user", {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
     ("anthropic", "assistant", {"type": "tool_result", "tool_use_id": "t1", "content": "x"}),
     ("cline", "user", {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
     ("vercel", "user", {"type": "tool-call", "toolCallId": "t1", "toolName": "f", "input": {}}),
     ("otel", "user", {"type": "tool_call", "id": "t1", "name": "f", "arguments": {}}),
     ("otel", "assistant", {"type": "tool_call_response", "id": "t1", "response": "x"})],
)  # fmt: skip
def test_a_pairing_block_in_the_other_role_is_refused_not_opaque(
    fmt: str, role: str, block: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with held-out histories (issue 51): a ``tool_use`` in a user message (or a
    ``tool_result`` in an assistant one) was kept as opaque content, so its unpaired call or
    result linted clean, exit 0. It is refused by name (exit 2: not checked)."""
    other = "assistant" if role == "user" else "user"
    path = tmp_path / "messages.json"
    if fmt == "otel":  # spans the real SDK records, the part in the window sent
        window = [user("hi"), {"role": role, "parts": [{"type": "text", "content": "so"}, block]}]
        path = otel_file(path, [(window, [answer("ok")])])
    else:
        path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": other, "content": "ok"},
                                    {"role": role, "content": [block]}]))  # fmt: skip
    code, out, err = lint(path, fmt, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert block["type"] in err and f" {role} message" in err, err
