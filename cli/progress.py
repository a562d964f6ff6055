"""Progress on stderr for long runs: a bar redrawn in place, throttled, silent when quiet.

Every command that can run longer than a couple of seconds takes ``--quiet``; scenarios and
sweeps report ``progress(done, total)`` and this draws it. Nothing here touches stdout, so
``--format json`` output stays machine-readable.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

DRAW_AFTER = 0.5
"""Seconds a run must last before its bar appears: short runs leave stderr empty."""


class ProgressBar:
    """``label [#####.....] 3/18 unit  12.3 s`` on stderr, at most ten redraws a second.

    Nothing is drawn during the first :data:`DRAW_AFTER` seconds, and a run that finished by then
    draws nothing at all, so quick commands print only their results and errors.
    """

    def __init__(self, label: str, unit: str = "", width: int = 30, stream: TextIO | None = None) -> None:
        self.label, self.unit, self.width = label, unit, width
        self.stream = stream if stream is not None else sys.stderr
        self._started = time.monotonic()
        self._last = 0.0
        self.drawn = False
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        finished = total > 0 and done >= total
        if not self.drawn and now - self._started < DRAW_AFTER:
            return
        if not finished and now - self._last < 0.1:
            return
        self._last = now
        self.drawn = True
        filled = self.width * done // total if total else 0
        bar = "#" * filled + "." * (self.width - filled)
        unit = f" {self.unit}" if self.unit else ""
        line = f"\r{self.label} [{bar}] {done}/{total}{unit}  {now - self._started:.1f} s"
        print(line, end="\n" if finished else "", file=self.stream, flush=True)
        self.finished = finished


def end_line(progress: Callable[[int, int], None]) -> None:
    """A run failing mid-way: end a partly drawn bar's line, so the one-line error that follows
    stands on a line of its own. Does nothing for a bar never drawn, finished, or silent."""
    if isinstance(progress, ProgressBar) and progress.drawn and not progress.finished:
        print(file=progress.stream, flush=True)
        progress.finished = True


def silent(done: int, total: int) -> None:
    """The progress callback of ``--quiet``."""
    return None


def progress_for(label: str, quiet: bool, unit: str = "") -> Callable[[int, int], None]:
    """The callback a command hands to a long run: a bar, or nothing with ``--quiet``."""
    return silent if quiet else ProgressBar(label, unit)
