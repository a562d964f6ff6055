"""The Responses API's ``reasoning`` ↔ ``function_call`` tie (``reasoning-not-sent``) on a log the
real ``openai`` client builds: the agent loop of its docs (send, append ``response.output``, run
each call) against a local transport serving a reasoning model's scripted outputs — a reasoning
item before a parallel call, then before a single call. Skipped without the ``openai`` package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, read_jsonl
from turncheck.models.importers import import_events
from turncheck.models.per_request import replay_requests
from turncheck.models.provider_rules import provider_findings

openai = pytest.importorskip("openai", reason="the peers extra (openai-agents, with openai) is not installed")
import httpx  # noqa: E402  (openai's transport)


def output(*items: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp", "object": "response", "created_at": 0, "model": "o4-mini", "status": "completed",
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "output": list(items)}  # fmt: skip


def call(cid: str, city: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": "weather",
            "arguments": json.dumps({"city": city}), "status": "completed"}  # fmt: skip


def say(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def reasoning(rid: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": rid, "summary": []}


@pytest.fixture(scope="module")
def conversation() -> tuple[list[Any], list[dict[str, Any]]]:
    """The request bodies the client sent, and the input items the loop kept."""
    replies = [output(reasoning("rs_1"), call("call_a", "Oslo"), call("call_b", "Rome")), output(say("rain, sun")),
               output(reasoning("rs_2"), call("call_c", "Paris")), output(say("fog"))]  # fmt: skip
    bodies: list[Any] = []

    def serve(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=replies.pop(0))

    client = openai.OpenAI(api_key="offline", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(serve)))  # fmt: skip
    items: list[dict[str, Any]] = []
    for question in ("weather in Oslo and Rome?", "and Paris?"):
        items.append({"role": "user", "content": question})
        while True:
            response = client.responses.create(model="o4-mini", input=items)
            items += [o.model_dump(exclude_none=True) for o in response.output]
            calls = [o for o in response.output if o.type == "function_call"]
            if not calls:
                break
            items += [{"type": "function_call_output", "call_id": c.call_id, "output": "ok"} for c in calls]
    return bodies, items


def events_of(tmp_path: Path, items: list[dict[str, Any]]) -> list[Event]:
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"input": items}))
    return import_events("openai-responses", path)


def test_the_calls_after_a_reasoning_item_are_tied_to_the_first(
    conversation: tuple[list[Any], list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies, items = conversation
    assert [i.get("type") for i in items[1:4]] == ["reasoning", "function_call", "function_call"]
    events = events_of(tmp_path, items)
    assert [(e.kind.name, e.call_id, e.tied_to) for e in events if e.call_id and e.kind.name == "CALL"] == [
        ("CALL", "call_a", None), ("CALL", "call_b", "call_a"), ("CALL", "call_c", None)
    ]  # fmt: skip
    assert provider_findings("openai-responses", events) == []
    assert main(["lint", "--from", "openai-responses", str(tmp_path / "items.json")]) == 0
    requests = tmp_path / "requests.jsonl"  # every body the client sent, as a proxy keeps them
    requests.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    assert main(["lint", "--from", "openai-responses", str(requests)]) == 0
    out = tmp_path / "items.jsonl"  # the tie is kept in our JSONL (a CALL's tied_to), as it was sent
    assert main(["import", "--from", "openai-responses", str(tmp_path / "items.json"), "-o", str(out)]) == 0
    assert read_jsonl(out) == events
    assert [e.tied_to for e in read_jsonl(out)] == [e.tied_to for e in events]
    assert '"tied_to":"call_a"' in out.read_text(encoding="utf-8")
    capsys.readouterr()


def test_a_window_without_the_call_carrying_the_reasoning_is_refused(
    conversation: tuple[list[Any], list[dict[str, Any]]], tmp_path: Path
) -> None:
    events = events_of(tmp_path, conversation[1])  # U Ca Cb Ra Rb T U Cc Rc T
    assert [e.kind.name for e in events[:6]] == ["USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]
    keeps_b = [events[0], events[2], events[4], events[5]]  # call_a and its output cut away
    assert provider_findings("openai-responses", keeps_b) == [("reasoning-not-sent", 1)]
    cut_in_the_run = events[2:]  # a suffix window starting between the parallel calls
    assert provider_findings("openai-responses", cut_in_the_run) == [
        ("reasoning-not-sent", 0), ("orphan-output", 1)
    ]  # fmt: skip
    assert provider_findings("openai-responses", events[1:]) == []  # both calls, the reasoning with them
    assert provider_findings("openai-responses", events[6:]) == []
    assert provider_findings("openai-chat", keeps_b) == []  # Chat Completions has no such tie


def test_fail_on_openai_responses_gates_a_window_cut_between_the_calls(
    conversation: tuple[list[Any], list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """M0 at budget 8 starts request 1's window on call_b; M5 drops the pair it cuts instead."""
    events = events_of(tmp_path, conversation[1])
    window = list(replay_requests("items", events, 8, "M0", EstimateCost()))[1].window
    assert provider_findings("openai-responses", window.events) == [
        ("reasoning-not-sent", 0), ("orphan-output", 1)
    ]  # fmt: skip
    argv = ["project", "-q", "--from", "openai-responses", "-H", str(tmp_path / "items.json"), "-b", "8",
            "--per-request", "--fail-on", "openai-responses", "-s"]  # fmt: skip
    capsys.readouterr()
    assert main([*argv, "M0"]) == 1
    assert (
        "request 1 (after 5 events): openai-responses (reasoning-not-sent at CALL#2(call_b); orphan-output at "
        "RESULT#3(call_a)); window cost 6 ≤ budget 8: CALL#2(call_b)"
        in capsys.readouterr().out
    )
    assert main([*argv, "M5"]) == 0


def test_a_later_request_sending_a_call_without_the_reasoning_it_was_first_sent_after_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vercel/ai#11036 (issue 50): a store that drops reasoning items sends the call bare in the
    next request. JSONL of request bodies shows both requests: the call is tied to the reasoning
    item it was first sent after, so ``reasoning-not-sent`` flags it; kept, the file is clean."""
    user = {"role": "user", "content": "weather?"}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "w", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "20C"}
    later = [{"role": "assistant", "content": "20C"}, {"role": "user", "content": "tomorrow?"}]

    def bodies(keep: bool) -> str:
        sent = [
            [user],
            [user, reasoning, call, output],
            [user, *([reasoning] if keep else []), call, output, *later],
        ]
        return "".join(json.dumps({"model": "o4-mini", "input": body}) + "\n" for body in sent)

    pruned, kept = tmp_path / "pruned.jsonl", tmp_path / "kept.jsonl"
    pruned.write_text(bodies(keep=False), encoding="utf-8")
    kept.write_text(bodies(keep=True), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", "--from", "openai-responses", str(pruned)]) == 1
    out = capsys.readouterr().out
    assert "reasoning-not-sent" in out and f"{pruned}:3: record 2:" in out and "CALL call_1" in out
    assert main(["lint", "--from", "openai-responses", str(kept)]) == 0
    capsys.readouterr()
    one = tmp_path / "one.json"  # a single history without any reasoning item: nothing to tie to
    one.write_text(json.dumps([user, call, output, *later]), encoding="utf-8")
    assert main(["lint", "--from", "openai-responses", str(one)]) == 0
