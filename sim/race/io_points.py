"""The I/O calls of a synchronous store, as pauses and fault points of the race scheduler.

Called from a controlled thread (:mod:`.cooperative`), each of these first hands the turn back
— another thread may run there — and then does what it always does:

* ``open`` (``builtins.open`` and ``io.open``, so ``pathlib``'s ``read_text``/``write_text``
  too), and on the file it returns each ``read``, ``readline``, ``readlines``, ``write``,
  ``writelines``, ``flush``, ``close`` (``with`` included) and the start of iterating it
  (``json.dump`` writes through ``write``: each chunk is a pause);
* ``os.replace``, ``os.rename``, ``os.fsync``;
* on a ``sqlite3`` connection: ``execute``, ``executemany``, ``executescript``, ``commit``,
  ``rollback`` and the commit of ``with connection:``, and the same ``execute`` calls of its
  cursors.

Under ``--faults`` each pause is a fault point (family ``file`` or ``sqlite``): an ``error``
raises there instead of the call — the ``--fault-error`` type, by default
:class:`~.faults.InjectedFault` (an ``OSError``) for a file call and
:class:`InjectedSqliteError` (a ``sqlite3.OperationalError``) for a sqlite3 call — and a
``crash`` stops the thread there: the call never runs, what it wrote before stays.

SQLite's own locking still holds. A connection opened in a controlled thread has a busy
timeout of 0 and, when the database is locked, waits without the turn until another thread
has run, and raises "database is locked" only when nothing else can run (the timeout passed,
in virtual time) — so one thread's open write transaction never stalls the run for real.

Invariant: outside a controlled thread every call here is the real one, unchanged.
"""

from __future__ import annotations

import builtins
import functools
import io
import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from turncheck.sim.race.cooperative import controlled, here

REAL_OPEN, REAL_IO_OPEN = builtins.open, io.open
REAL_OS = {name: getattr(os, name) for name in ("replace", "rename", "fsync")}
REAL_CONNECT = sqlite3.connect


class InjectedSqliteError(sqlite3.OperationalError):
    """The error ``--faults`` raises at a sqlite3 call by default: what a failing disk or a
    lost lock makes SQLite raise."""


def io_point(call: str, family: str) -> None:
    """Hand the turn back before ``call`` (in a controlled thread; nothing elsewhere)."""
    slot = controlled()
    if slot is not None:
        slot.pause(here(call), family)


class RaceFile:
    """A file a controlled thread opened: its reads, writes and close are pauses (the module)."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def _call(self, name: str, *args: Any) -> Any:
        io_point(name, "file")
        return getattr(self._file, name)(*args)

    def read(self, *args: Any) -> Any:
        return self._call("read", *args)

    def readline(self, *args: Any) -> Any:
        return self._call("readline", *args)

    def readlines(self, *args: Any) -> Any:
        return self._call("readlines", *args)

    def write(self, data: Any) -> Any:
        return self._call("write", data)

    def writelines(self, lines: Any) -> Any:
        return self._call("writelines", lines)

    def flush(self) -> Any:
        return self._call("flush")

    def close(self) -> None:
        if not self._file.closed:
            self._call("close")

    def __iter__(self) -> Iterator[Any]:
        io_point("iterate", "file")
        return iter(self._file)

    def __enter__(self) -> RaceFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def race_open(*args: Any, **kwargs: Any) -> Any:
    """``open`` (and ``io.open``): in a controlled thread, a pause, then a :class:`RaceFile`."""
    if controlled() is None:
        return REAL_OPEN(*args, **kwargs)
    io_point("open", "file")
    return RaceFile(REAL_OPEN(*args, **kwargs))


def _os_call(name: str) -> Callable[..., Any]:
    real = REAL_OS[name]

    def call(*args: Any, **kwargs: Any) -> Any:
        io_point(f"os.{name}", "file")
        return real(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _busy(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == 5 or "database is locked" in str(exc)


def _sqlite(call: str, run: Callable[[], Any]) -> Any:
    """A sqlite3 call in a controlled thread: a pause, then the call, waiting (without the turn)
    while the database is locked by another thread (see the module)."""
    slot = controlled()
    if slot is None:
        return run()
    slot.pause(here(f"sqlite3 {call}"), "sqlite")
    while True:
        try:
            return run()
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            moved = functools.partial(slot.loop.moved_since, len(slot.loop.steps), slot.name)
            if slot.block(moved, True, here(f"sqlite3 {call}: locked")):
                raise


class RaceCursor(sqlite3.Cursor):
    """A cursor of a controlled thread's connection: its ``execute`` calls are pauses."""

    def execute(self, *args: Any) -> Any:
        return _sqlite("execute", lambda: super(RaceCursor, self).execute(*args))

    def executemany(self, *args: Any) -> Any:
        return _sqlite("executemany", lambda: super(RaceCursor, self).executemany(*args))

    def executescript(self, *args: Any) -> Any:
        return _sqlite("executescript", lambda: super(RaceCursor, self).executescript(*args))


class RaceConnection(sqlite3.Connection):
    """A connection opened in a controlled thread: its writes and commits are pauses."""

    def cursor(self, factory: Any = RaceCursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)

    def execute(self, *args: Any) -> Any:
        return _sqlite("execute", lambda: super(RaceConnection, self).execute(*args))

    def executemany(self, *args: Any) -> Any:
        return _sqlite("executemany", lambda: super(RaceConnection, self).executemany(*args))

    def executescript(self, *args: Any) -> Any:
        return _sqlite("executescript", lambda: super(RaceConnection, self).executescript(*args))

    def commit(self) -> None:
        _sqlite("commit", super().commit)

    def rollback(self) -> None:
        _sqlite("rollback", super().rollback)

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Any:
        call = "commit" if kind is None else "rollback"
        return _sqlite(call, lambda: super(RaceConnection, self).__exit__(kind, value, tb))


def race_connect(database: Any, *args: Any, **kwargs: Any) -> Any:
    """``sqlite3.connect`` in a controlled thread: a :class:`RaceConnection` (combined with the
    ``factory`` asked for), its busy timeout 0 (the scheduler waits instead)."""
    if controlled() is None:
        return REAL_CONNECT(database, *args, **kwargs)
    if args:
        args = (0.0, *args[1:])
    else:
        kwargs["timeout"] = 0.0
    factory = kwargs.get("factory", args[4] if len(args) > 4 else sqlite3.Connection)
    if factory is sqlite3.Connection:
        factory = RaceConnection
    elif not issubclass(factory, RaceConnection):
        factory = type(f"Race{factory.__name__}", (RaceConnection, factory), {})
    if len(args) > 4:
        args = (*args[:4], factory, *args[5:])
    else:
        kwargs["factory"] = factory
    io_point("sqlite3 connect", "sqlite")
    return REAL_CONNECT(database, *args, **kwargs)


def patches() -> list[tuple[Any, str, Any]]:
    """``(owner, attribute, stand-in)`` for every call this module pauses at."""
    return [
        (builtins, "open", race_open),
        (io, "open", race_open),
        *((os, name, _os_call(name)) for name in REAL_OS),
        (sqlite3, "connect", race_connect),
    ]
