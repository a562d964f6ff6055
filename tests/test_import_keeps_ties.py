"""``import`` keeps what was sent, ties included (issue 50 item 2).

A CALL's ``tied_to`` (the call its Responses ``reasoning`` item or Anthropic ``thinking`` block
rides with) and ``caller`` (the server tool use whose code made it) are what the provider's
request holds. Our JSONL used to drop both, so a log converted with ``turncheck import`` and then
replayed with ``project -H … --per-request --fail-on anthropic`` said OK where the same replay
read with ``--from anthropic`` failed (``thinking-not-sent``). And a Vercel AI SDK log whose
``providerOptions.anthropic.caller`` names a pruned source read ``clean`` under ``lint --from
vercel`` (no provider given): a ``caller`` is Anthropic's alone, so ``caller-not-sent`` is judged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import (
    Event,
    EventFormatError,
    Kind,
    dumps_event,
    event_from_dict,
    parse_events,
    read_jsonl,
)

TRIMMER = '''
def drop_first_call(messages, budget):
    """Drop the first tool call of the first batch (and its result), keep the rest."""
    out, dropped = [], None
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls") and dropped is None:
            dropped = m["tool_calls"][0]["id"]
            m = dict(m, tool_calls=m["tool_calls"][1:])
        if m.get("role") == "tool" and m.get("tool_call_id") == dropped:
            continue
        out.append(m)
    return out
'''


def thinking_conversation() -> dict[str, Any]:
    """Extended thinking on; one thinking block before three parallel tool_use blocks, as sent."""
    calls = [{"type": "tool_use", "id": f"toolu_{c}", "name": "weather", "input": {"city": c}} for c in "abc"]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{c}", "content": f"{c}: 20C"} for c in "abc"]
    return {
        "model": "claude-sonnet-4-5",
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "messages": [
            {"role": "user", "content": "Weather in three cities?"},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "three calls", "signature": "s"}, *calls],
            },
            {"role": "user", "content": results},
        ],
    }


def test_a_tie_survives_import_and_the_replay_of_the_imported_log_fails_as_the_foreign_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "thinking.json"
    source.write_text(json.dumps(thinking_conversation()), encoding="utf-8")
    (tmp_path / "trim.py").write_text(TRIMMER, encoding="utf-8")
    log = tmp_path / "thinking.jsonl"
    assert main(["import", "--from", "anthropic", str(source), "-o", str(log)]) == 0
    assert [e.tied_to for e in read_jsonl(log) if e.kind is Kind.CALL] == [None, "toolu_a", "toolu_a"]
    strategy = f"messages:{tmp_path / 'trim.py'}:drop_first_call"
    replay = ["--per-request", "-s", strategy, "--fail-on", "anthropic", "-q"]
    capsys.readouterr()
    assert main(["project", "--from", "anthropic", "-H", str(source), *replay]) == 1
    foreign = capsys.readouterr().out.splitlines()[-1]
    assert main(["project", "-H", str(log), *replay]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == foreign.replace("thinking.json", "thinking.jsonl")
    assert foreign.startswith("FAIL: session thinking, request 1")


def test_a_vercel_call_whose_caller_was_pruned_is_flagged_without_a_provider_and_named_by_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = {"anthropic": {"caller": {"type": "code_execution_20250825", "toolId": "srvtoolu_gone"}}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Sum the sales."}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "toolu_q",
                    "toolName": "query",
                    "input": {"sql": "select 1"},
                    "providerOptions": options,
                }
            ],
        },  # fmt: skip
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "toolu_q",
                    "toolName": "query",
                    "output": {"type": "json", "value": 42},
                }
            ],
        },  # fmt: skip
        {"role": "assistant", "content": [{"type": "text", "text": "42"}]},
    ]
    source = tmp_path / "pruned.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", "--from", "vercel", str(source)]) == 1
    assert "caller-not-sent" in capsys.readouterr().out
    log = tmp_path / "pruned.jsonl"
    assert main(["import", "--from", "vercel", str(source), "-o", str(log)]) == 0
    assert "with 1 caller-not-sent (turncheck lint --from vercel" in capsys.readouterr().err
    assert main(["lint", str(log)]) == 1 and "caller-not-sent" in capsys.readouterr().out
    source_call = {"type": "tool-call", "toolCallId": "srvtoolu_gone", "toolName": "code_execution",
                   "input": {}, "providerExecuted": True}  # fmt: skip
    source_result = {"type": "tool-result", "toolCallId": "srvtoolu_gone", "toolName": "code_execution",
                     "output": {"type": "json", "value": {"return_code": 0}}}  # fmt: skip
    whole = [messages[0], {"role": "assistant", "content": [source_call, source_result]}, *messages[1:]]
    source.write_text(json.dumps(whole), encoding="utf-8")
    assert main(["lint", "--from", "vercel", str(source)]) == 0


@pytest.mark.parametrize("fast", [True, False])
def test_tied_to_and_caller_round_trip_through_jsonl_on_both_read_paths(fast: bool) -> None:
    call = Event(3, "s", 1, Kind.CALL, "b", 3.0, "0", "{}", 2, tied_to="a", caller="srv_1")
    line = dumps_event(call)
    assert line.endswith(',"tied_to":"a","caller":"srv_1"}')
    back = next(parse_events([line])) if fast else event_from_dict(json.loads(line))
    assert (back, back.tied_to, back.caller) == (call, "a", "srv_1")
    plain = Event(4, "s", 1, Kind.CALL, "c", 4.0, "0", "{}", 2)
    assert "tied_to" not in dumps_event(plain) and "caller" not in dumps_event(
        plain
    )  # old files' bytes unchanged


@pytest.mark.parametrize("kind", ["USER", "RESULT", "TERM"])
@pytest.mark.parametrize("name", ["tied_to", "caller"])
def test_a_tie_on_anything_but_a_call_is_refused_naming_the_field(kind: str, name: str) -> None:
    obj = {"seq": 0, "session": "s", "turn": 0, "kind": kind, "text": "x", name: "a"}
    if kind == "RESULT":
        obj["call_id"] = "a"
    with pytest.raises(EventFormatError, match=f"a {kind} must not carry '{name}' \\(only a CALL does\\)"):
        next(parse_events([json.dumps(obj)], "log.jsonl"))


@pytest.mark.parametrize(
    ("fmt", "messages", "named"),
    [
        ("anthropic", [{"role": "user", "content": "q"},
                       {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                                                         {"type": "tool_use", "id": "t2", "name": "f", "input": {}}]},
                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"},
                                                    {"type": "text", "text": "and?"},
                                                    {"type": "tool_result", "tool_use_id": "t2", "content": "2"}]},
                       {"role": "assistant", "content": "done"}],
         ("results-not-first", "call-not-answered-next", "result-not-next")),
        ("openai-responses", [{"role": "user", "content": "q"},
                              {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                              {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
                              {"type": "function_call_output", "call_id": "c2", "output": "2"},
                              {"role": "assistant", "content": "done"}],
         ("output-missing",)),
        ("bedrock", [{"role": "user", "content": [{"text": "q"}]}, {"role": "user", "content": [{"text": "again"}]},
                     {"role": "assistant", "content": [{"text": "a"}]}],
         ("roles-not-alternating",)),
    ],
)  # fmt: skip
def test_import_names_the_provider_rules_a_file_breaks(
    fmt: str, messages: list[Any], named: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "log.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    capsys.readouterr()
    assert main(["import", "--from", fmt, str(source), "-o", str(tmp_path / "log.jsonl")]) == 0
    warning = capsys.readouterr().err.splitlines()[0]
    assert warning.startswith(f"warning: {source} is written as it is, with ")
    assert all(f" {rule}" in warning for rule in named), warning
    assert warning.endswith(f"(turncheck lint --from {fmt} {source})")


def test_import_of_a_format_of_no_one_api_says_no_apis_rules_were_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "f", "input": {}}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    source = tmp_path / "log.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    capsys.readouterr()
    assert main(["import", "--from", "vercel", str(source), "-o", str(tmp_path / "log.jsonl")]) == 0
    warning = capsys.readouterr().err.splitlines()[0]
    assert "with 1 dangling-call (turncheck lint --from vercel" in warning
    assert warning.endswith("--provider API; no API's rules checked (--provider openai-chat, anthropic, "
                            "openai-responses, gemini, bedrock checks all of one API's))")  # fmt: skip


def test_a_later_anthropic_request_sending_the_turns_tool_use_without_its_thinking_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """langchain-ai/langchain#34794 (issue 50): a later request of the same turn sends the
    ``tool_use`` without the thinking block an earlier request sent it after. JSONL of request
    bodies shows both: ``thinking-not-sent``; kept, or dropped once the turn has ended, clean."""
    question = {"role": "user", "content": "weather?"}
    thinking = {"type": "thinking", "thinking": "look it up", "signature": "s"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "20C"}],
    }
    ended = [{"role": "assistant", "content": "20C"}, {"role": "user", "content": "thanks"}]

    def bodies(*last: list[Any]) -> str:
        sent = [[question], [question, {"role": "assistant", "content": [thinking, use]}, result], *last]
        return "".join(json.dumps({"model": "claude-sonnet-4-5", "messages": body}) + "\n" for body in sent)

    cases = {
        "pruned": ([question, {"role": "assistant", "content": [use]}, result], 1),
        "kept": ([question, {"role": "assistant", "content": [thinking, use]}, result], 0),
        "ended": ([question, {"role": "assistant", "content": [use]}, result, *ended], 0),
    }
    for name, (last, code) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(bodies(last), encoding="utf-8")
        capsys.readouterr()
        assert main(["lint", "--from", "anthropic", str(path)]) == code, name
        out = capsys.readouterr().out
        assert ("thinking-not-sent: " in out) is bool(code), out
        if code:
            assert f"{path}:3: record 2:" in out and "CALL toolu_1" in out
