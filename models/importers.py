"""Foreign agent logs as our event log: ``turncheck import --from FORMAT`` (and ``--from`` on
``lint`` and ``project``), and the reading every format shares.

A format is one module of :mod:`integrations.formats` that registers a :class:`LogFormat` (its name,
the function that reads a file, what the file holds) with :func:`register_format`
(``turncheck.register_format`` for an extension); ``turncheck list formats`` lists them. Most
formats read records one at a time onto a :class:`~models.chat_log.SessionBuilder` and leave the
file handling here: a JSON list is one session named after the file; an object maps session
names to lists. JSONL of request bodies is how chat-completion logs are usually kept: each line
is the whole conversation so far, so a line that extends the previous line of its session adds
only its new messages, and a line that does not starts a new session (named by the body's
``metadata`` ``session_id``, else ``user``, else ``FILE-N``).

Invariant kept: the output is the log as the file holds it (:mod:`models.chat_log`) — seq strictly
increasing over the whole file, sessions contiguous, one event per record, each event knowing its
record (:attr:`Imported.origins`). It is *not* promised well formed: an orphaned result, a call
answered twice, a result before its call are kept in place for ``lint`` to name. Only what is
not the format at all — not JSON, wrong shapes or types, a call or result without an id, an
unknown role — is refused, with one line naming the record.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from turncheck.models.chat_log import ImportFormatError, SessionBuilder
from turncheck.models.collector import cycles_not_collected
from turncheck.models.events import Event, EventFormatError, event_from_dict, load_json_line
from turncheck.models.registry import Registry

if TYPE_CHECKING:
    import sqlite3

    from turncheck.models.sent_windows import SentWindow, TraceRecords

AddRecord = Callable[[SessionBuilder, Any, str], None]


class NotTyped(Exception):
    """Raised by a :class:`TypedBodies` reader on a record it leaves to the format's generic
    reader (never seen by a user: the file is then read again the generic way)."""


@dataclass(frozen=True)
class TypedBodies:
    """A format's typed reading of JSONL request bodies: ``body`` is a ``msgspec.Struct`` with
    the records' list (the format's list key), ``user`` and ``metadata`` fields, decoded straight
    from each line; ``add`` adds one decoded record to the session.

    The typed reading is a fast path, never a second definition of the format: the record structs
    forbid fields they do not name and tell a missing field from ``null`` (``msgspec.UNSET``),
    so two records are equal as structs exactly when they are equal as JSON objects (how a line
    is found to extend its session's previous one); a line the structs refuse, a record ``add``
    leaves (:class:`NotTyped`), and any refusal of the file make :func:`json_or_jsonl` read the
    whole file again with the generic reader — whose events, or one-line error, are the result.
    """

    body: type[msgspec.Struct]
    add: AddRecord


@dataclass(frozen=True)
class Imported:
    """An imported log: ``events`` in seq order, and ``origins[i]`` naming the record of the
    foreign file event ``i`` came from (what ``lint --from`` shows in place of a line number);
    for a trace format, ``sent`` holds the window each model call sent
    (:mod:`models.sent_windows`)."""

    events: list[Event]
    origins: list[str]
    sent: tuple[SentWindow, ...] = ()
    _: dataclasses.KW_ONLY
    reported: Sequence[SentWindow] = ()
    """Requests a session file knows by the usage the provider returned (Claude Code's assistant
    records): each the messages it sent, projected through the file's compactions, with that
    count. Costed against ``lint --budget`` only, never checked as sent (the log itself is)."""
    opaque: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Parts kept as opaque content, by type (:mod:`models.chat_log`); for a trace, per type the
    most that one request sent or the rebuilt log holds (each request resends its history, so a
    sum would count one part once per request)."""
    provider: str | None = None
    """The API whose rules the log answers to, as the file itself records it (a pi session's
    last ``api``, a Goose session's ``provider_name``, a Pydantic AI history's last
    ``provider_name``): what ``lint`` applies when no ``--provider`` is given and the format names
    none; ``None`` when the file does not say (or its sessions say different ones)."""

    ends: frozenset[int] = frozenset()
    """For a JSONL of request bodies, the seq of each body's last event: where a request the
    file records went out. ``lint`` judges each as sent there (a body ending on calls sent them
    without their results, though a later body answers them)."""

    def located(self) -> list[tuple[int | str, Event]]:
        return list(zip(self.origins, self.events, strict=True))


@dataclass(frozen=True)
class LogFormat:
    """A registered format: ``read`` turns a file into events (raising
    :class:`~models.chat_log.ImportFormatError` with one line for what is not the format);
    ``holds`` says in a phrase what such a file holds (``turncheck import --help``, the docs);
    ``provider`` names the API whose rules ``lint --from`` applies by default
    (:mod:`models.provider_rules`), when the format is one API's."""

    name: str
    read: Callable[[Path], Imported]
    holds: str
    provider: str | None = None
    requests: TraceRecords | None = None
    """For a trace format: how one record (a span, an observation, a run) reads alone, for
    :func:`turncheck.lint_request` (:mod:`models.request_lint`)."""
    lines: LineReader | None = None
    """For a session file of one JSON record a line: its log read from records already parsed,
    so ``lint --follow`` reads only what is appended (:func:`models.follow.follow_session_lines`)."""
    folders: bool = False
    """Whether ``read`` takes a folder as one history (an OpenHands conversation is a folder of
    event files), so ``lint --from FORMAT FOLDER`` lints it as one file, not as an archive."""
    history_folder: Callable[[Path], bool] | None = None
    """For a format of ``folders``: whether a folder is one history (the product's own layout);
    any other folder is an archive whose history folders and files are each linted alone
    (:func:`models.archive.archive_files`). ``None``: every folder is one history."""
    not_histories: frozenset[str] = frozenset()
    """Names of the product's own files beside its histories (a Strands ``session.json``), skipped
    when a folder is read as an archive."""

    def is_history_folder(self, path: Path) -> bool:
        """Whether ``path`` is a folder this format reads as one history."""
        if not self.folders or not path.is_dir():
            return False
        return self.history_folder is None or self.history_folder(path)


Records = Callable[[], Iterable[tuple[int, Mapping[str, Any]]]]
"""A session file's records with their line numbers, readable again (a reader may pass twice)."""


@dataclass(frozen=True)
class LineReader:
    """A JSON-lines session format read from parsed records: ``keep`` is what following holds of
    one record (its content when the model is sent it, else only what links it to the others),
    ``read`` the log of the records kept, as the format's whole-file reader reads the file."""

    keep: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    read: Callable[[Path, Records], Imported]


FORMAT_PACKAGE = "turncheck.integrations.formats"
BUILT_IN_FORMATS = (
    "openai_chat", "openai_responses", "langchain", "agents_sqlite", "llamaindex", "anthropic", "gemini",
    "vercel", "otel", "adk", "langfuse", "langsmith", "bedrock", "claude_code", "pydantic_ai", "pi", "cline",
    "openhands", "goose",
)  # fmt: skip
"""The built-in formats' modules of :mod:`integrations.formats`, in the order ``--from`` lists
them; each registers the format it is named after (``claude_code`` → ``claude-code``). Adding a
format is one module there and its name here."""
_FORMAT_HOMES = tuple(f"{FORMAT_PACKAGE}.{module}" for module in BUILT_IN_FORMATS)


def _format_home(name: str) -> str:
    """The module that registers built-in format ``name``: ``lint --from openai-chat`` imports it
    alone, not the 18 others (issue 58 item 7); the registry imports it only if it is a home."""
    return f"{FORMAT_PACKAGE}.{name.replace('-', '_')}"


def _format_place(fmt: LogFormat) -> int:
    """Where a format lists: the built-ins in :data:`BUILT_IN_FORMATS` order whichever a lookup
    imported first, then those registered directly, in registration order."""
    home = _format_home(fmt.name)
    return _FORMAT_HOMES.index(home) if home in _FORMAT_HOMES else len(_FORMAT_HOMES)


FORMATS: Registry[LogFormat] = Registry(
    "log format", home=_FORMAT_HOMES, key=_format_place, locate=_format_home
)


def register_format(fmt: LogFormat) -> LogFormat:
    """Register a log format under its name (refused when the name is taken)."""
    return FORMATS.register(fmt.name, fmt)


def import_log(fmt: str, path: Path) -> Imported:
    """``path`` read as ``fmt`` (a name in :data:`FORMATS`): its events and the record each came from.

    Read with the cyclic garbage collector paused (:func:`cycles_not_collected`): a reader
    allocates an event per record and keeps them all, which makes the collector re-walk the
    growing log again and again — a third of an import's CPU, for no garbage."""
    with cycles_not_collected():
        return FORMATS[fmt].read(path)


PROBE_BYTES = 64 << 20
"""The largest file :func:`formats_reading` tries the formats on (each reads the whole file)."""


def formats_reading(path: Path) -> list[str]:
    """The registered formats that read ``path``, those that understand every part of it first
    (fewest parts kept as opaque content), then the most text read, then in registry order: what ``lint`` and ``project``
    suggest for ``--from`` when they refuse a file as our JSONL. Every reader keeps a part it does
    not know, so an Anthropic document also reads as Chat Completions — with its blocks opaque.

    Among those, the reader that finds more of the file's text first: Chat Completions' reader
    takes a Gemini body's ``{"role": "user", "parts": …}`` for a message with no content. A reader
    that returns no event does not read the file: Claude Code's reader skips every line
    of a pi session (both write ``cwd``) and came first, with "0 events … clean" under its name.

    Each format's own reader is the test, so a format registered by an extension is suggested
    as a built-in is, and no shape is described twice. Not tried: a file whose first record is
    one of our events (ours, refused for a later line), a file over :data:`PROBE_BYTES`, a file
    that is not a regular file. A reader that fails in any way on the file — refusing it, or
    crashing on a shape it never expected — does not read it; readers only read, so the probe
    writes nothing.
    """
    try:
        if not path.is_file() or path.stat().st_size > PROBE_BYTES or _first_record_is_ours(path):
            return []
    except OSError:
        return []
    read: list[tuple[int, int, int, str]] = []
    for order, (name, fmt) in enumerate(FORMATS.items()):
        try:
            imported = fmt.read(path)
        except Exception:  # noqa: BLE001 - a probe: any failure means "not this format"
            continue
        if imported.events:  # a reader that finds nothing in the file does not read it
            text = sum(len(e.text or "") for e in imported.events)  # more of the words: it understood more
            read.append((sum(imported.opaque.values()), -text, order, name))
    return [name for *_, name in sorted(read)]


def _first_record_is_ours(path: Path) -> bool:
    with path.open("rb") as fh:
        line = next((line for line in fh if line.strip()), b"")
    try:
        event_from_dict(load_json_line(line, ""), "")
    except EventFormatError:
        return False
    return True


def import_events(fmt: str, path: Path) -> list[Event]:
    """The events of ``path`` read as ``fmt``."""
    return import_log(fmt, path).events


def sessions_of_json(value: Any, path: Path, list_key: str) -> list[tuple[str, list[Any]]]:
    if isinstance(value, list):
        return [(path.stem, value)]
    if isinstance(value, Mapping) and isinstance(value.get(list_key), list):
        return [(session_name(value, path.stem), value[list_key])]
    if isinstance(value, Mapping) and value and all(isinstance(v, list) for v in value.values()):
        return [(str(k), v) for k, v in value.items()]
    raise ImportFormatError(
        f"{path}: expected a list of records, {{{list_key!r}: […]}}, or an object of lists by session"
    )


def session_name(body: Mapping[str, Any], fallback: str) -> str:
    meta = body.get("metadata")
    if isinstance(meta, Mapping) and meta.get("session_id"):
        return str(meta["session_id"])
    if body.get("user"):
        return str(body["user"])
    return fallback


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split at ``\\n`` only. ``str.splitlines`` also splits at
    U+0085, U+2028 and U+2029, which JSON strings may hold raw, and would cut a record in two."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def bounded_reads(con: sqlite3.Connection, deadline: float, max_value_bytes: int) -> sqlite3.Connection:
    """``con`` with a hostile database's two ways to hang or flood bounded: a query past
    ``deadline`` (``time.monotonic()``) is interrupted — a recursive VIEW never ends — and no
    value longer than ``max_value_bytes`` is built (``zeroblob(9e8)`` takes gigabytes). The
    caller turns the ``sqlite3.DatabaseError`` either raises into its one line."""
    import sqlite3
    import time

    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_bytes)
    con.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    return con


def json_records(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSONL file decoded, with its line number; a line that is not JSON
    is one :class:`ImportFormatError` naming the file and the line."""
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            yield number, loads(line, f"{path}:{number}")
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{path}:{number}: malformed JSON ({exc.msg})") from None


def typed_session_name(body: Any) -> str:
    """:func:`session_name` of a typed body (:class:`TypedBodies`): its ``metadata`` and ``user``."""
    meta = body.metadata
    if isinstance(meta, Mapping) and meta.get("session_id"):
        return str(meta["session_id"])
    return str(body.user) if body.user else ""


_PAIR = re.compile("[0-9]{2}")


def _body_records(path: Path, line: str, number: int, list_key: str) -> tuple[list[Any], str, Any]:
    try:
        body = loads(line, f"{path}:{number}")
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}:{number}: malformed JSON ({exc.msg})") from None
    if not isinstance(body, Mapping) or not isinstance(body.get(list_key), list):
        raise ImportFormatError(f"{path}:{number}: expected a request body with a {list_key!r} list")
    return body[list_key], session_name(body, ""), body


Framing = Callable[[Any], tuple[list[Any], list[Any]]]
"""A format's reading of a request body's own fields (not its records): the records to add before
and after the body's new records — objects no JSON value decodes to, which the format's ``add``
alone recognises (Anthropic's ``thinking`` setting: :mod:`integrations.formats.anthropic`)."""


def sessions_of_jsonl(
    path: Path, text: str, list_key: str, typed: type[msgspec.Struct] | None = None,
    framing: Framing | None = None,
) -> list[tuple[str, list[Any], int, int]]:
    """JSONL request bodies → (session, new records, line, records before them) in file order;
    with ``typed``, each line decoded as that struct (``msgspec`` errors propagate); with
    ``framing`` (generic reading only), each body's new records framed by what it returns."""
    out: list[tuple[str, list[Any], int, int]] = []
    seen: dict[str, list[Any]] = {}  # session → the whole conversation so far
    counter = 0
    decode = None if typed is None else msgspec.json.Decoder(typed).decode
    digits = sys.get_int_max_str_digits()  # json refuses an integer longer than this; msgspec skips it
    too_long = re.compile(rf"(?<![0-9])[0-9]{{{digits + 1}}}") if digits else None
    step = (digits + 1) // 2  # a run of digits + 1 digits holds two neighbouring multiples of step
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        body: Any = None
        if decode is None:
            records, named, body = _body_records(path, line, number, list_key)
        else:
            if too_long and len(line) > digits and _PAIR.search(line[::step]) and too_long.search(line):
                raise NotTyped("an integer past Python's limit: the generic reader says what json says")
            body = decode(line)
            records, named = getattr(body, list_key), typed_session_name(body)
        if named:
            candidates = [named]
        else:  # the newest session named after the file
            newest = next((s for s in reversed(seen) if s.startswith(f"{path.stem}-")), None)
            candidates = [] if newest is None else [newest]
        session = next((s for s in candidates if s in seen and records[: len(seen[s])] == seen[s]), None)
        if session is None:
            counter += 1
            session = named or f"{path.stem}-{counter}"
            if session in seen:
                raise ImportFormatError(
                    f"{path}:{number}: session {session!r} does not continue its previous request "
                    "(its messages are not an extension of the earlier ones)"
                )
            seen[session] = []
        new, first = records[len(seen[session]) :], len(seen[session])
        if framing is not None and body is not None:  # the framing records numbered before the first
            before, after = framing(body)
            new, first = [*before, *new, *after], first - len(before)
        out.append((session, new, number, first))
        seen[session] = list(records)
    return out


Group = tuple[str, Sequence[Any], str, int | None]
"""(session, records, where, number of the first record — ``None`` when ``where`` names the
one record the group holds)."""


def build_sessions(groups: Iterable[Group], add: AddRecord, bodies: bool = False) -> Imported:
    """Build every session (a session may arrive in several groups, read once, in order: a
    generator keeps only the group being read); seq over the whole file. ``bodies``: each group
    is a request body as sent, its last event one of :attr:`Imported.ends`.

    Each session's events are built once, with their final seq: a session starts where the
    sessions begun before it end (their events so far). Only when an earlier session grows after
    a later one began (groups of sessions interleaved) are the later sessions' events moved
    (:func:`reseq`), as if each had been built after every session before it."""
    builders: dict[str, SessionBuilder] = {}
    last: SessionBuilder | None = None
    sent: list[tuple[SessionBuilder, int]] = []
    for session, records, where, first in groups:
        b = builders.get(session)
        if b is None:
            start = 0 if last is None else last.next_seq
            b = builders[session] = last = SessionBuilder(session, first_seq=start, id_base=start)
        for i, record in enumerate(records, start=first or 0):
            here = where if first is None else f"{where}: record {i}"
            add(b, record, here)
            if b.beside:
                b.end_message(here)
        if bodies and b.events:
            sent.append((b, len(b.events) - 1))
    events: list[Event] = []
    origins: list[str] = []
    opaque: Counter[str] = Counter()
    offsets: dict[str, int] = {}
    for b in builders.values():
        built = b.positioned_events()
        offsets[b.session] = len(events)
        events.extend(
            built if b.first_seq == len(events) else reseq(built, len(events) - b.first_seq, b.timed)
        )
        origins.extend(b.origins)
        opaque.update(b.opaque)
    ends = frozenset(events[offsets[b.session] + last].seq for b, last in sent)
    return Imported(events, origins, opaque=dict(sorted(opaque.items())), ends=ends)


def reseq(events: list[Event], shift: int, timed: bool = False) -> list[Event]:
    """A session's events moved by ``shift`` seqs (a SUMMARY's ``covers`` with them); ``ts`` is
    the position unless the format keeps the writer's stamps (``timed``)."""
    return [
        dataclasses.replace(
            e,
            seq=e.seq + shift,
            ts=e.ts if timed else float(e.seq + shift),
            covers=None if e.covers is None else (e.covers[0] + shift, e.covers[1] + shift),
        )
        for e in events
    ]


def loads(text: str | bytes, where: str) -> Any:
    """``json.loads``, with the two ways it fails on hostile input besides malformed JSON — nesting
    too deep for the parser, an integer past Python's 4300-digit limit — as one-line
    :class:`ImportFormatError` (malformed JSON is left to the caller: some fall back to lines)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ImportFormatError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:
        raise ImportFormatError(f"{where}: unreadable JSON ({str(exc).splitlines()[0][:80]})") from None


def read_text(path: Path) -> str:
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _two_lines(text: str) -> bool:
    """Whether ``text`` holds two non-blank lines (of :func:`json_lines`): a ``\\n`` with a
    non-space character on each side. Asked of a whole file before it is read line by line,
    so answered without splitting it."""
    return "\n" in text.strip()


def json_or_jsonl(
    path: Path, list_key: str, add: AddRecord, typed: TypedBodies | None = None, framing: Framing | None = None
) -> Imported:
    """A JSON document (one session, or sessions by name) or JSONL of request bodies, each record
    added with ``add``; with ``typed``, JSONL is first read the typed way (:class:`TypedBodies`);
    with ``framing``, each request body's records are framed by what it returns for the body (a
    document that is a body, ``{list_key: […]}``, too)."""
    text = read_text(path)
    try:
        value = loads(text, str(path))
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise ImportFormatError(f"{path}: empty: no JSON document or line to read") from None
        if not _two_lines(text):
            raise ImportFormatError(f"{path}: malformed JSON ({exc.msg})") from None
        value = None  # JSON lines: one request body per line
    if value is not None:
        documents = sessions_of_json(value, path, list_key)
        first = 1
        if framing is not None and isinstance(value, Mapping) and isinstance(value.get(list_key), list):
            before, after = framing(value)
            documents, first = [(s, [*before, *recs, *after]) for s, recs in documents], 1 - len(before)
        return build_sessions([(s, recs, f"{path}: session {s!r}", first) for s, recs in documents], add)
    if typed is not None:
        try:
            groups = sessions_of_jsonl(path, text, list_key, typed.body)
            return build_sessions([(s, recs, f"{path}:{n}", k + 1) for s, recs, n, k in groups], typed.add, True)
        except (msgspec.DecodeError, RecursionError, NotTyped, ImportFormatError):
            pass  # read again the generic way: its events, or its one-line error, are the answer
    groups = sessions_of_jsonl(path, text, list_key, framing=framing)
    return build_sessions([(s, recs, f"{path}:{n}", k + 1) for s, recs, n, k in groups], add, True)
