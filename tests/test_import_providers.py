"""``--from anthropic`` and ``--from gemini`` on logs the real SDKs write: an agent loop runs the
``anthropic`` / ``google-genai`` client against a local transport serving scripted replies (no
network), so the request bodies are byte for byte what the SDK sends; histories Hypothesis draws
are dumped with the SDKs' own types. Skipped without the ``formats`` extra."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from turncheck.cli.app import main
from turncheck.models.events import Event, read_jsonl
from turncheck.models.history import History
from turncheck.models.importers import import_events
from turncheck.models.message_spans import openai_message, spans
from turncheck.testing import well_formed

anthropic: Any = None
genai: Any = None
at: Any = None
gt: Any = None
httpx: Any = None  # google-genai's transport
httpx2: Any = None  # anthropic's transport


@pytest.fixture(scope="module", autouse=True)
def _formats_extra() -> None:
    """The SDKs (the formats extra), imported when the first test runs, not while the module is
    collected: every xdist worker collects every module (3 s here)."""
    global anthropic, genai, at, gt, httpx, httpx2
    anthropic = pytest.importorskip("anthropic", reason="the formats extra (anthropic) is not installed")
    genai = pytest.importorskip("google.genai", reason="the formats extra (google-genai) is not installed")
    import httpx
    import httpx2
    from anthropic import types as at
    from google.genai import types as gt


SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PARALLEL_LOG = ["USER", "CALL", "RESULT", "TERM", "USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]
TOOL = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}


def structure(events: list[Event]) -> list[tuple[str, str | None, int]]:
    firsts: dict[int, int] = {}
    for e in events:
        firsts.setdefault(e.turn, len(firsts))
    return [(e.kind.name, e.call_id, firsts[e.turn]) for e in events]


# -- Anthropic ---------------------------------------------------------------------------------


def claude(*blocks: Any) -> Any:
    stop = "tool_use" if any(b.type == "tool_use" for b in blocks) else "end_turn"
    return at.Message(id="msg_x", type="message", role="assistant", model="claude-test", content=list(blocks),
                      stop_reason=stop, stop_sequence=None, usage=at.Usage(input_tokens=1, output_tokens=1))  # fmt: skip


def use(cid: str, city: str) -> Any:
    return at.ToolUseBlock(type="tool_use", id=cid, name="weather", input={"city": city})


def anthropic_agent(questions: list[str], replies: list[Any]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The agent loop as the SDK's docs write it: send, run each tool_use, send the results
    back in one user message, until the model answers; returns the request bodies and history."""
    bodies: list[Any] = []

    def serve(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=replies.pop(0).to_dict())

    client = anthropic.Anthropic(api_key="offline", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(serve)))  # fmt: skip
    messages: list[dict[str, Any]] = []
    for question in questions:
        messages.append({"role": "user", "content": question})
        while True:
            reply = client.messages.create(
                model="claude-test", max_tokens=256, system="be brief", messages=messages
            )
            messages.append(
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
            )
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                break
            results: list[at.ToolResultBlockParam] = [
                {"type": "tool_result", "tool_use_id": b.id, "content": TOOL[b.input["city"]]} for b in uses
            ]
            messages.append({"role": "user", "content": results})
    return bodies, messages


def anthropic_messages(history: History) -> list[dict[str, Any]]:
    """A drawn history as Messages API messages built from the SDK's types."""
    out: list[dict[str, Any]] = []
    for s in spans(history):
        m = openai_message(history, s)
        if m["role"] == "tool":
            block: at.ToolResultBlockParam = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m["content"],
            }
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)  # one user message carries a batch of results
            else:
                out.append({"role": "user", "content": [block]})
        elif m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
        else:
            calls = m.get("tool_calls") or []
            blocks = [use(c["id"], c["function"]["arguments"]) for c in calls] or [
                at.TextBlock(type="text", text=m["content"])
            ]
            out.append(
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in claude(*blocks).content],
                }
            )
    return out


def test_anthropic_clean_log_with_a_parallel_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bodies, history = anthropic_agent(
        ["weather in Oslo?", "and Rome and Paris?"],
        [claude(at.TextBlock(type="text", text="let me look"), use("toolu_1", "Oslo")),
         claude(at.TextBlock(type="text", text="rain in Oslo")),
         claude(use("toolu_2", "Rome"), use("toolu_3", "Paris")),
         claude(at.TextBlock(type="text", text="sun and fog"))],
    )  # fmt: skip
    src = tmp_path / "claude.json"
    src.write_text(json.dumps(history))
    out = tmp_path / "claude.jsonl"
    assert main(["import", "--from", "anthropic", str(src), "-o", str(out)]) == 0
    events = read_jsonl(out)
    assert [e.kind.name for e in events] == PARALLEL_LOG
    assert [e.call_id for e in events if e.call_id] == [
        "toolu_1",
        "toolu_1",
        "toolu_2",
        "toolu_3",
        "toolu_2",
        "toolu_3",
    ]
    assert events[2].text == "rain" and events[3].text == "rain in Oslo"
    assert main(["lint", "--from", "anthropic", str(src)]) == 0
    proxy = tmp_path / "requests.jsonl"  # what a proxy keeps: every request body the SDK sent
    proxy.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    assert [e.kind.name for e in import_events("anthropic", proxy)] == PARALLEL_LOG[:-1]
    assert bodies[0]["system"] == "be brief"


def test_anthropic_history_starting_on_an_orphaned_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stored window of a trimmer that started on a user message holding tool results."""
    _, history = anthropic_agent(
        ["weather in Oslo?", "thanks"],
        [claude(use("toolu_1", "Oslo")), claude(at.TextBlock(type="text", text="rain")),
         claude(at.TextBlock(type="text", text="you are welcome"))],
    )  # fmt: skip
    src = tmp_path / "window.json"
    src.write_text(json.dumps(history[2:]))
    assert main(["lint", "--from", "anthropic", str(src)]) == 1
    assert (
        f"{src}: session 'window': record 1: seq 0 session window turn 0 RESULT toolu_1"
        in capsys.readouterr().out
    )


@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_anthropic_round_trips_the_structure(events: list[Event], tmp_path: Path) -> None:
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps({"s0": anthropic_messages(History(events))}))
    assert structure(import_events("anthropic", path)) == structure(events)


# -- Gemini ------------------------------------------------------------------------------------


def gemini_reply(*parts: Any) -> Any:
    content = gt.Content(role="model", parts=list(parts))
    return gt.GenerateContentResponse(candidates=[gt.Candidate(content=content)])


def fcall(city: str, cid: str | None = None) -> Any:
    return gt.Part(function_call=gt.FunctionCall(id=cid, name="weather", args={"city": city}))


def gemini_agent(questions: list[str], replies: list[Any], ids: bool) -> tuple[list[Any], list[gt.Content]]:
    """The agent loop over ``google-genai``: every functionCall answered by a functionResponse
    part (all of a turn's in one user content), until the model answers in text."""
    bodies: list[Any] = []

    def serve(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200, json=replies.pop(0).model_dump(mode="json", by_alias=True, exclude_none=True)
        )

    client = genai.Client(api_key="offline", http_options=gt.HttpOptions(
        httpx_client=httpx.Client(transport=httpx.MockTransport(serve))))  # fmt: skip
    contents: list[gt.Content] = []
    for question in questions:
        contents.append(gt.Content(role="user", parts=[gt.Part(text=question)]))
        while True:
            reply = client.models.generate_content(model="gemini-test", contents=contents)
            content = reply.candidates[0].content
            contents.append(content)
            calls = [p.function_call for p in content.parts if p.function_call]
            if not calls:
                break
            contents.append(gt.Content(role="user", parts=[
                gt.Part(function_response=gt.FunctionResponse(id=c.id if ids else None, name=c.name,
                                                              response={"forecast": TOOL[c.args["city"]]}))
                for c in calls]))  # fmt: skip
    return bodies, contents


@pytest.mark.parametrize("dump", ["rest", "python"])
def test_gemini_clean_log_with_parallel_calls_paired_by_name_and_order(
    dump: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies, contents = gemini_agent(
        ["weather in Oslo?", "and Rome and Paris?"],
        [gemini_reply(fcall("Oslo")), gemini_reply(gt.Part(text="rain in Oslo")),
         gemini_reply(fcall("Rome"), fcall("Paris")), gemini_reply(gt.Part(text="sun and fog"))],
        ids=False,
    )  # fmt: skip
    src = tmp_path / "gemini.json"
    by_alias = dump == "rest"
    src.write_text(
        json.dumps([c.model_dump(mode="json", by_alias=by_alias, exclude_none=True) for c in contents])
    )
    events = import_events("gemini", src)
    assert [e.kind.name for e in events] == PARALLEL_LOG
    calls = [e.call_id for e in events if e.kind.name == "CALL"]
    assert [
        e.call_id for e in events if e.kind.name == "RESULT"
    ] == calls  # the n-th response answers the n-th call
    assert json.loads(events[8].text or "") == {"forecast": "fog"} and events[9].text == "sun and fog"
    assert main(["lint", "--from", "gemini", str(src)]) == 0
    proxy = tmp_path / "requests.jsonl"
    proxy.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    assert [e.kind.name for e in import_events("gemini", proxy)] == PARALLEL_LOG[:-1]


def test_gemini_ids_pair_when_given_and_a_stray_response_is_an_orphan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, contents = gemini_agent(
        ["weather in Rome and Paris?"],
        [gemini_reply(fcall("Rome", "c-1"), fcall("Paris", "c-2")), gemini_reply(gt.Part(text="sun and fog"))],
        ids=True,
    )  # fmt: skip
    contents[2].parts.reverse()  # responses may come in any order when they carry ids
    src = tmp_path / "gemini.json"
    src.write_text(
        json.dumps([c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents])
    )
    assert [(e.kind.name, e.call_id) for e in import_events("gemini", src)][1:5] == [
        ("CALL", "c-1"), ("CALL", "c-2"), ("RESULT", "c-2"), ("RESULT", "c-1")]  # fmt: skip
    stray = [
        contents[2].model_dump(mode="json", by_alias=True, exclude_none=True),
        *json.loads(src.read_text()),
    ]
    src.write_text(json.dumps(stray))
    assert main(["lint", "--from", "gemini", str(src)]) == 1
    assert (
        f"{src}: session 'gemini': record 1: seq 0 session gemini turn 0 RESULT c-2"
        in capsys.readouterr().out
    )


@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_gemini_round_trips_the_structure(events: list[Event], tmp_path: Path) -> None:
    contents: list[dict[str, Any]] = []
    h = History(events)
    for s in spans(h):
        m = openai_message(h, s)
        if m["role"] == "tool":
            part = gt.Part(
                function_response=gt.FunctionResponse(
                    id=m["tool_call_id"], name="tool", response={"output": m["content"]}
                )
            )
            c = gt.Content(role="user", parts=[part])
        elif m["role"] == "user":
            c = gt.Content(role="user", parts=[gt.Part(text=m["content"])])
        else:
            parts = [gt.Part(function_call=gt.FunctionCall(id=t["id"], name="tool", args={"input": t["function"]["arguments"]}))
                     for t in m.get("tool_calls") or []] or [gt.Part(text=m["content"])]  # fmt: skip
            c = gt.Content(role="model", parts=parts)
        contents.append(c.model_dump(mode="json", by_alias=True, exclude_none=True))
    path = tmp_path / "gemini.json"
    path.write_text(json.dumps({"contents": contents}))
    assert structure(import_events("gemini", path)) == structure(events)


def test_anthropic_non_adjacent_result_and_gemini_count_mismatch_are_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the APIs refuse: a tool_result not in the very next message; fewer function
    responses than the turn's calls (lint --from chooses the provider's rules)."""
    _, history = anthropic_agent(
        ["weather in Oslo?"], [claude(use("toolu_1", "Oslo")), claude(at.TextBlock(type="text", text="rain"))]
    )
    history.insert(2, {"role": "assistant", "content": [{"type": "text", "text": "one moment"}]})
    src = tmp_path / "claude.json"
    src.write_text(json.dumps(history))
    assert main(["lint", "--from", "anthropic", str(src)]) == 1
    out = capsys.readouterr().out
    assert (
        "result-not-next" in out
        and f"{src}: session 'claude': record 4: seq 3 session claude turn 0 RESULT toolu_1" in out
    )
    _, contents = gemini_agent(
        ["weather in Rome and Paris?"],
        [gemini_reply(fcall("Rome"), fcall("Paris")), gemini_reply(gt.Part(text="sun and fog"))],
        ids=False,
    )
    del contents[2].parts[1]  # one response for two calls
    src = tmp_path / "gemini.json"
    src.write_text(
        json.dumps([c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents])
    )
    assert main(["lint", "--from", "gemini", str(src)]) == 1
    out = capsys.readouterr().out
    assert (
        "response-count-mismatch" in out
        and f"{src}: session 'gemini': record 3: seq 3 session gemini turn 0 RESULT" in out
    )
