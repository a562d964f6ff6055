"""The pinned library releases a race case runs against, and where they come from.

A :class:`~models.cases.RaceInput` side names the releases it was recorded on (``dist==version``).
:func:`library_path` finds them: the running environment when it holds exactly those versions
(no path needed), else a folder of the cache (``TURNCHECK_CACHE``, default
``~/.cache/turncheck/libraries``) holding them, installed there once with ``--install``
(``pip install --no-deps --target``: the rest — httpx, pydantic … — is the environment's own).
Nothing is installed unasked, and what cannot be found or installed is a :class:`Unavailable`
naming why, which the case reports as skipped.

Invariant: a side runs only against the exact versions its pins name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from turncheck.models.errors import TurncheckError


class Unavailable(TurncheckError):
    """A side's pinned releases are neither installed nor in the cache (or could not be installed)."""


def cache_root() -> Path:
    return Path(os.environ.get("TURNCHECK_CACHE", Path.home() / ".cache" / "turncheck")) / "libraries"


def installed(pins: Sequence[str]) -> bool:
    """Whether the running environment holds exactly the pinned versions."""
    for pin in pins:
        dist, _, wanted = pin.partition("==")
        try:
            if version(dist) != wanted:
                return False
        except PackageNotFoundError:
            return False
    return True


def library_path(pins: Sequence[str], install: bool) -> Path | None:
    """Where the pinned releases are: None for the running environment, else a cache folder to
    put first on ``PYTHONPATH``; with ``install``, installed there when absent. Raises
    :class:`Unavailable` naming why they cannot be had."""
    if installed(pins):
        return None
    target = cache_root() / "-".join(p.replace("==", "-") for p in pins)
    if target.is_dir():
        return target
    if not install:
        raise Unavailable(
            f"{', '.join(pins)} not installed nor in {target.parent} (--install installs them there)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(scratch), *pins],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if proc.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise Unavailable(f"cannot install {', '.join(pins)} (no package index reachable?): {last}")
    try:
        scratch.rename(target)
    except OSError:  # installed meanwhile by another run
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def repository_file(relative: str) -> Path:
    """A file of the turncheck repository the case catalogue runs (a race test of
    ``examples/races``, a store of ``examples/stores``): the checkout's, or the copy the wheel
    ships as ``turncheck/examples/…`` (pyproject.toml's ``py-modules``); :class:`Unavailable`
    when absent."""
    root = Path(__file__).resolve().parents[1]
    path = root / relative
    if not path.is_file():
        raise Unavailable(f"{relative} is missing from turncheck's files at {root}: reinstall turncheck")
    return path
