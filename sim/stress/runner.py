"""The multi-process stress run: W writer processes and one compactor against a real store.

Each writer loops until the deadline: read the live window (as an agent reads its context),
then append one whole turn under the locking strategy. The compactor polls the session header
and acts on a pending read once its gap has passed (``mutex``: takes the lock at once and spends
the rest of the gap holding it). Every operation is recorded with its start and end wall-clock
time, one JSON line per operation, written with one unbuffered ``os.write`` per line into the
process's own file — so a line is on disk the moment the operation is acknowledged and a
SIGKILL loses nothing acknowledged. ``--kill`` SIGKILLs a random writer or the compactor at
seeded random moments and restarts it as a new incarnation (its operation ids stay unique).

The run time is bounded: processes stop starting operations at the deadline and are killed
(and reported as stuck) if still alive a grace period later.
"""

from __future__ import annotations

import errno
import json
import multiprocessing as mp
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.locking import LOCKINGS
from turncheck.models.parent_death import die_with_parent
from turncheck.models.session_store import (
    TURN_KINDS,
    ConnectionLost,
    JournalEntry,
    SessionStore,
    StoreBusy,
    Window,
)
from turncheck.sim.stress.history_format import (
    FORMAT,
    STORE_FILE,
    VERSION,
    CommitLine,
    History,
    HistoryLine,
    read_history,
    store_lines,
)
from turncheck.sim.stress.stores import StoreSpec, check_spec, open_store
from turncheck.sim.stress.strategies import LockHeld, act, append_turn, check_locking

POLL_S = 0.0005
LOCK_RETRY_S = 0.001
RECONNECT_S = 0.05
COMPACTOR = "c"


@dataclass(frozen=True)
class StressParams:
    """One stress run's parameters (validated by :func:`check_params`)."""

    store: StoreSpec
    locking: str
    writers: int = 4
    gap_ms: float = 50.0
    max_turns: int = 8
    seconds: float = 5.0
    seed: int = 0
    kill: bool = False
    kills: int = 3
    record: bool = True


def check_params(p: StressParams) -> None:
    check_locking(p.locking)
    check_spec(p.store)
    if p.writers < 1:
        raise BadParameter(f"--writers must be >= 1, got {p.writers}")
    if p.gap_ms < 0:
        raise BadParameter(f"--gap-ms must be >= 0, got {p.gap_ms}")
    if p.max_turns < 1:
        raise BadParameter(f"--max-turns must be >= 1, got {p.max_turns}")
    if not 0 < p.seconds <= 3600:
        raise BadParameter(f"--seconds must be in (0, 3600], got {p.seconds}")
    if p.kills < 0:
        raise BadParameter(f"--kills must be >= 0, got {p.kills}")


@dataclass(frozen=True)
class RawRun:
    """What a run left behind: every process's records, the store's journal and final live ids,
    how many processes were killed on purpose and which were stuck at the end. ``journaled`` is
    false for a store that keeps no journal (a client's own, e.g. Spring AI's JDBC repository):
    its history is checked against the final state alone, and nothing in it may remove turns."""

    params: StressParams
    records: tuple[dict[str, Any], ...]
    journal: tuple[Any, ...]
    live: tuple[int, ...]
    started: float
    ended: float
    kills: tuple[str, ...] = ()
    stuck: tuple[str, ...] = ()
    summaries: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    journaled: bool = True


class HistoryUnwritable(TurncheckError):
    """A history file could not be written (a full disk, a file-size limit): the evidence is
    incomplete, so the run is refused, not checked."""


_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW


def append_line(path: Path, data: str | bytes, fd: int | None = None) -> None:
    """Append history lines with one ``os.write`` (kill-safe), opening ``path`` unless ``fd`` is
    given (never through a symlink); a short or failed write is :class:`HistoryUnwritable`."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        target = os.open(path, _APPEND, 0o644) if fd is None else fd
        try:
            if os.write(target, raw) != len(raw):
                raise OSError(errno.ENOSPC, "no space left on device (a short write)")
        finally:
            if fd is None:
                os.close(target)
    except OSError as exc:
        raise HistoryUnwritable(f"cannot write the history {path}: {exc.strerror or exc}") from None


class Recorder:
    """One process's history file: a line per operation, one ``os.write`` each (kill-safe).
    With ``record=False`` only append latencies are kept, written once at exit (the bench's
    baseline for the recording overhead)."""

    def __init__(self, path: Path, record: bool, name: str) -> None:
        self.record = record
        self.path = path
        self.name = name
        self.ops = 0
        try:
            self.fd = os.open(path, _APPEND, 0o644)
        except OSError as exc:
            raise HistoryUnwritable(f"cannot write the history {path}: {exc.strerror or exc}") from None
        self.latencies: list[float] = []

    def line(self, obj: dict[str, Any]) -> None:
        if self.record:
            append_line(self.path, json.dumps(obj, separators=(",", ":")) + "\n", self.fd)
            self.ops += 1
        elif obj.get("op") == "append" and obj.get("type") == "ok":
            self.latencies.append(obj["t1"] - obj["t0"])

    def close(self) -> None:
        try:
            last = {"op": "end", "p": self.name, "ops": self.ops} if self.record else None
            last = last or {"op": "summary", "latencies": self.latencies}
            append_line(self.path, json.dumps(last, separators=(",", ":")) + "\n", self.fd)
        finally:
            os.close(self.fd)


def encode_window(w: Window) -> list[list[Any]]:
    """The window compactly: ``[lo, hi]`` for a block of consecutive turn ids each stored as one
    contiguous, complete turn, ``[id, "kinds"]`` for any other run of one turn's events."""
    turns, kinds = w.turns, w.kinds
    width = len(TURN_KINDS)
    whole = len(turns) // width
    if whole and len(turns) % width == 0 and kinds == TURN_KINDS * whole:
        # the usual window: whole turns of consecutive ids; checked with C-speed slice compares
        firsts = turns[0::width]
        if all(turns[k::width] == firsts for k in range(1, width)) and firsts == tuple(
            range(firsts[0], firsts[0] + whole)
        ):
            return [[firsts[0], firsts[-1]]]
    out: list[list[Any]] = []
    i, n = 0, len(turns)
    while i < n:
        t = turns[i]
        j = i
        while j < n and turns[j] == t:
            j += 1
        run = kinds[i:j]
        if run == TURN_KINDS:
            if out and isinstance(out[-1][1], int) and out[-1][1] == t - 1:
                out[-1][1] = t
            else:
                out.append([t, t])
        else:
            out.append([t, run])
        i = j
    return out


def _connect(store: SessionStore, deadline: float) -> None:
    """Open the process's connection, retrying a store that is briefly unreachable."""
    while True:
        try:
            store.connect()
            return
        except ConnectionLost:
            if time.time() >= deadline:
                raise
            time.sleep(RECONNECT_S)


FINAL_READ_S = 30.0
"""How long the final read of the journal retries a store still recovering (a server the run
killed and restarted): a finished run is not thrown away for a connection refused at its end."""


def _final_read(p: StressParams, deadline: float) -> tuple[Any, Any]:
    """The store's journal and live turns after the run, retried like any connection."""
    while True:
        store: SessionStore = open_store(p.store)
        try:
            _connect(store, deadline)
            return store.journal(), store.live_ids()
        except ConnectionLost:
            if time.time() >= deadline:
                raise
            time.sleep(RECONNECT_S)
        finally:
            store.close()


def _guarded(target: Callable[..., None], path: Path, name: str, go: Any, failures: Any, *args: Any) -> None:
    """A process's body. It waits for the parent's go signal — the shared deadline, set once every
    process has started, so a slow start (a loaded machine) cannot eat the run — then runs
    ``target(*args, deadline)``. An unexpected exception is written to its history as a ``crash``
    line (the checker reports it) before the process exits 1: a dead process is never silent.
    A history it cannot write is one line put on ``failures`` for the parent, never a traceback.
    Ctrl-C is the parent's to handle (it kills every process it started): a terminal's SIGINT
    reaches the whole process group, and a writer must not print a traceback of its own. A parent
    killed by a signal it cannot handle takes the process with it (:func:`die_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = mp.parent_process()
    die_with_parent(parent.pid if parent is not None else None)
    try:
        while go.value == 0.0:
            time.sleep(0.001)
        target(*args, go.value)
    except Exception as exc:
        line = {"op": "crash", "p": name, "error": f"{type(exc).__name__}: {str(exc).strip()}"[:500]}
        try:
            if isinstance(exc, HistoryUnwritable):
                raise exc
            append_line(path, json.dumps(line) + "\n")
        except HistoryUnwritable as unwritable:
            failures.put(str(unwritable))
        os._exit(1)


def _append_until(
    store: Any, p: StressParams, op: str, who: tuple[int, int], deadline: float
) -> tuple[Any, dict[str, int]]:
    """One append, tried again while the lock is held, the store is busy or the connection was
    lost (its outcome then unknown: the journal says), until ``deadline``; what it returned (None
    when it never went through) and how often each obstacle was met."""
    tries = {"waits": 0, "busy": 0, "lost_conn": 0}
    while time.time() < deadline:  # an append still waiting at the deadline gives up
        try:
            return append_turn(store, p.locking, op, *who, p.max_turns, p.gap_ms / 1000.0), tries
        except LockHeld:
            tries["waits"] += 1
            time.sleep(LOCK_RETRY_S)
        except StoreBusy:
            tries["busy"] += 1
        except ConnectionLost:
            tries["lost_conn"] += 1
            time.sleep(RECONNECT_S)
    return None, tries


def _writer(p: StressParams, index: int, incarnation: int, path: Path, deadline: float) -> None:
    store = open_store(p.store)
    _connect(store, deadline)
    name = f"w{index}.{incarnation}"
    rec = Recorder(path, p.record, name)
    n = 0
    try:
        while time.time() < deadline:
            t0 = time.time()
            try:
                window = store.read_window()
            except ConnectionLost:
                rec.line(
                    {"op": "read", "p": name, "type": "fail", "t0": t0, "t1": time.time(), "lost_conn": 1}
                )
                time.sleep(RECONNECT_S)
                continue
            t1 = time.time()
            if p.record:
                rec.line(
                    {
                        "op": "read",
                        "p": name,
                        "type": "ok",
                        "t0": t0,
                        "t1": t1,
                        "v": window.version,
                        "w": encode_window(window),
                    }
                )
            op = f"{name}-{n}"
            t0 = time.time()
            done, tries = _append_until(store, p, op, (index, incarnation * 1_000_000 + n), deadline)
            line = {"op": "append", "p": name, "type": "ok", "id": op, "t0": t0, "t1": time.time()}
            if done is None:
                rec.line({**line, "type": "info" if tries["lost_conn"] else "fail", **tries})
                break
            rec.line({**line, "seq": done.seq, "turn": done.turn, "trig": done.triggered, **tries})
            n += 1
    finally:
        rec.close()
        store.close()


def _compactor(p: StressParams, incarnation: int, path: Path, deadline: float) -> None:
    store = open_store(p.store)
    _connect(store, deadline)
    name = f"{COMPACTOR}.{incarnation}"
    rec = Recorder(path, p.record, name)
    gap_s = p.gap_ms / 1000.0
    n = 0
    try:
        while time.time() < deadline:
            try:
                head = store.header()
            except ConnectionLost:
                rec.line({"op": "poll", "p": name, "type": "fail", "t0": time.time(), "t1": time.time(),
                          "lost_conn": 1})  # fmt: skip
                time.sleep(RECONNECT_S)
                continue
            if not head.pending:
                time.sleep(POLL_S)
                continue
            if not LOCKINGS[p.locking].blocks_appends_in_gap:
                wait = head.read_at + gap_s - time.time()
                if wait > 0:
                    time.sleep(min(wait, 0.005))
                    continue
            op = f"{name}-{n}"
            t0 = time.time()
            try:
                done = act(store, p.locking, op, head, p.max_turns, gap_s)
            except StoreBusy:
                rec.line({"op": "compact", "p": name, "type": "fail", "id": op, "t0": t0, "t1": time.time(),
                          "busy": 1})  # fmt: skip
                continue
            except ConnectionLost:
                rec.line({"op": "compact", "p": name, "type": "info", "id": op, "t0": t0, "t1": time.time(),
                          "lost_conn": 1})  # fmt: skip
                time.sleep(RECONNECT_S)
                n += 1
                continue
            rec.line(
                {
                    "op": "compact" if done.committed else "conflict",
                    "p": name,
                    "type": "ok",
                    "id": op,
                    "t0": t0,
                    "t1": time.time(),
                    "seq": done.seq,
                    "deleted": done.deleted,
                    "count_read": head.count_read,
                }
            )
            n += 1
    finally:
        rec.close()
        store.close()


def run_of(h: History) -> RawRun:
    """The run a history records, as the checker reads it (a live run and ``--check`` of its
    folder read the same files, so they give the same report)."""
    r = h.run
    check_locking(r.locking)
    params = StressParams(
        StoreSpec(r.store, ""), r.locking, r.writers, r.gap_ms, r.max_turns, r.seconds, r.seed
    )
    journal = tuple(
        JournalEntry(c.seq, c.id, c.kind, tuple(c.added), tuple(c.removed), c.count_read) for c in h.commits
    )
    return RawRun(
        params, h.records, journal, h.live, r.started, r.ended, tuple(r.kills), tuple(r.stuck), h.summaries,
        r.journal,
    )  # fmt: skip


def run_stress(p: StressParams, folder: Path, progress: Callable[[int, int], None] | None = None) -> RawRun:
    """Run the writers and the compactor against ``p.store`` for ``p.seconds``; history files go
    to ``folder``. Returns everything the checker (:mod:`sim.stress.history`) needs."""
    check_params(p)
    setup = open_store(p.store)  # a store that cannot be reached is refused before a file is made
    setup.setup()
    setup.close()
    folder.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("fork")
    rng = random.Random(p.seed)
    go = ctx.Value("d", 0.0, lock=False)  # the shared deadline; 0 until every process has started
    failures = ctx.SimpleQueue()  # one line per process that could not write its history
    gap_s = p.gap_ms / 1000.0
    incarnations: dict[str, int] = {}
    procs: dict[str, BaseProcess] = {}

    def start(role: str) -> None:
        k = incarnations.get(role, -1) + 1
        incarnations[role] = k
        path = folder / f"{role}.{k}.jsonl"
        append_line(path, b"")  # made before the process runs: a kill before its first line leaves a file
        if role == COMPACTOR:
            proc = ctx.Process(
                target=_guarded, args=(_compactor, path, f"{role}.{k}", go, failures, p, k, path), daemon=True
            )
        else:
            proc = ctx.Process(
                target=_guarded,
                args=(_writer, path, f"{role}.{k}", go, failures, p, int(role[1:]), k, path),
                daemon=True,
            )
        proc.start()
        procs[role] = proc

    roles = [f"w{i}" for i in range(p.writers)] + [COMPACTOR]
    for role in roles:
        start(role)
    started = time.time()
    deadline = started + p.seconds
    go.value = deadline
    # Kills land in the first 60 % of the run and every overdue one is done at once — past the
    # deadline too, so a loaded machine (a slow fork, a late wake-up) still gets all of them; the
    # victim is drawn among the processes still alive.
    kill_times = sorted(started + p.seconds * rng.uniform(0.1, 0.6) for _ in range(p.kills if p.kill else 0))
    killed: list[str] = []
    total_ms = int(p.seconds * 1000)
    try:
        while time.time() < deadline or kill_times:  # a kill a starved parent woke too late for is
            while kill_times and time.time() >= kill_times[0]:  # still delivered (at the deadline)
                kill_times.pop(0)
                alive = [role for role in roles if procs[role].pid is not None and procs[role].is_alive()]
                if not alive:
                    kill_times.clear()
                    break
                victim = rng.choice(alive)
                proc = procs[victim]
                os.kill(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]
                proc.join()
                killed.append(f"{victim}.{incarnations[victim]}")
                start(victim)
            if progress is not None:
                progress(min(total_ms, int((time.time() - started) * 1000)), total_ms)
            time.sleep(0.02)
        stuck = _join_or_kill(procs, deadline + max(2.0, 4 * gap_s * p.writers) + 1.0)
    finally:
        for proc in procs.values():
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.join()
    ended = time.time()
    if not failures.empty():
        lost = [failures.get() for _ in procs if not failures.empty()]
        more = f" (and {len(lost) - 1} more processes)" if len(lost) > 1 else ""
        raise HistoryUnwritable(f"{lost[0]}{more}; the history is incomplete, nothing was checked")
    if progress is not None:
        progress(total_ms, total_ms)
    _write_store_file(p, folder, (started, ended), killed, stuck)
    return run_of(read_history(folder))


def _join_or_kill(procs: dict[str, BaseProcess], hard: float) -> list[str]:
    """Wait for every process until ``hard`` (a wall-clock time); kill the ones still running
    then and name them: a writer stuck in its store is a finding, not a hang of the run."""
    stuck: list[str] = []
    for role, proc in procs.items():
        proc.join(timeout=max(0.0, hard - time.time()))
        if proc.is_alive() and proc.pid is not None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            stuck.append(role)
    return stuck


def _write_store_file(
    p: StressParams, folder: Path, span: tuple[float, float], killed: list[str], stuck: list[str]
) -> None:
    """The run's header, the store's journal and its live turns, read once every process ended."""
    started, ended = span
    journal, live = _final_read(p, time.time() + FINAL_READ_S)
    run = HistoryLine(
        format=FORMAT, version=VERSION, store=p.store.kind, locking=p.locking, max_turns=p.max_turns,
        writers=p.writers, gap_ms=p.gap_ms, seconds=p.seconds, seed=p.seed, started=started, ended=ended,
        kills=killed, stuck=stuck, ends=p.record,
    )  # fmt: skip
    commits = [CommitLine(seq=e.seq, id=e.op, kind=e.kind, added=list(e.added), removed=list(e.removed),
                          count_read=e.count_read) for e in journal]  # fmt: skip
    append_line(folder / STORE_FILE, store_lines(run, commits, list(live)))
