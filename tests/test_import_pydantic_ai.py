"""``--from pydantic-ai``: message histories as ``ModelMessagesTypeAdapter.dump_json`` writes them.
The files under examples/formats/ were written by a real ``pydantic_ai.Agent`` against a
``FunctionModel`` (examples/formats/pydantic_ai_messages.py, pydantic-ai-slim 2.68.0); here the
agent runs again, and histories Hypothesis draws are dumped with the library's own message types.
Parts the current library no longer writes (``retry-prompt``, pydantic/pydantic-ai#1470 quotes
one) and the rarer ones follow its documented shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.importers import FORMATS, import_events
from turncheck.models.message_spans import spans
from turncheck.testing import well_formed

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "formats"
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def shape(events: list[Event]) -> str:
    words = []
    for e in events:
        word = "S" if e.kind is Kind.SUMMARY else e.kind.name[0] + (e.call_id or "")
        words.append(word + (f">{e.tied_to}" if e.tied_to else ""))
    return " ".join(words)


def structure(events: list[Event]) -> list[tuple[str, str | None, int]]:
    firsts: dict[int, int] = {}
    for e in events:
        firsts.setdefault(e.turn, len(firsts))
    return [(e.kind.name, e.call_id, firsts[e.turn]) for e in events]


def lint(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["lint", "--from", "pydantic-ai", *extra, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def request(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "request", "parts": list(parts)}


def response(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "response", "parts": list(parts)}


def part(kind: str, **fields: Any) -> dict[str, Any]:
    return {"part_kind": kind, **fields}


def test_the_format_is_registered_without_a_default_provider() -> None:
    assert FORMATS["pydantic-ai"].provider is None


def test_a_real_agents_history_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    """Thinking before two parallel calls (every later call of the turn tied to the first, as
    Anthropic wants the thinking kept with them), a validation error and
    a ModelRetry sent back as returns, then the answer."""
    path = EXAMPLES / "pydantic-ai-clean.json"
    assert lint(path, capsys)[0] == 0
    assert lint(path, capsys, "--provider", "anthropic")[0] == 0
    assert shape(import_events("pydantic-ai", path)) == (
        "U Ccall_1 Ccall_2>call_1 Rcall_1 Rcall_2 Ccall_3>call_1 Rcall_3 Ccall_4>call_1 Rcall_4 T"
    )


def test_a_run_stopped_after_its_tool_calls_poisons_the_next_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pydantic/pydantic-ai#4728: the stored calls are never answered and the next request
    follows them; Anthropic refuses it (results-not-first)."""
    path = EXAMPLES / "pydantic-ai-poisoned.json"
    code, out, err = lint(path, capsys)
    assert (code, err) == (1, "") and "dangling-call" in out
    code, out, _ = lint(path, capsys, "--provider", "anthropic")
    assert code == 1 and "results-not-first" in out and "record 3" in out


@pytest.mark.parametrize("which", ["clean", "poisoned"])
def test_the_real_agent_writes_what_the_examples_hold(which: str, tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed")
    sys.path.insert(0, str(EXAMPLES))
    try:
        from pydantic_ai import ModelMessagesTypeAdapter
        from pydantic_ai_messages import messages
    finally:
        sys.path.remove(str(EXAMPLES))
    path = tmp_path / "messages.json"
    path.write_bytes(ModelMessagesTypeAdapter.dump_json(messages(which)))
    expected = import_events("pydantic-ai", EXAMPLES / f"pydantic-ai-{which}.json")
    assert shape(import_events("pydantic-ai", path)) == shape(expected)


def dumped(history: History) -> bytes:
    """A drawn history as the library's own message types, dumped by its type adapter."""
    from pydantic_ai import ModelMessagesTypeAdapter
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Any] = []
    for s in spans(history, group_results=True):
        events, kind = history.events[s.start : s.end], s.kind
        if kind is Kind.USER:
            out.append(ModelRequest(parts=[UserPromptPart("q")]))
        elif kind is Kind.CALL:
            out.append(
                ModelResponse(parts=[ToolCallPart("f", {"a": 1}, tool_call_id=e.call_id) for e in events])
            )
        elif kind is Kind.RESULT:
            out.append(ModelRequest(parts=[ToolReturnPart("f", "r", tool_call_id=e.call_id) for e in events]))
        else:
            out.append(ModelResponse(parts=[TextPart("a")]))
    return ModelMessagesTypeAdapter.dump_json(out)


@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_histories_dumped_by_the_library_round_trip_the_structure(
    events: list[Event], tmp_path: Path
) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed")
    path = tmp_path / "drawn.json"
    path.write_bytes(dumped(History(events)))
    assert structure(import_events("pydantic-ai", path)) == structure(events)


def test_retry_prompts_compaction_native_tools_and_set_up_records(tmp_path: Path) -> None:
    """A retry-prompt naming a tool answers its call, one without is the user's; a compaction
    part is a SUMMARY; a native tool's call and return sit in the response; records of set-up
    changes, files and the system prompt are no events."""
    messages = [
        request(part("system-prompt", content="be brief"), part("user-prompt", content=["look at", {"kind": "image-url", "url": "u"}])),
        response(part("thinking", content="hm"), part("tool-call", tool_name="f", args='{"x":1}', tool_call_id="a")),
        request(part("retry-prompt", tool_name="f", tool_call_id="a", content=[{"type": "int_parsing", "loc": ["x"]}])),
        response(part("builtin-tool-call", tool_name="web_search", args={"q": "x"}, tool_call_id="w"),
                 part("builtin-tool-return", tool_name="web_search", content={"hits": 1}, tool_call_id="w"),
                 part("text", content="found"), part("file", content={"kind": "binary"})),
        request(part("retry-prompt", content="Please return text."), part("instruction-delta", id="i", content=None)),
        response(part("compaction", content="summary so far"), part("text", content="ok")),
        request(part("model-settings-delta", settings={}), part("user-prompt", content="next")),
    ]  # fmt: skip
    events = import_events("pydantic-ai", write(tmp_path, messages))
    assert shape(events) == "U Ca Ra Cw>a Rw T U S T U"
    assert [e.text for e in events][:4] == [
        "look at",
        '{"x":1}',
        '[{"loc":["x"],"type":"int_parsing"}]',
        '{"q":"x"}',
    ]
    assert events[7].covers == (0, 6)


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ("hello", "expected a message object with a 'parts' list"),
        ({"kind": "request", "parts": {}}, "expected a message object with a 'parts' list"),
        ({"kind": "reply", "parts": []}, "unknown message kind 'reply'"),
        (request({"content": "x"}), "a part without a 'part_kind'"),
        (
            response(part("tool-return", tool_call_id="a", content="x")),
            "'tool-return' is not mapped in a response",
        ),
        (request(part("tool-call", tool_call_id="a")), "'tool-call' is not mapped in a request"),
        (response(part("tool-call", tool_name="f", args={})), "a tool call without an id"),
        (
            response(part("tool-call", tool_name="f", args={}, tool_call_id=7)),
            "tool_call_id must be a string",
        ),
        (request(part("tool-return", tool_name="f", content="x")), "a tool result without a call id"),
    ],
)
def test_malformed_records_are_one_line_naming_the_record(
    record: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [request(part("user-prompt", content="hi")), record])
    code, out, err = lint(path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "record 2" in err and says in err, err


@pytest.mark.parametrize(
    ("provider", "held"), [("anthropic", True), ("google", False), ("openai", False), (None, False)]
)
def test_the_provider_of_the_last_response_chooses_the_rules(
    provider: str | None, held: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out history (issue 51): each ``ModelResponse`` records its
    ``provider_name``, yet no rules applied unless ``--provider`` named them, so text sent before
    a ``tool-return`` to Anthropic passed without ``results-not-first``. The last response's
    provider now chooses the rules (``openai`` names no one API: none)."""
    history = [
        request(part("user-prompt", content="hi")),
        {**response(part("tool-call", tool_name="f", args={}, tool_call_id="a")), "provider_name": provider},
        request(
            part("user-prompt", content="also"),
            part("tool-return", tool_name="f", content="x", tool_call_id="a"),
        ),
        {**response(part("text", content="ok")), "provider_name": provider},
    ]
    code, out, _ = lint(write(tmp_path, history), capsys)
    assert code == 1 and ("results-not-first" in out) == held, out


@pytest.mark.parametrize(("second", "held"), [("anthropic", True), ("google-gla", False)])
def test_histories_by_session_apply_the_provider_they_all_name(
    second: str, held: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An object of histories by session applied no rules though each session's responses named
    Anthropic (found auditing issue 51 with a held-out object of two real histories): the rules
    of the one provider every session names apply; sessions naming different ones: none."""

    def history(provider: str) -> list[Any]:
        return [
            request(part("user-prompt", content="hi")),
            {**response(part("tool-call", tool_name="f", args={}, tool_call_id="a")), "provider_name": "anthropic"},
            request(part("user-prompt", content="also"), part("tool-return", tool_name="f", content="x", tool_call_id="a")),
            {**response(part("text", content="ok")), "provider_name": provider},
        ]  # fmt: skip

    path = tmp_path / "by-session.json"
    path.write_text(json.dumps({"s1": history("anthropic"), "s2": history(second)}))
    code, out, _ = lint(path, capsys)
    assert code == 1 and ("results-not-first" in out) == held, out
