"""Many logs at once: ``turncheck lint [--from FORMAT] DIR|GLOB``, on this machine or a cluster.

A trace archive is a folder of exports (a day of OTLP files, a month of Langfuse dumps). Each file
is linted on its own, as ``lint FILE`` lints it: :func:`lint_file` is one task, a module-level
function over a picklable :class:`LintTask`, so any executor (a local process pool, a Dask
cluster: :mod:`sim.executor`) can run it; the caller prints the results in the order of
:func:`archive_files`.

Invariant kept: the output depends on the files only — never on how many processes or which
workers read them — because every file is read whole by one task, the task returns its report
(never prints), and the files are taken in sorted path order. A file that cannot be read is a
:class:`FileLint` with its one-line ``error`` instead of a report, so one bad file never stops
the others; the caller says which files were not checked.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from turncheck.models.errors import BadParameter, TurncheckError, require_regular_file
from turncheck.models.events import EventFormatError
from turncheck.models.lint import LintReport

if TYPE_CHECKING:
    from turncheck.models.importers import LogFormat

PATTERN_CHARACTERS = "*?["
"""A ``lint`` argument holding one of these and naming no existing file is a glob pattern."""


def is_archive(spec: str) -> bool:
    """Whether ``lint``'s argument names many files: a folder, or a glob pattern that is not
    itself the name of a file."""
    path = Path(spec)
    return path.is_dir() or (not path.exists() and any(c in spec for c in PATTERN_CHARACTERS))


def archive_files(spec: str, source: str | None = None) -> list[Path]:
    """The regular files ``spec`` names, sorted by path: every file under a folder (its
    subfolders included, hidden files too: an export names its files as it likes), or the matches
    of a glob pattern (``**`` spans folders). Refused when nothing matches: an empty archive
    checked clean would be a pass that covered nothing. For a format that reads a folder as one
    history (:attr:`~models.importers.LogFormat.history_folder`: an OpenHands conversation, a
    Strands agent), each such folder is one entry, its files not listed apart, and the product's
    own files beside them (:attr:`~models.importers.LogFormat.not_histories`) are skipped; a
    symlinked folder is never entered."""
    fmt = None
    if source is not None:
        from turncheck.models.importers import FORMATS

        fmt = FORMATS[source] if FORMATS[source].folders else None
    path = Path(spec)
    if path.is_dir():
        found = (
            list(folder_entries(path, fmt))
            if fmt is not None
            else [p for p in path.rglob("*") if p.is_file()]
        )
    else:
        matches = [Path(p) for p in glob.glob(spec, recursive=True)]
        found = [p for p in matches if p.is_file() or fmt is not None and fmt.is_history_folder(p)]
    if not found:
        what = "folder" if path.is_dir() else "pattern"
        raise BadParameter(f"{spec}: the {what} holds no file to lint")
    return sorted(found)


def folder_entries(folder: Path, fmt: LogFormat) -> Iterator[Path]:
    """What an archive folder holds for ``fmt``: its history folders, whole, and its other
    regular files, but for the product's own (:attr:`~models.importers.LogFormat.not_histories`)."""
    if fmt.is_history_folder(folder):
        yield folder
        return
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            continue
        if entry.is_dir():
            yield from folder_entries(entry, fmt)
        elif entry.is_file() and entry.name not in fmt.not_histories:
            yield entry


@dataclass(frozen=True)
class LintTask:
    """One file of an archive and how to lint it (``lint``'s options)."""

    path: str
    source: str | None
    examples: int = 5
    provider: str | None = None
    budget: int | None = None


@dataclass(frozen=True)
class FileLint:
    """One file's result: its report, or the one line saying why it could not be read."""

    path: str
    report: LintReport | None = None
    error: str | None = None


def lint_file(task: LintTask) -> FileLint:
    """``task``'s file linted as ``lint [--from FORMAT] FILE`` lints it; a file that is not the
    format (or not readable) gives its error line instead, never an exception."""
    path = Path(task.path)
    try:
        if not (path.is_dir() and task.source is not None):  # a history folder (models.importers)
            require_regular_file(path, EventFormatError)
        return FileLint(task.path, report=read_and_lint(path, task))
    except (TurncheckError, OSError) as exc:
        reason = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        return FileLint(task.path, error=reason if reason.startswith(task.path) else f"{task.path}: {reason}")


def read_and_lint(path: Path, task: LintTask) -> LintReport:
    from turncheck.models.events import event_from_dict, load_json_line
    from turncheck.models.importers import FORMATS, import_log
    from turncheck.models.lint import lint_events
    from turncheck.models.sent_windows import lint_imported

    if task.source is not None:
        provider = task.provider or FORMATS[task.source].provider
        imported = import_log(task.source, path)
        if task.budget is not None and not imported.sent and not imported.reported:
            raise BadParameter(f"{path}: --budget checks the requests of a trace: it holds none")
        return lint_imported(imported, task.examples, provider, task.budget)
    located = []
    try:
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if line.strip():
                    obj = load_json_line(line, f"{path}:{number}")
                    located.append((number, event_from_dict(obj, f"{path}:{number}")))
    except UnicodeDecodeError as exc:
        raise EventFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return lint_events(located, task.examples, task.provider)
