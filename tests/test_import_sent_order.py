"""Importers keep what was sent, in the order it was sent (models.chat_log): a provider rule the
file breaks is flagged where it stands, by ``lint --from`` and by ``import``'s warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_import_otel import answer, console_file, record, user

from turncheck.cli.app import main
from turncheck.models.importers import import_events
from turncheck.models.provider_rules import provider_findings


def lint(capsys: pytest.CaptureFixture[str], fmt: str, src: Path) -> dict[str, Any]:
    capsys.readouterr()
    main(["lint", "--from", fmt, str(src), "--format", "json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def tool_use(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "weather", "input": {"city": "Oslo"}}


def tool_result(cid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": "rain"}


TEXT = {"type": "text", "text": "and hurry"}


@pytest.mark.parametrize("first", [True, False], ids=["text-before-result", "text-after-result"])
def test_anthropic_text_before_a_tool_result_stays_there_and_is_refused(
    first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anthropics/claude-code#37: the message after tool_use must begin with the tool_result
    blocks; the importer used to move the RESULT ahead of the text and call the log clean."""
    reply = [TEXT, tool_result("t1")] if first else [tool_result("t1"), TEXT]
    src = write(tmp_path, "chat.json", [
        {"role": "user", "content": "weather in Oslo?"}, {"role": "assistant", "content": [tool_use("t1")]},
        {"role": "user", "content": reply}, {"role": "assistant", "content": "rain"}])  # fmt: skip
    kinds = [e.kind.name for e in import_events("anthropic", src)]
    assert kinds == ["USER", "CALL", *(["USER", "RESULT"] if first else ["RESULT", "USER"]), "TERM"]
    report = lint(capsys, "anthropic", src)
    if not first:
        assert report["clean"]
        return
    assert report["counts"]["results-not-first"] == 1
    assert report["examples"]["results-not-first"] == [
        f"{src}: session 'chat': record 3: seq 2 session chat turn 1 USER"
    ]
    assert main(["import", "--from", "anthropic", str(src), "-o", str(tmp_path / "out.jsonl")]) == 0
    warning = capsys.readouterr().err
    assert "1 results-not-first" in warning and "1 call-not-answered-next" in warning


def test_anthropic_thinking_rides_with_its_turns_calls(tmp_path: Path) -> None:
    """langchain-ai/langchain#34794: a window keeping a later tool_use of the turn in progress but
    not the first one, which the thinking block rides with, is refused; a finished turn's is not."""
    thinking = {"type": "thinking", "thinking": "look it up", "signature": "sig"}
    src = write(tmp_path, "chat.json", [
        {"role": "user", "content": "weather in Oslo and Rome?"},
        {"role": "assistant", "content": [thinking, tool_use("t1"), tool_use("t2")]},
        {"role": "user", "content": [tool_result("t1"), tool_result("t2")]},
        {"role": "assistant", "content": [tool_use("t3")]}, {"role": "user", "content": [tool_result("t3")]},
        {"role": "assistant", "content": "rain and sun"}, {"role": "user", "content": "thanks"}])  # fmt: skip
    events = import_events("anthropic", src)
    assert [e.tied_to for e in events[1:3]] == [None, "t1"] and events[5].tied_to == "t1"
    assert provider_findings("anthropic", events[:7]) == []
    cut = [events[0], *events[5:7]]  # a summary (read as the user message) + the turn's newest pair
    assert provider_findings("anthropic", cut) == [("thinking-not-sent", 1)]
    assert provider_findings("anthropic", [events[0], *events[5:]]) == []  # the turn is finished


def test_langchain_keeps_the_thinking_tie_summarization_cut(tmp_path: Path) -> None:
    """langchain-ai/langchain#34794: SummarizationMiddleware keeps the newest tool pair of a turn
    and summarises the AIMessage whose thinking block the turn's calls need."""

    def ai(cid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": "ai", "data": {"content": [*blocks, tool_use(cid)],
                                       "tool_calls": [{"id": cid, "name": "weather", "args": {}}]}}  # fmt: skip

    def tool(cid: str) -> dict[str, Any]:
        return {"type": "tool", "data": {"content": "rain", "tool_call_id": cid}}

    thinking = {"type": "thinking", "thinking": "look it up", "signature": "sig"}
    src = write(tmp_path, "chat.json", [{"type": "human", "data": {"content": "weather?"}},
                                        ai("t1", thinking), tool("t1"), ai("t2"), tool("t2")])  # fmt: skip
    events = import_events("langchain", src)
    assert [e.tied_to for e in events if e.kind.name == "CALL"] == [None, "t1"]
    assert provider_findings("anthropic", events) == []
    assert provider_findings("anthropic", [events[0], *events[3:]]) == [("thinking-not-sent", 1)]


def test_gemini_text_before_a_function_response_stays_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}}
    response = {"functionResponse": {"name": "weather", "response": {"sky": "rain"}}}
    src = write(tmp_path, "contents.json", [
        {"role": "user", "parts": [{"text": "weather in Oslo?"}]}, {"role": "model", "parts": [call]},
        {"role": "user", "parts": [{"text": "and hurry"}, response]},
        {"role": "model", "parts": [{"text": "rain"}]}])  # fmt: skip
    assert [e.kind.name for e in import_events("gemini", src)] == ["USER", "CALL", "USER", "RESULT", "TERM"]
    report = lint(capsys, "gemini", src)
    assert report["counts"]["response-count-mismatch"] == 2
    assert report["examples"]["response-count-mismatch"][1].startswith(
        f"{src}: session 'contents': record 3:"
    )


def test_otel_text_before_a_tool_response_stays_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weather",
                                            "arguments": {"city": "Oslo"}}], "finish_reason": "tool_call"}  # fmt: skip
    mixed = {"role": "user", "parts": [{"type": "text", "content": "and hurry"},
                                       {"type": "tool_call_response", "id": "c1", "response": "rain"}]}  # fmt: skip
    attrs = {"gen_ai.provider.name": "anthropic", "gen_ai.conversation.id": "conv-1"}
    spans = record([([user("weather in Oslo?")], [call], attrs),
                    ([user("weather in Oslo?"), call, mixed], [answer("rain")], attrs)])  # fmt: skip
    src = console_file(tmp_path / "trace.json", spans)
    report = lint(capsys, "otel", src)
    assert report["counts"]["results-not-first"] == 1  # the second request, as sent
    assert "input message 3" in report["examples"]["results-not-first"][0]


def test_per_request_fail_on_responses_refuses_a_call_sent_without_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """openai/openai-agents-python#2317: the request at the second user message holds a
    function_call whose output came later; ``--fail-on openai-responses`` used to pass it."""
    rows = [("USER", None, 0), ("CALL", "a", 0), ("TERM", None, 0), ("USER", None, 1), ("RESULT", "a", 1),
            ("TERM", None, 1)]  # fmt: skip
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"seq": i, "session": "s", "turn": t, "kind": k, "chars": 10,
                                       **({"call_id": c} if c else {})}) + "\n" for i, (k, c, t) in enumerate(rows)))  # fmt: skip
    code = main(["project", "-q", "-H", str(log), "-b", "100000", "-s", "M0", "--per-request",
                 "--fail-on", "openai-responses", "--format", "json"])  # fmt: skip
    assert code == 1
    out = capsys.readouterr().out  # the request that got the TERM already sent the call without its
    assert '"request":1,"after_events":2' in out  # output (a window is a request as sent, #50)
    assert '"first_events":"USER#0 CALL#1(a)"' in out and '"openai-responses":3' in out
