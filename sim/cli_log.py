"""``turncheck log verify|export PATH``: check a durable log, or export its events as JSONL.

Both open the log read-only (a shared lock; nothing is ever cut or rewritten), detecting the
format from the first bytes (framed magic, or the line log's header). ``verify`` decodes every
turn and prints the recovery report; it exits 0 for a clean log and 1 when the log opens but
carries damage a writer would repair or skip (torn tail, skipped regions, duplicates). Anything
the log cannot be opened for — missing, not a log, newer format, corruption under ``stop``,
owned by a writer — is one line and exit 2. ``export`` writes one event per line (the JSONL
interchange format) to stdout or ``--out``, only after the whole log has been read.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from models.errors import BadParameter
from models.events import dumps_event
from models.log_format import FRAME_MAGIC, NotALog
from models.recovery import POLICIES
from models.store import LogNotFound, LogPermission, TurnLog, TurnStore
from models.store_lines import LineTurnLog

FORMATS = ("auto", "frames", "lines")


def detect_format(path: Path) -> type[TurnStore]:
    """The store class for ``path`` from its first bytes (an empty file reads as framed)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(FRAME_MAGIC))
    except FileNotFoundError:
        raise LogNotFound(f"{path}: no such log") from None
    except IsADirectoryError:
        raise LogNotFound(f"{path}: is a directory, not a log file") from None
    except PermissionError:
        raise LogPermission(f"{path}: permission denied (opening the log needs read access)") from None
    if not head or FRAME_MAGIC.startswith(head) or head.startswith(FRAME_MAGIC):
        return TurnLog
    if head.startswith(b"{"):
        return LineTurnLog
    raise NotALog(f"{path}: not a turncheck log (neither the framed magic nor a line log header)")


def open_readonly(path: Path, policy: str, fmt: str) -> TurnStore:
    if policy not in POLICIES:
        raise BadParameter(f"parameter policy: {policy!r} is not one of {', '.join(POLICIES)}")
    if fmt not in FORMATS:
        raise BadParameter(f"parameter format: {fmt!r} is not one of {', '.join(FORMATS)}")
    cls = detect_format(path) if fmt == "auto" else (TurnLog if fmt == "frames" else LineTurnLog)
    return cls.open(path, readonly=True, policy=policy)


PolicyOption = Annotated[
    str, typer.Option("--policy", help="Damage in the middle: stop (refuse) or resync (skip).")
]
FormatOption = Annotated[str, typer.Option("--format", help="auto, frames or lines.")]


def verify_command(
    path: Annotated[Path, typer.Argument(help="The log file.")],
    policy: PolicyOption = "stop",
    fmt: FormatOption = "auto",
) -> None:
    with open_readonly(path, policy, fmt) as log:
        turns = log.turns()
        rec = log.recovery
        sessions = log.sessions()
        events = sum(len(t.events) for t in turns)
    print(f"{path}: {rec.summary()}")
    shown = ", ".join(sessions[:5]) + (", …" if len(sessions) > 5 else "")
    seqs = f"; seqs {turns[0].events[0].seq}..{turns[-1].events[-1].seq}" if turns else ""
    print(f"sessions: {len(sessions)}{f' ({shown})' if sessions else ''}; events: {events}{seqs}")
    if not rec.clean and not (rec.header_missing and rec.torn_bytes == 0):
        raise SystemExit(1)  # not typer.Exit: its code is dropped when click runs standalone_mode=False


def export_command(
    path: Annotated[Path, typer.Argument(help="The log file.")],
    out: Annotated[Path | None, typer.Option("--out", help="Write the JSONL here instead of stdout.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's events.")] = None,
    policy: PolicyOption = "stop",
    fmt: FormatOption = "auto",
) -> None:
    with open_readonly(path, policy, fmt) as log:
        text = "".join(dumps_event(e) + "\n" for e in log.events(session))
    if out is None:
        sys.stdout.write(text)
        return
    if out.is_dir():
        raise BadParameter(f"parameter out: {out} is a directory")
    if not out.parent.is_dir():
        raise BadParameter(f"parameter out: directory {out.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def register(app: typer.Typer) -> None:
    log_app = typer.Typer(help="Inspect a durable turn log (read-only).", no_args_is_help=True)
    log_app.command("verify", help="Recover a log read-only and report its state (exit 1 if damaged).")(
        verify_command
    )
    log_app.command("export", help="Export a log's events as JSONL.")(export_command)
    app.add_typer(log_app, name="log")
