"""Check a stress run's history: replay the store's commits, then one small function per anomaly.

The store's journal is the committed history in commit order (one entry per committed write,
written in the same transaction). :func:`replay` reads it once, with the processes' records,
into a :class:`Replay` — the live turns after every commit (hence the **exact** peak, not a
sample), every delete with the count its rule reads, the acknowledged appends, the read windows,
the crashes. Each anomaly is then a function ``(run, replay) → list[Violation]`` and
:data:`ANOMALIES` is their table (as Elle's checkers are): adding an anomaly is one function.

* :func:`peak_over_bound` — the peak ≤ the strategy's checked bound (:meth:`Locking.checked_bound`),
  where ``A·G`` — turns that can land in one gap — is measured: one more than the most appends
  committed between a read and its act, with ``G = 1`` gap (the report's ``bound`` is the model's
  worst case there);
* :func:`lost` — an acknowledged append whose commit is not in the journal, or whose turn is neither
  live at the end nor removed by a journaled delete; and the store's final live turns must equal
  the replay. A commit without an acknowledgement is indeterminate (the client never learned its
  outcome: a lost connection, a kill) — the journal settles it, it is not a loss;
* :func:`over_deletion` — a delete removing anything but the oldest live turns, or more than
  :meth:`Locking.delete_count` allows on the count the history shows at its read: a compaction
  acting on a stale count (one the history does not show at its read) deletes turns no count saw;
* :func:`duplicated` — an operation committed twice (a retry whose first try had committed), a turn
  added twice;
* :func:`stale_or_interleaved_read` — every read window equals the live turns at its snapshot
  version, each turn's events contiguous (no interleaving) and complete in order (no orphan RESULT);
* :func:`broken_journal`, :func:`no_progress`, :func:`crash` — a commit sequence with a gap or
  turns no commit added, a run that measured nothing, a process that died of an error.

A store without a journal (``RawRun.journaled`` false: a client's own store, whose history another
client recorded) has no commit order to replay: an acknowledged append must then be in the final
state, a turn stored once, every read window whole and contiguous; the peak and the deletes are
not checked.

A broken invariant comes with the shortest slice of the journal that shows it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turncheck.models.locking import locking
from turncheck.models.session_store import JournalEntry
from turncheck.sim.stress.runner import RawRun
from turncheck.sim.stress.strategies import APPEND, COMPACT, REREAD

SLICE_MAX = 40
READS_LISTED = 3  # a torn store tears many windows: all are counted, the first three shown


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name, a one-line reason, the journal slice showing it, and how many
    turns (lost, over-deleted) or reads it stands for."""

    invariant: str
    reason: str
    slice: tuple[str, ...]
    count: int = 1


@dataclass(frozen=True)
class Ack:
    """An append the client saw succeed: its operation, the commit and turn it was told, its latency."""

    op: str
    seq: int
    turn: int
    seconds: float


@dataclass(frozen=True)
class Read:
    """A read window: the turn ids in window order (one per run of a turn's events) at the snapshot
    ``version``, and the runs that are not one whole turn in order, as (turn, kinds)."""

    process: str
    version: int
    turns: tuple[int, ...]
    torn: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Delete:
    """A commit that removed turns (a compaction, or an append trimming itself) at commit ``index``:
    the live turns its rule sees at commit (before the removal, with the commit's own turn), the count
    it reads — the history's live count at the read a compaction acts on (None: no read outstanding),
    an append's own ``live`` — and the removed turns that were not the oldest live one."""

    index: int
    entry: JournalEntry
    live: int
    count: int | None
    not_oldest: tuple[int, ...]


@dataclass(frozen=True)
class Replay:
    """What the store's commit order and the operations imply.

    Invariant: index ``i`` of ``seqs``, ``live_after``, ``spans`` and ``uncounted`` is the state
    after the ``i``-th commit (0: the empty store); the live turn ids then are ``order[lo:hi]`` for
    ``(lo, hi) = spans[i]`` while every delete took the oldest turns; ``uncounted[i]``: commit ``i``
    is an append landing while a read is outstanding, its turn not in the count read.
    """

    journal: tuple[JournalEntry, ...]
    seqs: tuple[int, ...]
    live_after: tuple[int, ...]
    order: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    uncounted: tuple[bool, ...]
    final: frozenset[int]
    removed: frozenset[int]
    deletes: tuple[Delete, ...]
    turns_per_gap: int
    acks: tuple[Ack, ...]
    reads: tuple[Read, ...]
    crashes: tuple[tuple[str, str], ...]

    @property
    def peak(self) -> int:
        return max(self.live_after)

    def live_at(self, version: int) -> tuple[int, ...]:
        lo, hi = self.spans[bisect_right(self.seqs, version) - 1]
        return self.order[lo:hi]

    def describe(self, i: int) -> str:
        """Commit ``i`` in one line, with the live turns after it."""
        e = self.journal[i - 1]
        what = e.kind
        if e.added:
            what += f" +turn {','.join(map(str, e.added))}"
        if e.removed:
            what += f" −{len(e.removed)} (turns {e.removed[0]}..{e.removed[-1]})"
        if e.kind == COMPACT:
            what += f" count_read={e.count_read}"
        return f"seq {e.seq} {e.op}: {what} → live {self.live_after[i]}"


def _read(r: dict[str, Any]) -> Read:
    """A read record's compact window (:func:`encode_window`) as turn ids and torn runs."""
    turns: list[int] = []
    torn: list[tuple[int, str]] = []
    for a, b in r["w"]:
        if isinstance(b, int):
            turns.extend(range(a, b + 1))
        else:
            turns.append(a)
            torn.append((a, b))
    return Read(r["p"], r["v"], tuple(turns), tuple(torn))


def replay(run: RawRun) -> Replay:
    """Replay the journal in commit order, and gather the operations the checks read."""
    m = run.params.max_turns
    rule = locking(run.params.locking)
    live: deque[int] = deque()
    order: list[int] = []
    seqs, counts, spans, uncounted = [0], [0], [(0, 0)], [False]
    removed: set[int] = set()  # by a delete that took the oldest turn
    deletes: list[Delete] = []
    read: int | None = None  # the count of the read outstanding
    lo = in_gap = widest = 0
    for i, e in enumerate(run.journal, 1):
        before = len(live)
        not_oldest: list[int] = []
        for t in e.removed:
            if live and live[0] == t:
                live.popleft()
                lo += 1
                removed.add(t)
            else:
                not_oldest.append(t)
                if t in live:
                    live.remove(t)
        if e.removed:
            at_commit = before + len(e.added)
            count = read if e.kind == COMPACT else at_commit
            deletes.append(Delete(i, e, at_commit, count, tuple(not_oldest)))
        live.extend(e.added)
        order.extend(e.added)
        n = len(live)
        uncounted.append(e.kind == APPEND and read is not None)
        if uncounted[-1]:
            in_gap += 1
        elif e.kind == APPEND and n > m and not rule.trims_in_append:
            read, in_gap = n, 0
        elif e.kind in (COMPACT, REREAD):
            widest = max(widest, in_gap)
            read, in_gap = (n if e.kind == REREAD else None), 0
        seqs.append(e.seq)
        counts.append(n)
        spans.append((lo, len(order)))
    records = run.records
    return Replay(
        run.journal, tuple(seqs), tuple(counts), tuple(order), tuple(spans), tuple(uncounted), frozenset(live),
        frozenset(removed), tuple(deletes), max(widest, in_gap) + 1,
        tuple(Ack(r["id"], r["seq"], r["turn"], r["t1"] - r["t0"])
              for r in records if r.get("op") == "append" and r.get("type") == "ok"),
        tuple(_read(r) for r in records if r.get("op") == "read" and r.get("w") is not None),
        tuple((r["p"], r["error"]) for r in records if r.get("op") == "crash"),
    )  # fmt: skip


# -- the anomalies ------------------------------------------------------------------------------


def _checked_bound(run: RawRun, rp: Replay) -> int:
    p = run.params
    return locking(p.locking).checked_bound(rp.turns_per_gap, 1 if p.gap_ms > 0 else 0, p.max_turns)


def over_deletion(run: RawRun, rp: Replay) -> list[Violation]:
    """A delete taking other than the oldest live turns, or more than its rule allows."""
    m, rule = run.params.max_turns, locking(run.params.locking)
    out: list[Violation] = []
    for d in rp.deletes:
        e, where = d.entry, (rp.describe(d.index),)
        for t in d.not_oldest:
            out.append(
                Violation(
                    "over-deletion", f"{e.op} removed turn {t}, which is not the oldest live turn", where
                )
            )
        allowed = max(0, rule.delete_count(d.live, 0 if d.count is None else d.count, m))
        if len(e.removed) > allowed:
            reason = f"{e.op} removed {len(e.removed)} turns, its rule allows {allowed}"
            if e.kind == COMPACT and not rule.trims_to and d.count != e.count_read:
                seen = (
                    "no read outstanding"
                    if d.count is None
                    else f"the history has {d.count} live at its read"
                )
                reason += f" (it acted on count_read={e.count_read}; {seen})"
            out.append(Violation("over-deletion", reason, where, len(e.removed) - allowed))
    return out


def peak_over_bound(run: RawRun, rp: Replay) -> list[Violation]:
    """Live turns above the checked bound: the slice runs from the last commit at or below maxTurns
    before the first excess, to it."""
    checked = _checked_bound(run, rp)
    if rp.peak <= checked or not run.journaled:
        return []
    counts = rp.live_after
    first = next(i for i, c in enumerate(counts) if c > checked)
    start = max(i for i in range(first) if counts[i] <= run.params.max_turns)
    lines = tuple(rp.describe(i) for i in range(max(start, 1), first + 1))
    if len(lines) > SLICE_MAX:
        lines = lines[:2] + (f"… {len(lines) - SLICE_MAX + 2} commits …",) + lines[-(SLICE_MAX - 3) :]
    reason = (
        f"live turns reach {counts[first]} at seq {rp.seqs[first]} (peak {rp.peak} at seq "
        f"{rp.seqs[counts.index(rp.peak)]}); {run.params.locking} is held to {checked}"
    )
    return [Violation("bounded-peak-turns", reason, lines)]


def lost(run: RawRun, rp: Replay) -> list[Violation]:
    """An acknowledged append missing from the history or from the store, a committed turn gone."""
    index = {s: i for i, s in enumerate(rp.seqs)}
    final = set(run.live)
    out: list[Violation] = []
    if not run.journaled:
        return [
            Violation(
                "lost", f"turn {a.turn} ({a.op}) was acknowledged but is not in the store at the end", ()
            )
            for a in rp.acks
            if a.turn not in final
        ]
    for a in rp.acks:
        i = index.get(a.seq, 0)
        e = rp.journal[i - 1] if i else None
        if e is None or e.op != a.op or a.turn not in e.added:
            reason = f"{a.op} was acknowledged (turn {a.turn}, seq {a.seq}) but that commit is not in the store's history"
            out.append(Violation("lost", reason, ()))
        elif a.turn not in final and a.turn not in rp.removed:
            reason = f"turn {a.turn} ({a.op}) was acknowledged and no compaction deleted it, but it is gone from the store"
            out.append(Violation("lost", reason, (rp.describe(i),)))
    vanished = rp.final - final
    if vanished:  # the acknowledged among them are counted above
        reason = f"{len(vanished)} turns live in the committed history are missing from the store (e.g. turn {min(vanished)})"
        out.append(Violation("lost", reason, (), len(vanished - {a.turn for a in rp.acks})))
    return out


def broken_journal(run: RawRun, rp: Replay) -> list[Violation]:
    """A gap in the commit sequence, or turns in the store that no journaled commit added."""
    if not run.journaled:
        return []
    out = [
        Violation("journal", f"commit sequence jumps to {e.seq}", (f"seq {e.seq} {e.op}",))
        for prev, e in zip(rp.seqs[:-1], rp.journal, strict=True)
        if e.seq != prev + 1
    ]
    extra = set(run.live) - rp.final
    if extra:
        reason = f"{len(extra)} turns are in the store but in no journaled commit (e.g. turn {min(extra)})"
        out.append(Violation("journal", reason, ()))
    return out


def duplicated(run: RawRun, rp: Replay) -> list[Violation]:
    """An operation committed more than once (at-least-once retries), or a turn added by two commits."""
    commits: dict[str, list[int]] = {}
    adds: dict[int, list[int]] = {}
    for e in rp.journal:
        commits.setdefault(e.op, []).append(e.seq)
        for t in e.added:
            adds.setdefault(t, []).append(e.seq)
    twice = [(f"{op} was committed", s) for op, s in commits.items() if len(s) > 1]
    twice += [(f"turn {t} was added", s) for t, s in adds.items() if len(s) > 1]
    stored: dict[int, int] = {}
    for t in run.live:
        stored[t] = stored.get(t, 0) + 1
    return [
        Violation("duplicated", f"{what} {len(s)} times (seq {', '.join(map(str, s))})", ())
        for what, s in twice
    ] + [
        Violation("duplicated", f"turn {t} is stored {k} times at the end", ())
        for t, k in stored.items()
        if k > 1
    ]


def stale_or_interleaved_read(run: RawRun, rp: Replay) -> list[Violation]:
    """A read window other than the live turns at its version, torn, interleaved or orphaned."""
    out: list[Violation] = []
    for r in rp.reads:
        expected = rp.live_at(r.version)
        problems = [f"turn {t} stored as {k!r}" for t, k in r.torn]
        if len(set(r.turns)) != len(r.turns):
            problems.append("a turn's events are interleaved with another turn's")
        if run.journaled and r.turns != expected and not r.torn:
            problems.append(
                f"saw {len(r.turns)} turns, the history has {len(expected)} live at version {r.version}"
            )
        if any("R" in k and "C" not in k.split("R")[0] for _, k in r.torn):
            problems.append("an orphaned RESULT (its CALL is not in the window)")
        if problems:
            reason = f"{r.process} read at version {r.version}: {'; '.join(problems)}"
            out.append(Violation("read-window", reason, ()))
    return out


def no_progress(run: RawRun, rp: Replay) -> list[Violation]:
    """No append acknowledged, summarised or committed: the run measured nothing."""
    if rp.acks or run.summaries or any(e.kind == APPEND for e in rp.journal):
        return []
    return [Violation("no-progress", "no append was acknowledged: the run measured nothing", ())]


def crash(run: RawRun, rp: Replay) -> list[Violation]:
    """A process that died of an error (not a kill): never silent."""
    return [Violation("process-crashed", f"{who} died: {error}", ()) for who, error in rp.crashes]


Anomaly = Callable[[RawRun, Replay], list[Violation]]
ANOMALIES: tuple[Anomaly, ...] = (
    over_deletion, peak_over_bound, lost, broken_journal, duplicated, stale_or_interleaved_read, no_progress,
    crash,
)  # fmt: skip


# -- the report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StressReport:
    """The verdict and figures of one run (``peak``, ``bound``, ``lost`` are the issue's names)."""

    store: str
    locking: str
    writers: int
    gap_ms: float
    max_turns: int
    seconds: float
    seed: int
    peak: int
    bound: int | None
    checked_bound: int
    turns_per_gap: int
    lost: int
    over_deleted: int
    bad_reads: int
    appends: int
    compactions: int
    conflicts: int
    reads: int
    throughput: float
    p50_ms: float
    p99_ms: float
    retries: int
    lock_waits: int
    busy_errors: int
    lost_connections: int
    kills: tuple[str, ...]
    stuck: tuple[str, ...]
    journaled: bool
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "violations"}
        out["kills"], out["stuck"] = list(self.kills), list(self.stuck)
        out["verdict"] = "ok" if self.ok else "violated"
        out["violations"] = [
            {"invariant": v.invariant, "reason": v.reason, "slice": list(v.slice)} for v in self.violations
        ]
        return out


def _quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


def check_run(run: RawRun) -> StressReport:
    """Replay the run, run every anomaly of :data:`ANOMALIES` on it, and measure its figures."""
    p = run.params
    rp = replay(run)
    found = {anomaly: anomaly(run, rp) for anomaly in ANOMALIES}
    bad_reads = found[stale_or_interleaved_read]
    found[stale_or_interleaved_read] = bad_reads[:READS_LISTED]
    latencies = sorted(
        [a.seconds for a in rp.acks] + [x for s in run.summaries for x in s.get("latencies", ())]
    )
    compactions = sum(1 for e in run.journal if e.kind == COMPACT)
    conflicts = sum(1 for e in run.journal if e.kind == REREAD)
    busy = sum(int(r.get("busy", 0)) for r in run.records)
    n_appends = len(rp.acks) if rp.acks else len(latencies)
    # a client's header may give neither end nor seconds: the shorter of those it gives, or none
    elapsed = min((d for d in (run.ended - run.started, p.seconds) if d > 0), default=0.0)
    return StressReport(
        store=p.store.kind,
        locking=p.locking,
        writers=p.writers,
        gap_ms=p.gap_ms,
        max_turns=p.max_turns,
        seconds=p.seconds,
        seed=p.seed,
        peak=rp.peak,
        bound=locking(p.locking).worst_case_peak(rp.turns_per_gap, 1 if p.gap_ms > 0 else 0, p.max_turns),
        checked_bound=_checked_bound(run, rp),
        turns_per_gap=rp.turns_per_gap,
        lost=sum(v.count for v in found[lost]),
        over_deleted=sum(v.count for v in found[over_deletion]),
        bad_reads=len(bad_reads),
        appends=n_appends,
        compactions=compactions,
        conflicts=conflicts,
        reads=len(rp.reads),
        throughput=round(n_appends / elapsed, 1) if elapsed > 0 else 0.0,  # 0: no duration recorded
        p50_ms=round(1000 * _quantile(latencies, 0.5), 2),
        p99_ms=round(1000 * _quantile(latencies, 0.99), 2),
        retries=conflicts + busy,
        lock_waits=sum(int(r.get("waits", 0)) for r in run.records if r.get("op") == "append"),
        busy_errors=busy,
        lost_connections=sum(int(r.get("lost_conn", 0)) for r in run.records),
        kills=run.kills,
        stuck=run.stuck,
        journaled=run.journaled,
        violations=tuple(v for vs in found.values() for v in vs),
    )
