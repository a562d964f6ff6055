"""Progress on stderr for long runs, drawn by rich: live on a terminal, one final line elsewhere.

rich is imported when a bar is first drawn, not before: a run shorter than :data:`DRAW_AFTER`
(and ``--help``) never pays for it.

Every command that can run longer than a couple of seconds takes ``--quiet``; scenarios and
sweeps report ``progress(done, total)`` and this draws it. On a terminal the bar redraws in
place; into a file or a pipe nothing is redrawn — rich prints the bar's last state once, when the
run ends or fails, so a log holds one line per run and no ``\\r`` noise. Nothing here touches
stdout, so ``--format json`` output stays machine-readable, and ``--quiet`` means nothing on
stderr but errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO, cast

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

DRAW_AFTER = 0.5
"""Seconds a run must last before its bar appears: short runs leave stderr empty."""
REDRAW_EVERY = 0.1
"""Seconds between two redraws of a bar (as rich's own auto-refresh, 10 a second): a run that
reports every step of a fraction of a millisecond (``race``'s schedules) paid a whole render of
the bar's table per step, a third of its CPU."""


class ProgressBar:
    """``label ━━━━━━╸━━━━ 3/18 unit 0:00:12`` on stderr, through :class:`rich.progress.Progress`.

    Nothing is drawn during the first :data:`DRAW_AFTER` seconds, and a run that finished by then
    draws nothing at all, so quick commands print only their results and errors.
    """

    def __init__(self, label: str, unit: str = "", stream: TextIO | None = None) -> None:
        self.label, self.unit, self.stream = label, unit, stream
        self._started = self._drawn_at = time.monotonic()
        self._bar: Progress | None = None
        self._task = cast("TaskID", 0)
        self.drawn = False
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        if self.finished:
            return
        now = time.monotonic()
        if self._bar is None:
            if now - self._started < DRAW_AFTER:
                return
            self._start(total)
            self._drawn_at = now - REDRAW_EVERY  # the bar's first state is drawn at once
        assert self._bar is not None
        self._bar.update(self._task, completed=done, total=total or None)
        if total > 0 and done >= total:
            self.close()  # drawn once more as it stops: the last state is always the one shown
        elif now - self._drawn_at >= REDRAW_EVERY:
            self._drawn_at = now
            self._bar.refresh()

    def _start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, stderr=self.stream is None, highlight=False, soft_wrap=False)
        columns = [TextColumn(self.label), BarColumn(bar_width=30), MofNCompleteColumn()]
        if self.unit:
            columns.append(TextColumn(self.unit))
        columns.append(TimeElapsedColumn())
        self._bar = Progress(*columns, console=console, transient=False, auto_refresh=False)
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=total or None)
        self.drawn = True

    def close(self) -> None:
        """End the bar (its last state stays on screen, or is printed once into a file)."""
        if self._bar is not None and not self.finished:
            self._bar.stop()
        self.finished = True


def end_line(progress: Callable[[int, int], None]) -> None:
    """A run failing mid-way: end a drawn bar, so the one-line error that follows stands on a
    line of its own. Does nothing for a bar never drawn, finished, or silent."""
    if isinstance(progress, ProgressBar):
        progress.close()


def silent(done: int, total: int) -> None:
    """The progress callback of ``--quiet``."""
    return None


def progress_for(label: str, quiet: bool, unit: str = "") -> Callable[[int, int], None]:
    """The callback a command hands to a long run: a bar, or nothing with ``--quiet``."""
    return silent if quiet else ProgressBar(label, unit)
