"""First-open contention: many processes opening one fresh store at the same moment.

openai-agents-python PR #4987 ("fix: handle concurrent async SQLite startup", merged) measured
it: with eight concurrent ``AsyncSQLiteSession``\\ s across 20 fresh databases, 20 of 160
startups failed with ``database is locked`` — WAL initialization can raise before the
connection's busy timeout expires (SQLite runs no busy handler for a journal-mode change), and a
PRAGMA cursor left open can block a competing schema writer. A stress run never sees this: its
parent sets the store up before any writer starts, and a writer retries a busy store. So this is
a check of its own, ``turncheck stress --first-opens ROUNDS``.

Each round makes a fresh database file (a new folder, nothing in it), starts ``openers``
processes that wait on one barrier, and each then does what a fresh process does first against
it — ``setup``, ``connect``, one ``read_window``, ``close`` — **once** (the parent opened the
store once on a database of its own first, so the library is imported before the fork). An exception is a failed
first open, counted with its text; nothing is retried, so a store whose own retry hides the
contention (PR #4987's fix) shows as passing and one that surfaces it shows every failure. A
process still not done ``OPEN_TIMEOUT_S`` after the barrier is killed and counted as ``stuck``.
Only file stores have a fresh database to make: a store named by a DSN is refused.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import tempfile
from collections import Counter
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from turncheck.models.errors import BadParameter
from turncheck.models.parent_death import die_with_parent
from turncheck.sim.stress.stores import STORES, StoreSpec, check_spec, open_store

OPEN_TIMEOUT_S = 60.0
STUCK = "stuck: no answer within the open timeout (killed)"


@dataclass(frozen=True)
class FirstOpens:
    """What the rounds gave: ``failures`` is one ``(round, error text)`` per failed first open,
    in round order (within a round, sorted by text)."""

    store: str
    openers: int
    rounds: int
    failures: tuple[tuple[int, str], ...]

    @property
    def opens(self) -> int:
        return self.openers * self.rounds

    @property
    def ok(self) -> bool:
        return not self.failures

    def errors(self) -> list[tuple[str, int]]:
        """Each distinct error text and how often it came, the most frequent first."""
        return Counter(text for _, text in self.failures).most_common()

    def as_json(self) -> dict[str, Any]:
        return {
            "store": self.store, "openers": self.openers, "rounds": self.rounds, "opens": self.opens,
            "failed": len(self.failures), "errors": dict(self.errors()), "ok": self.ok,
        }  # fmt: skip

    def lines(self) -> list[str]:
        """The report, one line a fact."""
        head = (
            f"first opens {self.store} · {self.openers} processes × {self.rounds} fresh databases: "
            f"{len(self.failures)} of {self.opens} failed (each tried once, not retried)"
        )
        body = [f"  {text} ×{n}" for text, n in self.errors()]
        verdict = "OK: every first open succeeded" if self.ok else "FAIL: a concurrent first open failed"
        return [head, *body, verdict]


def check_first_open(kind: str, openers: int, rounds: int) -> None:
    """Refuse what cannot be run before any process starts (one line each)."""
    check_spec(StoreSpec(kind, "x"))
    if kind in STORES and STORES[kind].needs_dsn:
        raise BadParameter(f"--first-opens: store {kind} is named by a DSN; first opens need a file store")
    if not 2 <= openers <= 64:
        raise BadParameter(f"--first-opens: needs 2..64 processes (--writers), got {openers}")
    if not 1 <= rounds <= 1000:
        raise BadParameter(f"--first-opens must be in 1..1000, got {rounds}")


def _open_once(spec: StoreSpec, barrier: Any, answers: Any) -> None:
    """One process: wait for the others, open the fresh store once, answer "" or the error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills us
    parent = mp.parent_process()
    die_with_parent(parent.pid if parent is not None else None)
    try:
        barrier.wait(timeout=OPEN_TIMEOUT_S)
        store = open_store(spec)
        try:
            store.setup()
            store.connect()
            store.read_window()
        finally:
            store.close()
        answers.put("")
    except Exception as exc:
        answers.put(error_text(exc))
    os._exit(0)


def error_text(exc: BaseException) -> str:
    """A failed first open in one line: the exception's type and the first line of its message
    (SQLAlchemy's goes on with the statement and a link), at most 300 characters."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0].strip() if lines else ''}"[:300]


def _warm(kind: str, folder: Path) -> None:
    """Open the store once, alone, on a database of its own, so the forked openers inherit its
    library already imported (the Agents SDK takes seconds to import on a loaded machine, which
    would spread the openers out and hide the contention); a failure here is the store's own
    and is raised as it is."""
    folder.mkdir()
    store = open_store(StoreSpec(kind, str(folder / "session.db")))
    try:
        store.setup()
    finally:
        store.close()


def _round(kind: str, folder: Path, openers: int) -> list[str]:
    """One fresh database opened by ``openers`` processes at once: the error texts."""
    folder.mkdir()
    spec = StoreSpec(kind, str(folder / "session.db"))
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(openers)
    answers = ctx.SimpleQueue()
    procs: list[BaseProcess] = [
        ctx.Process(target=_open_once, args=(spec, barrier, answers), daemon=True) for _ in range(openers)
    ]
    try:
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=OPEN_TIMEOUT_S * 2)
    finally:
        stuck = 0
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.join()
                stuck += 1
    texts = []
    while not answers.empty():
        texts.append(answers.get())
    return sorted([t for t in texts if t] + [STUCK] * stuck)


def first_opens(kind: str, openers: int, rounds: int) -> FirstOpens:
    """Run ``rounds`` rounds of ``openers`` concurrent first opens of store ``kind``, each round on
    a fresh database in a scratch folder removed afterwards."""
    check_first_open(kind, openers, rounds)
    failures: list[tuple[int, str]] = []
    with tempfile.TemporaryDirectory(prefix="turncheck-first-open-") as scratch:
        _warm(kind, Path(scratch) / "warm")
        for r in range(rounds):
            failures += [(r, text) for text in _round(kind, Path(scratch) / f"round-{r}", openers)]
    return FirstOpens(kind, openers, rounds, tuple(failures))
