"""``--from claude-code``: a Claude Code / Claude Agent SDK session file
(``~/.claude/projects/PROJECT/SESSION.jsonl``, and a subagent's ``agent-ID.jsonl``), one JSON
record a line.

What the file holds, as Claude Code writes it (read in files the CLI bundled with
claude-agent-sdk 0.2.190 wrote, examples/formats/claude_code_session.py; microsoft/amplifier's
``session_format_specification.md``; the records quoted in anthropics/claude-code#16944, #31330
and #90036):

* ``user`` / ``assistant`` records carry ``message``, an Anthropic Messages API message, and
  ``uuid`` / ``parentUuid`` linking them into a tree. An assistant reply is written one content
  block per record, the records sharing ``message.id``; the tool results of its calls may be
  written between them. The blocks of one ``message.id`` are joined into the one message the API
  got, at the place of its first block, and the results held back until it is complete.
* ``system`` records with ``subtype`` ``compact_boundary`` (``logicalParentUuid`` naming the last
  record before it) and the ``user`` record flagged ``isCompactSummary`` after it hold the summary
  the model is sent instead of what came before. It is a SUMMARY covering every earlier event of
  the session — or, when the boundary kept a segment (``compactMetadata.preservedSegment``, as
  Claude Code 2.1.337 writes ``/compact``: the chain then runs through the kept records and the
  boundary and summary sit beside it), every event before the segment's ``headUuid``. A boundary
  with no summary record after it is one, its ``content`` the text. So ``lint`` checks what it
  replaced: a call still running across it is ``summary-covers-open-call``
  (anthropics/claude-code#90036).
* ``isSidechain`` records are a subagent's own conversation: their own session,
  ``FILE/AGENT_ID`` (``agentId``; without one, ``FILE/ROOT_UUID``).
* A rewind ("redo from here") leaves the abandoned branch in the file. Each session is read along
  the one path to its last record (``parentUuid``, and ``logicalParentUuid`` across a boundary),
  the history its latest request was built from, with what hangs off that path and was sent with
  it: the other records of a reply on it (same ``message.id``), results-only ``user`` records
  (each parallel result names its own ``tool_use`` record as parent), and the boundary and summary
  of a compaction that kept a segment. Records without a ``uuid`` are on every path.
* Every other record — ``summary`` (a title with ``leafUuid``), ``file-history-snapshot``,
  ``queue-operation``, ``progress``, ``attachment``, other ``system`` subtypes — is never sent
  to the model and is skipped.

Messages map as ``--from anthropic`` maps them
(:func:`~integrations.formats.anthropic.add_anthropic_message`); an ``image`` or ``document`` block (a
pasted screenshot, a Read of an image) is kept as empty text, so its message stays a message, and
a ``tool_reference`` (what ToolSearch returns) as the tool's name. The provider rules applied are
Anthropic's. An assistant message's ``usage`` (its first record's: ``input_tokens`` plus the
cache reads and writes) is the input of the request that produced it: :class:`UsageWindows`
gives those requests to ``lint --budget``, each the events sent before the answer.

Invariant kept: the file is read twice, line by line; between the passes only each record's
ids are held (not its content), and while reading only the assistant message being joined and
the results written inside it. ``lint --follow`` reads each appended line once and keeps the
records already parsed (:func:`followed`: a record never sent keeps only its links), read again
from memory at each change by :func:`read_records`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turncheck.integrations.formats.anthropic import add_anthropic_message
from turncheck.integrations.formats.usage import Request, UsageWindows, reported_input
from turncheck.models.chat_log import ImportFormatError, SessionBuilder, text_of
from turncheck.models.importers import (
    Group,
    Imported,
    LineReader,
    LogFormat,
    Records,
    build_sessions,
    json_records,
    read_text,
    register_format,
)
from turncheck.models.sent_windows import model_of

FILE_BLOCKS = ("image", "document")


def records(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Each record with its line number; a line that is not a JSON object is refused."""
    for number, record in json_records(path, text):
        if not isinstance(record, Mapping) or not isinstance(record.get("type"), str):
            raise ImportFormatError(f"{path}:{number}: expected a session record with a 'type'")
        yield number, record


def is_boundary(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary"


def sent(record: Mapping[str, Any]) -> bool:
    """A record the model's requests are built from: a message, or a compaction boundary."""
    return record.get("type") in ("user", "assistant") or is_boundary(record)


def optional_id(record: Mapping[str, Any], key: str, where: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise ImportFormatError(f"{where}: {key!r} must be a string or null")
    return value


@dataclass
class Tree:
    """Pass one: each record's parent and session, by uuid, and each session's last record."""

    parent: dict[str, str | None] = field(default_factory=dict)
    session: dict[str, str] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)
    results: dict[str, list[str]] = field(default_factory=dict)
    """Records of tool results only, by their parent: a parallel call's result may hang off its
    own ``tool_use`` record, beside the chain the conversation goes on from."""
    blocks: dict[str, list[str]] = field(default_factory=dict)
    """An assistant message's records by ``message.id``: one on the path brings the others (a
    later record may descend from any block of the reply, leaving the rest beside the chain)."""
    compactions: dict[str, list[str]] = field(default_factory=dict)
    """Boundaries by ``logicalParentUuid``, and compact summaries by their boundary: when a
    compaction keeps a segment, the chain runs through the segment and leaves them beside it."""

    def root(self, uuid: str) -> str:
        seen = {uuid}
        while (up := self.parent.get(uuid)) and up in self.parent and up not in seen:
            seen.add(uuid := up)
        return uuid

    def on_path(self) -> set[str]:
        """The uuids on the path from each session's last record back to its root, and the
        tool-result records hanging off it (never a rewind's branch: that starts with a prompt)."""
        keep: set[str] = set()
        for leaf in self.last.values():
            uuid: str | None = leaf
            while uuid is not None and uuid not in keep and uuid in self.parent:
                keep.add(uuid)
                uuid = self.parent[uuid]
        for uuid in list(keep):
            for boundary in self.compactions.get(uuid, ()):
                keep.update((boundary, *self.compactions.get(boundary, ())))
        keep.update(*(records for records in self.blocks.values() if keep.intersection(records)))
        return keep.union(*(self.results.get(uuid, ()) for uuid in keep))


def session_of(record: Mapping[str, Any], tree: Tree, uuid: str | None, stem: str) -> str:
    if record.get("isSidechain") is not True:
        return stem
    agent = record.get("agentId")
    if isinstance(agent, str) and agent:
        return f"{stem}/{agent}"
    return f"{stem}/{tree.root(uuid) if uuid else 'sidechain'}"


def read_tree(path: Path, lines: Iterable[tuple[int, Mapping[str, Any]]]) -> Tree:
    tree = Tree()
    for number, record in lines:
        where = f"{path}:{number}"
        uuid = optional_id(record, "uuid", where)
        if uuid is None:
            continue
        up = optional_id(record, "parentUuid", where)
        tree.parent[uuid] = up or (
            optional_id(record, "logicalParentUuid", where) if is_boundary(record) else None
        )
        if sent(record):  # the others (progress, system notes) are only links of the chain
            tree.session[uuid] = session = session_of(record, tree, uuid, path.stem)
            tree.last[session] = uuid
        message = record.get("message")
        if (
            up
            and record["type"] == "user"
            and isinstance(message, Mapping)
            and only_results(message.get("content"))
        ):
            tree.results.setdefault(up, []).append(uuid)
        if (
            record["type"] == "assistant"
            and isinstance(message, Mapping)
            and isinstance(message.get("id"), str)
        ):
            tree.blocks.setdefault(message["id"], []).append(uuid)
        if is_boundary(record) and not up and tree.parent[uuid]:
            tree.compactions.setdefault(str(tree.parent[uuid]), []).append(uuid)
        if up and record.get("isCompactSummary") is True:
            tree.compactions.setdefault(up, []).append(uuid)
    return tree


def as_text_blocks(content: Any) -> Any:
    """Blocks as sent, in their order, each the Anthropic reader can read: an image or document
    (top level or in a tool result) as empty text, a ``tool_reference`` (what ToolSearch returns
    in a tool result) as the tool's name."""
    if not isinstance(content, list):
        return content
    out = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind in FILE_BLOCKS:
            block = {"type": "text", "text": ""}
        elif kind == "tool_reference":
            block = {"type": "text", "text": str(block.get("tool_name", ""))}
        elif kind == "tool_result":
            block = {**block, "content": as_text_blocks(block.get("content"))}
        out.append(block)
    return out


def preserved_head(record: Mapping[str, Any]) -> str | None:
    """The first record a compaction kept (``compactMetadata.preservedSegment.headUuid``)."""
    meta = record.get("compactMetadata")
    segment = meta.get("preservedSegment") if isinstance(meta, Mapping) else None
    head = segment.get("headUuid") if isinstance(segment, Mapping) else None
    return head if isinstance(head, str) else None


@dataclass
class Joiner:
    """One session's reading: the assistant message being joined (by ``message.id``), the
    tool-result records written while it was, and the seq each record's events start at."""

    b: SessionBuilder
    message_id: str | None = None
    blocks: list[Any] = field(default_factory=list)
    where: str = ""
    uuids: list[str] = field(default_factory=list)  # the records of the message being joined
    held: list[tuple[Mapping[str, Any], str, str | None]] = field(default_factory=list)
    boundary: tuple[str, str, str | None] | None = None  # (text, where, kept head) awaiting its summary
    seq_of: dict[str, int] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)  # the assistant messages with a usage

    def emit(self, message: Mapping[str, Any], where: str, *uuids: str | None) -> None:
        for uuid in uuids:
            if uuid:
                self.seq_of.setdefault(uuid, self.b.next_seq)
        add_anthropic_message(self.b, message, where)

    def flush(self) -> None:
        if self.message_id is not None:
            self.emit({"role": "assistant", "content": self.blocks}, self.where, *self.uuids)
        self.message_id, self.blocks, self.uuids = None, [], []
        for message, where, uuid in self.held:
            self.emit(message, where, uuid)
        self.held = []

    def read(self, record: Mapping[str, Any], where: str) -> None:
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        if is_boundary(record):
            self.flush()
            self.close_boundary()
            content = record.get("content")
            self.boundary = (content if isinstance(content, str) else "", where, preserved_head(record))
            return
        message = record.get("message")
        if not isinstance(message, Mapping):
            raise ImportFormatError(f"{where}: a {record['type']} record without its 'message' object")
        content = as_text_blocks(message.get("content"))
        if record["type"] == "assistant":
            self.assistant(message, content, where, uuid)
        elif record.get("isCompactSummary") is True:
            self.flush()
            head = self.boundary[2] if self.boundary else None
            self.boundary = None
            self.summarise(text_of(content, where), where, head)
        elif self.message_id is not None and only_results(content):
            self.held.append(({**message, "role": "user", "content": content}, where, uuid))
        else:
            self.flush()
            self.close_boundary()
            self.emit({**message, "role": "user", "content": content}, where, uuid)

    def summarise(self, text: str, where: str, head: str | None) -> None:
        """A SUMMARY covering every earlier event, or those before the segment it kept."""
        kept = self.seq_of.get(head) if head else None
        if kept is None:
            self.b.summary(text, where)
        elif kept == self.b.first_seq:  # everything kept: it stands for nothing the file holds
            self.b.user(text, where)
        else:
            self.b.summary(text, where, (self.b.first_seq, kept - 1))

    def assistant(self, message: Mapping[str, Any], content: Any, where: str, uuid: str | None) -> None:
        message_id = optional_id(message, "id", where) or f"@{where}"
        if message_id != self.message_id:
            self.flush()
            self.close_boundary()
            self.message_id, self.where = message_id, where
            n = reported_input(message.get("usage"))
            if n is not None:
                self.requests.append((len(self.b.events), where, model_of(message.get("model")), n, None))
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise ImportFormatError(f"{where}: content must be text or a list of blocks")
        self.blocks.extend(content)
        self.uuids += [uuid] if uuid else []

    def close_boundary(self) -> None:
        """A boundary whose summary record never came is itself the summary."""
        if self.boundary is not None:
            text, where, head = self.boundary
            self.boundary = None
            self.summarise(text, where, head)


def only_results(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(x, Mapping) and x.get("type") == "tool_result" for x in content)
    )


def read_claude_code(path: Path) -> Imported:
    text = read_text(path)
    return read_records(path, lambda: records(path, text))


LINKS = ("type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "agentId")


def followed(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """What ``lint --follow`` keeps of a record: all of one the model is sent (a message, a
    boundary), only the links of any other (progress, attachments, notes: links of the chain)."""
    return record if sent(record) else {k: record[k] for k in LINKS if k in record}


def read_records(path: Path, source: Records) -> Imported:
    """The log of a session's records (``source()`` gives them again for the second pass)."""
    tree = read_tree(path, source())
    keep = tree.on_path()
    joiners: dict[str, Joiner] = {}
    names: dict[str, None] = {}  # every session read, in order

    def add(b: SessionBuilder, item: tuple[Mapping[str, Any], str], where: str) -> None:
        joiner = joiners.setdefault(b.session, Joiner(b))
        if item[1] == "end":
            joiner.flush()
            joiner.close_boundary()
        else:
            joiner.read(item[0], where)

    def groups() -> Iterator[Group]:
        """One group a record kept, then one closing each session (its last message joined)."""
        for number, record in source():
            uuid = record.get("uuid")
            if not sent(record) or (isinstance(uuid, str) and uuid not in keep):
                continue
            known = tree.session.get(uuid) if isinstance(uuid, str) else None
            session = known or session_of(record, tree, None, path.stem)
            names.setdefault(session)
            yield session, [(record, "record")], f"{path}:{number}", None
        for session in names:
            yield session, [({}, "end")], f"{path}: end", None

    imported = build_sessions(groups(), add)
    reported = UsageWindows(((j.b, j.requests) for j in joiners.values()), "anthropic")
    return dataclasses.replace(imported, reported=reported) if reported else imported


register_format(
    LogFormat(
        "claude-code",
        read_claude_code,
        "a Claude Code / Claude Agent SDK session file (~/.claude/projects/*/SESSION.jsonl: user, assistant and compact_boundary records; read as Claude Code 2.1.337 writes it)",
        provider="anthropic",
        lines=LineReader(followed, read_records),
    )
)
