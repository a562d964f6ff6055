"""``--from langfuse`` and ``--from langsmith`` on exports the real SDKs make, offline: an agent
loop runs the ``openai`` client against a local transport serving scripted replies; LangSmith's
own tracing (``wrap_openai``, ``enabled="local"``: runs kept, never posted) records each call;
for Langfuse each call becomes a GENERATION ``ObservationsView`` holding what Langfuse's OpenAI
integration records (``langfuse/openai.py``: ``input`` ``{"tools", "messages"}`` for a call with
tools, ``output`` the message's ``role`` / ``tool_calls`` / ``content``), serialised by the SDK's
own API models (its import alone would patch ``openai`` for the whole process). Every socket connect and
DNS lookup is refused and recorded, so a network call fails the test. Skipped without the
``formats`` extra (``langfuse``, ``langsmith``) or ``openai``."""

from __future__ import annotations

import datetime as dt
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import read_jsonl
from turncheck.models.importers import import_log

openai = pytest.importorskip("openai", reason="openai (the agent under trace) is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 (openai's transport) is not installed")

PARALLEL_LOG = ["USER", "CALL", "RESULT", "TERM", "USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]
TOOL = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}
TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]


def completion(*cities: str, text: str | None = None) -> dict[str, Any]:
    calls = [{"id": f"call_{c}", "type": "function", "function": {"name": "weather", "arguments": json.dumps({"city": c})}}
             for c in cities]  # fmt: skip
    message = {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}
    return {"id": "chatcmpl", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}]}  # fmt: skip


SCRIPT = [
    completion("Oslo"),
    completion(text="rain in Oslo"),
    completion("Rome", "Paris"),
    completion(text="sun, fog"),
]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every connect and DNS lookup refused and recorded: the list must stay empty."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network refused in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    yield attempts
    assert attempts == []


def chat_agent(
    client: Any, questions: list[str], replies: list[dict[str, Any]], keep: int | None = None
) -> None:
    """The Chat Completions tool loop as OpenAI's docs write it; ``keep`` sends only the newest
    ``keep`` messages of the second question's first request (a trimmer that cut a pair)."""
    served = list(replies)
    client._client._transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=served.pop(0)))
    messages: list[Any] = [{"role": "system", "content": "be brief"}]
    for q, question in enumerate(questions):
        messages.append({"role": "user", "content": question})
        first = True
        while True:
            sent = messages[-keep:] if keep and q == 1 and first else list(messages)
            reply = client.chat.completions.create(model="gpt-test", messages=sent, tools=TOOLS)
            first = False
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                city = json.loads(call.function.arguments)["city"]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": TOOL[city]})


def openai_client(wrap: Any = None) -> Any:
    client = openai.OpenAI(api_key="offline", base_url="http://model.invalid/v1", max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(lambda r: httpx2.Response(500))))  # fmt: skip
    return wrap(client) if wrap else client


def kinds(path: Path, fmt: str) -> list[str]:
    return [e.kind.name for e in import_log(fmt, path).events]


# -- Langfuse ----------------------------------------------------------------------------------


def langfuse_export(keep: int | None = None) -> list[dict[str, Any]]:
    """A session's traces (one per question) as ``GET /api/public/traces/{id}`` returns them."""
    pytest.importorskip("langfuse", reason="the formats extra (langfuse) is not installed")
    from langfuse.api import ObservationsView, TraceWithFullDetails, Usage

    calls: list[tuple[dict[str, Any], Any]] = []
    client = openai_client()
    create = client.chat.completions.create

    def recorded(**kwargs: Any) -> Any:
        reply = create(**kwargs)
        calls.append((kwargs, reply))
        return reply

    client.chat.completions.create = recorded
    chat_agent(client, ["weather in Oslo?", "and Rome and Paris?"], SCRIPT, keep)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    traces: dict[int, list[Any]] = {0: [], 1: []}
    for i, (kwargs, reply) in enumerate(calls):
        at = t0 + dt.timedelta(seconds=i)
        traces[0 if i < 2 else 1].append(ObservationsView(
            id=f"gen-{i + 1}", trace_id=f"trace-{1 if i < 2 else 2}", type="GENERATION", start_time=at,
            model="gpt-test", model_parameters={}, metadata={}, level="DEFAULT", environment="default",
            input={"tools": kwargs["tools"], "messages": kwargs["messages"]},
            output=reply.choices[0].message.model_dump(include={"role", "tool_calls", "content"}),
            usage=Usage(input=1, output=1, total=2, unit="TOKENS"), usage_details={}, cost_details={}))  # fmt: skip
        traces[0 if i < 2 else 1].append(ObservationsView(
            id=f"tool-{i + 1}", type="TOOL", start_time=at, model_parameters={}, metadata={}, level="DEFAULT",
            environment="default", input={"city": "x"}, output="rain", usage=Usage(input=0, output=0, total=0, unit="TOKENS"),
            usage_details={}, cost_details={}))  # fmt: skip
    return [
        json.loads(
            TraceWithFullDetails(
                id=f"trace-{n + 1}",
                timestamp=t0,
                session_id="chat-1",
                tags=[],
                public=False,
                environment="default",
                html_path=f"/trace/{n + 1}",
                observations=obs,
                scores=[],
            ).json()
        )  # fmt: skip
        for n, obs in traces.items()
    ]


def test_langfuse_session_export_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = langfuse_export()
    assert traces[0]["sessionId"] == "chat-1" and traces[0]["observations"][0]["type"] == "GENERATION"
    assert isinstance(traces[0]["observations"][0]["input"], dict)  # {"tools": …, "messages": […]}
    src = tmp_path / "session.json"
    src.write_text(json.dumps(traces))
    out = tmp_path / "log.jsonl"
    assert main(["import", "--from", "langfuse", str(src), "-o", str(out)]) == 0
    events = read_jsonl(out)
    assert [e.kind.name for e in events] == PARALLEL_LOG and {e.session for e in events} == {"chat-1"}
    assert [e.text for e in events if e.kind.name == "TERM"] == ["rain in Oslo", "sun, fog"]
    assert main(["lint", "--from", "langfuse", str(src)]) == 0
    assert "clean: no structural problems" in capsys.readouterr().out
    lines = tmp_path / "traces.jsonl"  # JSON lines of traces, in reverse: startTime orders the calls
    lines.write_text("".join(json.dumps(t) + "\n" for t in reversed(traces)))
    assert kinds(lines, "langfuse") == PARALLEL_LOG
    one = tmp_path / "trace.json"  # one trace alone: its own session
    one.write_text(json.dumps(traces[0]))
    assert kinds(one, "langfuse") == PARALLEL_LOG[:4]


def test_langfuse_call_sent_starting_on_an_orphaned_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The third call was sent trimmed to its newest 3 messages: a tool result whose call was cut.
    The log (rebuilt from the last call) is whole; the finding names the call that was sent."""
    src = tmp_path / "session.json"
    src.write_text(json.dumps(langfuse_export(keep=3)))
    assert main(["lint", "--from", "langfuse", str(src)]) == 1
    out = capsys.readouterr().out
    assert (
        f"request {src}:1: trace 2: observation 'gen-3': input message 1: seq 0 session chat-1 turn 0 RESULT call_Oslo"
        in out
    )
    assert "orphan-result" in out and "result-not-next" in out


# -- LangSmith ---------------------------------------------------------------------------------


def langsmith_runs(offline: list[Any], keep: int | None = None) -> list[str]:
    """Every run of an agent traced by ``wrap_openai``, as ``Run.json()`` lines (llm runs and
    the agent's chain run), kept locally and never posted."""
    ls = pytest.importorskip("langsmith", reason="the formats extra (langsmith) is not installed")
    from langsmith import schemas
    from langsmith.run_helpers import get_current_run_tree
    from langsmith.wrappers import wrap_openai

    client = openai_client(wrap_openai)

    @ls.traceable(name="agent")
    def agent() -> Any:
        chat_agent(client, ["weather in Oslo?", "and Rome and Paris?"], SCRIPT, keep)
        return get_current_run_tree()

    nowhere = ls.Client(
        api_url="http://langsmith.invalid", api_key="offline", info={}, auto_batch_tracing=False
    )
    with ls.tracing_context(enabled="local", client=nowhere, metadata={"thread_id": "chat-1"}):
        root = agent()
    runs = [root, *root.child_runs]
    fields = set(schemas.Run.model_fields)
    return [
        schemas.Run(
            **{k: v for k, v in vars(r).items() if k in fields and k != "child_runs"}
        ).model_dump_json()
        for r in runs
    ]


def test_langsmith_runs_round_trip(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = langsmith_runs(offline)
    assert [json.loads(r)["run_type"] for r in runs] == ["chain", "llm", "llm", "llm", "llm"]
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(r + "\n" for r in runs))
    out = tmp_path / "log.jsonl"
    assert main(["import", "--from", "langsmith", str(src), "-o", str(out)]) == 0
    events = read_jsonl(out)
    assert [e.kind.name for e in events] == PARALLEL_LOG and {e.session for e in events} == {"chat-1"}
    assert [e.call_id for e in events if e.call_id][2:] == [
        "call_Rome",
        "call_Paris",
        "call_Rome",
        "call_Paris",
    ]
    assert main(["lint", "--from", "langsmith", str(src)]) == 0
    assert "clean: no structural problems" in capsys.readouterr().out
    listed = tmp_path / "runs.json"  # a JSON list of runs, newest first: start_time orders the calls
    listed.write_text("[" + ",".join(reversed(runs)) + "]")
    assert kinds(listed, "langsmith") == PARALLEL_LOG


def test_langsmith_call_sent_starting_on_an_orphaned_result(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "runs.jsonl"
    runs = langsmith_runs(offline, keep=3)
    src.write_text("".join(r + "\n" for r in runs))
    third = json.loads(runs[3])["id"]
    assert main(["lint", "--from", "langsmith", str(src)]) == 1
    out = capsys.readouterr().out
    assert (
        f"request {src}:4: run '{third}': input message 1: seq 0 session chat-1 turn 0 RESULT call_Oslo"
        in out
    )
    assert main(["import", "--from", "langsmith", str(src), "-o", str(tmp_path / "log.jsonl")]) == 0
    assert [e.kind.name for e in read_jsonl(tmp_path / "log.jsonl")] == PARALLEL_LOG
