"""Write Goose sessions the way Goose writes them, for ``turncheck lint --from goose``.

Goose is a Rust program (aaif-goose/goose, formerly block/goose) that needs a model account to
run, so these files follow its serializers field for field rather than coming from the binary:

* ``sessions.db`` as ``crates/goose/src/session/session_manager.rs`` (aaif-goose/goose at
  017176d, ``CURRENT_SCHEMA_VERSION = 17``) creates and fills it: ``create_schema``'s
  ``sessions`` / ``messages`` / ``schema_version`` tables, one ``messages`` row per
  ``insert_message`` (``content_json`` = the serde JSON of ``Message.content``, ``metadata_json``
  = ``{"userVisible", "agentVisible"}``, ``created_timestamp`` never before the latest row), and a
  compaction stored as ``save_compacted_conversation`` stores it: the replaced rows' metadata
  updated to ``agentVisible: false``, the summary (a user message, agent-only) and the assistant
  continuation inserted (``context_mgmt::compact_messages``);
* the older ``sessions/NAME.jsonl`` as ``storage.rs`` ``save_messages_with_metadata`` (block/goose
  at 01a262b) writes it: the ``SessionMetadata`` line, then ``serde_json::to_writer(&message)``
  a line, ``Message`` being ``{"id", "role", "created", "content"}`` (``message.rs`` at 1f2f6b1)
  and a tool result the bare content list of that era.

Parts are serde's ``#[serde(tag = "type", rename_all = "camelCase")]`` of ``MessageContent``;
``ToolResult`` is ``tool_result_serde``'s ``{"status": "success", "value": …}`` /
``{"status": "error", "error": …}``.

    python examples/formats/goose_session.py DIR   # DIR/sessions.db and DIR/goose-session.jsonl
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

Message = dict[str, Any]
CREATED = 1767225600  # 2026-01-01T00:00:00Z: the files are the same bytes on every run


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_request(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolRequest", "id": call_id,
            "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}}}  # fmt: skip


def tool_response(call_id: str, output: str, legacy: bool = False) -> dict[str, Any]:
    content = [{"type": "text", "text": output}]
    value: Any = content if legacy else {"content": content, "isError": False}
    return {"type": "toolResponse", "id": call_id, "toolResult": {"status": "success", "value": value}}


def message(role: str, created: int, parts: list[dict[str, Any]], agent: bool = True, user: bool = True,
            legacy: bool = False) -> Message:  # fmt: skip
    out: Message = {"id": None, "role": role, "created": created, "content": parts}
    if not legacy:
        out["metadata"] = {"userVisible": user, "agentVisible": agent}
    return out


def conversation(legacy: bool = False) -> list[Message]:
    """A prompt, two parallel shell calls answered in one user message, an answer."""
    return [
        message("user", CREATED, [text("List the files, twice.")], legacy=legacy),
        message(
            "assistant",
            CREATED + 1,
            [
                text("Listing."),
                tool_request("toolu_01", "developer__shell", {"command": "ls"}),
                tool_request("toolu_02", "developer__shell", {"command": "ls -a"}),
            ],
            legacy=legacy,
        ),  # fmt: skip
        message(
            "user",
            CREATED + 2,
            [tool_response("toolu_01", "a.txt", legacy), tool_response("toolu_02", ". .. a.txt", legacy)],
            legacy=legacy,
        ),  # fmt: skip
        message("assistant", CREATED + 3, [text("One file: a.txt.")], legacy=legacy),
    ]


def write_jsonl(path: Path, messages: list[Message]) -> Path:
    """``save_messages_with_metadata``: the metadata line, then one message a line (serde's
    compact JSON, fields in declaration order)."""
    metadata = {"working_dir": "/home/user/project", "description": "List files", "schedule_id": None,
                "message_count": len(messages), "total_tokens": None, "input_tokens": None, "output_tokens": None,
                "accumulated_total_tokens": None, "accumulated_input_tokens": None, "accumulated_output_tokens": None}  # fmt: skip
    lines = [metadata, *messages]
    path.write_text(
        "".join(json.dumps(m, separators=(",", ":"), ensure_ascii=False) + "\n" for m in lines),
        encoding="utf-8",
    )
    return path


SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT OR IGNORE INTO schema_version (version) VALUES (17);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    cache_read_tokens INTEGER, cache_write_tokens INTEGER, accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, accumulated_cache_read_tokens INTEGER,
    accumulated_cache_write_tokens INTEGER, accumulated_cost REAL, schedule_id TEXT, recipe_json TEXT,
    user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT, goose_mode TEXT NOT NULL DEFAULT 'auto',
    archived_at TIMESTAMP, project_id TEXT, parent_session_id TEXT, parent_delegation TEXT
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT
);
CREATE INDEX IF NOT EXISTS idx_messages_session_created ON messages(session_id, created_timestamp, id);
"""


class SessionsDb:
    """A ``sessions.db`` written as ``SessionStorage`` writes it."""

    def __init__(self, path: Path) -> None:
        self.con = sqlite3.connect(path)
        self.con.executescript("PRAGMA journal_mode=WAL;" + SCHEMA)
        self.rows = 0

    def create_session(self, session_id: str, created_at: str, provider: str = "anthropic") -> None:
        self.con.execute(
            "INSERT INTO sessions (id, name, user_set_name, session_type, working_dir, extension_data, goose_mode, "
            "created_at, updated_at, provider_name) VALUES (?, '', FALSE, 'user', '/home/user/project', '{}', 'auto', ?, ?, ?)",
            (session_id, created_at, created_at, provider),
        )

    def add_message(self, session_id: str, msg: Message) -> str:
        """``insert_message``: ``created`` never before the session's latest row."""
        (latest,) = self.con.execute(
            "SELECT MAX(created_timestamp) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        created = max(msg["created"], latest if latest is not None else msg["created"])
        self.rows += 1
        message_id = msg.get("id") or f"msg_{session_id}_{self.rows:08d}"
        self.con.execute(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (message_id, session_id, msg["role"], json.dumps(msg["content"], separators=(",", ":")), created,
             json.dumps(msg["metadata"], separators=(",", ":"))),
        )  # fmt: skip
        self.con.commit()
        return str(message_id)

    def compact(self, session_id: str, summary: str, created: int) -> None:
        """``save_compacted_conversation`` after ``compact_messages(manual_compact=true)``: every
        stored row agent-invisible, then the summary (user, agent-only) and the continuation."""
        for row_id, metadata in self.con.execute(
            "SELECT id, metadata_json FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall():
            meta = json.loads(metadata)
            meta["agentVisible"] = False
            self.con.execute(
                "UPDATE messages SET metadata_json = ? WHERE id = ?",
                (json.dumps(meta, separators=(",", ":")), row_id),
            )
        self.add_message(session_id, message("user", created, [text(summary)], agent=True, user=False))
        continuation = ("The previous message is a structured summary of the session so far, produced at the user's "
                        "request because the context was getting long. … Continue the session.")  # fmt: skip
        self.add_message(
            session_id, message("assistant", created, [text(continuation)], agent=True, user=False)
        )

    def close(self) -> None:
        self.con.close()


def write_database(path: Path, messages: list[Message], session_id: str = "20260101_1") -> Path:
    db = SessionsDb(path)
    db.create_session(session_id, "2026-01-01 00:00:00")
    for m in messages:
        db.add_message(session_id, m)
    db.close()
    return path


if __name__ == "__main__":
    out = Path(sys.argv[1])
    write_database(out / "sessions.db", conversation())
    write_jsonl(out / "goose-session.jsonl", conversation(legacy=True))
