"""``--from openhands``: an OpenHands conversation's events as software-agent-sdk serializes them
(each an object named by ``kind``; ``openhands/sdk/event/`` read for the fields: ``ActionEvent``
``tool_call_id`` / ``tool_call.arguments`` / ``thinking_blocks``, ``ObservationEvent``
``observation.content``, ``UserRejectObservation`` ``rejection_reason``, ``Condensation``
``forgotten_event_ids`` / ``summary``). openhands-sdk is not on the package index this suite
installs from, so the events follow those classes; rejections are the answer of their call
(software-agent-sdk PR #432)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.importers import FORMATS, import_events, import_log


def shape(events: list[Event]) -> str:
    words = []
    for e in events:
        word = f"S{e.covers[0]}-{e.covers[1]}" if e.kind is Kind.SUMMARY and e.covers else e.kind.name[0]
        words.append(word + (e.call_id or "") + (f">{e.tied_to}" if e.tied_to else ""))
    return " ".join(words)


def message(event_id: str, role: str, text: str) -> dict[str, Any]:
    source = {"user": "user", "assistant": "agent"}[role]
    return {"kind": "MessageEvent", "id": event_id, "timestamp": "2026-01-01T00:00:00", "source": source,
            "llm_message": {"role": role, "content": [{"type": "text", "text": text}]}}  # fmt: skip


def action(event_id: str, call: str, response: str, thinking: bool = False) -> dict[str, Any]:
    return {"kind": "ActionEvent", "id": event_id, "source": "agent", "thought": [{"type": "text", "text": "go"}],
            "thinking_blocks": [{"type": "thinking", "thinking": "hm", "signature": "s"}] if thinking else [],
            "action": {"kind": "TerminalAction", "command": "ls"}, "tool_name": "terminal", "tool_call_id": call,
            "tool_call": {"id": call, "name": "terminal", "arguments": '{"command": "ls"}', "origin": "completion"},
            "llm_response_id": response}  # fmt: skip


def observation(event_id: str, call: str, action_id: str) -> dict[str, Any]:
    return {"kind": "ObservationEvent", "id": event_id, "source": "environment", "tool_name": "terminal",
            "tool_call_id": call, "action_id": action_id,
            "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "a.txt"}], "is_error": False}}  # fmt: skip


def rejection(event_id: str, call: str, action_id: str) -> dict[str, Any]:
    return {"kind": "UserRejectObservation", "id": event_id, "source": "environment", "tool_name": "terminal",
            "tool_call_id": call, "action_id": action_id, "rejection_reason": "Not now.", "rejection_source": "user"}  # fmt: skip


CONVERSATION = [
    {"kind": "SystemPromptEvent", "id": "e0", "source": "agent", "system_prompt": {"type": "text", "text": "You are OpenHands."}, "tools": []},
    message("e1", "user", "List the files, twice."),
    action("e2", "call_1", "resp_1", thinking=True),
    action("e3", "call_2", "resp_1"),
    observation("e4", "call_1", "e2"),
    rejection("e5", "call_2", "e3"),
    {"kind": "ConversationStateUpdateEvent", "id": "e6", "source": "environment", "key": "execution_status", "value": "running"},
    message("e7", "assistant", "One list; the second was rejected."),
]  # fmt: skip


def write_events(path: Path, events: list[dict[str, Any]]) -> Path:
    """The events as ``jq -c . events/event-*.json`` joins a conversation's files."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def lint(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["lint", "--from", "openhands", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_conversation_with_a_rejection_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_events(tmp_path / "conv-7f3a.jsonl", CONVERSATION)
    assert FORMATS["openhands"].provider is None
    code, out, err = lint(path, capsys)
    assert (code, err) == (0, ""), out
    events = import_events("openhands", path)
    assert shape(events) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T"
    assert {e.session for e in events} == {"conv-7f3a"} and events[4].text == "Action rejected: Not now."


def test_the_same_events_as_a_list(tmp_path: Path) -> None:
    listed = tmp_path / "events.json"
    listed.write_text(json.dumps(CONVERSATION))
    assert shape(import_events("openhands", listed)) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T"


def conversation_folder(root: Path, events: list[dict[str, Any]]) -> Path:
    """A conversation as the SDK stores it: ``ID/events/event-NNNNN-EVENTID.json``, each one event
    written indented."""
    folder = root / "7f3a9c" / "events"
    folder.mkdir(parents=True)
    for i, event in enumerate(events):
        (folder / f"event-{i:05d}-{event['id']}.json").write_text(
            json.dumps(event, indent=2), encoding="utf-8"
        )
    return folder.parent


@pytest.mark.parametrize("given", ["conversation", "events"])
def test_a_conversation_folder_is_one_history(
    given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out conversation (issue 51): ``lint --from openhands`` on the folder the
    SDK keeps was an archive of one-event files, each refused as malformed JSON (an event file is
    one indented object), exit 2. The folder (or its ``events/``) is one conversation: clean is
    exit 0; with an action's file gone, its observation is an orphan, exit 1 — under ``--jobs``
    too. A single event file reads as that one event."""
    folder = conversation_folder(tmp_path, CONVERSATION)
    path = folder if given == "conversation" else folder / "events"
    code, out, err = lint(path, capsys)
    assert (code, err) == (0, ""), out
    assert shape(import_events("openhands", path)) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T"
    assert {e.session for e in import_events("openhands", path)} == {"7f3a9c"}
    (folder / "events" / "event-00002-e2.json").unlink()  # the first action's file
    for extra in ([], ["--jobs", "2"]):
        assert main(["lint", "--from", "openhands", str(path), *extra]) == 1
        out = capsys.readouterr().out
        assert "orphan-result" in out and "event-00004-e4.json" in out, out
    one = import_events("openhands", folder / "events" / "event-00004-e4.json")
    assert shape(one) == "Rcall_1"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = lint(empty, capsys)
    assert code == 2 and err.count("\n") == 1 and "holds no file to lint" in err, err  # an archive of nothing


def test_an_action_left_without_its_observation_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_events(tmp_path / "conv.jsonl", [*CONVERSATION[:5], message("e9", "user", "Hello?")])
    code, out, _ = lint(path, capsys)
    assert code == 1 and "dangling-call" in out and "conv.jsonl:4" in out


def test_a_condensation_covers_the_events_it_forgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Forgetting an action but not its observation splits the pair."""
    condensed = {"kind": "Condensation", "id": "c1", "source": "environment", "forgotten_event_ids": ["e1", "e2", "e3"],
                 "summary": "The user asked for a listing.", "llm_response_id": "resp_c"}  # fmt: skip
    path = tmp_path / "events.json"
    path.write_text(json.dumps([*CONVERSATION, condensed, message("e8", "user", "Again?")]))
    assert shape(import_events("openhands", path)) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T S0-2 U"
    code, out, _ = lint(path, capsys)
    assert code == 1 and "summary-splits-pair" in out


@pytest.mark.parametrize(
    ("event", "says"),
    [
        ({"id": "x"}, "expected an event object with a 'kind'"),
        ({"kind": "MessageEvent", "source": "user"}, "a MessageEvent without its 'llm_message' object"),
        (
            {"kind": "MessageEvent", "llm_message": {"role": "robot", "content": []}},
            "unknown message role 'robot'",
        ),
        ({"kind": "ActionEvent", "tool_call": {"arguments": "{}"}}, "a tool call without an id"),
        (
            {"kind": "ObservationEvent", "tool_call_id": "c"},
            "an ObservationEvent without its 'observation' object",
        ),
        ({"kind": "AgentErrorEvent", "error": "boom"}, "a tool result without a call id"),
        ({"kind": "Condensation", "forgotten_event_ids": "e1"}, "forgotten_event_ids must be a list"),
    ],
)
def test_malformed_events_are_one_line_naming_the_event(
    event: dict[str, Any], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_events(tmp_path / "conv.jsonl", [message("e1", "user", "hi"), {"id": "bad", **event}])
    code, out, err = lint(path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "conv.jsonl:2" in err and says in err, err


def base_state(folder: Path, llm: dict[str, Any]) -> None:
    """``base_state.json`` as the SDK persists it beside ``events/`` (fields of software-agent-sdk's
    tests/fixtures/conversations/v1_11_5_cli_default/base_state.json: ``agent.llm.model``, ``api_mode``)."""
    state = {"id": "7f3a9c", "agent": {"llm": {"api_key": "**********", "temperature": 0.0, **llm},
             "tools": [{"name": "terminal", "params": {}}]}, "execution_status": "finished"}  # fmt: skip
    (folder / "base_state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")


@pytest.mark.parametrize(
    ("llm", "rules"),
    [
        ({"model": "anthropic/claude-sonnet-4-5-20250929"}, "anthropic"),
        ({"model": "claude-opus-4-1"}, "anthropic"),
        ({"model": "vertex_ai/claude-sonnet-4@20250514"}, "anthropic"),
        ({"model": "gemini/gemini-2.5-pro"}, "gemini"),
        ({"model": "openai/gpt-4o", "api_mode": "chat"}, "openai-chat"),
        ({"model": "gpt-5-codex", "api_mode": "responses"}, "openai-responses"),
        ({"model": "gpt-4o-mini", "api_mode": "auto"}, None),
        ({"model": "litellm_proxy/claude-sonnet-4-5"}, None),
        ({"model": "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"}, None),
        ({"usage_id": "agent"}, None),
    ],
)
def test_the_rules_are_those_of_the_api_base_state_names(
    llm: dict[str, Any], rules: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Left open by the last audit (issue 51: "each is checked against the provider rules of the API
    it is sent to"): OpenHands conversations applied no API's rules. The conversation folder's
    base_state.json names the model LiteLLM routes; its API's rules apply, and the clean line says
    which. A user message between an action and its observation: LiteLLM sends it as one user
    message of text then tool_result (checked with litellm's own anthropic_messages_pt), which
    Anthropic refuses — ``results-not-first`` only when the state names Anthropic."""
    folder = conversation_folder(tmp_path, CONVERSATION)
    base_state(folder, llm)
    assert import_log("openhands", folder).provider == rules
    assert import_log("openhands", folder / "events" / "event-00004-e4.json").provider == rules
    code, out, err = lint(folder, capsys)
    assert (code, err) == (0, ""), out
    says = f"nothing {rules} refuses" if rules else "no API's rules checked"
    assert says in out, out
    late = [CONVERSATION[0], message("e1", "user", "hi"), action("e2", "call_1", "r1"),
            message("e3", "user", "wait, also X"), observation("e4", "call_1", "e2")]  # fmt: skip
    other = conversation_folder(tmp_path / "late", late)
    base_state(other, llm)
    code, out, _ = lint(other, capsys)
    assert code == 1 and ("results-not-first" in out) == (rules == "anthropic"), out


def test_no_base_state_or_one_not_read_applies_none(tmp_path: Path) -> None:
    """Joined events (no folder), a symlinked state (never followed) and a state that is not JSON:
    no API's rules, and the events still read."""
    path = write_events(tmp_path / "conv.jsonl", CONVERSATION)
    base_state(tmp_path, {"model": "anthropic/claude-sonnet-4-5"})
    assert import_log("openhands", path).provider is None
    folder = conversation_folder(tmp_path / "a", CONVERSATION)
    (folder / "base_state.json").symlink_to(tmp_path / "base_state.json")
    assert import_log("openhands", folder).provider is None
    (folder / "base_state.json").unlink()
    (folder / "base_state.json").write_text("{not json", encoding="utf-8")
    assert import_log("openhands", folder).provider is None
    assert shape(import_log("openhands", folder).events) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T"


def test_events_the_llm_never_sees_are_no_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An ACP agent's ``ACPToolCallEvent`` and a ``StreamingDeltaEvent`` are no
    ``LLMConvertibleEvent`` in the SDK (software-agent-sdk ``openhands/sdk/event/``): they were
    kept as opaque content, costed as sent, with a warning line saying so."""
    acp = {"kind": "ACPToolCallEvent", "id": "x1", "source": "agent", "tool_call_id": "acp_1", "title": "Read a.txt",
           "status": "completed", "raw_input": {"path": "a.txt"}, "content": [{"type": "text", "text": "A"}]}  # fmt: skip
    delta = {"kind": "StreamingDeltaEvent", "id": "x2", "source": "agent", "content": "On"}
    path = write_events(tmp_path / "conv.jsonl", [*CONVERSATION[:2], acp, delta, *CONVERSATION[2:]])
    code, out, err = lint(path, capsys)
    assert (code, err) == (0, ""), (out, err)
    assert shape(import_events("openhands", path)) == "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 T"
