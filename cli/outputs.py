"""Output paths checked before any work starts, so a refused command has written nothing.

A command that writes files learns that it cannot (a path component is a file, a folder is
read-only, the target is a directory) *before* it runs for minutes, and says so in one line.
Folders that do not exist yet are created when the results are written, parents included.
"""

from __future__ import annotations

import os
from pathlib import Path

from turncheck.models.errors import BadParameter


def _nearest_existing(path: Path) -> Path:
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def _check_writable_ancestor(path: Path, option: str) -> None:
    ancestor = _nearest_existing(path)
    if not ancestor.is_dir():
        raise BadParameter(f"{option} {path}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise BadParameter(f"{option} {path}: directory {ancestor} is not writable")


def check_output_dir(path: Path, option: str = "--out") -> None:
    """``path`` is, or can become, a directory we may write into."""
    if path.exists():
        if not path.is_dir():
            raise BadParameter(f"{option} {path} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise BadParameter(f"{option} {path}: directory is not writable")
        return
    _check_writable_ancestor(path, option)


def check_output_file(path: Path, option: str = "--out", make_folders: bool = True) -> None:
    """``path`` is, or can become, a file we may write (its folders are created if missing, or,
    without ``make_folders``, must exist); a symlink there is refused, since turncheck never
    writes through one onto its target."""
    if path.is_symlink():
        raise BadParameter(f"{option} {path} is a symlink; turncheck does not write through it")
    if path.is_dir():
        raise BadParameter(f"{option} {path} is a directory, not a file")
    if path.exists():
        if not path.is_file():  # a FIFO would block the write for ever, a device swallow it
            raise BadParameter(f"{option} {path} exists and is not a regular file")
        if not os.access(path, os.W_OK):
            raise BadParameter(f"{option} {path}: file is not writable")
        return
    if not make_folders and not path.parent.absolute().is_dir():
        raise BadParameter(f"{option} {path}: folder {path.parent} does not exist")
    _check_writable_ancestor(path.parent, option)
