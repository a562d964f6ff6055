"""``--from claude-code``: Claude Code session files. examples/formats/claude-code-cli.jsonl was
written by the real Claude Code CLI (the one claude-agent-sdk 0.2.190 bundles, 2.1.337) against a
local stand-in for the Messages API (examples/formats/claude_code_session.py): parallel calls
whose records hang off each other, ``/compact`` keeping a segment; with claude-agent-sdk
installed the CLI runs again here. The other files follow the records as Claude Code writes them
(microsoft/amplifier's session format notes; anthropics/claude-code#16944, #31330, #90036) for
what an offline run cannot make: a subagent's sidechain, a rewind's abandoned branch, a
compaction while a subagent runs."""

from __future__ import annotations

import json
import sys
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


def test_a_session_the_real_cli_wrote_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    """Each parallel result's record names its own tool_use record as parent, and the reply's
    blocks are three records; /compact keeps the last reply (``preservedSegment``), so the
    summary covers what comes before it, not the kept answer."""
    path = EXAMPLES / "claude-code-cli.jsonl"
    assert lint(path, capsys)[:1] == (0,)
    assert main(["lint", "--from", "claude-code", "--provider", "anthropic", str(path)]) == 0
    events = import_events("claude-code", path)
    assert shape(events) == (
        "U Ctoolu_01a Ctoolu_01b Rtoolu_01a Rtoolu_01b T S U U U U Ctoolu_05a Ctoolu_05b Rtoolu_05a Rtoolu_05b T"
    )
    assert events[6].covers == (0, 4)


def pairing(events: list[Event]) -> list[tuple[str, int | None]]:
    """Kinds and call pairing, ids renamed by first appearance (the stand-in numbers them by how
    many requests the CLI made) and parallel results in call order (they land as they finish)."""
    names: dict[str, int] = {}
    out = [(e.kind.name, names.setdefault(e.call_id, len(names)) if e.call_id else None) for e in events]
    runs: list[list[tuple[str, int | None]]] = []
    for item in out:
        if runs and item[0] == "RESULT" == runs[-1][0][0]:
            runs[-1].append(item)
        else:
            runs.append([item])
    return [item for run in runs for item in sorted(run, key=lambda x: x[1] or 0)]


def test_the_real_cli_writes_what_the_example_holds(tmp_path: Path) -> None:
    sdk = pytest.importorskip(
        "claude_agent_sdk", reason="claude-agent-sdk (the bundled Claude Code CLI) is not installed"
    )
    sys.path.insert(0, str(EXAMPLES))
    try:
        from claude_code_session import session_file
    finally:
        sys.path.remove(str(EXAMPLES))
    written = session_file(str(Path(sdk.__file__).parent / "_bundled" / "claude"))
    expected = import_log("claude-code", EXAMPLES / "claude-code-cli.jsonl")
    got = import_log("claude-code", written)
    assert pairing(got.events) == pairing(expected.events)
    assert [e.covers for e in got.events] == [e.covers for e in expected.events]


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
    keeps its message, a ToolSearch result's ``tool_reference`` is read; a sidechain without
    ``agentId`` is named by its root."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    path = write(tmp_path, [
        {"type": "user", "message": {"role": "user", "content": [image]}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [use("t1")]}},
        {"type": "user", "message": {"role": "user", "content": res("t1", [image])}},
        {"type": "assistant", "message": {"id": "m3", "role": "assistant", "content": [use("t2")]}},
        {"type": "user", "message": {"role": "user", "content": res("t2", [{"type": "tool_reference", "tool_name": "Grep"}])}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": "done"}},
        rec("user", "x1", None, "sub task", isSidechain=True),
        rec("assistant", "x2", "x1", [{"type": "text", "text": "sub done"}], isSidechain=True),
    ])  # fmt: skip
    events = import_events("claude-code", path)
    assert by_session(events) == {"session": "U Ct1 Rt1 Ct2 Rt2 T", "session/x1": "U T"}
    assert events[4].text == "Grep"  # ToolSearch's tool_reference, as the tool's name


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


def test_a_block_of_a_type_no_reader_knows_is_kept_as_opaque_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A well-formed record is never refused for a block it does not know (issue 51): the block
    is kept, costed and ordered as sent, and counted in one warning line."""
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n'
                    '{"type": "user", "message": {"content": [{"type": "hologram"}]}}\n')  # fmt: skip
    code, _, err = lint(path, capsys)
    assert code == 0 and "1 part of type hologram was kept as opaque content" in err, err
    assert import_log("claude-code", path).opaque == {"hologram": 1}
