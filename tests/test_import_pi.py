"""``--from pi``: pi coding agent session files. pi is a Node program that needs a model account
to write one, so the files under examples/formats/ follow its documented session format v3
(pi-mono ``packages/coding-agent/docs/session.md``): a header, message entries in a tree by
``id`` / ``parentId``, a model change, a ``/tree`` branch with its ``branch_summary``, and
``compaction`` entries with ``firstKeptEntryId``. The broken one is earendil-works/pi#8667's
trace: a compaction requested while a tool call runs sits between the call and its result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.importers import FORMATS, import_events, import_log

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "formats"


def shape(events: list[Event]) -> str:
    words = []
    for e in events:
        word = f"S{e.covers[0]}-{e.covers[1]}" if e.kind is Kind.SUMMARY and e.covers else e.kind.name[0]
        words.append(
            word + (e.call_id or "").removeprefix("toolu_") + (f">{e.tied_to[-2:]}" if e.tied_to else "")
        )
    return " ".join(words)


def lint(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["lint", "--from", "pi", *extra, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-09-21T10:00:00.000Z",
        **fields,
    }


def message(entry_id: str, parent: str | None, role: str, **fields: Any) -> dict[str, Any]:
    return entry("message", entry_id, parent, message={"role": role, **fields})


def write(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    header = {"type": "session", "version": 3, "id": "u", "timestamp": "2026-09-21T10:00:00.000Z", "cwd": "/"}
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *entries]), encoding="utf-8")
    return path


def test_the_format_is_registered_without_a_default_provider() -> None:
    assert FORMATS["pi"].provider is None


def test_a_session_with_a_branch_and_a_compaction_is_read_along_its_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The abandoned branch is not read; the branch summary is the user message pi sends; the
    compaction covers what comes before its first kept entry; thinking ties the second call."""
    path = EXAMPLES / "pi-session.jsonl"
    assert lint(path, capsys)[0] == 0
    assert lint(path, capsys, "--provider", "anthropic")[0] == 0
    imported = import_log("pi", path)
    assert shape(imported.events) == "U C01 C02>01 R01 R02 T U C03 R03 T U U C04 R04 S0-10 U T"
    assert imported.origins[0] == f"{path}:2"


def test_a_compaction_inside_a_call_and_its_result_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """earendil-works/pi#8667: the stale compaction renders between toolCall and toolResult
    (Anthropic: "unexpected tool_use_id"), and the later one keeps the result but not its call."""
    path = EXAMPLES / "pi-stale-compaction.jsonl"
    assert shape(import_events("pi", path)) == "U C01 C02>01 R01 R02 T U C03 S0-5 R03 T U U C04 R04 S0-8 U T"
    code, out, err = lint(path, capsys)
    assert (code, err) == (1, "") and "summary-splits-pair" in out
    code, out, _ = lint(path, capsys, "--provider", "anthropic")
    assert code == 1 and "results-not-first" in out and "pi-stale-compaction.jsonl:10" in out


def test_entries_pi_sends_as_user_messages_and_those_it_does_not_send(tmp_path: Path) -> None:
    path = write(tmp_path, [
        message("a", None, "user", content=[{"type": "text", "text": "hi"}, {"type": "image", "data": "AA", "mimeType": "image/png"}]),
        message("b", "a", "bashExecution", command="ls", output="x", exitCode=0, cancelled=False, truncated=False),
        message("c", "b", "bashExecution", command="ls", output="x", excludeFromContext=True),
        entry("custom", "d", "c", customType="ext", data={}),
        entry("custom_message", "e", "d", customType="ext", content="injected", display=True),
        entry("label", "f", "e", targetId="a", label="x"),
        message("g", "f", "assistant", content=[{"type": "text", "text": "ok"}], stopReason="stop"),
        entry("compaction", "h", "g", summary="all kept", firstKeptEntryId="a", tokensBefore=1),
        message("i", "h", "compactionSummary", summary="older", tokensBefore=1),
    ])  # fmt: skip
    events = import_events("pi", path)
    assert shape(events) == "U U U T U S0-4"
    assert [e.text for e in events][:3] == ["hi", "ls\nx", "injected"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("[1]", "expected a session record with a 'type'"),
        ('{"type": "message", "parentId": null}', "an entry needs a string 'id' and a 'parentId'"),
        ('{"type": "message", "id": "z", "parentId": 5}', "an entry needs a string 'id' and a 'parentId'"),
        ('{"type": "message", "id": "z", "parentId": "a"}', "a message entry without its 'message' object"),
        ('{"type": "message", "id": "z", "parentId": "a", "message": {"role": "robot"}}', "unknown message role 'robot'"),
        ('{"type": "message", "id": "z", "parentId": "a", "message": {"role": "assistant", "content": "x"}}',
         "assistant content must be a list of blocks"),
        ('{"type": "message", "id": "z", "parentId": "a", "message": {"role": "assistant", "content": [{"type": "toolCall"}]}}',
         "a tool call without an id"),
        ('{"type": "message", "id": "z", "parentId": "a", "message": {"role": "assistant", "content": [{"text": "x"}]}}',
         "an assistant block without a 'type'"),
        ('{"type": "message", "id": "z", "parentId": "a", "message": {"role": "toolResult", "content": []}}',
         "a tool result without a call id"),
    ],
)  # fmt: skip
def test_malformed_entries_are_one_line_naming_the_line(
    line: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(
        '{"type": "message", "id": "a", "parentId": null, "message": {"role": "user", "content": "hi"}}\n'
        + line
        + "\n"
    )
    code, out, err = lint(path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "session.jsonl:2" in err and says in err, err


@pytest.mark.parametrize(
    ("api", "held"), [("anthropic-messages", True), ("openai-completions", False), (None, False)]
)
def test_the_api_the_session_records_chooses_the_rules(
    api: str | None, held: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with a held-out session (issue 51): pi records each assistant message's ``api``, yet
    no rules applied unless ``--provider`` named them, so a session sent to Anthropic with text
    before its ``toolResult``… was checked without Anthropic's ``results-not-first``. The last
    assistant message's ``api`` now chooses them."""
    extra = {"api": api} if api else {}
    path = write(tmp_path, [
        message("a", None, "user", content="hi"),
        message("b", "a", "assistant", content=[{"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}], **extra),
        entry("custom_message", "c", "b", content="note", customType="x", display=True),
        message("d", "c", "toolResult", toolCallId="c1", content=[{"type": "text", "text": "a.txt"}]),
        message("e", "d", "assistant", content=[{"type": "text", "text": "done"}], **extra),
    ])  # fmt: skip
    _, out, _ = lint(path, capsys)
    assert ("results-not-first" in out) == held, out
    assert "results-not-first" in lint(path, capsys, "--provider", "anthropic")[1]
