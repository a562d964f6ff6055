"""Every file turncheck writes appears whole or not at all, and never through a symlink.

One mechanism for every writer (results, tables, plots, traces, pages, exported and generated
logs): each file is written under a temporary name in its own folder, flushed to disk
(``fsync``), then renamed onto its name, so a reader sees the old file or the whole new one,
never a prefix. A set of files (a result and its tables) is written the same way: every
temporary file is complete before the first rename, so a full disk or a file-size limit leaves
none of them. The rename replaces the *name*; a symlink put there is never followed onto its
target, and one found before writing is refused, as is a FIFO, device or folder in a file's place
and a symlinked folder below the output folder (its files would land outside it).

Invariant: after an error, the folder holds exactly what it held before — no 0-byte or partial
file, no temporary file, and no folder this call created — and the error is one line naming the
path it could not write.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from turncheck.models.errors import TurncheckError


def sync_dir(directory: Path) -> None:
    """Persist a new directory entry (best effort where directories cannot be opened).

    Defined here, and imported by :mod:`turncheck.models.log_file`, so that writing a file whole
    does not import the durable log's format and msgspec: a small ``check`` saves its trace
    through this module (issue 58 item 7)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(dfd)


class OutputRefused(TurncheckError, ValueError):
    """An output turncheck will not write: a symlink or special file in its place, or a path it
    cannot write (a full disk, a missing or read-only folder); nothing was written."""


def refuse_unsafe_target(path: Path) -> None:
    """Refuse ``path`` when a symlink, a folder or a special file holds its name; a missing name
    or a regular file (replaced whole) is fine."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputRefused(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputRefused(f"{path} is a symlink; turncheck does not write through it (give another name)")
    if stat.S_ISDIR(st.st_mode):
        raise OutputRefused(f"{path} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise OutputRefused(f"{path} exists and is not a regular file")


def refuse_symlinked_folders(*folders: Path) -> None:
    """Refuse a folder turncheck makes itself (not one the user named: ``.turncheck/traces``, a
    demo's ``results``) when a symlink holds its name: the files would land in its target."""
    for folder in folders:
        if os.path.islink(folder):
            raise OutputRefused(
                f"{folder} is a symlink; turncheck does not write through it (remove it, or name"
                " another output folder)"
            )


def _folders_to_make(path: Path, folder: Path | None) -> list[Path]:
    """The missing folders above ``path``, outermost first. Only ``folder`` and folders below it
    may be made (``folder`` with its parents); a file given alone must have its folder already.
    A symlink below ``folder`` on the way is refused."""
    missing: list[Path] = []
    probe = path.parent
    inside = folder is not None and path.parent.is_relative_to(folder)
    while not os.path.lexists(probe):
        if not inside:
            raise OutputRefused(f"cannot write {path}: folder {probe} does not exist")
        missing.append(probe)
        probe = probe.parent
    while inside and folder is not None and probe != folder and probe.is_relative_to(folder):
        if os.path.islink(probe):
            raise OutputRefused(
                f"cannot write {path}: {probe} is a symlink; turncheck does not write through it"
            )
        probe = probe.parent
    return missing[::-1]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temporary(path: Path, text: bool = False) -> tuple[IO[Any], Path]:
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())  # the permissions a plain open() would give, not mkstemp's 0600
    return (os.fdopen(fd, "w", encoding="utf-8") if text else os.fdopen(fd, "wb")), Path(name)


def _finish(fh: IO[Any]) -> None:
    fh.flush()
    os.fsync(fh.fileno())
    fh.close()


def write_outputs(files: Mapping[Path, str | bytes], folder: Path | None = None) -> list[Path]:
    """Write every file of ``files`` (text as UTF-8) whole, or none of them; returns the paths.

    ``folder`` is the output folder the files belong to: it and the folders below it are created
    when missing (and removed again after an error). Without it, each file's folder must exist.

    Raises
    ------
    OutputRefused
        A target is a symlink, folder or special file, a folder is missing, or the write failed
        (the message names the path); nothing was left behind.
    """
    paths = [Path(p) for p in files]
    for path in paths:
        refuse_unsafe_target(path)
    made: list[Path] = []
    written: list[tuple[Path, Path]] = []
    current = paths[0] if paths else Path()
    try:
        for path in paths:
            current = path
            for missing in _folders_to_make(path, None if folder is None else Path(folder)):
                if not os.path.lexists(missing):
                    os.mkdir(missing)
                    made.append(missing)
            data = files[path]
            fh, tmp = _temporary(path)
            written.append((tmp, path))
            with fh:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                _finish(fh)
        for tmp, path in written:
            current = path
            os.replace(tmp, path)
        for parent in dict.fromkeys(p.parent for p in paths):
            sync_dir(parent)
    except BaseException as exc:  # an interrupt too: what this call made is removed
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        for missing in reversed(made):
            _remove_empty(missing)
        if isinstance(exc, OSError):
            raise OutputRefused(f"cannot write {current}: {exc.strerror or exc}") from None
        raise
    return paths


@contextmanager
def output_file(path: Path, folder: Path | None = None, text: bool = False) -> Iterator[IO[Any]]:
    """A file (binary, or UTF-8 text with ``text``) to stream an output into; it appears at
    ``path`` whole when the block ends, and not at all when it raises (the rules of
    :func:`write_outputs`)."""
    refuse_unsafe_target(path)
    made: list[Path] = []
    tmp: Path | None = None
    try:
        for missing in _folders_to_make(path, folder):
            os.mkdir(missing)
            made.append(missing)
        fh, tmp = _temporary(path, text)
        with fh:
            yield fh
            _finish(fh)
        os.replace(tmp, path)
        sync_dir(path.parent)
    except BaseException as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        for missing in reversed(made):
            _remove_empty(missing)
        if isinstance(exc, OSError):
            raise OutputRefused(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # something else put a file there meanwhile: not ours to remove


__all__ = [
    "OutputRefused",
    "output_file",
    "refuse_symlinked_folders",
    "refuse_unsafe_target",
    "write_outputs",
]
