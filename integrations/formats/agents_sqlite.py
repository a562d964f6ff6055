"""``--from agents-sqlite``: the SQLite database the OpenAI Agents SDK's ``SQLiteSession`` writes
(every session in it); each row is a Responses API item."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from turncheck.integrations.formats.openai_responses import add_response_item
from turncheck.models.chat_log import ImportFormatError
from turncheck.models.importers import (
    Group,
    Imported,
    LogFormat,
    bounded_reads,
    build_sessions,
    loads,
    register_format,
)

READ_SECONDS = 5.0
"""How long reading the database may take: SQLite's progress handler stops the query after it."""
MAX_VALUE_BYTES = 1 << 24
"""The longest string or blob SQLite may build while reading (one item's JSON is far smaller)."""


def read_agents_sqlite(path: Path) -> Imported:
    """Every session of a ``SQLiteSession`` database, items in the order they were added.

    The database is opened read-only through a URI built from the resolved path (``?``, ``#`` and
    ``%`` percent-encoded), so a name that looks like URI parameters opens that very file and
    never creates one."""
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    deadline = time.monotonic() + READ_SECONDS
    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:  # a hostile file is a program: a recursive VIEW never ends, zeroblob(9e8) takes 5 GB
            rows = (
                bounded_reads(con, deadline, MAX_VALUE_BYTES)
                .execute("SELECT session_id, id, message_data FROM agent_messages ORDER BY id")
                .fetchall()
            )
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        if time.monotonic() > deadline:
            raise ImportFormatError(
                f"{path}: reading agent_messages took over {READ_SECONDS:g} s (a recursive view?); refused"
            ) from None
        raise ImportFormatError(f"{path}: not an OpenAI Agents SDK session database ({exc})") from None
    groups: list[Group] = []
    for session, row_id, data in rows:
        try:
            item = loads(data, f"{path}: agent_messages row {row_id}")
        except (TypeError, json.JSONDecodeError):
            raise ImportFormatError(
                f"{path}: agent_messages row {row_id}: message_data is not JSON"
            ) from None
        groups.append((str(session), [item], f"{path}: agent_messages row {row_id}", None))
    return build_sessions(groups, add_response_item)


register_format(
    LogFormat(
        "agents-sqlite",
        read_agents_sqlite,
        "the SQLite database the OpenAI Agents SDK's SQLiteSession writes (every session in it)",
        provider="openai-responses",
    )
)
