"""A trace as it is written: ``turncheck lint --from FORMAT --follow FILE``.

An OTel collector's file exporter, a span-JSONL sink, an export of Langfuse observations or
LangSmith runs appends one JSON document a line while the agent runs. :class:`Tail` reads the
complete lines appended to such a file, as ``tail -F`` does: it waits at the end for more,
starts again from the top when the file is truncated (its size drops below what was read), and
when the name is rotated to a new file (another inode) it finishes the old file, then opens the
new one from its start. :func:`follow_findings` lints each request the moment its line is
complete, with :func:`~models.request_lint.lint_request` — the evaluator a tracing back-end runs,
so a finding here is exactly the one ``lint --from FORMAT`` names for that request. A session file
of one record a line (a Claude Code session) is followed by :func:`follow_session_lines`: each
appended line read and parsed once, each request made since checked with the events it sent; a
format read only whole, by :func:`follow_whole_file`, read again at each change (the bounds are
stated there).

What is kept, and its bound: each request of a trace carries its whole window (the open calls,
the summaries it sent), so nothing of the messages is kept between lines; across lines only the
:class:`~models.request_lint.Conversations` (per conversation: its request count and whether its
``estimate-drift`` was named), bounded by ``limit`` conversations (the idlest closed first), and
the line being written, bounded by :data:`MAX_LINE` bytes. A line that is not the format is named
in one notice and skipped: a monitor goes on.

Not covered: a truncation followed, before the next look (every ``poll`` seconds), by writes
past the old size reads as growth (``tail -F`` has the same blind spot); a document spread over
several lines (the SDK's pretty-printed ``ConsoleSpanExporter``) is not a line of its own and is
named as malformed.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.request_lint import Conversations, Finding, lint_request

if TYPE_CHECKING:
    from turncheck.models.events import Event
    from turncheck.models.sent_windows import TraceRecords

MAX_LINE = 64 << 20
"""The longest line (bytes) :class:`Tail` holds while it is being written."""
POLL = 0.2
"""Seconds between looks at a file that has not grown."""
CHUNK = 1 << 16
SEQ = re.compile(r" seq \d+")

Notice = Callable[[str], None]
END = (0, b"")
"""What :class:`Tail` yields (with ``marks``) when it has read up to the end of the file."""


def no_notice(message: str) -> None:
    return None


@dataclass
class Tail:
    """The complete lines appended to ``path``, for ever: ``(line number, bytes)``, numbered from
    1 in each file (a truncated or rotated file starts again at 1). ``notice`` hears of each
    truncation and rotation. The path may not exist yet, or be gone between rotations."""

    path: Path
    poll: float = POLL
    max_line: int = MAX_LINE
    notice: Notice = no_notice
    marks: bool = False
    """Also yield :data:`END` each time the lines read so far reach the end of what is written
    (a reader that checks per change, not per line, waits for it)."""
    inode: int = field(default=0, init=False)
    number: int = field(default=0, init=False)
    pending: bytes = field(default=b"", init=False)
    bytes_read: int = field(default=0, init=False)
    """Every byte read from the file(s), for the bound: each change costs what was appended."""
    fresh: bool = field(default=False, init=False)

    def lines(self) -> Iterator[tuple[int, bytes]]:
        fh: BinaryIO | None = None
        try:
            while True:
                fh = fh or self._open()
                if fh is None:
                    time.sleep(self.poll)
                    continue
                yield from self._read(fh)
                if self.marks and self.fresh:
                    self.fresh = False
                    yield END
                fh = self._reopened(fh)
        finally:
            if fh is not None:
                fh.close()

    def _open(self) -> BinaryIO | None:
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            return None
        self.inode, self.number, self.pending = os.fstat(fh.fileno()).st_ino, 0, b""
        return fh

    def _read(self, fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
        """Every complete line up to the end of what is written now."""
        while chunk := fh.read(CHUNK):
            self.bytes_read += len(chunk)
            *complete, self.pending = (self.pending + chunk).split(b"\n")
            for line in complete:
                self.number += 1
                self.fresh = True
                yield self.number, line
            if len(self.pending) > self.max_line:
                raise BadParameter(f"{self.path}:{self.number + 1}: a line longer than {self.max_line} bytes "
                                   "and still growing (--follow holds at most that much of one line)")  # fmt: skip

    def _reopened(self, fh: BinaryIO) -> BinaryIO | None:
        """At the end of ``fh``: the same handle after a pause, rewound when the file was
        truncated, or ``None`` (close it, open the name again) when the name is a new file."""
        try:
            now = os.stat(self.path)
        except FileNotFoundError:  # rotated away, the new file not there yet
            time.sleep(self.poll)
            return fh
        if now.st_ino != self.inode:
            fh.close()
            self.notice(f"{self.path}: rotated (a new file under the name): reading it from its start")
            return None
        if now.st_size < fh.tell():
            self.notice(f"{self.path}: truncated: reading it again from its start")
            fh.seek(0)
            self.number, self.pending = 0, b""
            return fh
        time.sleep(self.poll)
        return fh


def trace_records(format: str) -> TraceRecords:
    """How ``format`` reads one record alone; refused for a format that reads whole files only."""
    from turncheck.models.importers import FORMATS

    records = FORMATS[format].requests
    if records is None:
        single = ", ".join(name for name, f in FORMATS.items() if f.requests is not None)
        raise BadParameter(
            f"--follow reads a trace one record at a time: --from {format} is not one of {single}"
        )
    return records


def follow_findings(
    tail: Tail,
    format: str,
    *,
    provider: str | None = None,
    budget: int | None = None,
    state: Conversations | None = None,
    notice: Notice = no_notice,
) -> Iterator[list[Finding]]:
    """For each complete line ``tail`` reads, the findings of the requests it records (an empty
    list for a clean line, or one holding no model call), as soon as the line is complete. A line
    that is not the format (not UTF-8, not JSON, not a record) is named to ``notice`` and skipped."""
    from turncheck.models.importers import loads

    records = trace_records(format)
    state = Conversations() if state is None else state
    for number, raw in tail.lines():
        where = f"{tail.path}:{number}"
        if not raw.strip():
            continue
        try:
            document = loads(raw.decode("utf-8"), where)
            found: list[Finding] = []
            for record in records.split(document, where) if records.split else [document]:
                found += lint_request(
                    record, format, provider=provider, budget=budget, state=state, where=where
                )
        except UnicodeDecodeError as exc:
            notice(f"{where}: not UTF-8 text (byte {exc.start}); skipped")
            continue
        except json.JSONDecodeError as exc:
            notice(f"{where}: malformed JSON ({exc.msg}); skipped")
            continue
        except TurncheckError as exc:
            notice(f"{exc}; skipped")
            continue
        yield found


def follow_whole_file(
    path: Path,
    format: str,
    *,
    provider: str | None = None,
    poll: float = POLL,
    notice: Notice = no_notice,
) -> Iterator[list[Finding]]:
    """For a format read whole and without a :class:`~models.importers.LineReader` (a file its
    reader takes only as a whole): each time the file changes and ends a record (a complete line,
    or a JSON document's closing bracket: :func:`ends_a_record`), it is read again and every request made since the last look is checked (:class:`NewRequests`).
    Each look reads the whole file. A file that does not read (a record being written, not the
    format) is named to ``notice`` and read again at its next change."""
    from turncheck.models.importers import import_log

    checks = NewRequests(provider)
    last: tuple[int, int, int] | None = None
    while True:
        try:
            now = os.stat(path)
        except FileNotFoundError:
            time.sleep(poll)
            continue
        seen = (now.st_ino, now.st_size, now.st_mtime_ns)
        if seen == last or not now.st_size or not ends_a_record(path):
            time.sleep(poll)
            continue
        if last is not None and (seen[0] != last[0] or seen[1] < last[1]):
            notice(
                f"{path}: rewritten, truncated or rotated: every request checked again, only new findings named"
            )
            checks.checked.clear()
        last = seen
        try:
            imported = import_log(format, path)
            located = imported.located()
            checks.provider = provider if provider is not None else imported.provider  # as lint does
        except TurncheckError as exc:
            notice(f"{exc}; read again at its next change")
            continue
        yield checks.since(located)


def follow_session_lines(
    tail: Tail, format: str, *, provider: str | None = None, notice: Notice = no_notice
) -> Iterator[list[Finding]]:
    """For a session file of one record a line whose format has a
    :class:`~models.importers.LineReader` (a Claude Code session): each appended line is read
    once (``tail`` reads only what was written since), parsed once and kept as the format keeps
    it; each time the lines reach the end of the file, the log of the records kept is read from
    memory and the requests made since are checked (:class:`NewRequests`). A truncated or rotated
    file starts again from its first line, naming only new findings.

    What is kept: per file, the records (a record never sent: only its links) and, per session,
    the requests checked and the findings named. Bytes read per change are the bytes appended
    (``tail.bytes_read``); the check of a change reads the kept records, not the file. A line
    that is not JSON, or records that do not read (not the format), are named to ``notice``: the
    line is skipped, the records read again at the next change."""
    from turncheck.models.importers import FORMATS, loads

    reader = FORMATS[format].lines
    if reader is None:
        raise BadParameter(f"--from {format} is not read a line at a time")
    tail.marks = True
    checks = NewRequests(provider)
    kept: list[tuple[int, Mapping[str, Any]]] = []
    for number, raw in tail.lines():
        if (number, raw) != END:
            if kept and number <= kept[-1][0]:  # truncated or rotated: the file starts again
                kept.clear()
                checks.checked.clear()
            if raw.strip():
                try:
                    record = loads(raw.decode("utf-8"), f"{tail.path}:{number}")
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    notice(f"{tail.path}:{number}: not a JSON record ({exc}); skipped")
                    continue
                if isinstance(record, Mapping):
                    kept.append((number, reader.keep(record)))
                else:
                    notice(f"{tail.path}:{number}: not a JSON object; skipped")
            continue
        try:
            located = reader.read(tail.path, lambda: iter(kept)).located()
        except TurncheckError as exc:
            notice(f"{exc}; read again at the next change")
            continue
        yield checks.since(located)


@dataclass
class NewRequests:
    """The requests of a log not checked yet, and the findings not named yet: each request made
    since the last look (:func:`~models.requests.request_points`, per session) is checked with the
    events sent in it, as ``lint --from FORMAT`` checks the log. A request is judged on what it
    sent, so a call still running at the end of the file is no finding until a request goes out
    without its result. A finding's place is named without its seq (a seq moves when an earlier
    session grows: the line does not), so a file read again names only what is new."""

    provider: str | None
    named: set[tuple[str, str]] = field(default_factory=set)
    checked: dict[str, int] = field(default_factory=dict)
    """Per session, the place of the last request checked (``U Ca Ra`` is a request pending after
    the result; grown to ``U Ca Ra Ra T`` it is none, and the next one is after the second)."""

    def since(self, located: list[tuple[int | str, Event]]) -> list[Finding]:
        from turncheck.models.lint import lint_events
        from turncheck.models.request_lint import EVERY
        from turncheck.models.requests import request_points

        sessions: dict[str, list[tuple[int | str, Event]]] = {}
        for item in located:
            sessions.setdefault(item[1].session, []).append(item)
        found: list[Finding] = []
        for session, items in sessions.items():
            points = request_points([e for _, e in items])
            last = self.checked.get(session, 0)  # the last request checked, by its place: a request
            for p in (p for p in points if p > last):  # pending at the end may not stay one
                report = lint_events(items[:p], EVERY, self.provider)
                for problem, examples in report.examples.items():
                    for where in examples:
                        if (key := (problem, SEQ.sub("", where))) not in self.named:
                            self.named.add(key)
                            found.append(Finding(problem, where))
            self.checked[session] = max(points, default=last)
        return found


def ends_a_record(path: Path) -> bool:
    """Whether the file may hold only whole records: it ends a line, or — a JSON document written
    whole without a newline after it, as ``json.dump`` and pydantic's ``dump_json`` write one —
    its last byte closes a list or an object. (A document cut after an inner ``}`` does not read:
    it is named, and read again at the next change.)"""
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) in (b"\n", b"]", b"}")
