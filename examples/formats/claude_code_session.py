"""Write a Claude Code session file with the real Claude Code CLI, offline, for
``turncheck lint --from claude-code``.

The Claude Agent SDK for Python (``pip install claude-agent-sdk``) bundles the Claude Code CLI.
Here it runs against a local stand-in for the Messages API (``ANTHROPIC_BASE_URL``; the stand-in
streams scripted replies), in a throw-away ``HOME``, three times on one session: a prompt the
model answers with two parallel ``Bash`` calls, ``/compact`` (a real ``compact_boundary`` and
``isCompactSummary`` record), and a second prompt answered the same way::

    python examples/formats/claude_code_session.py > claude-code-cli.jsonl          # trimmed
    python examples/formats/claude_code_session.py --raw > claude-code-cli-raw.jsonl

The file beside this script (``claude-code-cli.jsonl``) was written by it with claude-agent-sdk
0.2.190 (Claude Code 2.1.337), trimmed: the lines turncheck never reads and that carry Claude
Code's own prompts (``api-request*`` and other records without a ``uuid``) are dropped and each
``attachment`` record's body emptied; every record of the conversation is as the CLI wrote it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMPTS = ("Run echo one and echo two in parallel.", "/compact", "Thanks. Once more?")


def events(blocks: list[dict[str, Any]], stop: str, number: int) -> bytes:
    """One reply as the Messages API streams it (server-sent events)."""
    message: dict[str, Any] = {"id": f"msg_{number:03d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}  # fmt: skip
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    for i, block in enumerate(blocks):
        start: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": i})]  # fmt: skip
    out += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}), ("message_stop", {"type": "message_stop"})]  # fmt: skip
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in out).encode()


def reply(body: dict[str, Any], number: int) -> tuple[list[dict[str, Any]], str]:
    """The scripted model: two parallel calls for a prompt, text once their results are back;
    without tools (the compaction, a title) a summary."""
    last = (body.get("messages") or [{}])[-1].get("content")
    if not any(t.get("name") == "Bash" for t in body.get("tools") or []):
        return [
            {"type": "text", "text": "<summary>Two echoes were run in parallel; both printed.</summary>"}
        ], "end_turn"
    if isinstance(last, list) and any(isinstance(c, dict) and c.get("type") == "tool_result" for c in last):
        return [{"type": "text", "text": "Both commands ran."}], "end_turn"
    calls = [{"type": "tool_use", "id": f"toolu_{number:02d}{n}", "name": "Bash",
              "input": {"command": f"echo {word}", "description": f"echo {word}"}} for n, word in (("a", "one"), ("b", "two"))]  # fmt: skip
    return [{"type": "text", "text": "Running both."}, *calls], "tool_use"


class MessagesAPI(BaseHTTPRequestHandler):
    served = 0

    def log_message(self, *args: Any) -> None:
        del args

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        MessagesAPI.served += 1
        if "count_tokens" in self.path:
            out, kind = json.dumps({"input_tokens": 100}).encode(), "application/json"
        else:
            out, kind = events(*reply(body, MessagesAPI.served), MessagesAPI.served), "text/event-stream"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def session_file(cli: str) -> Path:
    """Run the three prompts on one session; the session file the CLI wrote."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), MessagesAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = Path(tempfile.mkdtemp(prefix="claude-home-"))
    (home / "proj").mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANTHROPIC_API_KEY": "offline",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}  # fmt: skip
    session: list[str] = []
    try:
        for prompt in PROMPTS:
            command = [
                cli,
                "-p",
                "--output-format",
                "json",
                "--allowedTools",
                "Bash(echo:*)",
                *session,
                "--",
                prompt,
            ]
            done = subprocess.run(command, cwd=home / "proj", env=env, capture_output=True, text=True, timeout=180, check=True)  # fmt: skip
            session = session or ["--resume", json.loads(done.stdout)["session_id"]]
    finally:
        server.shutdown()
    return next((home / ".claude" / "projects").glob("*/*.jsonl"))


def trimmed(line: str) -> str | None:
    record = json.loads(line)
    if "uuid" not in record:
        return None
    if record.get("type") == "attachment" and isinstance(record.get("attachment"), dict):
        record["attachment"] = {"type": record["attachment"].get("type")}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def bundled_cli() -> str:
    import claude_agent_sdk

    return str(Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude")


if __name__ == "__main__":
    lines = session_file(bundled_cli()).read_text(encoding="utf-8").splitlines()
    for line in lines if "--raw" in sys.argv else filter(None, map(trimmed, lines)):
        print(line)
