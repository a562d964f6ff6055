"""``turncheck import`` on inputs written by the real libraries (the peers extra): every format
round-trips the structure — kinds, call pairing, turn boundaries — and bad shapes are one line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from turncheck.cli.app import main
from turncheck.integrations.peers.agents_session import agent_items
from turncheck.integrations.peers.langchain_trim import langchain_messages
from turncheck.integrations.peers.llamaindex_memory import llamaindex_messages
from turncheck.models.events import Event, read_jsonl
from turncheck.models.history import History
from turncheck.models.importers import import_events
from turncheck.models.message_spans import openai_message, spans
from turncheck.testing import well_formed


@pytest.fixture(scope="module", autouse=True)
def _peers_extra() -> None:
    """The libraries that write these formats (the peers extra), imported when the first test
    runs, not while the module is collected: every xdist worker collects every module (4 s here)."""
    for module, package in (("langchain_core", "langchain-core"), ("agents", "openai-agents"),
                            ("llama_index.core", "llama-index-core")):  # fmt: skip
        pytest.importorskip(module, reason=f"the peers extra ({package}) is not installed")


SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def structure(events: list[Event]) -> list[tuple[str, str | None, int]]:
    """What must survive an import: kinds, call ids (the pairing) and turn boundaries."""
    firsts: dict[int, int] = {}
    for e in events:
        firsts.setdefault(e.turn, len(firsts))
    return [(e.kind.name, e.call_id, firsts[e.turn]) for e in events]


def sessions(events: list[Event]) -> list[list[Event]]:
    """Two sessions: the drawn history, and the same again under another name."""
    return [events, [Event(e.seq, "other", e.turn, e.kind, e.call_id, chars=e.chars) for e in events]]


def dump(fmt: str, history: History, tmp_path: Path, name: str) -> Any:
    """The history as the real library writes it."""
    if fmt == "langchain":
        from langchain_core.messages import messages_to_dict

        return messages_to_dict(langchain_messages(history, spans(history)))
    if fmt == "llamaindex":
        return [m.model_dump() for m in llamaindex_messages(history, spans(history))]
    if fmt == "openai-chat":
        from openai.types.chat import ChatCompletionMessage

        out = []
        for s in spans(history):
            m = openai_message(history, s)
            if m["role"] == "assistant":  # what the SDK returns, dumped as a client stores it
                m = ChatCompletionMessage(
                    role="assistant", content=m["content"], tool_calls=m.get("tool_calls")
                )
                m = m.model_dump(exclude_none=True)
            out.append(m)
        return out
    if fmt == "openai-responses":
        return agent_items(history)
    raise AssertionError(fmt)


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "langchain", "llamaindex"])
@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_json_formats_round_trip_the_structure(fmt: str, events: list[Event], tmp_path: Path) -> None:
    doc = {}
    for i, evs in enumerate(sessions(events)):
        doc[f"s{i}"] = dump(fmt, History(evs), tmp_path, f"s{i}")
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(doc))
    got = import_events(fmt, path)
    by_session = {s: [e for e in got if e.session == s] for s in ("s0", "s1")}
    assert structure(by_session["s0"]) == structure(events) == structure(by_session["s1"])
    assert [e.seq for e in got] == list(range(len(got)))


@SETTINGS
@given(events=well_formed(max_turns=4, dangling=True, parallel=True))
def test_agents_sqlite_round_trips_a_real_session_database(events: list[Event], tmp_path: Path) -> None:
    from agents import SQLiteSession

    db = tmp_path / "session.db"
    db.unlink(missing_ok=True)

    async def write() -> None:
        for i, evs in enumerate(sessions(events)):
            session = SQLiteSession(f"conv-{i}", db_path=db)
            items = agent_items(History(evs))
            if items:
                await session.add_items(items)
            session.close()

    asyncio.run(write())
    got = import_events("agents-sqlite", db)
    assert structure([e for e in got if e.session == "conv-0"]) == structure(events)
    assert structure([e for e in got if e.session == "conv-1"]) == structure(events)


def test_jsonl_request_bodies_split_into_sessions(tmp_path: Path) -> None:
    """Each line is the whole conversation so far; extensions continue a session."""
    u = {"role": "user", "content": "hi"}
    call = {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}  # fmt: skip
    res_b = {"role": "tool", "tool_call_id": "b", "content": "2"}
    lines = [
        {"model": "m", "messages": [{"role": "system", "content": "be brief"}, u]},
        {"model": "m", "messages": [{"role": "system", "content": "be brief"}, u, call, res_b]},
        {"model": "m", "messages": [{"role": "user", "content": "new chat"}]},
    ]
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(b) + "\n" for b in lines))
    got = import_events("openai-chat", path)
    assert [(e.session, e.kind.name, e.call_id) for e in got] == [
        ("requests-1", "USER", None),
        ("requests-1", "CALL", "a"),
        ("requests-1", "CALL", "b"),
        ("requests-1", "RESULT", "b"),
        ("requests-2", "USER", None),
    ]  # fmt: skip  (call a is dangling: its result never came)


def test_jsonl_lines_split_at_newline_only(tmp_path: Path) -> None:
    """U+0085, U+2028 and U+2029 may stand raw inside a JSON string: they do not end a line."""
    lines = [
        {"model": "m", "messages": [{"role": "user", "content": "one\u2028two\x85three\u2029"}]},
        {"model": "m", "messages": [{"role": "user", "content": "next"}]},
    ]
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(b, ensure_ascii=False) + "\r\n" for b in lines), encoding="utf-8")
    got = import_events("openai-chat", path)
    assert [(e.session, e.kind.name) for e in got] == [("requests-1", "USER"), ("requests-2", "USER")]
    assert got[0].text == "one\u2028two\x85three\u2029"


@pytest.mark.parametrize(
    "fmt,content,needle",
    [
        ("openai-chat", [{"role": "tool", "content": "x"}], "record 1: a tool result without a call id"),
        (
            "openai-chat",
            [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}],
            "record 1: a tool call without an id",
        ),
        ("openai-chat", [{"role": "narrator", "content": "x"}], "record 1: unknown message role 'narrator'"),
        ("openai-responses", [{"id": "ws_1"}], "record 1: an input item without a 'type'"),
        ("langchain", [{"type": "human"}], "record 1: expected {'type'"),
        ("llamaindex", [{"role": "user", "blocks": [{"text": "x"}]}], "record 1: a content block without"),
        ("openai-chat", {"messages": 3}, "expected a list of records"),
        ("agents-sqlite", "not a database", "not an OpenAI Agents SDK session database"),
    ],
)
def test_bad_shapes_are_one_line_naming_the_record(
    fmt: str, content: Any, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    out = tmp_path / "out.jsonl"
    assert main(["import", "--from", fmt, str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle.replace("message 1", "") in err and not out.exists()
    assert not list(tmp_path.glob("*.part"))


def test_import_then_lint_and_project_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict

    msgs = [HumanMessage("weather?"), AIMessage("", tool_calls=[{"name": "w", "args": {"c": "Oslo"}, "id": "t1"},
                                                                 {"name": "w", "args": {"c": "Rome"}, "id": "t2"}]),
            ToolMessage("rain", tool_call_id="t2"), ToolMessage("sun", tool_call_id="t1"), AIMessage("mixed")]  # fmt: skip
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(messages_to_dict(msgs)))
    out = tmp_path / "chat.jsonl"
    assert main(["import", "--from", "langchain", str(src), "-o", str(out)]) == 0
    assert [e.kind.name for e in read_jsonl(out)] == ["USER", "CALL", "CALL", "RESULT", "RESULT", "TERM"]
    assert main(["lint", str(out), "-q"]) == 0
    assert main(["lint", "--from", "langchain", str(src), "-q"]) == 0
    capsys.readouterr()
    assert main(["project", "--from", "langchain", "-H", str(src), "-q", "--format", "json", "-s", "M5"]) == 0
    assert json.loads(capsys.readouterr().out)["kept_events"] == 6


def _call(cid: str) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}  # fmt: skip


BROKEN = {  # each history, and the problem lint must find at the record named
    "orphan": ([{"role": "tool", "tool_call_id": "call_A", "content": "42"}, {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"}], "orphan-result", 1),
    "answered twice": ([{"role": "user", "content": "hi"}, _call("a"), {"role": "tool", "tool_call_id": "a", "content": "1"},
                        {"role": "tool", "tool_call_id": "a", "content": "2"}], "answered-twice", 4),
    "result before call": ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "a", "content": "1"},
                            _call("a")], "result-before-call", 2),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_log_is_read_and_flagged_at_its_record(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Broken logs are read, not refused: lint exits 1 naming the record, import writes the log
    as it is with one warning line (exit 2 stays for what is not the format)."""
    messages, problem, record = BROKEN[case]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(messages))
    assert main(["lint", "--from", "openai-chat", str(src), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["counts"][problem] == 1
    assert report["examples"][problem][0].startswith(f"{src}: session 'chat': record {record}: ")
    out = tmp_path / "chat.jsonl"
    assert main(["import", "--from", "openai-chat", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len([e for e in err if e.startswith("warning:")]) == 1 and problem in err[0]
    assert [e.kind.name for e in read_jsonl(out)] == [
        {"user": "USER", "assistant": "TERM" if "content" in m else "CALL", "tool": "RESULT"}[m["role"]]
        for m in messages
    ]
    assert main(["lint", str(out), "-q"]) == 1


def test_a_responses_log_starting_on_an_orphan_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "items.jsonl"
    body = {"input": [{"type": "function_call_output", "call_id": "call_A", "output": "42"},
                      {"role": "user", "content": "next?"}]}  # fmt: skip
    src.write_text(
        json.dumps(body)
        + "\n"
        + json.dumps({"input": [*body["input"], {"role": "assistant", "content": "ok"}]})
        + "\n"
    )
    assert main(["lint", "--from", "openai-responses", str(src)]) == 1
    assert f"{src}:1: record 1: seq 0 session items-1 turn 0 RESULT call_A" in capsys.readouterr().out
    assert main(["lint", "--from", "openai-responses", str(src), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["events"] == 3 and report["examples"]["orphan-result"] == [
        f"{src}:1: record 1: seq 0 session items-1 turn 0 RESULT call_A"
    ]


def test_a_format_is_one_module_that_registers_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new format is one module calling ``turncheck.register_format``; ``import``, ``lint`` and
    ``list formats`` then know it, beside the built-ins (which keep their order)."""
    (tmp_path / "plain_lines.py").write_text(
        "import turncheck\n"
        "from turncheck.models.importers import build_sessions, read_text\n\n"
        "def add(b, line, where):\n"
        "    b.user(line, where) if line.startswith('> ') else b.answer(line, where)\n\n"
        "turncheck.register_format(turncheck.LogFormat('test-plain-lines', lambda p: build_sessions(\n"
        "    [(p.stem, read_text(p).splitlines(), str(p), 1)], add), 'lines: > user, else answer'))\n"
    )
    from turncheck.models.importers import FORMATS

    list(FORMATS)  # the built-ins loaded, then the registry's entries put back after the test
    monkeypatch.setattr(FORMATS, "_entries", dict(FORMATS._entries))
    monkeypatch.setattr(FORMATS, "_extensions", list(FORMATS._extensions))
    monkeypatch.setitem(sys.modules, "plain_lines", None)
    monkeypatch.delitem(sys.modules, "plain_lines")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("plain_lines")
    src = tmp_path / "talk.txt"
    src.write_text("> hi\nhello\n")
    assert main(["import", "--from", "test-plain-lines", str(src)]) == 0
    assert [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()] == ["USER", "TERM"]
    assert main(["list", "formats"]) == 0
    names = capsys.readouterr().out.splitlines()
    assert names[:5] == ["openai-chat", "openai-responses", "langchain", "agents-sqlite", "llamaindex"]
    assert "test-plain-lines" in names
