"""Where a task waits and what a job runs, in the words a race report prints; a step and a choice.

Kept apart from :mod:`.loop` (which only schedules): these read frames and source lines, and
name files the same way on every machine (relative to the working directory, or from the
installed package on), so two runs of one schedule print the same words.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import linecache
import os
from collections.abc import Callable, Sequence
from types import CoroutineType, GeneratorType
from typing import Any, NamedTuple

ASYNCIO_DIR = os.path.dirname(asyncio.__file__) + os.sep
STDLIB_DIR = os.path.dirname(os.__file__) + os.sep
RACE_DIR = os.path.dirname(__file__) + os.sep


def place(path: str) -> str:
    """A source file as a report names it: relative to the working directory, or from the
    package folder on for installed libraries, so two machines print the same words."""
    return _placed(path, os.getcwd())


@functools.lru_cache(maxsize=4096)
def _placed(path: str, cwd: str) -> str:
    """:func:`place` in ``cwd``, computed once per file and folder: every step of every schedule
    names where its task waits, and ``relpath`` was a third of a schedule's time."""
    if path.startswith(cwd + os.sep):
        return os.path.relpath(path, cwd)
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path)


def _frame_text(frame: Any, callers: Sequence[str]) -> str:
    code = frame.f_code
    return _text_at(code.co_filename, frame.f_lineno, (code.co_name, *callers), os.getcwd())


@functools.lru_cache(maxsize=4096)
def _text_at(filename: str, lineno: int, chain: tuple[str, ...], cwd: str) -> str:
    """A frame's words (:func:`_frame_text`), once per place: a task waits at few places, many times."""
    line = linecache.getline(filename, lineno).strip()
    return f"{_placed(filename, cwd)}:{lineno} `{line}` in {' ← '.join(chain)}"


_OUTSIDE_ASYNCIO: dict[str, bool] = {}  # source file → not asyncio's own (a dict lookup beats startswith)


def suspended_at(coro: Any) -> str:
    """Where a suspended coroutine waits: the innermost frame of its await chain that is not
    asyncio's own (the user's ``await``, or the library's that made the task wait), with the
    names of the two functions that awaited it. Every step of every schedule asks this, so the
    chain is only walked here — each frame as its file, function and line — and worded once
    per chain and working directory (:func:`_chain_text`)."""
    chain: list[str | int] = []
    obj = coro
    while obj is not None:
        kind = type(obj)
        if kind is CoroutineType:  # what nearly every await chain is made of: no getattr misses
            frame, following = obj.cr_frame, obj.cr_await
        elif kind is GeneratorType:
            frame, following = obj.gi_frame, obj.gi_yieldfrom
        else:
            frame = (
                getattr(obj, "cr_frame", None)
                or getattr(obj, "gi_frame", None)
                or getattr(obj, "ag_frame", None)
            )
            following = (
                getattr(obj, "cr_await", None)
                or getattr(obj, "gi_yieldfrom", None)
                or getattr(obj, "ag_await", None)
            )
        if frame is None:
            break
        code = frame.f_code
        path = code.co_filename
        outside = _OUTSIDE_ASYNCIO.get(path)
        if outside is None:  # once per source file
            outside = _OUTSIDE_ASYNCIO[path] = not path.startswith(ASYNCIO_DIR)
        if outside:
            chain += (path, code.co_name, frame.f_lineno)
        obj = following
    return _chain_text(tuple(chain), os.getcwd())


@functools.lru_cache(maxsize=4096)
def _chain_text(chain: tuple[Any, ...], cwd: str) -> str:
    """:func:`suspended_at`'s words for an await chain given as (file, function, line) triples,
    outermost first: a task waits at few places, many times."""
    if not chain:
        return "(inside asyncio)"
    frames = [chain[k : k + 3] for k in range(0, len(chain), 3)]
    path, name, lineno = frames[-1]
    text = _text_at(path, lineno, (name, *(f[1] for f in frames[-3:-1][::-1])), cwd)
    if _in_a_library(path):
        own = [f for f in frames if not _in_a_library(f[0])]
        if own:  # the library's await, and the user's line that called into it
            path, _, lineno = own[-1]
            line = linecache.getline(path, lineno).strip()
            text += f" (called at {_placed(path, cwd)}:{lineno} `{line}`)"
    return text


def _in_a_library(path: str) -> bool:
    """Whether ``path`` is an installed library's, the standard library's or turncheck's race
    code — not the code under test, whose line a report adds to a library's."""
    return (
        path.startswith((STDLIB_DIR, RACE_DIR))
        or any(m in path for m in ("site-packages" + os.sep, "dist-packages" + os.sep))
    )


def callable_name(func: Any) -> str:
    """``to_thread``'s ``partial(context.run, func, …)`` and other partials, by the function run."""
    while isinstance(func, functools.partial):
        inner = func.func
        func = func.args[0] if isinstance(getattr(inner, "__self__", None), contextvars.Context) else inner
    return getattr(func, "__qualname__", type(func).__name__)


class Choice(NamedTuple):
    """One scheduling point: the runnable actors' names in FIFO order (index 0 is asyncio's pick)
    and the index of this point among the run's points with more than one runnable actor.
    A named tuple, as :class:`Step`: one is made at every choice of every schedule."""

    point: int
    names: tuple[str, ...]


Chooser = Callable[[Choice], int]


class Step(NamedTuple):
    """One atomic step: who ran, from which suspension point to which (``file:line `code```),
    and — at a choice — how many were runnable and which index was chosen. A named tuple (as
    immutable, compared and printed field by field as the frozen dataclass it was) because one
    is made at every step of every schedule, and a frozen dataclass's ``__init__`` (a
    ``object.__setattr__`` per field) cost a tenth of a schedule."""

    actor: str
    start: str
    end: str
    runnable: tuple[str, ...] = ()
    chosen: int = 0
    thread: bool = False  # a controlled thread of a synchronous test (:mod:`.threads`), not a task

    @property
    def reordered(self) -> bool:
        """The chooser ran another actor than the one asyncio would have run."""
        return self.chosen != 0
