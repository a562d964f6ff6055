"""``turncheck init``: a starter in the current folder, so ``python -m pytest`` checks a trimmer
and a store of yours from the first minute.

It writes a trimmer to replace (``trim.py``, a ``messages:`` trimmer that keeps whole
exchanges), its check through the pytest fixture (``test_trim.py``), a race test for a chat store
(``test_chat_store_race.py``, ``@pytest.mark.race``), a ``[tool.turncheck]`` table in
``pyproject.toml`` and a ``.turncheck/`` line in ``.gitignore``.

Invariant: init never overwrites and never half-writes. Everything is checked before anything
is written — a starter file that exists already, a ``pyproject.toml`` the table cannot be
appended to (not TOML, an inline ``tool`` table), a symlink in any place — and a refusal is one
line naming the file, exit 2, with nothing written. ``pyproject.toml`` and ``.gitignore`` are
only appended to: their bytes stay as they were, the new text after them; a ``pyproject.toml``
that has a ``[tool.turncheck]`` table already, and a ``.gitignore`` that ignores ``.turncheck/``,
are left as they are (and said so). All files are written at once by
:func:`models.output_files.write_outputs` (each whole or none, never through a symlink).
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from turncheck.cli.options import QuietAlreadyOpt
from turncheck.models.errors import BadParameter

TRIM = '''\
"""Your trimmer: before each model request it gets the conversation as chat messages
({"role": ..., "content": ...}, OpenAI's shape) and returns the messages to send.

Replace the body with yours and keep the signature: `python -m pytest` runs test_trim.py,
which calls it before every request of many small conversations. The same trimmer on a log:
    turncheck project -H LOG.jsonl --from openai-chat -s messages:trim.py:trim
"""

import json


def message_tokens(message):
    """About four characters of the serialized message per token: put your tokenizer here."""
    return len(json.dumps(message, ensure_ascii=False)) // 4 + 1


def trim(messages, budget):
    """Keep the newest whole exchanges that fit the budget.

    The newest messages that fit are kept; then an assistant message or tool result the cut left
    at the front goes too, so the window starts on a user message and no tool result is ever
    sent without the call that asked for it.
    """
    kept, used = [], 0
    for message in reversed(messages):
        used += message_tokens(message)
        if used > budget:
            break
        kept.append(message)
    kept.reverse()
    while kept and kept[0]["role"] in ("assistant", "tool"):
        kept.pop(0)
    return kept
'''

TEST_TRIM = '''\
"""turncheck's pytest fixture runs your trimmer before every model request of many small
conversations (parallel tool calls included) and fails with the shortest one whose window sends
a tool result without its call."""

from trim import trim

from turncheck import message_trimmer


def test_trim_never_sends_a_tool_result_without_its_call(check_projector):
    check_projector(message_trimmer(trim), checks=["orphanRes"])
'''

TEST_RACE = '''\
"""A race test for a chat store: a user message and a tool result appended to one session at
once must both be kept.

`@pytest.mark.race` runs the test under many orders of its awaits, not only asyncio's own
(`turncheck race`). Replace ChatStore with your store, made inside the test: every schedule runs
on an event loop of its own. Take the lock out of append and the test fails, printing the
interleaving that lost a message and the token that replays it.
"""

import asyncio

import pytest


class ChatStore:
    """A session's messages; append reads them, awaits a round trip, and writes them back."""

    def __init__(self):
        self._sessions = {}
        self._lock = asyncio.Lock()

    async def append(self, session, message):
        async with self._lock:  # the read and the write in one critical section
            messages = list(self._sessions.get(session, []))
            await asyncio.sleep(0)  # the round trip to your database
            self._sessions[session] = [*messages, message]

    async def messages(self, session):
        await asyncio.sleep(0)
        return list(self._sessions.get(session, []))


@pytest.mark.race(schedules=50)
async def test_concurrent_appends_are_all_kept():
    store = ChatStore()
    await asyncio.gather(store.append("s1", "user: weather?"), store.append("s1", "tool: 21C"))
    assert sorted(await store.messages("s1")) == ["tool: 21C", "user: weather?"]
'''

STARTER = {"trim.py": TRIM, "test_trim.py": TEST_TRIM, "test_chat_store_race.py": TEST_RACE}
"""The files init creates; it refuses to run when any of them exists."""

TABLE = """\
[tool.turncheck]
# turncheck's defaults in this project: each key is the default of one flag, and a flag given
# on the command line wins (every key: docs/config.md). Code is named on the command line only:
#   turncheck project -H LOG.jsonl --from openai-chat -s messages:trim.py:trim
budget = 4000
per_request = true
fail_on = ["orphanRes", "overBudget"]
"""

IGNORED = ".turncheck/"
"""What turncheck writes under the working directory (traces, the example database)."""


def _appended(old: bytes, text: str) -> bytes:
    """``old`` unchanged, then ``text`` on lines of its own, in ``old``'s line ending."""
    newline = b"\r\n" if b"\r\n" in old else b"\n"
    added = text.encode("utf-8").replace(b"\n", newline)
    return old + (newline if old and not old.endswith(b"\n") else b"") + added


def _pyproject(path: Path) -> bytes | None:
    """The new ``pyproject.toml``: the table alone, or the old file with the table appended; None
    when the file has a ``[tool.turncheck]`` table already (it is the project's: left as it is).
    Refused when the file is not TOML, or would not read back as the old document plus the table
    (an inline ``tool = {…}`` cannot grow a table below it)."""
    import tomllib

    if not os.path.lexists(path):
        return TABLE.encode("utf-8")
    old = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    try:
        data = tomllib.loads(old.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        raise BadParameter(f"{path} is not a TOML file turncheck init can read; nothing written") from None
    tool = data.get("tool")
    if isinstance(tool, dict) and "turncheck" in tool:
        return None
    new = _appended(old, "\n" + TABLE if old.strip() else TABLE)
    try:
        grown = tomllib.loads(new.decode("utf-8"))
        added = grown["tool"].pop("turncheck")
        if not grown["tool"] and "tool" not in data:
            del grown["tool"]
        fits = grown == data and added == tomllib.loads(TABLE)["tool"]["turncheck"]
    except (tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError):
        fits = False
    if not fits:
        raise BadParameter(
            f"{path}: [tool.turncheck] cannot be appended without rewriting the file (an inline 'tool'"
            " table?); add it by hand (docs/config.md): nothing written"
        )
    return new


def _gitignore(path: Path) -> bytes | None:
    """The new ``.gitignore``, or None when it ignores ``.turncheck/`` already."""
    if not os.path.lexists(path):
        return f"{IGNORED}\n".encode()
    old = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    if any(line.strip().strip(b"/") == IGNORED.strip("/").encode() for line in old.splitlines()):
        return None
    return _appended(old, f"{IGNORED}\n")


def init_command(quiet: QuietAlreadyOpt = False) -> None:
    """Write a starter in the current folder: a trimmer to replace, its pytest check, a race test
    for a chat store, a [tool.turncheck] table and a .gitignore line; never overwrites."""
    from turncheck.models.output_files import refuse_unsafe_target, write_outputs

    here = Path.cwd()
    taken = [name for name in STARTER if os.path.lexists(here / name)]
    if taken:
        raise BadParameter(
            f"{', '.join(taken)} {'exists' if len(taken) == 1 else 'exist'} in {here}; turncheck init never"
            " overwrites a file: nothing written (run it in another folder, or move them)"
        )
    files: dict[Path, str | bytes] = {here / name: text for name, text in STARTER.items()}
    for name in ("pyproject.toml", ".gitignore"):
        refuse_unsafe_target(here / name)  # a symlink, a folder: refused before reading it
    table = _pyproject(here / "pyproject.toml")
    if table is not None:
        files[here / "pyproject.toml"] = table
    ignore = _gitignore(here / ".gitignore")
    if ignore is not None:
        files[here / ".gitignore"] = ignore
    existed = {path for path in files if os.path.lexists(path)}
    write_outputs(files)
    names = [path.name + (" (appended to)" if path in existed else "") for path in files]
    kept = [f"{name} ({why})" for name, why, new in (
        ("pyproject.toml", "its [tool.turncheck] table", table), (".gitignore", "it ignores .turncheck/", ignore),
    ) if new is None]  # fmt: skip
    print(f"wrote {', '.join(names)} in {here}" + (f"; left as they were: {', '.join(kept)}" if kept else ""))
    print("next: python -m pytest (pip install pytest first if it is missing); then replace trim.py's trim")


def register(app: typer.Typer) -> None:
    app.command("init", help=init_command.__doc__)(init_command)
