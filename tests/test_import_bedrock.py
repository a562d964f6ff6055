"""``--from bedrock``: Converse ``messages`` as Strands Agents keeps them. The files under
examples/formats/ were written by a real ``strands.Agent`` (examples/formats/strands_messages.py,
strands-agents 1.62.0); with strands-agents installed the agent runs again here and must read
the same. Variants of the documented Converse shape pin each block's mapping, the Bedrock rules
(first-not-user, call-not-answered-next, result-not-next) and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event
from turncheck.models.importers import FORMATS, import_events

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "formats"


def shape(events: list[Event]) -> str:
    """The events in provider_rules' shape notation (``U Ca Ra T``), ties as ``>``."""
    out = []
    for e in events:
        word = e.kind.name[0] + (e.call_id or "") + (f">{e.tied_to}" if e.tied_to else "")
        out.append("S" if e.kind.name == "SUMMARY" else word)
    return " ".join(out)


def use(cid: str, city: str = "Oslo") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": cid, "name": "weather", "input": {"city": city}}}


def res(cid: str, text: str = "rain", status: str = "success") -> dict[str, Any]:
    return {"toolResult": {"toolUseId": cid, "status": status, "content": [{"text": text}]}}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def lint(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["lint", "--from", "bedrock", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, value: Any, name: str = "messages.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_the_format_is_registered_with_bedrocks_rules() -> None:
    assert FORMATS["bedrock"].provider == "bedrock"


def test_a_strands_history_its_window_trimmed_to_start_at_a_tool_use_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """strands-agents harness-sdk#1749: the sliding window's tool-pair fallback keeps an
    assistant-first history; Bedrock refuses it ("A conversation must start with a user message")."""
    code, out, err = lint(EXAMPLES / "strands-window.json", capsys)
    assert code == 1 and err == ""
    assert "first-not-user" in out and "record 1" in out
    assert shape(import_events("bedrock", EXAMPLES / "strands-window.json")) == "Ctooluse_5 Rtooluse_5 T"


def test_the_same_agent_untrimmed_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(EXAMPLES / "strands-clean.json", capsys)
    assert code == 0, out
    assert shape(import_events("bedrock", EXAMPLES / "strands-clean.json")) == (
        "U Ctooluse_1 Rtooluse_1 Ctooluse_2 Ctooluse_3 Rtooluse_2 Rtooluse_3 Ctooluse_4 Rtooluse_4 "
        "Ctooluse_5 Rtooluse_5 T"
    )


@pytest.mark.parametrize("window", [4, 100])
def test_the_real_agent_writes_what_the_examples_hold(window: int, tmp_path: Path) -> None:
    pytest.importorskip("strands", reason="strands-agents is not installed")
    import sys

    sys.path.insert(0, str(EXAMPLES))
    try:
        from strands_messages import agent_messages
    finally:
        sys.path.remove(str(EXAMPLES))
    path = write(tmp_path, agent_messages(window))
    name = "strands-window.json" if window == 4 else "strands-clean.json"
    assert shape(import_events("bedrock", path)) == shape(import_events("bedrock", EXAMPLES / name))


@pytest.mark.parametrize(
    ("messages", "expected", "rule"),
    [
        ([user({"text": "hi"}), assistant(use("a"), use("b")), user(res("a")), assistant({"text": "ok"})],
         "U Ca Cb Ra T", "call-not-answered-next"),
        ([user({"text": "hi"}), assistant(use("a"), use("b")), user(res("b"), res("a")), assistant({"text": "ok"})],
         "U Ca Cb Rb Ra T", None),
        ([user({"text": "hi"}), assistant(use("a")), user({"text": "wait"}), user(res("a"))],
         "U Ca U Ra", "result-not-next"),
        ([user(res("z")), assistant({"text": "ok"}), user({"text": "hi"})], "Rz T U", "result-not-next"),
        ([assistant({"text": "hello"}), user({"text": "hi"})], "T U", "first-not-user"),
        ([user({"text": "hi"}), assistant({"text": "hello"}), user({"text": "more"})], "U T U", None),
        ([user({"text": "hi"}), user({"text": "in Oslo"}), assistant({"text": "rain"})], "U U T", "roles-not-alternating"),
        ([user({"text": "hi"}), assistant({"text": "rain"}), assistant({"text": "more?"}), user({"text": "no"})],
         "U T T U", "roles-not-alternating"),
        ([user({"text": "hi"}), assistant({"text": "let me look"}), assistant(use("a")), user(res("a"))],
         "U T Ca Ra", "roles-not-alternating"),
        ([user({"text": "hi"}, {"text": " in Oslo"}), assistant({"text": "checking"}, use("a")), user(res("a")),
          assistant({"text": "rain"})], "U Ca Ra T", None),  # two blocks of one message are one message
    ],
)  # fmt: skip
def test_bedrocks_rules_on_converse_histories(
    messages: list[Any], expected: str, rule: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, messages)
    assert shape(import_events("bedrock", path)) == expected
    code, out, err = lint(path, capsys)
    assert (code, err) == ((1, "") if rule else (0, "")), out
    if rule:
        assert rule in out


def test_blocks_keep_the_order_they_were_sent_in(tmp_path: Path) -> None:
    """Text before a toolResult stays a USER before its RESULT; an image-only user message is
    still the user message sent; reasoningContent ties the turn's later calls to its first call;
    cachePoint, image and document carry no event; an error status is still the answer."""
    messages = [
        user({"image": {"format": "png", "source": {"bytes": "AAAA"}}}, {"cachePoint": {"type": "default"}}),
        assistant({"reasoningContent": {"reasoningText": {"text": "hm", "signature": "x"}}}, use("a"), use("b")),
        user({"text": "note"}, res("a", status="error"), {"toolResult": {"toolUseId": "b", "content": [{"json": {"t": 1}}]}}),
        assistant({"text": "done"}, {"citationsContent": {"content": [{"text": " [1]"}]}}),
        user({"guardContent": {"text": {"text": "guarded"}}}, {"document": {"format": "txt", "name": "d", "source": {"bytes": "QQ=="}}}),
        assistant(use("c")),
        user({"toolResult": {"toolUseId": "c", "content": [{"searchResult": {"source": "s", "title": "t", "content": [{"text": "hit"}]}}]}}),
    ]  # fmt: skip
    events = import_events("bedrock", write(tmp_path, messages))
    assert shape(events) == "U Ca Cb>a U Ra Rb T U Cc Rc"
    assert [e.text for e in events] == ["", '{"city":"Oslo"}', '{"city":"Oslo"}', "note", "rain", '{"t":1}', "done [1]", "guarded", '{"city":"Oslo"}', "hit"]  # fmt: skip


def test_request_bodies_and_strands_session_records(tmp_path: Path) -> None:
    """A Converse request body (its system prompt is the frame), JSONL of request bodies, and
    the records FileSessionManager writes (``{"message": {…}, "message_id": N}``)."""
    history = [user({"text": "hi"}), assistant(use("a")), user(res("a")), assistant({"text": "ok"})]
    body = {"modelId": "m", "system": [{"text": "be brief"}], "messages": history}
    assert shape(import_events("bedrock", write(tmp_path, body))) == "U Ca Ra T"
    lines = tmp_path / "requests.jsonl"
    lines.write_text("\n".join(json.dumps({**body, "messages": history[:n]}) for n in (1, 3)) + "\n")
    assert shape(import_events("bedrock", lines)) == "U Ca Ra"
    records = [{"message": m, "message_id": i, "redact_message": None} for i, m in enumerate(history)]
    assert shape(import_events("bedrock", write(tmp_path, records))) == "U Ca Ra T"


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ({"role": "system", "content": [{"text": "x"}]}, "unknown message role 'system'"),
        ({"role": "user", "content": "hi"}, "content must be a list of blocks"),
        (user({}), "a content block must be a non-empty object"),
        (user({"text": "a", "image": {}}), "is not one Converse block kind"),
        (user({"audioX": {}, "videoX": {}}), "is not one Converse block kind"),
        (assistant({"toolUse": {"name": "f", "input": {}}}), "a tool call without an id"),
        (assistant({"toolUse": "f"}), "a 'toolUse' block must be an object"),
        (assistant(res("a")), "a 'toolResult' block is not mapped in assistant messages"),
        (user(use("a")), "a 'toolUse' block is not mapped in user messages"),
        (user({"toolResult": {"toolUseId": "a", "content": "x"}}), "toolResult content must be a list"),
        (user({"toolResult": {"toolUseId": "a", "content": [{"x": 1, "y": 2}]}}), "not text, json or a file"),
        (user({"toolResult": {"content": []}}), "a tool result without a call id"),
        (user({"guardContent": {}}), "a 'guardContent' block without its text"),
        (user({"text": 3}), "a 'text' block without its text"),
        ("hello", "expected a message object, got str"),
    ],
)
def test_malformed_records_are_one_line_naming_the_record(
    record: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [user({"text": "hi"}), record])
    code, out, err = lint(path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "record 2" in err and says in err, err
    assert "Traceback" not in err


def strands_agent_folder(root: Path, history: list[dict[str, Any]]) -> Path:
    """An agent as Strands' ``FileSessionManager`` stores it: ``agents/agent_ID/messages/
    message_N.json``, each one ``SessionMessage`` written indented."""
    folder = root / "session_s1" / "agents" / "agent_default"
    (folder / "messages").mkdir(parents=True)
    (folder / "agent.json").write_text(json.dumps({"agent_id": "default", "state": {}}))
    for i, message in enumerate(history):
        record = {"message": message, "message_id": i, "redact_message": None}
        (folder / "messages" / f"message_{i}.json").write_text(json.dumps(record, indent=2))
    return folder


@pytest.mark.parametrize("given", ["agent", "messages"])
def test_a_strands_agent_folder_is_one_history(
    given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out session (issue 51): the folder FileSessionManager writes was an
    archive of one-message files, each refused (a single ``message_N.json`` is one indented
    object), exit 2. It is one history, in ``message_id`` order (``message_10`` after
    ``message_9``): clean exit 0; the message holding the calls removed, exit 1."""
    history = [user({"text": "hi"}), assistant({"text": "hello"})] * 5
    history += [user({"text": "weather?"}), assistant(use("a")), user(res("a")), assistant({"text": "rain"})]
    folder = strands_agent_folder(tmp_path, history)
    path = folder if given == "agent" else folder / "messages"
    code, out, err = lint(path, capsys)
    assert (code, err) == (0, ""), out
    assert shape(import_events("bedrock", path)) == "U T " * 5 + "U Ca Ra T"
    (folder / "messages" / "message_11.json").unlink()
    for extra in ([], ["--jobs", "2"]):
        assert main(["lint", "--from", "bedrock", str(path), *extra]) == 1
        assert "orphan-result" in capsys.readouterr().out
    one = import_events("bedrock", folder / "messages" / "message_12.json")
    assert shape(one) == "Ra"


SESSION = EXAMPLES / "strands-session" / "session_s1" / "agents" / "agent_a1"
"""A real FileSessionManager folder (examples/formats/strands_messages.py 4 --session …): ten
message files, and ``agent.json``'s ``removed_message_count`` 7 — the sliding window cut the agent
to ``message_7..9``, starting at an assistant ``toolUse``."""


def test_the_real_session_folder_is_read_as_strands_restores_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Left open by the last audit: the folder read every stored message, so a session whose
    sliding window left the agent assistant-first (harness-sdk#1749) linted clean. Strands restores
    the agent from ``message_{removed_message_count}`` on (``RepositorySessionManager.initialize``
    lists messages with that offset), which is what its next request sends: exit 1, first-not-user,
    naming ``message_7.json``."""
    state = json.loads((SESSION / "agent.json").read_text())
    assert state["conversation_manager_state"]["removed_message_count"] == 7
    assert len(list((SESSION / "messages").glob("message_*.json"))) == 10
    for path in (SESSION, SESSION / "messages"):
        assert shape(import_events("bedrock", path)) == "Ctooluse_5 Rtooluse_5 T"
        code, out, err = lint(path, capsys)
        assert code == 1 and err == "" and "first-not-user" in out and "message_7.json" in out, out


@pytest.mark.parametrize(
    ("manager", "expected", "code"),
    [
        ({"__name__": "SlidingWindowConversationManager", "removed_message_count": 0}, "U T U Ca Ra T", 0),
        ({"__name__": "SlidingWindowConversationManager", "removed_message_count": 2}, "U Ca Ra T", 0),
        ({"__name__": "SlidingWindowConversationManager", "removed_message_count": 3}, "Ca Ra T", 1),
        ({"__name__": "SlidingWindowConversationManager", "removed_message_count": 4}, "Ra T", 1),
        ({"__name__": "SummarizingConversationManager", "removed_message_count": 3,
          "summary_message": {"role": "user", "content": [{"text": "Asked for weather."}]}}, "U Ca Ra T", 0),
        ({"__name__": "NullConversationManager", "removed_message_count": 0}, "U T U Ca Ra T", 0),
    ],
)  # fmt: skip
def test_the_conversation_managers_cut_is_applied(
    manager: dict[str, Any], expected: str, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The count skips message files in index order, as Strands' offset does; a
    SummarizingConversationManager's ``summary_message`` (a user message) is sent before the rest,
    as ``restore_from_session`` prepends it — so a summarized cut at a toolUse is clean."""
    history = [user({"text": "hi"}), assistant({"text": "hello"}), user({"text": "weather?"}),
               assistant(use("a")), user(res("a")), assistant({"text": "rain"})]  # fmt: skip
    folder = strands_agent_folder(tmp_path, history)
    (folder / "agent.json").write_text(
        json.dumps({"agent_id": "default", "conversation_manager_state": manager})
    )
    assert shape(import_events("bedrock", folder)) == expected
    assert main(["lint", "--from", "bedrock", str(folder)]) == code, capsys.readouterr().out


@pytest.mark.parametrize(("count", "says"), [(-1, "got -1"), ("3", "got '3'"), (True, "got True")])
def test_a_count_strands_could_not_have_written_is_one_line(
    count: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = strands_agent_folder(tmp_path, [user({"text": "hi"})])
    state = {"conversation_manager_state": {"removed_message_count": count}}
    (folder / "agent.json").write_text(json.dumps(state))
    code, out, err = lint(folder, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err and "agent.json" in err, err


def test_a_symlinked_agent_json_is_not_followed(tmp_path: Path) -> None:
    folder = strands_agent_folder(tmp_path, [user({"text": "hi"}), assistant({"text": "yo"})])
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"conversation_manager_state": {"removed_message_count": 1}}))
    (folder / "agent.json").unlink()
    (folder / "agent.json").symlink_to(outside)
    assert shape(import_events("bedrock", folder)) == "U T"


def test_the_real_session_manager_writes_what_the_example_folder_holds(tmp_path: Path) -> None:
    pytest.importorskip("strands", reason="strands-agents is not installed")
    import sys

    sys.path.insert(0, str(EXAMPLES))
    try:
        from strands_messages import agent_messages
    finally:
        sys.path.remove(str(EXAMPLES))
    agent_messages(4, str(tmp_path))
    written = tmp_path / "session_s1" / "agents" / "agent_a1"
    assert shape(import_events("bedrock", written)) == shape(import_events("bedrock", SESSION))
