"""``--from langfuse`` and ``--from langsmith`` on exports the real SDKs make, offline
(:mod:`docs.tools.trace_exports`: an ``openai`` agent on a local transport, traced by LangSmith
kept locally, serialised by Langfuse's own API models). Every socket connect and DNS lookup is
refused and recorded, so a network call fails the test. Skipped without the ``formats`` extra
(``langfuse``, ``langsmith``, ``openai``)."""

from __future__ import annotations

import datetime as dt
import json
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from turncheck.cli.app import main
from turncheck.models.events import Event, read_jsonl
from turncheck.models.history import History
from turncheck.models.importers import import_log
from turncheck.models.message_spans import openai_message, spans
from turncheck.testing import well_formed

pytest.importorskip("openai", reason="the formats extra (openai, the agent traced) is not installed")
pytest.importorskip("httpx2", reason="httpx2 (openai's transport) is not installed")
from docs.tools.trace_exports import EXAMPLES, langfuse_export, langsmith_runs, offline_runs  # noqa: E402

PARALLEL_LOG = ["USER", "CALL", "RESULT", "TERM", "USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every connect and DNS lookup refused and recorded: the list must stay empty."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network refused in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    yield attempts
    assert attempts == []


def kinds(path: Path, fmt: str) -> list[str]:
    return [e.kind.name for e in import_log(fmt, path).events]


def lint(fmt: str, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["lint", "--from", fmt, str(path)])
    return code, capsys.readouterr().out


# -- Langfuse ----------------------------------------------------------------------------------


def test_langfuse_session_export_round_trips(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langfuse", reason="the formats extra (langfuse) is not installed")
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
    code, printed = lint("langfuse", src, capsys)
    assert code == 0 and "4 model requests checked as sent" in printed and "clean" in printed
    lines = tmp_path / "traces.jsonl"  # JSON lines of traces, in reverse: startTime orders the calls
    lines.write_text("".join(json.dumps(t) + "\n" for t in reversed(traces)))
    assert kinds(lines, "langfuse") == PARALLEL_LOG
    bare = tmp_path / "observations.json"  # GET /api/public/observations: a conversation per trace
    bare.write_text(json.dumps({"data": [o for t in traces for o in t["observations"]], "meta": {}}))
    assert kinds(bare, "langfuse") == PARALLEL_LOG[:4] + PARALLEL_LOG
    one = tmp_path / "trace.json"  # one trace alone: its own conversation
    one.write_text(json.dumps(traces[0]))
    assert kinds(one, "langfuse") == PARALLEL_LOG[:4]


def test_langfuse_call_sent_starting_on_an_orphaned_result(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The third call was sent trimmed to its newest 3 messages: a tool result whose call was
    cut. The log (rebuilt from the last call) is whole; the finding names the call sent."""
    pytest.importorskip("langfuse", reason="the formats extra (langfuse) is not installed")
    src = tmp_path / "session.json"
    src.write_text(json.dumps(langfuse_export(keep=3)))
    code, printed = lint("langfuse", src, capsys)
    assert code == 1 and "orphan-result" in printed and "result-not-next" in printed
    assert (
        f"request {src}:1: trace 2: observation 'gen-3': input message 1: seq 0 session chat-1 turn 0 RESULT call_Oslo"
        in printed
    )
    assert kinds(src, "langfuse") == PARALLEL_LOG


# -- LangSmith ---------------------------------------------------------------------------------


def test_langsmith_runs_round_trip(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langsmith", reason="the formats extra (langsmith) is not installed")
    runs = langsmith_runs()
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
    code, printed = lint("langsmith", src, capsys)
    assert code == 0 and "4 model requests checked as sent" in printed and "clean" in printed
    listed = tmp_path / "runs.json"  # a JSON list of runs, newest first: start_time orders the calls
    listed.write_text("[" + ",".join(reversed(runs)) + "]")
    assert kinds(listed, "langsmith") == PARALLEL_LOG


def test_langsmith_call_sent_starting_on_an_orphaned_result(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langsmith", reason="the formats extra (langsmith) is not installed")
    runs = langsmith_runs(keep=3)
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(r + "\n" for r in runs))
    code, printed = lint("langsmith", src, capsys)
    third = json.loads(runs[3])["id"]
    assert code == 1
    assert (
        f"request {src}:4: run '{third}': input message 1: seq 0 session chat-1 turn 0 RESULT call_Oslo"
        in printed
    )
    assert kinds(src, "langsmith") == PARALLEL_LOG


def langchain_runs(reported: int | None = None) -> list[str]:
    """A LangChain chat model's tool loop traced by LangSmith's ``LangChainTracer``: its runs
    hold ``dumpd`` messages. The tracer posts each run as it goes; the client's session answers
    in process (a requests adapter), so nothing leaves it and the runs are read from the tree.
    With ``reported``, each reply carries ``usage_metadata`` with that many input tokens."""
    ls = pytest.importorskip("langsmith", reason="the formats extra (langsmith) is not installed")
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    import requests
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langsmith import schemas
    from langsmith.run_helpers import get_current_run_tree

    class Accepting(requests.adapters.BaseAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            response = requests.Response()
            response.status_code, response._content, response.request = 202, b"{}", request
            return response

        def close(self) -> None:
            pass

    usage = (
        {"usage_metadata": {"input_tokens": reported, "output_tokens": 1, "total_tokens": reported + 1}}
        if reported
        else {}
    )

    def calls(*cities: str) -> AIMessage:
        return AIMessage(
            "",
            tool_calls=[{"name": "weather", "args": {"city": c}, "id": f"call_{c}"} for c in cities],
            **usage,
        )

    replies = [
        calls("Oslo"),
        AIMessage("rain in Oslo", **usage),
        calls("Rome", "Paris"),
        AIMessage("sun, fog", **usage),
    ]
    model = GenericFakeChatModel(messages=iter(replies))

    @ls.traceable(name="agent")
    def agent() -> Any:
        messages: list[Any] = []
        for question in ("weather in Oslo?", "and Rome and Paris?"):
            messages.append(HumanMessage(question))
            while True:
                reply = model.invoke(list(messages))
                messages.append(reply)
                if not reply.tool_calls:
                    break
                messages += [ToolMessage("rain", tool_call_id=c["id"]) for c in reply.tool_calls]
        return get_current_run_tree()

    nowhere = ls.Client(
        api_url="http://langsmith.invalid", api_key="offline", info={}, auto_batch_tracing=False
    )
    nowhere.session.mount("http://", Accepting())  # after the client mounted its own adapters
    with ls.tracing_context(enabled="local", client=nowhere, metadata={"thread_id": "chat-1"}):
        root = agent()
    fields = set(schemas.Run.model_fields) - {"child_runs"}
    return [
        schemas.Run(**{k: v for k, v in vars(r).items() if k in fields}).model_dump_json()
        for r in root.child_runs
    ]


def test_langsmith_runs_of_a_langchain_chat_model(offline: list[Any], tmp_path: Path) -> None:
    runs = langchain_runs()
    assert json.loads(runs[1])["inputs"]["messages"][0][1]["id"][-1] == "AIMessage"
    assert "generations" in json.loads(runs[0])["outputs"]
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(r + "\n" for r in runs))
    events = import_log("langsmith", src).events
    assert [e.kind.name for e in events] == PARALLEL_LOG and events[-1].text == "sun, fog"
    assert main(["lint", "--from", "langsmith", str(src)]) == 0


@pytest.mark.parametrize(
    ("fmt", "name", "code"),
    [("langfuse", "langfuse-session.json", 0), ("langfuse", "langfuse-trimmed.json", 1),
     ("langsmith", "langsmith-runs.jsonl", 0), ("langsmith", "langsmith-trimmed.jsonl", 1)],
)  # fmt: skip
def test_the_documented_examples(fmt: str, name: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/your-agent.md's commands on the committed examples (``python -m docs.tools.trace_exports``)."""
    assert lint(fmt, EXAMPLES / name, capsys)[0] == code


def exported(fmt: str, asked: list[tuple[list[Any], Any]]) -> str:
    """One model call per (input, output), serialised by the SDK's own models."""
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    if fmt == "langfuse":
        from langfuse.api import ObservationLevel, ObservationsView, TraceWithFullDetails, Usage

        observations = [ObservationsView(id=f"g{i}", type="GENERATION", start_time=t0 + dt.timedelta(seconds=i),
                                         input=inputs, output=output, model_parameters={}, metadata={},
                                         usage=Usage(input=0, output=0, total=0), level=ObservationLevel.DEFAULT,
                                         usage_details={},
                                         cost_details={}, environment="default")
                        for i, (inputs, output) in enumerate(asked)]  # fmt: skip
        return TraceWithFullDetails(id="t", timestamp=t0, tags=[], public=False, environment="default", html_path="/t",
                                    observations=observations, scores=[]).json()  # fmt: skip
    from langsmith import schemas

    return "".join(schemas.Run(id=uuid.UUID(int=i), name="llm", run_type="llm", trace_id=uuid.UUID(int=0),
                               start_time=t0 + dt.timedelta(seconds=i), inputs={"messages": inputs},
                               outputs={"choices": [{"message": output}]}).model_dump_json() + "\n"
                   for i, (inputs, output) in enumerate(asked))  # fmt: skip


def structure(events: list[Event]) -> list[tuple[str, str | None, int]]:
    firsts: dict[int, int] = {}
    for e in events:
        firsts.setdefault(e.turn, len(firsts))
    return [(e.kind.name, e.call_id, firsts[e.turn]) for e in events]


@pytest.mark.parametrize("fmt", ["langfuse", "langsmith"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=well_formed(max_turns=4, dangling=False, parallel=True))
def test_round_trips_the_structure(fmt: str, events: list[Event], tmp_path: Path) -> None:
    """One model call per assistant message (its input all the messages before it): the log
    rebuilt from the last call is the history drawn."""
    pytest.importorskip(fmt, reason=f"the formats extra ({fmt}) is not installed")
    assume(events)  # an export without a model call is refused, naming the file
    history = History(events)
    messages = [openai_message(history, s) for s in spans(history)]
    asked = [(messages[:k], m) for k, m in enumerate(messages) if m["role"] == "assistant"]
    src = tmp_path / f"{fmt}.json"
    src.write_text(exported(fmt, asked))
    assert structure(import_log(fmt, src).events) == structure(events)


# -- An Anthropic call, recorded as the tracers record it ---------------------------------------
ANTHROPIC_REPLIES = [
    {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
     "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}],
     "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 5}},
    {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
     "content": [{"type": "text", "text": "rain"}], "stop_sequence": None, "usage": {"input_tokens": 80, "output_tokens": 5}},
]  # fmt: skip


def anthropic_runs(trim: bool) -> list[str]:
    """An Anthropic tool loop traced by LangSmith's ``wrap_anthropic`` (kept locally, never
    posted), the ``anthropic`` client on a local transport; ``trim`` sends the second call only
    the tool result, its call cut away."""
    anthropic = pytest.importorskip("anthropic", reason="the formats extra (anthropic) is not installed")
    import httpx2
    import langsmith as ls
    from langsmith.run_helpers import get_current_run_tree
    from langsmith.wrappers import wrap_anthropic

    served = list(ANTHROPIC_REPLIES)
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=served.pop(0)))
    client = wrap_anthropic(anthropic.Anthropic(api_key="offline", base_url="http://anthropic.invalid",
                                                http_client=httpx2.Client(transport=transport)))  # fmt: skip
    tools = [{"name": "weather", "input_schema": {"type": "object"}}]

    @ls.traceable(name="agent")
    def agent() -> Any:
        messages: list[Any] = [{"role": "user", "content": "weather in Oslo?"}]
        reply = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=list(messages), tools=tools
        )
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "rain"}],
            }
        )
        client.messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=messages[2:] if trim else messages, tools=tools
        )
        return get_current_run_tree()

    return offline_runs(agent)


def test_an_anthropic_call_is_read_as_the_messages_api(
    offline: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out trace (issue 51): a traced Anthropic call's messages are the Messages
    API's (``tool_use`` / ``tool_result`` blocks), and the reader took them as Chat Completions,
    the blocks opaque — so a call sent only its tool result, the call cut away, linted clean.
    Now such a message is read by the Anthropic reader and the request held to Anthropic's rules;
    the same structure in a Langfuse GENERATION too."""
    for trim, code in ((False, 0), (True, 1)):
        path = tmp_path / f"runs-{trim}.jsonl"
        path.write_text("\n".join(anthropic_runs(trim)) + "\n")
        got, out = lint("langsmith", path, capsys)
        assert got == code, out
        assert ("orphan-result" in out) == trim and "opaque" not in capsys.readouterr().err
    runs = [json.loads(line) for line in (tmp_path / "runs-True.jsonl").read_text().splitlines()]
    llm = [r for r in runs if r["run_type"] == "llm"]
    observations = [{"id": f"gen-{i}", "traceId": "t", "type": "GENERATION", "startTime": r["start_time"],
                     "input": r["inputs"]["messages"], "output": ANTHROPIC_REPLIES[i]} for i, r in enumerate(llm)]  # fmt: skip
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps([{"id": "t", "observations": observations}]))
    got, out = lint("langfuse", trace, capsys)
    assert got == 1 and "orphan-result" in out, out
