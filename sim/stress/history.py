"""Check a stress run's history: the exact peak, the model's bound, and nothing lost or torn.

The store's journal is the committed history in commit order (one entry per committed write,
written in the same transaction). Replaying it gives the live turns after every commit, hence
the **exact** peak — not a sample. Against it the checker holds:

* **peak** ≤ the strategy's checked bound (:meth:`Locking.checked_bound`: ``mutex`` M+1,
  ``append-sync`` M, ``trim-to`` M+A·G, ``none``/``cas`` the trigger's own promise M), where
  ``A·G`` — turns that can land in one gap — is measured: one more than the most appends
  committed between a trigger read and its act. ``bound`` is the model's worst case
  (:func:`worst_case_peak`) at that ``A·G``, with ``G = 1`` gap;
* **lost**: an acknowledged append whose commit is not in the journal, or whose turn is neither
  live at the end nor removed by a journaled compaction; and the store's final live turns must
  equal the replay (a turn vanishing without a compaction is lost too);
* **over-deletion**: a compaction removing more than its rule says (``count_read − M``, or
  ``live − M`` at commit under ``trim-to``) or anything but the oldest live turns;
* every **read window** equals the live turns at its snapshot version, each turn's events are
  contiguous (no interleaving) and complete in order (no orphaned RESULT).

A broken invariant comes with the shortest slice of the journal that shows it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from typing import Any

from turncheck.models.locking import locking, worst_case_peak
from turncheck.models.session_store import JournalEntry
from turncheck.sim.stress.runner import RawRun
from turncheck.sim.stress.strategies import APPEND, COMPACT, REREAD

SLICE_MAX = 40


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name, a one-line reason and the journal slice showing it."""

    invariant: str
    reason: str
    slice: tuple[str, ...]


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


def _describe(e: JournalEntry, live_after: int) -> str:
    what = e.kind
    if e.added:
        what += f" +turn {','.join(map(str, e.added))}"
    if e.removed:
        what += f" −{len(e.removed)} (turns {e.removed[0]}..{e.removed[-1]})"
    if e.kind == COMPACT:
        what += f" count_read={e.count_read}"
    return f"seq {e.seq} {e.op}: {what} → live {live_after}"


def _expand(window: list[list[Any]]) -> tuple[list[int], list[tuple[int, str]]]:
    """Turn ids in window order (one per run) and the malformed runs found (id, kinds)."""
    ids: list[int] = []
    bad: list[tuple[int, str]] = []
    for a, b in window:
        if isinstance(b, int):
            ids.extend(range(a, b + 1))
        else:
            ids.append(a)
            bad.append((a, b))
    return ids, bad


def check_run(run: RawRun) -> StressReport:
    p = run.params
    m = p.max_turns
    strategy = locking(p.locking)
    journal = run.journal
    violations: list[Violation] = []

    # -- replay the committed history --------------------------------------------------------
    live: deque[int] = deque()
    order: list[int] = []  # every added turn, in commit order
    lo_at: list[int] = [0]  # per seq: live turns = order[lo_at[s]:hi_at[s]]
    hi_at: list[int] = [0]
    seqs: list[int] = [0]
    counts: list[int] = [0]
    removed_by: dict[int, int] = {}
    lo = 0
    peak = peak_seq = 0
    pending = False
    in_gap = max_gap = 0
    first_over: int | None = None
    over_deleted = 0
    for idx, e in enumerate(journal):
        if e.seq != (journal[idx - 1].seq + 1 if idx else 1):
            violations.append(
                Violation("journal", f"commit sequence jumps to {e.seq}", (f"seq {e.seq} {e.op}",))
            )
        before = len(live)
        for t in e.removed:
            if not live or live[0] != t:
                violations.append(
                    Violation(
                        "over-deletion",
                        f"{e.op} removed turn {t}, which is not the oldest live turn",
                        (_describe(e, before),),
                    )
                )
                over_deleted += 1
                if t in live:
                    live.remove(t)
                continue
            live.popleft()
            lo += 1
            removed_by[t] = e.seq
        if e.removed:
            if e.kind == COMPACT:
                rule = before - m if strategy.trims_to else e.count_read - m
            else:  # append-sync trims inside the append: to M, counting the new turn
                rule = before + len(e.added) - m
            if len(e.removed) > max(0, rule):
                over_deleted += len(e.removed) - max(0, rule)
                violations.append(
                    Violation(
                        "over-deletion",
                        f"{e.op} removed {len(e.removed)} turns, its rule allows {max(0, rule)}",
                        (_describe(e, before - len(e.removed) + len(e.added)),),
                    )
                )
        for t in e.added:
            live.append(t)
            order.append(t)
        n = len(live)
        if e.kind == APPEND:
            if pending:
                in_gap += 1
            elif n > m and not strategy.trims_in_append:
                pending, in_gap = True, 0
        elif e.kind == COMPACT:
            max_gap = max(max_gap, in_gap)
            pending, in_gap = False, 0
        elif e.kind == REREAD:
            max_gap = max(max_gap, in_gap)
            in_gap = 0
        if n > peak:
            peak, peak_seq = n, e.seq
        seqs.append(e.seq)
        lo_at.append(lo)
        hi_at.append(len(order))
        counts.append(n)
    if pending:
        max_gap = max(max_gap, in_gap)
    turns_per_gap = max_gap + 1
    bound = worst_case_peak(turns_per_gap, 1 if p.gap_ms > 0 else 0, m, p.locking)
    checked = strategy.checked_bound(turns_per_gap, 1 if p.gap_ms > 0 else 0, m)
    live_counts = dict(zip(seqs, counts, strict=True))

    if peak > checked:
        first_over = next(s for s, c in zip(seqs, counts, strict=True) if c > checked)
        # the slice: from the last commit at or below maxTurns before the first excess, to it
        start = max(i for i, (s, c) in enumerate(zip(seqs, counts, strict=True)) if s < first_over and c <= m)
        end = seqs.index(first_over)
        lines = tuple(_describe(journal[i - 1], counts[i]) for i in range(max(start, 1), end + 1))
        if len(lines) > SLICE_MAX:
            lines = lines[:2] + (f"… {len(lines) - SLICE_MAX + 2} commits …",) + lines[-(SLICE_MAX - 3) :]
        violations.append(
            Violation(
                "bounded-peak-turns",
                f"live turns reach {counts[end]} at seq {first_over} (peak {peak} at seq {peak_seq}); "
                f"{p.locking} is held to {checked}",
                lines,
            )
        )

    # -- acknowledgements: nothing acknowledged lost -------------------------------------------
    by_seq = {e.seq: e for e in journal}
    final = set(run.live)
    replayed = set(live)
    lost = 0
    appends = [r for r in run.records if r.get("op") == "append"]
    acked = [r for r in appends if r.get("ok")]
    for r in acked:
        e = by_seq.get(r["seq"])
        turn = r["turn"]
        if e is None or e.op != r["id"] or turn not in e.added:
            lost += 1
            violations.append(
                Violation(
                    "lost",
                    f"{r['id']} was acknowledged (turn {turn}, seq {r['seq']}) "
                    "but that commit is not in the store's history",
                    (),
                )
            )
        elif turn not in final and turn not in removed_by:
            lost += 1
            violations.append(
                Violation(
                    "lost",
                    f"turn {turn} ({r['id']}) was acknowledged and no compaction "
                    "deleted it, but it is gone from the store",
                    (_describe(e, live_counts[e.seq]),),
                )
            )
    vanished = replayed - final
    extra = final - replayed
    if vanished:
        lost += len(vanished - {r["turn"] for r in acked})
        violations.append(
            Violation(
                "lost",
                f"{len(vanished)} turns live in the committed history are missing "
                f"from the store (e.g. turn {min(vanished)})",
                (),
            )
        )
    if extra:
        violations.append(
            Violation(
                "journal",
                f"{len(extra)} turns are in the store but in no journaled commit (e.g. turn {min(extra)})",
                (),
            )
        )

    # -- read windows -------------------------------------------------------------------------
    bad_reads = 0
    reads = [r for r in run.records if r.get("op") == "read" and "w" in r]
    for r in reads:
        ids, bad = _expand(r["w"])
        v = r["v"]
        i = bisect_right(seqs, v) - 1
        expected = order[lo_at[i] : hi_at[i]]
        problems = [f"turn {t} stored as {k!r}" for t, k in bad]
        if len(set(ids)) != len(ids):
            problems.append("a turn's events are interleaved with another turn's")
        if ids != expected and not bad:
            problems.append(f"saw {len(ids)} turns, the history has {len(expected)} live at version {v}")
        if any("R" in k and "C" not in k.split("R")[0] for _, k in bad):
            problems.append("an orphaned RESULT (its CALL is not in the window)")
        if problems:
            bad_reads += 1
            if bad_reads <= 3:
                violations.append(
                    Violation("read-window", f"{r['p']} read at version {v}: {'; '.join(problems)}", ())
                )

    if not acked and not run.summaries and not any(e.kind == APPEND for e in journal):
        violations.append(
            Violation("no-progress", "no append was acknowledged: the run measured nothing", ())
        )

    # -- processes that died of an error (not a kill): never silent -------------------------
    for r in run.records:
        if r.get("op") == "crash":
            violations.append(Violation("process-crashed", f"{r['p']} died: {r['error']}", ()))

    # -- figures --------------------------------------------------------------------------------
    latencies = sorted(r["t1"] - r["t0"] for r in acked)
    for s in run.summaries:
        latencies.extend(s.get("latencies", ()))
    latencies.sort()
    compactions = sum(1 for e in journal if e.kind == COMPACT)
    conflicts = sum(1 for e in journal if e.kind == REREAD)
    busy = sum(int(r.get("busy", 0)) for r in run.records)
    waits = sum(int(r.get("waits", 0)) for r in appends)
    n_appends = len(acked) if acked else len(latencies)
    elapsed = max(1e-9, min(run.ended - run.started, p.seconds))
    return StressReport(
        store=p.store.kind,
        locking=p.locking,
        writers=p.writers,
        gap_ms=p.gap_ms,
        max_turns=m,
        seconds=p.seconds,
        seed=p.seed,
        peak=peak,
        bound=bound,
        checked_bound=checked,
        turns_per_gap=turns_per_gap,
        lost=lost,
        over_deleted=over_deleted,
        bad_reads=bad_reads,
        appends=n_appends,
        compactions=compactions,
        conflicts=conflicts,
        reads=len(reads),
        throughput=round(n_appends / elapsed, 1),
        p50_ms=round(1000 * _quantile(latencies, 0.5), 2),
        p99_ms=round(1000 * _quantile(latencies, 0.99), 2),
        retries=conflicts + busy,
        lock_waits=waits,
        busy_errors=busy,
        lost_connections=sum(int(r.get("lost_conn", 0)) for r in run.records),
        kills=run.kills,
        stuck=run.stuck,
        violations=tuple(violations),
    )
