"""Vendor compaction read as SUMMARY events, and ``--from adk``: Anthropic's ``compaction`` block,
the Responses ``compaction`` item and ADK compaction events, each written by the real library's
own types (``anthropic``'s beta blocks, ``openai``'s response items, ``google-adk`` ``Event``
objects in an ``InMemorySessionService`` session dumped with ``model_dump(mode="json")``),
offline. A correct compaction lints clean; one that summarises an open call, or whose timestamp
range hides an event it did not summarise, is a coverage finding naming both."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.importers import import_events
from turncheck.testing import well_formed


def kinds(events: list[Event]) -> list[str]:
    return [e.kind.name for e in events]


def summary_of(events: list[Event]) -> Event:
    return next(e for e in events if e.kind is Kind.SUMMARY)


def lint(fmt: str, path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["lint", "--from", fmt, str(path)])
    return code, capsys.readouterr().out


# -- Anthropic ---------------------------------------------------------------------------------


def anthropic_log(compaction_at: int) -> list[dict[str, Any]]:
    """user, tool_use, tool_result, answer, user, answer — an assistant message opening with a
    ``compaction`` block (then text) inserted at message ``compaction_at``."""
    bt = pytest.importorskip("anthropic.types.beta", reason="the formats extra (anthropic) is not installed")

    def assistant(*blocks: Any) -> dict[str, Any]:
        message = bt.BetaMessage(id="msg", type="message", role="assistant", model="claude-test",
                                 content=list(blocks), stop_reason="end_turn", stop_sequence=None,
                                 usage=bt.BetaUsage(input_tokens=1, output_tokens=1))  # fmt: skip
        return {"role": "assistant", "content": [b.model_dump(mode="json", exclude_none=True) for b in message.content]}  # fmt: skip

    result = bt.BetaToolResultBlockParam(type="tool_result", tool_use_id="toolu_1", content="rain")
    messages = [
        {"role": "user", "content": "weather in Oslo?"},
        assistant(bt.BetaToolUseBlock(type="tool_use", id="toolu_1", name="weather", input={"city": "Oslo"})),
        {"role": "user", "content": [result]},
        assistant(bt.BetaTextBlock(type="text", text="rain in Oslo")),
        {"role": "user", "content": "and tomorrow?"},
        assistant(bt.BetaTextBlock(type="text", text="sun")),
    ]
    summary = assistant(bt.BetaCompactionBlock(type="compaction", content="Asked Oslo's weather: rain."),
                        bt.BetaTextBlock(type="text", text="go on"))  # fmt: skip
    return [*messages[:compaction_at], summary, *messages[compaction_at:]]


def test_anthropic_compaction_block_covers_everything_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(anthropic_log(4)))
    events = import_events("anthropic", path)
    assert kinds(events) == ["USER", "CALL", "RESULT", "TERM", "SUMMARY", "TERM", "USER", "TERM"]
    s = summary_of(events)
    assert (s.covers, s.text) == ((0, 3), "Asked Oslo's weather: rain.")
    assert lint("anthropic", path, capsys)[0] == 0
    failed = anthropic_log(4)
    failed[4]["content"][0]["content"] = None  # a failed compaction: a no-op to the API
    path.write_text(json.dumps(failed))
    assert "SUMMARY" not in kinds(import_events("anthropic", path))


def test_anthropic_compaction_over_an_open_tool_use_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(anthropic_log(2)))
    code, out = lint("anthropic", path, capsys)
    assert code == 1
    assert "summary-covers-open-call" in out
    assert "seq 2 session claude turn 0 SUMMARY covers [0, 1]; " in out
    assert (
        "seq 1 session claude turn 0 CALL toolu_1: the call gets its RESULT at seq 4, after the summary"
        in out
    )


# -- OpenAI Responses --------------------------------------------------------------------------


def responses_log(compaction_at: int) -> list[dict[str, Any]]:
    rt = pytest.importorskip("openai.types.responses", reason="the openai package is not installed")
    items: list[Any] = [
        {"role": "user", "content": "weather in Oslo?"},
        rt.ResponseFunctionToolCall(type="function_call", call_id="call_1", name="weather", arguments='{"city":"Oslo"}'),
        {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
        rt.ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                 content=[rt.ResponseOutputText(type="output_text", text="rain", annotations=[])]),
        {"role": "user", "content": "and tomorrow?"},
    ]  # fmt: skip
    items.insert(
        compaction_at, rt.ResponseCompactionItem(id="cmp_1", type="compaction", encrypted_content="gAAA==")
    )
    return [i if isinstance(i, dict) else i.model_dump(mode="json", exclude_none=True) for i in items]


def test_responses_compaction_item_is_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "resp.json"
    path.write_text(json.dumps({"input": responses_log(4)}))
    events = import_events("openai-responses", path)
    assert kinds(events) == ["USER", "CALL", "RESULT", "TERM", "SUMMARY", "USER"]
    assert (summary_of(events).covers, summary_of(events).text) == ((0, 3), "gAAA==")
    assert lint("openai-responses", path, capsys)[0] == 0
    path.write_text(json.dumps({"input": responses_log(2)}))
    code, out = lint("openai-responses", path, capsys)
    assert code == 1 and "summary-covers-open-call" in out and "CALL call_1" in out


def test_responses_compact_output_keeps_its_user_messages(tmp_path: Path) -> None:
    """``/responses/compact`` returns the user messages then one compaction item: it stands for
    what the file no longer holds, so it covers none of them."""
    compacted = [i for i in responses_log(5) if i.get("role") == "user" or i["type"] == "compaction"]
    path = tmp_path / "compact.json"
    path.write_text(json.dumps(compacted))
    assert kinds(import_events("openai-responses", path)) == ["USER", "USER", "USER"]


# -- Google ADK --------------------------------------------------------------------------------


def needs_adk() -> None:
    """Skip, naming the extra, where google-adk is not installed (.ci/lowest installs no extra)."""
    pytest.importorskip("google.adk", reason="the adk extra (google-adk) is not installed")


def adk_session(records: list[tuple[str, float, Any]], by_alias: bool = False) -> dict[str, Any]:
    """A real ADK session of ``(author, timestamp, content or EventCompaction)`` events, as
    ``Session.model_dump(mode="json")`` writes it."""
    needs_adk()
    from google.adk.events import Event as AdkEvent
    from google.adk.events import EventActions
    from google.adk.events.event_actions import EventCompaction
    from google.adk.sessions import InMemorySessionService

    async def write() -> Any:
        service = InMemorySessionService()
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        for author, ts, body in records:
            if isinstance(body, EventCompaction):
                event = AdkEvent(author=author, timestamp=ts, actions=EventActions(compaction=body))
            else:
                event = AdkEvent(author=author, timestamp=ts, content=body)
            await service.append_event(session, event)
        return await service.get_session(app_name="app", user_id="u", session_id="s")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = asyncio.run(write())
    return session.model_dump(mode="json", by_alias=by_alias)


def adk_records(compaction: tuple[float, float], skewed: bool = False) -> list[tuple[str, float, Any]]:
    needs_adk()
    from google.adk.events.event_actions import EventCompaction
    from google.genai import types as gt

    def text(role: str, t: str) -> Any:
        return gt.Content(role=role, parts=[gt.Part(text=t)])

    calls = gt.Content(role="model", parts=[
        gt.Part(function_call=gt.FunctionCall(id=f"c{k}", name="weather", args={"city": city}))
        for k, city in enumerate(("Rome", "Paris"))])  # fmt: skip
    answers = gt.Content(role="user", parts=[
        gt.Part(function_response=gt.FunctionResponse(id=f"c{k}", name="weather", response={"w": w}))
        for k, w in enumerate(("sun", "fog"))])  # fmt: skip
    summary = EventCompaction(start_timestamp=compaction[0], end_timestamp=compaction[1],
                              compacted_content=text("model", "Rome sun, Paris fog."))  # fmt: skip
    records = [("user", 1.0, text("user", "Rome and Paris?")), ("agent", 2.0, calls), ("agent", 3.0, answers),
               ("agent", 4.0, text("model", "sun and fog")), ("user", 5.0, text("user", "thanks")),
               ("agent", 6.0, text("model", "welcome"))]  # fmt: skip
    if skewed:  # a writer whose clock lags: appended last, stamped inside the range
        records.append(("user", 2.5, text("user", "and Oslo?")))
    return [*records, ("agent", 7.0, summary)]


@pytest.mark.parametrize("by_alias", [False, True])
def test_adk_session_with_a_compaction_event(
    by_alias: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(adk_session(adk_records((1.0, 4.0)), by_alias)))
    events = import_events("adk", path)
    assert kinds(events) == ["USER", "CALL", "CALL", "RESULT", "RESULT", "TERM", "USER", "TERM", "SUMMARY"]
    assert [e.ts for e in events] == [1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert {e.session for e in events} == {"s"}
    assert (summary_of(events).covers, summary_of(events).text) == ((0, 5), "Rome sun, Paris fog.")
    assert lint("adk", path, capsys)[0] == 0


def test_adk_compaction_over_an_open_call_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    """ADK #4740: compaction ran while a confirmation call was pending (appended before its response)."""
    *records, summary = adk_records((1.0, 2.0))
    path.write_text(json.dumps(adk_session([*records[:2], summary, *records[2:]])))
    code, out = lint("adk", path, capsys)
    assert code == 1 and "summary-covers-open-call" in out
    assert "seq 3 session s turn 0 SUMMARY covers [0, 2]; " in out
    assert "seq 1 session s turn 0 CALL c0: the call gets its RESULT at seq 4, after the summary" in out


def test_adk_timestamp_range_hiding_an_unsummarised_event_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """adk-go #1231: ADK hides every event stamped inside a kept compaction's range; one written
    later with a lagging clock is dropped, summarised by nothing — the finding names it."""
    path = tmp_path / "session.json"
    path.write_text(json.dumps(adk_session(adk_records((1.0, 4.0), skewed=True))))
    events = import_events("adk", path)
    assert summary_of(events).covers == (0, 5)
    code, out = lint("adk", path, capsys)
    assert code == 1
    assert "clock-skew-coverage" in out
    assert (
        "seq 8 session s turn 2 USER: ts 2.5 lies in the summary's ts 1..4: hidden, summarised by nothing"
        in out
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_adk_round_trips_what_the_adk_peer_writes(events: list[Event], tmp_path: Path) -> None:
    """Our events → the ADK peer's own ``Event`` objects (one per message, a batch's responses
    merged) in a real session → its dump → ``--from adk``: the same structure."""
    needs_adk()
    from google.adk.sessions import InMemorySessionService

    from turncheck.integrations.peers.adk_compaction import adk_event
    from turncheck.models.message_spans import spans

    h = History(events)

    async def write() -> Any:
        service = InMemorySessionService()
        session = await service.create_session(app_name="app", user_id="u", session_id="s0")
        for span in spans(h, group_results=True):
            await service.append_event(session, adk_event(h, span, "i", None))
        return session

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = asyncio.run(write())
    path = tmp_path / "adk.json"
    path.write_text(json.dumps(session.model_dump(mode="json")))
    back = import_events("adk", path)
    assert [(e.kind, e.call_id, e.turn) for e in back] == [(e.kind, e.call_id, e.turn) for e in events]


def test_adk_sliding_window_overlap_and_recompaction_lint_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ADK's sliding window with overlap writes a second compaction whose range starts inside the
    first's: ADK keeps both, and so does the import (the second covers from after the first);
    a compaction whose range contains an earlier one's replaces it (re-compaction)."""
    needs_adk()
    from google.adk.events.event_actions import EventCompaction
    from google.genai import types as gt

    records = adk_records((1.0, 6.0))
    again = [("user", 8.0, gt.Content(role="user", parts=[gt.Part(text="and Oslo?")])),
             ("agent", 9.0, gt.Content(role="model", parts=[gt.Part(text="snow")]))]  # fmt: skip

    def compaction(start: float, end: float) -> tuple[str, float, Any]:
        text = gt.Content(role="model", parts=[gt.Part(text=f"summary {start:g}..{end:g}")])
        return (
            "agent",
            10.0,
            EventCompaction(start_timestamp=start, end_timestamp=end, compacted_content=text),
        )

    path = tmp_path / "session.json"
    path.write_text(json.dumps(adk_session([*records, *again, compaction(5.0, 9.0)])))
    events = import_events("adk", path)
    assert [e.covers for e in events if e.kind is Kind.SUMMARY] == [(0, 7), (9, 10)]
    assert lint("adk", path, capsys)[0] == 0
    path.write_text(json.dumps(adk_session([*records, *again, compaction(1.0, 9.0)])))
    assert [e.covers for e in import_events("adk", path) if e.kind is Kind.SUMMARY] == [(0, 7), (0, 10)]
    assert lint("adk", path, capsys)[0] == 0
