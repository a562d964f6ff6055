"""Anthropic with thinking on: the turn in progress must start with a thinking block (issue 50 item 1).

The Messages API, with ``thinking`` enabled, refuses a request whose final assistant turn (the
messages after the last user message, through its ``tool_use`` / ``tool_result`` blocks) does not
start with a ``thinking`` or ``redacted_thinking`` block: "messages.1.content.0.type: Expected
`thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final
`assistant` message must start with a thinking block …" (langchain-ai/langchain#34794,
deepset-ai/haystack-core-integrations#2146, mastra-ai/mastra#7799; "found `text`" in
epam/ai-dial-adapter-bedrock#290). Before this test only a thinking block *dropped between two
request bodies* was flagged: a request body saying ``"thinking": {"type": "enabled"}`` whose turn
in progress had no thinking at all linted clean. The request says thinking is on (its
``thinking`` field), or the turn shows it (a thinking block later in the same turn); adaptive
thinking lets the model skip thinking, so a body saying ``adaptive`` is not held to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main

THINK = {"type": "thinking", "thinking": "look it up", "signature": "sig"}
REDACTED = {"type": "redacted_thinking", "data": "opaque"}
ASK = {"role": "user", "content": "weather in Oslo?"}


def use(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "weather", "input": {"city": cid}}


def answered(*cids: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c, "content": "20C"} for c in cids]}


def said(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def body(messages: list[Any], mode: str | None = "enabled") -> dict[str, Any]:
    out: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": messages}
    if mode == "enabled":
        out["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    elif mode is not None:
        out["thinking"] = {"type": mode}
    return out


def lint(path: Path, capsys: pytest.CaptureFixture[str], fmt: str = "anthropic") -> tuple[int, str]:
    capsys.readouterr()
    code = main(["lint", "--from", fmt, str(path)])
    return code, capsys.readouterr().out


BARE_TURN = [ASK, said(use("a")), answered("a")]
REFUSED = {
    "first message a tool_use": body(BARE_TURN),
    "first message text, then tool_use": body([ASK, said({"type": "text", "text": "let me see"}, use("a")), answered("a")]),
    "parallel tool_use, none after thinking": body([ASK, said(use("a"), use("b")), answered("a", "b")]),
    "second call message has the thinking, the first not": body([ASK, said(use("a")), answered("a"), said(THINK, use("b")), answered("b")]),
    "an earlier turn kept its thinking, the one in progress not": body(
        [ASK, said(THINK, use("a")), answered("a"), said({"type": "text", "text": "20C"}), {"role": "user", "content": "and Rome?"}, said(use("b")), answered("b")]
    ),
    "no thinking setting, the turn shows thinking after its first call": body([ASK, said(use("a")), answered("a"), said(THINK, use("b")), answered("b")], None),
}  # fmt: skip
CLEAN = {
    "thinking first": body([ASK, said(THINK, use("a")), answered("a")]),
    "redacted thinking first": body([ASK, said(REDACTED, use("a")), answered("a")]),
    "thinking then text then tool_use": body([ASK, said(THINK, {"type": "text", "text": "so"}, use("a"), use("b")), answered("a", "b")]),
    "later messages of the turn need none": body([ASK, said(THINK, use("a")), answered("a"), said(use("b")), answered("b")]),
    "an earlier turn without thinking": body(
        [ASK, said(use("a")), answered("a"), said({"type": "text", "text": "20C"}), {"role": "user", "content": "and Rome?"}, said(THINK, use("b")), answered("b")]
    ),
    "thinking disabled": body(BARE_TURN, "disabled"),
    "no thinking setting, none shown": body(BARE_TURN, None),
    "adaptive: the model may skip thinking": body([ASK, said(use("a")), answered("a"), said(THINK, use("b")), answered("b")], "adaptive"),
    "the turn in progress has no call yet": body([ASK, said(use("a")), answered("a"), said({"type": "text", "text": "20C"}), {"role": "user", "content": "thanks"}]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_turn_in_progress_not_starting_with_thinking_is_refused_when_thinking_is_on(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(REFUSED[name]), encoding="utf-8")
    code, out = lint(path, capsys)
    assert code == 1 and "thinking-not-sent: " in out, out
    assert out.count("thinking-not-sent: ") == 1, out  # one finding per refused turn


@pytest.mark.parametrize("name", list(CLEAN))
def test_a_turn_starting_with_thinking_or_not_held_to_it_is_clean(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(CLEAN[name]), encoding="utf-8")
    code, out = lint(path, capsys)
    assert code == 0 and "clean: " in out and "thinking-not-sent" in out, out  # the rule named as checked


def jsonl(path: Path, bodies: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(b) + "\n" for b in bodies), encoding="utf-8")
    return path


def test_a_middle_request_body_with_thinking_on_and_a_bare_turn_fails_the_replay_at_that_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSONL of request bodies: the second request sent its turn without thinking while thinking
    was enabled. The last request (the turn ended) is not refused, but the file records that the
    second went out so: ``lint`` names that call (it said clean when it judged only the last
    body's turn in progress), and the replay of every request fails at the one the API refused.
    With the second body saying ``disabled``, every request passes and ``lint`` is clean."""
    first = [ASK, said(THINK, use("a")), answered("a")]
    second = [*first, said({"type": "text", "text": "20C"}), {"role": "user", "content": "Rome?"}, said(use("b")), answered("b")]  # fmt: skip
    third = [*second, said({"type": "text", "text": "25C"}), {"role": "user", "content": "thanks"}]
    replay = ["project", "--from", "anthropic", "--per-request", "-s", "M0", "-b", "100000", "--fail-on", "anthropic", "-q"]  # fmt: skip
    bad = jsonl(tmp_path / "bad.jsonl", [body(first), body(second), body(third)])
    capsys.readouterr()
    assert main([*replay, "-H", str(bad)]) == 1
    assert "FAIL: session bad-1, request 3 (after 7 events): anthropic" in capsys.readouterr().out
    good = jsonl(tmp_path / "good.jsonl", [body(first), body(second, "disabled"), body(third, "disabled")])
    assert main([*replay, "-H", str(good)]) == 0
    assert "OK: no request breaks anthropic" in capsys.readouterr().out
    code, out = lint(bad, capsys)
    assert code == 1 and f"{bad}:2: record 6:" in out and "thinking-not-sent" in out and "CALL b" in out, out
    assert lint(good, capsys)[0] == 0
    still_bad = jsonl(tmp_path / "last.jsonl", [body(first), body(second)])
    code, out = lint(still_bad, capsys)
    assert code == 1 and f"{still_bad}:2: record 6:" in out and "CALL b" in out, out


def test_import_of_a_body_with_thinking_on_and_a_bare_turn_names_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "body.json"
    source.write_text(json.dumps(body(BARE_TURN)), encoding="utf-8")
    capsys.readouterr()
    assert main(["import", "--from", "anthropic", str(source), "-o", str(tmp_path / "log.jsonl")]) == 0
    assert "thinking-not-sent" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["project", "-H", str(tmp_path / "log.jsonl"), "--per-request", "-s", "M0", "-b", "100000",
                 "--fail-on", "anthropic", "-q"]) == 1  # fmt: skip


def claude_code_records(first: list[Any], second: list[Any]) -> list[dict[str, Any]]:
    """A Claude Code session: the question, a reply of ``first`` blocks, its result, a reply of
    ``second`` blocks and its result; each reply one record a block, sharing ``message.id``."""
    out: list[dict[str, Any]] = []

    def rec(kind: str, content: Any, mid: str | None = None) -> None:
        message: dict[str, Any] = {"role": kind, "content": content}
        if mid:
            message["id"] = mid
        parent = out[-1]["uuid"] if out else None
        out.append({"type": kind, "parentUuid": parent, "isSidechain": False, "sessionId": "s1",
                    "uuid": f"u{len(out)}", "message": message})  # fmt: skip

    rec("user", "weather?")
    for n, (blocks, cid) in enumerate(((first, "a"), (second, "b"))):
        for block in blocks:
            rec("assistant", [block], f"msg_{n}")
        rec("user", answered(cid)["content"])
    return out


@pytest.mark.parametrize(
    ("first", "second", "refused"),
    [
        ([use("a")], [THINK, use("b")], True),
        ([THINK, use("a")], [use("b")], False),
        ([THINK, use("a")], [THINK, use("b")], False),
        ([use("a")], [use("b")], False),
    ],
)
def test_a_claude_code_session_showing_thinking_in_the_turn_holds_its_first_reply_to_it(
    first: list[Any], second: list[Any], refused: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "session.jsonl", claude_code_records(first, second))
    code, out = lint(path, capsys, "claude-code")
    assert (code, "thinking-not-sent: " in out) == (int(refused), refused), out


@pytest.mark.parametrize(("first", "refused"), [([use("a")], True), ([THINK, use("a")], False)])
def test_a_cline_history_showing_thinking_in_the_turn_holds_its_first_reply_to_it(
    first: list[Any], refused: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = [ASK, said(*first), answered("a"), said(THINK, use("b")), answered("b")]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    code, out = lint(path, capsys, "cline")
    assert (code, "thinking-not-sent: " in out) == (int(refused), refused), out


@pytest.mark.parametrize(("first_thinks", "refused"), [(False, True), (True, False)])
def test_a_langchain_history_showing_thinking_in_the_turn_holds_its_first_reply_to_it(
    first_thinks: bool, refused: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ChatAnthropic`` messages (LangChain's ``messages_to_dict``, what a LangSmith run records):
    the evidence that thinking is on is read by every reader that ties calls to thinking
    (``SessionBuilder.turn_call``), not only by the Messages API's."""

    def ai(cid: str, thinks: bool) -> dict[str, Any]:
        content = [THINK] if thinks else []
        content.append({"type": "tool_use", "id": cid, "name": "weather", "input": {}})
        return {"type": "ai", "data": {"content": content, "tool_calls": [{"id": cid, "name": "weather", "args": {}}]}}

    def tool(cid: str) -> dict[str, Any]:
        return {"type": "tool", "data": {"content": "20C", "tool_call_id": cid}}

    history = [{"type": "human", "data": {"content": "weather?"}}, ai("a", first_thinks), tool("a"), ai("b", True), tool("b")]  # fmt: skip
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    capsys.readouterr()
    code = main(["lint", "--from", "langchain", "--provider", "anthropic", str(path)])
    out = capsys.readouterr().out
    assert (code, "thinking-not-sent: " in out) == (int(refused), refused), out


def converse(*blocks_per_message: list[Any], setting: str | None = None) -> Any:
    """A Converse history: the question, then assistant / user contents alternating."""
    ask = {"role": "user", "content": [{"text": "weather?"}]}
    messages = [ask] + [
        {"role": "assistant" if i % 2 == 0 else "user", "content": blocks} for i, blocks in enumerate(blocks_per_message)
    ]
    if setting is None:
        return messages
    return {"additionalModelRequestFields": {"thinking": {"type": setting, "budget_tokens": 1024}}, "messages": messages}


REASONING = {"reasoningContent": {"reasoningText": {"text": "look it up", "signature": "sig"}}}


def converse_use(cid: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": cid, "name": "weather", "input": {}}}


def converse_result(cid: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": cid, "content": [{"text": "20C"}]}}


@pytest.mark.parametrize(
    ("history", "refused"),
    [
        (converse([converse_use("a")], [converse_result("a")], setting="enabled"), True),
        (converse([REASONING, converse_use("a")], [converse_result("a")], setting="enabled"), False),
        (converse([converse_use("a")], [converse_result("a")], setting="adaptive"), False),
        (converse([converse_use("a")], [converse_result("a")]), False),
        (converse([converse_use("a")], [converse_result("a")], [REASONING, converse_use("b")], [converse_result("b")]), True),
    ],
    ids=["enabled-bare", "enabled-reasoning-first", "adaptive", "no-setting", "shown-later-in-the-turn"],
)
def test_claude_on_bedrock_is_held_to_the_same_rule(
    history: Any, refused: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claude through Converse refuses the same turn (anomalyco/opencode#3077's BedrockException,
    epam/ai-dial-adapter-bedrock#290); the setting is ``additionalModelRequestFields.thinking``."""
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    code, out = lint(path, capsys, "bedrock")
    assert (code, "thinking-not-sent: " in out) == (int(refused), refused), out
