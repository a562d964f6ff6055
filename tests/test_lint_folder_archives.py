"""``lint --from openhands|bedrock DIR`` where DIR holds many histories: a folder of OpenHands
conversations (``~/.openhands/conversations/``), a Strands session (``session_ID/agents/…``) or a
root of sessions, a folder of Converse JSON files. Found auditing issue 51 ("``--from FORMAT
DIR|GLOB`` over many files"): each was refused as one history ("no OpenHands event files", "no
Strands message files"), exit 2 for well-formed histories. Each history folder is now one entry of
the archive, the product's own files beside them (``session.json``, ``agent.json``,
``base_state.json``) are skipped, and ``--jobs`` and a real Dask cluster print the bytes of one
process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_import_bedrock import SESSION, assistant, res, strands_agent_folder, use, user
from test_import_openhands import CONVERSATION, base_state, conversation_folder

from turncheck.models.archive import archive_files


def conversations(root: Path) -> Path:
    """Two OpenHands conversations in the folder the SDK keeps them in; the second with its first
    action's event file gone (its observation an orphan)."""
    for name in ("c1", "c2"):
        folder = conversation_folder(root / name, CONVERSATION)
        base_state(folder, {"model": "anthropic/claude-sonnet-4-5"})
        shutil.move(str(folder), str(root / f"conv-{name}"))
        (root / name).rmdir()
    (root / "conv-c2" / "events" / "event-00002-e2.json").unlink()
    return root


def test_a_folder_of_openhands_conversations(cli: Any, tmp_path: Path) -> None:
    root = conversations(tmp_path / "conversations")
    assert archive_files(str(root), "openhands") == [root / "conv-c1", root / "conv-c2"]
    run = cli("lint", "--from", "openhands", str(root))
    assert run.code == 1 and run.err == "", run
    assert "conv-c1: 6 events" in run.out and "nothing anthropic refuses" in run.out
    assert "orphan-result" in run.out and "2 files: 1 clean, 1 with problems, 0 not read" in run.out
    (root / "conv-c2" / "events" / "event-00004-e4.json").unlink()  # and its observation: clean
    assert cli("lint", "--from", "openhands", str(root)).code == 0
    assert cli("lint", "--from", "openhands", str(root / "conv-*")).code == 0


def test_a_strands_session_and_a_root_of_sessions(cli: Any, tmp_path: Path) -> None:
    """The real FileSessionManager session (examples/formats/strands-session): its root, its
    ``session_s1`` and its ``agents/`` are each the one agent, assistant-first after its window."""
    root = SESSION.parent.parent.parent
    for spec in (root, root / "session_s1", root / "session_s1" / "agents"):
        assert archive_files(str(spec), "bedrock") == [SESSION]
        run = cli("lint", "--from", "bedrock", str(spec))
        assert run.code == 1 and "first-not-user" in run.out and run.err == "", run
    clean = [user({"text": "hi"}), assistant(use("a")), user(res("a")), assistant({"text": "ok"})]
    session = tmp_path / "sessions" / "session_x"
    session.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps({"session_id": "x", "session_type": "AGENT"}))
    strands_agent_folder(session.parent, clean)
    shutil.move(str(session.parent / "session_s1" / "agents"), str(session / "agents"))
    run = cli("lint", "--from", "bedrock", str(tmp_path / "sessions"))
    assert run.code == 0 and "1 files: 1 clean" in run.out and run.err == "", run


def test_a_folder_of_converse_files_is_an_archive(cli: Any, tmp_path: Path) -> None:
    clean = [user({"text": "hi"}), assistant(use("a")), user(res("a")), assistant({"text": "ok"})]
    (tmp_path / "a.json").write_text(json.dumps(clean))
    (tmp_path / "b.json").write_text(json.dumps({"messages": clean}))
    assert cli("lint", "--from", "bedrock", str(tmp_path)).code == 0
    (tmp_path / "c.json").write_text(json.dumps(clean[1:]))  # assistant-first
    run = cli("lint", "--from", "bedrock", str(tmp_path))
    assert run.code == 1 and "first-not-user" in run.out and "3 files: 2 clean, 1 with problems" in run.out


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_jobs_and_dask_print_the_bytes_of_one_process(
    cli: Any, tmp_path: Path, fmt: str, dask_scheduler: str
) -> None:
    root = conversations(tmp_path / "conversations")
    one = cli("lint", "--from", "openhands", str(root), "-q", "--format", fmt)
    assert one.code == 1
    assert cli("lint", "--from", "openhands", str(root), "-q", "--format", fmt, "--jobs", "2") == one
    on_dask = cli(
        "lint", "--from", "openhands", str(root), "-q", "--format", fmt, "--scheduler", dask_scheduler
    )
    assert on_dask == one
