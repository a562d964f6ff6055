"""``turncheck log verify|export|repair|create PATH``: check a durable log, export its events as
JSONL, move a damaged tail aside (``repair``: the one command that removes bytes from a log), or
create an empty one (``create``: a new path only).

Both open the log read-only (a shared lock; nothing is ever cut or rewritten), after checking
its first bytes are the framed log's magic. ``verify`` decodes every turn and prints the recovery report (``--format json``: one
object); it exits 0 for a clean log and 1 when the log opens but carries damage a writer would
repair or skip (torn tail, skipped regions, duplicates). Anything the log cannot be opened for —
missing, not a log, newer format, corruption under ``stop``, owned by a writer — is one line and
exit 2. ``export`` writes one event per line (the JSONL interchange format) to stdout or
``--out``, only after the whole log has been read. Decoding a large log shows a bar on stderr
unless ``--quiet``.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from turncheck.cli.options import FormatOpt, QuietAlreadyOpt, QuietOpt
from turncheck.cli.progress import end_line, progress_for
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter
from turncheck.models.log_format import FRAME_MAGIC, LINE_HEADER, NotALog

if TYPE_CHECKING:
    from turncheck.models.recovery import Recovery
    from turncheck.models.store import StoredTurn, TurnLog


def check_log_file(path: Path) -> None:
    """Refuse, by its first bytes, a ``path`` that is no framed log (an empty file is one)."""
    from turncheck.models.store import LogNotFound, LogPermission

    if path.exists() and not path.is_dir() and not path.is_file():  # a FIFO would block the read
        raise LogNotFound(f"{path}: not a regular file (a FIFO, device or socket cannot be a log)")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(FRAME_MAGIC))
    except FileNotFoundError:
        raise LogNotFound(f"{path}: no such log") from None
    except IsADirectoryError:
        raise LogNotFound(f"{path}: is a directory, not a log file") from None
    except PermissionError:
        raise LogPermission(f"{path}: permission denied (opening the log needs read access)") from None
    if head and not FRAME_MAGIC.startswith(head) and not head.startswith(FRAME_MAGIC):
        raise NotALog(f"{path}: not a turncheck log (no framed log magic)")


def open_readonly(path: Path, policy: str) -> TurnLog:
    from turncheck.models.recovery import POLICIES
    from turncheck.models.store import TurnLog

    if policy not in POLICIES:
        raise BadParameter(f"parameter policy: {policy!r} is not one of {', '.join(POLICIES)}")
    check_log_file(path)
    return TurnLog.open(path, readonly=True, policy=policy)


def decoded_turns(log: TurnLog, label: str, quiet: bool) -> tuple[StoredTurn, ...]:
    """Every turn of ``log``, with a bar on stderr: decoding, not recovery, is what takes time
    on a large log (recovery scans ~500 k frames/s, decoding ~20 k turns/s). A failure after
    the bar drew ends its line first, so the one-line error stands on a line of its own."""
    bar = progress_for(label, quiet, "turns")
    try:
        return log.turns(bar)
    except BaseException:
        end_line(bar)
        raise


PolicyOption = Annotated[
    str, typer.Option("--policy", help="Damage in the middle: stop (refuse) or resync (skip).")
]


def verify_command(
    path: Annotated[Path, typer.Argument(help="The log file.")],
    policy: PolicyOption = "stop",
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
) -> None:
    """Exit 0 for a clean log, 1 for a damaged one — a torn tail, corruption skipped under
    ``resync`` or refused under ``stop`` alike: damage is the verdict, not an input error — and 2
    only for a path that is no readable log (missing, another format, busy)."""
    from turncheck.models.log_format import LogCorrupt

    try:
        with open_readonly(path, policy) as log:
            turns = decoded_turns(log, "log verify: decoding", quiet)
            rec = log.recovery
            sessions = log.sessions()
            events = sum(len(t.events) for t in turns)
    except LogCorrupt as exc:
        if fmt == "json":
            print_json(
                {"path": str(path), "policy": policy, "clean": False, "damaged": True, "error": str(exc)}
            )
        else:
            print(f"damaged: {exc}")
        raise typer.Exit(1) from None
    damaged = not rec.clean and not (rec.header_missing and rec.torn_bytes == 0)
    if fmt == "json":
        print_json(verify_json(path, rec, sessions, events, turns, damaged))
    else:
        print(f"{path}: {rec.summary()}")
        shown = ", ".join(sessions[:5]) + (", …" if len(sessions) > 5 else "")
        seqs = f"; seqs {turns[0].events[0].seq}..{turns[-1].events[-1].seq}" if turns else ""
        print(f"sessions: {len(sessions)}{f' ({shown})' if sessions else ''}; events: {events}{seqs}")
    if damaged:
        raise typer.Exit(1)


def verify_json(
    path: Path,
    rec: Recovery,
    sessions: tuple[str, ...],
    events: int,
    turns: tuple[StoredTurn, ...],
    damaged: bool,
) -> dict[str, Any]:
    """``log verify --format json``: the recovery report's fields, one object."""
    return {
        "path": str(path),
        "framing": rec.format,
        "policy": rec.policy,
        "size": rec.size,
        "turns": rec.records,
        "clean": rec.clean,
        "damaged": damaged,
        "torn_offset": rec.torn_offset,
        "torn_bytes": rec.torn_bytes,
        "skipped": [
            {"offset": k.offset, "length": k.length, "reason": k.reason, "lost": k.lost} for k in rec.skipped
        ],  # fmt: skip
        "duplicates": rec.duplicates,
        "sessions": len(sessions),
        "events": events,
        "first_seq": turns[0].events[0].seq if turns else None,
        "last_seq": turns[-1].events[-1].seq if turns else None,
        "summary": rec.summary(),
    }


def check_export_target(source: Path, out: Path) -> None:
    """Refuse an ``--out`` that export must never replace: its own source, a turncheck log, a
    file another process holds a lock on (a live log), anything but a regular file (a device,
    a FIFO, a directory). A new file, or an existing ordinary file, is written through a
    temporary file renamed over it."""
    if out.is_dir():
        raise BadParameter(f"parameter out: {out} is a directory")
    if not out.parent.is_dir():
        raise BadParameter(f"parameter out: directory {out.parent} does not exist")
    if not os.path.lexists(out):
        return
    if out.is_symlink():  # a dangling one too (it said "cannot inspect: No such file")
        raise BadParameter(f"parameter out: {out} is a symlink; turncheck does not write through it")
    try:
        st = out.stat()
    except OSError as exc:
        raise BadParameter(f"parameter out: cannot inspect {out} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadParameter(f"parameter out: {out} is not a regular file; refusing to replace it")
    if source.exists() and os.path.samefile(source, out):
        raise BadParameter(f"parameter out: {out} is the log being exported; refusing to overwrite it")
    try:
        with out.open("rb") as fh:
            head = fh.read(len(LINE_HEADER))
            _locked_elsewhere(fh.fileno(), out)
    except OSError as exc:
        raise BadParameter(f"parameter out: cannot read {out} ({exc.strerror})") from None
    if head.startswith(FRAME_MAGIC) or head.startswith(LINE_HEADER[:20]):
        raise BadParameter(f"parameter out: {out} is a turncheck log; export never overwrites a log")


def _locked_elsewhere(fd: int, out: Path) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no locks on this platform: nothing to respect
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BadParameter(
            f"parameter out: {out} is locked by another process (a live log?); refusing"
        ) from None
    fcntl.flock(fd, fcntl.LOCK_UN)


def export_command(
    path: Annotated[Path, typer.Argument(help="The log file.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the JSONL here instead of stdout.")
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's events.")] = None,
    policy: PolicyOption = "stop",
    quiet: QuietOpt = False,
) -> None:
    if out is not None:
        check_export_target(path, out)
    with open_readonly(path, policy) as log:
        turns = decoded_turns(log, "log export: decoding", quiet)
    from turncheck.models.events import dumps_event

    encoding = progress_for("log export: encoding", quiet, "turns")
    parts: list[str] = []
    for done, turn in enumerate(turns, start=1):
        parts.extend(dumps_event(e) + "\n" for e in turn.events if session is None or e.session == session)
        encoding(done, len(turns))
    text = "".join(parts)
    if out is None:
        sys.stdout.write(text)
        return
    from turncheck.reports.viewer import write_page

    write_page(out, text)  # beside it, then renamed: the user's umask, never through a link


def create_command(
    path: Annotated[Path, typer.Argument(help="The new log file (an existing path is refused).")],
    quiet: QuietAlreadyOpt = False,
) -> None:
    """Create an empty durable log, the framed format ``turncheck.TurnLog`` writes: a program then
    commits whole turns to it (``TurnLog.open(PATH).commit(events)``). Never replaces a file."""
    from turncheck.cli.outputs import check_output_file
    from turncheck.models.store import TurnLog

    check_output_file(path, "PATH")
    if path.exists():
        raise BadParameter(f"PATH {path} exists; log create never replaces a file")
    with TurnLog.open(path, create=True):
        pass
    print(f"created {path}")


def repair_command(
    path: Annotated[Path, typer.Argument(help="The log file.")],
    follow_symlink: Annotated[
        bool,
        typer.Option(
            "--follow-symlink", help="Repair the target of PATH when PATH is a symlink (refused otherwise)."
        ),
    ] = False,
    quiet: QuietAlreadyOpt = False,
) -> None:
    """Move damage at the end of a log (a torn tail, or a complete record failing its check) to
    ``PATH.damaged-OFFSET`` and cut it: the only command that removes bytes from a log."""
    from turncheck.models.store import TurnLog

    check_log_file(path)
    rec, side = TurnLog.repair(path, follow_symlinks=follow_symlink)
    if side is None:
        print(f"{path}: nothing to repair at the end ({rec.summary()})")
        return
    print(
        f"{path}: moved {rec.size - int(side.name.rsplit('-', 1)[1])} B to {side}; log cut there ({rec.summary()})"
    )


def register(app: typer.Typer) -> None:
    from turncheck.cli.app import print_help_if_bare

    log_app = typer.Typer(
        help="Inspect a durable turn log (verify, export: read-only; repair: cut a damaged tail).",
        invoke_without_command=True,
        callback=print_help_if_bare,
    )
    log_app.command(
        "verify",
        help="Recover a log read-only and report its state: exit 0 clean, 1 damaged (under either"
        " policy), 2 not a readable log.",
    )(verify_command)
    log_app.command("export", help="Export a log's events as JSONL.")(export_command)
    log_app.command("create", help="Create an empty log (turncheck.TurnLog commits turns to it).")(
        create_command
    )
    log_app.command("repair", help="Move a damaged tail to PATH.damaged-OFFSET and cut the log there.")(
        repair_command
    )
    app.add_typer(log_app, name="log")
