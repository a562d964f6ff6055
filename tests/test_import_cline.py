"""``--from cline``: a task's ``api_conversation_history.json`` as Cline stores it — Anthropic
messages extended by its ``ClineStorageMessage`` fields (``ts``, ``id``, ``modelInfo``,
``metrics``) — read by the Anthropic reader, with images (a browser screenshot inside a
``tool_result``) kept as empty text. Cline is a VS Code extension, so these follow its declared
types; the orphan after truncation is cline/cline#7225's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.models.importers import FORMATS, import_events

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGR"}}
META = {"modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"},
        "metrics": {"tokens": {"prompt": 10, "completion": 5, "cached": 0}, "cost": 0.01}}  # fmt: skip


def stored(role: str, content: Any, n: int) -> dict[str, Any]:
    return {
        "role": role,
        "content": content,
        "ts": 1760000000000 + n,
        **(META if role == "assistant" else {}),
    }


HISTORY = [
    stored("user", [{"type": "text", "text": "<task>\nCheck the page renders\n</task>"}, IMAGE], 0),
    stored("assistant", [{"type": "thinking", "thinking": "open it", "signature": "sig"},
                         {"type": "text", "text": "Opening the page."},
                         {"type": "tool_use", "id": "toolu_01", "name": "browser_action", "input": {"action": "launch"}}], 1),
    stored("user", [{"type": "tool_result", "tool_use_id": "toolu_01",
                     "content": [{"type": "text", "text": "The browser launched."}, IMAGE]}], 2),
    stored("assistant", [{"type": "tool_use", "id": "toolu_02", "name": "attempt_completion", "input": {"result": "ok"}}], 3),
    stored("user", [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "done"}], 4),
    stored("assistant", [{"type": "text", "text": "It renders."}], 5),
]  # fmt: skip


def lint(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["lint", "--from", "cline", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_a_stored_task_with_screenshots_is_read_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, HISTORY)
    assert FORMATS["cline"].provider == "anthropic"
    code, out, err = lint(path, capsys)
    assert (code, err) == (
        0,
        "",
    ) and "6 events in 1 sessions\nclean: no structural problems; nothing anthropic refuses" in out
    events = import_events("cline", path)
    assert [(e.kind.name, e.call_id) for e in events] == [
        ("USER", None), ("CALL", "toolu_01"), ("RESULT", "toolu_01"),
        ("CALL", "toolu_02"), ("RESULT", "toolu_02"), ("TERM", None),
    ]  # fmt: skip
    assert events[2].text == "The browser launched."


def test_a_window_truncated_through_a_tool_pair_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cline/cline#7225: the first two messages kept, the range after them dropped, and the next
    user message still answers a tool_use that was dropped (Anthropic: "unexpected `tool_use_id`
    found in `tool_result` blocks")."""
    window = [*HISTORY[:2], HISTORY[4], HISTORY[5]]
    window[1] = stored("assistant", [{"type": "text", "text": "Opening the page."}], 1)
    code, out, err = lint(write(tmp_path, window), capsys)
    assert (code, err) == (1, "") and "result-not-next" in out and "record 3" in out
