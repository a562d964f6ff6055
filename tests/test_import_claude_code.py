"""``--from claude-code``: Claude Code session files. The Claude Agent SDK needs the Claude Code
CLI and an account to write one, so the files under examples/formats/ follow the records as
Claude Code 2.1 writes them, field for field (microsoft/amplifier's session format notes;
anthropics/claude-code#16944, #31330, #90036): an assistant reply split one block a record and
joined by ``message.id``, results written between its blocks, a subagent's sidechain, a rewind
that leaves an abandoned branch, and a ``compact_boundary`` with its ``isCompactSummary`` record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event
from turncheck.models.importers import FORMATS, import_events, import_log

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "formats"


def shape(events: list[Event]) -> str:
    return " ".join("S" if e.kind.name == "SUMMARY" else e.kind.name[0] + (e.call_id or "") for e in events)


def by_session(events: list[Event]) -> dict[str, str]:
    out: dict[str, list[Event]] = {}
    for e in events:
        out.setdefault(e.session, []).append(e)
    return {s: shape(evs) for s, evs in out.items()}


def lint(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["lint", "--from", "claude-code", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, recs: list[Any]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def rec(
    kind: str, uuid: str, parent: str | None, content: Any, mid: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A record as Claude Code writes one (the fields a reader needs; the rest are ignored)."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = mid or f"msg_{uuid}"
    return {"type": kind, "parentUuid": parent, "isSidechain": False, "sessionId": "s1", "uuid": uuid,
            "message": message, **extra}  # fmt: skip


def use(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "ls"}}


def res(cid: str, content: Any = "ok") -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": cid, "content": content}]


def test_the_format_is_registered_with_anthropics_rules() -> None:
    assert FORMATS["claude-code"].provider == "anthropic"


def test_a_session_with_parallel_calls_a_subagent_a_rewind_and_a_compaction_is_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = EXAMPLES / "claude-code-session.jsonl"
    code, out, err = lint(path, capsys)
    assert (code, err) == (0, ""), out
    imported = import_log("claude-code", path)
    assert by_session(imported.events) == {
        # msg_01's text and tool_use records are one message; msg_02's two calls come before the
        # results written between them; the abandoned first try (toolu_05) is not on the path
        "claude-code-session": "U Ctoolu_01 Rtoolu_01 Ctoolu_02 Ctoolu_03 Rtoolu_02 Rtoolu_03 Ctoolu_04 "
        "Rtoolu_04 S U Ctoolu_06 Rtoolu_06 T",
        "claude-code-session/a2223d9": "U Ctoolu_s1 Rtoolu_s1 T",
    }
    summary = next(e for e in imported.events if e.kind.name == "SUMMARY")
    assert summary.covers == (0, 8) and summary.text.startswith("This session is being continued")
    assert imported.origins[:3] == [f"{path}:2", f"{path}:4", f"{path}:6"]


def test_a_compaction_while_a_subagent_runs_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """anthropics/claude-code#90036: the Task call is summarised away while its agent runs; its
    result arrives after the compact summary."""
    code, out, err = lint(EXAMPLES / "claude-code-compaction.jsonl", capsys)
    assert (code, err) == (1, "")
    assert "summary-covers-open-call" in out and "claude-code-compaction.jsonl:17" in out


def test_parallel_results_lost_on_resume_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """anthropics/claude-code#31330: after a resume only the last of parallel results is kept."""
    path = write(tmp_path, [
        rec("user", "u1", None, "run three"),
        rec("assistant", "a1", "u1", [use("t1")], mid="m1"),
        rec("assistant", "a2", "a1", [use("t2")], mid="m1"),
        rec("user", "r2", "a2", res("t2")),
        rec("user", "u2", "r2", "what were they?"),
    ])  # fmt: skip
    assert shape(import_events("claude-code", path)) == "U Ct1 Ct2 Rt2 U"
    code, out, _ = lint(path, capsys)
    assert code == 1 and "t1" in out


def test_the_path_runs_through_records_never_sent(tmp_path: Path) -> None:
    """A system note or a progress record is a link of the parentUuid chain: the records before
    it stay on the path."""
    path = write(tmp_path, [
        rec("user", "u1", None, "hi"),
        rec("assistant", "a1", "u1", [{"type": "text", "text": "hello"}]),
        {"type": "system", "subtype": "local_command", "uuid": "s1", "parentUuid": "a1", "content": "/model"},
        {"type": "progress", "uuid": "p1", "parentUuid": "s1", "data": {}},
        rec("user", "u2", "p1", "again"),
        rec("assistant", "a2", "u2", [{"type": "text", "text": "hello again"}]),
    ])  # fmt: skip
    assert shape(import_events("claude-code", path)) == "U T U T"


def test_results_hanging_off_their_own_tool_use_records_are_read(tmp_path: Path) -> None:
    """Parallel results may each name their own ``tool_use`` record as parent, off the chain
    the conversation continues from: they were sent, and are read; a rewound prompt is not."""
    path = write(tmp_path, [
        rec("user", "u1", None, "run two"),
        rec("assistant", "a1", "u1", [use("t1")], mid="m1"),
        rec("assistant", "a2", "a1", [use("t2")], mid="m1"),
        rec("user", "r1", "a1", res("t1")),
        rec("user", "r2", "a2", res("t2")),
        rec("assistant", "a3", "r2", [{"type": "text", "text": "both ran"}]),
        rec("user", "old", "a3", "first try, rewound"),
        rec("user", "new", "a3", "second try"),
    ])  # fmt: skip
    assert shape(import_events("claude-code", path)) == "U Ct1 Ct2 Rt1 Rt2 T U"
    assert import_log("claude-code", path).origins[-1].endswith(":8")


def test_a_boundary_without_its_summary_record_is_the_summary(tmp_path: Path) -> None:
    path = write(tmp_path, [
        rec("user", "u1", None, "hi"),
        rec("assistant", "a1", "u1", [{"type": "text", "text": "hello"}]),
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
         "logicalParentUuid": "a1", "content": "Conversation compacted", "compactMetadata": {"trigger": "manual"}},
        rec("user", "u2", "b1", "go on"),
    ])  # fmt: skip
    events = import_events("claude-code", path)
    assert (
        shape(events) == "U T S U"
        and events[2].text == "Conversation compacted"
        and events[2].covers == (0, 1)
    )


def test_records_without_ids_images_and_old_sidechains(tmp_path: Path) -> None:
    """Records without ``uuid`` are read in file order; an image (pasted, or a Read's result)
    keeps its message; a sidechain without ``agentId`` is named by its root."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    path = write(tmp_path, [
        {"type": "user", "message": {"role": "user", "content": [image]}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [use("t1")]}},
        {"type": "user", "message": {"role": "user", "content": res("t1", [image])}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": "done"}},
        rec("user", "x1", None, "sub task", isSidechain=True),
        rec("assistant", "x2", "x1", [{"type": "text", "text": "sub done"}], isSidechain=True),
    ])  # fmt: skip
    assert by_session(import_events("claude-code", path)) == {"session": "U Ct1 Rt1 T", "session/x1": "U T"}


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "malformed JSON"),
        ('{"uuid": "x"}', "expected a session record with a 'type'"),
        ('["user"]', "expected a session record with a 'type'"),
        ('{"type": "user", "uuid": "x"}', "a user record without its 'message' object"),
        ('{"type": "user", "uuid": 3, "message": {"content": "x"}}', "'uuid' must be a string or null"),
        ('{"type": "assistant", "message": {"id": "m", "content": 7}}', "content must be text or a list of blocks"),
        ('{"type": "assistant", "message": {"id": "m", "content": [{"type": "tool_use", "input": {}}]}}',
         "a tool call without an id"),
        ('{"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}}',
         "a tool result without a call id"),
        ('{"type": "user", "message": {"content": [{"type": "hologram"}]}}', "'hologram' is not mapped"),
        ('{"type": "user", "isCompactSummary": true, "message": {"content": 5}}', "content must be text"),
    ],
)  # fmt: skip
def test_malformed_records_are_one_line_naming_the_line(
    line: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n' + line + "\n")
    code, out, err = lint(path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "session.jsonl:2" in err and says in err, err
