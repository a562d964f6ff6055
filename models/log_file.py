"""The log file as an owned resource: opening it, the ownership lock, reading and syncing.

Operating-system details of the durable log live here so :mod:`models.store` reads as the
store's contract. Ownership is ``flock`` on the open file description — exclusive for writers,
shared for read-only openers — so a second opener in another process *or the same one* is
refused. Waiting for the lock polls with back-off and counts its own sleeps: no clock is read.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

from turncheck.models.log_format import StoreError
from turncheck.models.output_files import sync_dir as sync_dir

_LOCK_POLL_SECONDS = 0.005


class LogNotFound(StoreError):
    """The log file (or its directory) does not exist."""


class LogPermission(StoreError):
    """The process may not read (or, to append, write) the log file."""


class LogBusy(StoreError):
    """Another opener — in this process or another — owns the log."""


def open_fd(path: Path, readonly: bool, create: bool, follow_symlinks: bool = False) -> int:
    """A descriptor on the log (read-only, or read-write and created when asked); every OS
    refusal becomes a one-line :class:`StoreError` naming the path. A writer never follows a
    symlink at ``path`` onto its target (``O_NOFOLLOW``) unless ``follow_symlinks`` says so."""
    flags = os.O_RDONLY if readonly else os.O_RDWR | (os.O_CREAT if create else 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    if not readonly and not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        if create and not os.path.isdir(path.parent):
            raise LogNotFound(f"{path}: directory {path.parent} does not exist") from None
        raise LogNotFound(f"{path}: no such log") from None
    except IsADirectoryError:
        raise LogNotFound(f"{path}: is a directory, not a log file") from None
    except PermissionError:
        need = "read" if readonly else "read and write"
        raise LogPermission(f"{path}: permission denied (opening the log needs {need} access)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise StoreError(
                f"{path}: is a symlink; a writer does not follow it onto its target (open the target,"
                " or pass follow_symlinks=True)"
            ) from None
        raise StoreError(f"{path}: cannot open ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogNotFound(f"{path}: not a regular file (a FIFO, device or socket cannot be a log)")
    if hasattr(os, "O_NONBLOCK"):
        os.set_blocking(fd, True)
    return fd


def lock(fd: int, path: Path, readonly: bool, wait: float) -> None:
    """Take the ownership lock, polling for about ``wait`` seconds in total.

    Polls back off from 0.5 ms to 5 ms; the budget is the sum of the sleeps, so no clock is read.
    """
    try:
        import fcntl  # POSIX only: imported where a lock is taken, so the rest runs anywhere
    except ImportError:
        raise StoreError(
            f"{path}: the durable log needs POSIX file locks (fcntl.flock), which this platform lacks"
        ) from None
    mode = (fcntl.LOCK_SH if readonly else fcntl.LOCK_EX) | fcntl.LOCK_NB
    slept, pause = 0.0, _LOCK_POLL_SECONDS / 10
    while True:
        try:
            fcntl.flock(fd, mode)
            return
        except BlockingIOError:
            if slept >= wait:
                break
            time.sleep(pause)
            slept += pause
            pause = min(pause * 2, _LOCK_POLL_SECONDS)
        except OSError as exc:
            raise StoreError(f"{path}: cannot lock ({exc.strerror})") from None
    waited = f" after waiting {wait:g} s" if wait else ""
    raise LogBusy(
        f"{path}: log is already open by another owner{waited} (one owner at a time; "
        f"read-only openers share); close the other opener or pass wait"
    )


def read_all(fd: int, size: int) -> bytes:
    """The first ``size`` bytes of the file (fewer if it is shorter)."""
    return read_range(fd, 0, size)


def read_range(fd: int, offset: int, size: int) -> bytes:
    """``size`` bytes of the file from ``offset`` (fewer if it ends first)."""
    parts = []
    got = 0
    while got < size:
        chunk = os.pread(fd, size - got, offset + got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def write_at(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset``: a short write (a full disk, a file-size limit) is
    continued, and one that writes nothing raises, so no caller mistakes part of its bytes for all."""
    done = 0
    while done < len(data):
        n = os.pwrite(fd, data[done:], offset + done)
        if n == 0:
            raise OSError(errno.ENOSPC, "no byte written")
        done += n


def sync_file(fd: int) -> None:
    """Flush the file's data and size to disk (``fdatasync`` where there is one)."""
    (getattr(os, "fdatasync", None) or os.fsync)(fd)
