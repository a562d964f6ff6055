"""The operation-history format, version 1: what ``turncheck stress`` records and ``--check`` reads.

A history is a folder of JSON Lines files, one line per operation, each line an object whose
``op`` says what it is. Any client may write one — the runner's processes, JVM threads, a Node
harness — and ``turncheck stress --check DIR`` checks it with the same anomalies
(:mod:`turncheck.sim.stress.history`). :data:`LINE` is the one definition: the decoder validates
every line against it and ``docs/schemas/turncheck-history-1.schema.json`` is generated from it.

* operations (``read``, ``append``, ``compact``, ``conflict``, ``poll``): ``p`` the process,
  ``type`` Jepsen's ``invoke``/``ok``/``fail``/``info`` (``info``: the client never learned the
  outcome — the store's commits settle it), ``t0``/``t1`` wall-clock seconds, ``seq`` the store's
  commit sequence number the operation committed, ``turn`` the turn an append added, ``v``/``w``
  a read's snapshot version and window. A client that writes a completion line only (as the
  runner does, ``t0`` its invoke time) writes no ``invoke`` line; an ``invoke`` without a
  completion is an indeterminate operation;
* ``crash`` (a process died of an error) and ``summary`` (latencies kept without recording);
* the store's lines, once per history: ``history`` (format, version, the run's parameters),
  ``commit`` per committed write in the store's commit order (absent when the store keeps no
  journal: ``"journal": false``, and the history is checked against the final state alone),
  ``final`` (the live turns at the end, oldest first).

A file's last line without a newline is a write cut by a kill and never an acknowledgement: it is
skipped. Any other line that is not valid is refused, naming the file and the line.

Evidence that cannot be read is never passed over: a ``*.jsonl`` entry that is not a regular file
(a FIFO, a device, a link to one, a folder) is refused, and in a history the runner wrote (its
``w<i>.<k>.jsonl`` / ``c.<k>.jsonl`` names beside ``store.jsonl``) a missing process's file — one
of the header's ``writers``, the compactor, or the restart of a killed process — is refused too:
the check would count fewer appends and still say OK. So is a file cut short: with the store's
journal, each process's history must record every operation the journal committed for it (one
in flight may be missing for a process killed on purpose or crashed); and, as reads and failed
operations commit nothing, a runner's history says ``"ends": true`` and each process that was
not killed ends its file with an ``end`` line counting its operations: a cut that drops only
reads or failures is refused too. A killed process's file has no end and its last lines cannot
be counted: only the journal's commits bound it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from turncheck.models.errors import TurncheckError

FORMAT = "turncheck-history"
VERSION = 1
STORE_FILE = "store.jsonl"

Outcome = Literal["invoke", "ok", "fail", "info"]


class HistoryError(TurncheckError):
    """A history that is not in the format: the message names the file and the line."""


class _Op(msgspec.Struct, tag_field="op", frozen=True, kw_only=True):
    p: str
    type: Outcome = "ok"
    t0: float = 0.0
    t1: float = 0.0
    lost_conn: int = 0
    busy: int = 0


class ReadLine(_Op, tag="read", frozen=True):
    """A read of the live window at snapshot ``v``: ``w`` as :func:`runner.encode_window` writes it,
    ``[lo, hi]`` per block of whole turns, ``[turn, "kinds"]`` per other run of one turn's events."""

    v: int = 0
    w: list[tuple[int, int | str]] | None = None


class AppendLine(_Op, tag="append", frozen=True):
    """An append of one whole turn: ``seq`` and ``turn`` are what the store told an ``ok`` one."""

    id: str
    seq: int | None = None
    turn: int | None = None
    trig: bool = False
    waits: int = 0

    def __post_init__(self) -> None:
        if self.type == "ok" and self.turn is None:
            raise ValueError("an acknowledged append (type ok) needs its turn")


class CompactLine(_Op, tag="compact", frozen=True):
    """A compaction acting on the count ``count_read``; ``deleted`` turns went."""

    id: str
    seq: int | None = None
    deleted: int = 0
    count_read: int = 0


class ConflictLine(CompactLine, tag="conflict", frozen=True):
    """A compaction whose versioned commit failed (``cas``): it re-read instead."""


class PollLine(_Op, tag="poll", frozen=True):
    """A failed poll of the session header."""


class CrashLine(msgspec.Struct, tag_field="op", tag="crash", frozen=True):
    """A process that died of an error (not a kill)."""

    p: str
    error: str


class SummaryLine(msgspec.Struct, tag_field="op", tag="summary", frozen=True):
    """A process's append latencies, written once at its exit when operations are not recorded."""

    latencies: list[float]


class EndLine(msgspec.Struct, tag_field="op", tag="end", frozen=True):
    """A process's last line at its exit, killed excepted: ``ops`` operation lines came before it
    in its file. With ``ends`` in the header, a file whose count disagrees, or a process that
    neither ended, crashed nor was killed, is a history cut short."""

    p: str
    ops: int


class HistoryLine(msgspec.Struct, tag_field="op", tag="history", frozen=True, kw_only=True):
    """The run: the format and version, the store, the locking strategy, the trigger's
    ``max_turns``, the gap, the run's wall-clock span, the processes killed on purpose and stuck."""

    format: Literal["turncheck-history"]
    version: int
    store: str
    locking: str
    max_turns: int
    writers: int
    gap_ms: float = 0.0
    seconds: float = 0.0
    seed: int = 0
    started: float = 0.0
    ended: float = 0.0
    kills: list[str] = []
    stuck: list[str] = []
    journal: bool = True
    ends: bool = False


class CommitLine(msgspec.Struct, tag_field="op", tag="commit", frozen=True, kw_only=True):
    """One committed write, in the store's commit order: its sequence number, the operation id
    that wrote it, its kind, the turns it added and removed, the count a compaction acted on."""

    seq: int
    id: str
    kind: Literal["append", "compact", "reread"]
    added: list[int] = []
    removed: list[int] = []
    count_read: int = 0


class FinalLine(msgspec.Struct, tag_field="op", tag="final", frozen=True):
    """The store's live turns at the end, oldest first (a turn stored twice is listed twice)."""

    live: list[int]


LINE = (
    ReadLine | AppendLine | CompactLine | ConflictLine | PollLine | CrashLine | SummaryLine | EndLine
    | HistoryLine | CommitLine | FinalLine
)  # fmt: skip
"""One line of a history, of any kind."""

_DECODER = msgspec.json.Decoder(LINE)
_OPS = (ReadLine, AppendLine, CompactLine, ConflictLine, PollLine, CrashLine)


@dataclass(frozen=True)
class History:
    """A history as read: the run line, the operations as plain objects (what the checker
    reads), the latencies summaries, the store's commits in sequence order, the final live turns."""

    run: HistoryLine
    records: tuple[dict[str, Any], ...]
    summaries: tuple[dict[str, Any], ...]
    commits: tuple[CommitLine, ...]
    live: tuple[int, ...]


def schema() -> dict[str, Any]:
    """The JSON Schema of one line (what ``docs/schemas/turncheck-history-1.schema.json`` holds)."""
    out: dict[str, Any] = msgspec.json.schema(LINE)
    out["title"] = f"{FORMAT} version {VERSION}: one line of an operation history"
    return out


def store_lines(run: HistoryLine, commits: list[CommitLine], live: list[int]) -> bytes:
    """The store's file: the run line, the commits, the final live turns."""
    lines = [run, *commits, FinalLine(live)]
    return b"".join(msgspec.json.encode(x) + b"\n" for x in lines)


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise HistoryError(f"--check {folder}: not a folder of history files")
    inner = folder / "history"
    if inner.is_dir() and not (folder / STORE_FILE).exists():
        folder = inner  # the --out folder of a run
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise HistoryError(f"--check {folder}: no *.jsonl history files in it")
    for path in files:
        if not path.is_file():  # a FIFO would block the read, /dev/zero never end it
            raise HistoryError(
                f"--check: {path} is not a regular file (a FIFO, device or folder); it cannot be read,"
                " so the evidence is incomplete"
            )
    return files


_RUNNER_FILE = re.compile(r"(w\d+|c)\.(\d+)\.jsonl")


def _check_complete(files: list[Path], header: HistoryLine) -> None:
    """Refuse a history the runner wrote that lacks a process's file (see the module docstring)."""
    names = {p.name for p in files}
    if STORE_FILE not in names or not any(_RUNNER_FILE.fullmatch(n) for n in names):
        return  # another client's naming: its files cannot be counted
    expected = {f"w{i}.0.jsonl" for i in range(header.writers)} | {"c.0.jsonl"}
    for killed in header.kills:
        role, _, k = killed.rpartition(".")
        if k.isdigit():
            expected.add(f"{role}.{int(k) + 1}.jsonl")
    missing = sorted(expected - names)
    if missing:
        raise HistoryError(
            f"--check {files[0].parent}: no history of {', '.join(m.removesuffix('.jsonl') for m in missing)}"
            f" ({header.writers} writers, a compactor, {len(header.kills)} restarts); the evidence is"
            " incomplete, nothing was checked"
        )


def _check_covered(files: list[Path], header: HistoryLine, commits: list[CommitLine],
                   records: list[dict[str, Any]]) -> None:  # fmt: skip
    """Refuse a runner's history whose files hold fewer operations than the store's journal
    committed for them: a file cut short (truncated, half copied) dropped appends from the count
    and the check still said OK. A process killed on purpose, or one that crashed, may miss the
    one operation it had in flight (committed, never acknowledged); any other process none."""
    names = {p.name for p in files}
    if not commits or STORE_FILE not in names or not any(_RUNNER_FILE.fullmatch(n) for n in names):
        return
    done: dict[str, set[str]] = {}
    for r in records:
        if isinstance(r.get("id"), str):
            done.setdefault(str(r.get("p")), set()).add(r["id"])
    crashed = {str(r.get("p")) for r in records if r.get("op") == "crash"}
    missing: dict[str, int] = {}
    for c in commits:
        process = c.id.rpartition("-")[0]
        if c.id not in done.get(process, ()):
            missing[process] = missing.get(process, 0) + 1
    over = {p: n for p, n in missing.items() if n > (1 if p in header.kills or p in crashed else 0)}
    if over:
        shown = ", ".join(f"{p} ({n})" for p, n in sorted(over.items()))
        raise HistoryError(
            f"--check {files[0].parent}: the store's journal holds commits its writers' histories do not"
            f" record: {shown}; a history is cut short, the evidence is incomplete, nothing was checked"
        )


def _check_ended(
    folder: Path, header: HistoryLine, counted: dict[str, tuple[int, list[EndLine], bool]]
) -> None:
    """With ``ends`` in the header, refuse a runner's process file that lost lines: its ``end``
    line counts other than the operations it holds, or it has no ``end`` though the process was
    neither killed nor stuck (a crash before its recorder opened writes the crash line alone)."""
    if not header.ends:
        return
    gone = set(header.kills) | set(header.stuck)  # stuck names a role: its last incarnation
    cut: list[str] = []
    for name, (ops, ends, crashed) in sorted(counted.items()):
        process = name.removesuffix(".jsonl")
        if not _RUNNER_FILE.fullmatch(name) or process in gone or process.rpartition(".")[0] in gone:
            continue
        if len(ends) > 1 or (ends and (ends[0].ops != ops or ends[0].p != process)):
            cut.append(
                f"{process} ({ops} operations, its end line says {', '.join(str(e.ops) for e in ends)})"
            )
        elif not ends and not (crashed and ops == 0):
            cut.append(f"{process} (no end line, and it was not killed)")
    if cut:
        raise HistoryError(
            f"--check {folder}: a process's history lost lines: {'; '.join(cut)}; a history is cut short,"
            " the evidence is incomplete, nothing was checked"
        )


def read_history(folder: Path) -> History:
    """Read and validate every line of the history in ``folder`` (or ``folder/history``)."""
    run: list[tuple[str, HistoryLine]] = []
    finals: list[tuple[str, FinalLine]] = []
    commits: list[CommitLine] = []
    records: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    counted: dict[str, tuple[int, list[EndLine], bool]] = {}  # file: operations, its end lines, crashed
    files = _files(folder)
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise HistoryError(
                f"--check: cannot read {path} ({exc.strerror}); the evidence is incomplete"
            ) from None
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        elif len(lines) > 1 or lines[0]:
            lines.pop()  # the last write, cut by a kill: never an acknowledgement
        ops, ends, crashed = 0, [], False
        for n, raw in enumerate(lines, 1):
            where = f"{path.name}:{n}"
            try:
                line = _DECODER.decode(raw)
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                raise HistoryError(f"{path}:{n}: not a history line: {exc}") from None
            if isinstance(line, HistoryLine):
                run.append((where, line))
            elif isinstance(line, FinalLine):
                finals.append((where, line))
            elif isinstance(line, CommitLine):
                commits.append(line)
            elif isinstance(line, SummaryLine):
                summaries.append(msgspec.to_builtins(line))
            elif isinstance(line, EndLine):
                ends.append(line)
            elif isinstance(line, _OPS) and not (isinstance(line, _Op) and line.type == "invoke"):
                records.append(msgspec.to_builtins(line))
                ops += isinstance(line, _Op)
                crashed = crashed or isinstance(line, CrashLine)
        counted[path.name] = (ops, ends, crashed)
    for what, found in (("history", run), ("final", finals)):
        if len(found) != 1:
            places = ", ".join(w for w, _ in found) or "none"
            raise HistoryError(
                f"--check {folder}: a history has one {what!r} line, found {len(found)} ({places})"
            )
    header = run[0][1]
    if header.version != VERSION:
        raise HistoryError(
            f"{run[0][0]}: history format version {header.version}; this turncheck reads version {VERSION}"
        )
    _check_complete(files, header)
    _check_covered(files, header, commits, records)
    _check_ended(files[0].parent, header, counted)
    commits.sort(key=lambda c: c.seq)
    return History(header, tuple(records), tuple(summaries), tuple(commits), tuple(finals[0][1].live))
