"""The stress checker on hand-built histories: one row per anomaly, each one the checker must name.

Each row is a journal (the store's commits, as :class:`JournalEntry`) and the processes' records
(the JSON lines ``turncheck stress`` writes), built by hand in the format the runner records,
with the invariants the checker must report — exactly those — and its counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from turncheck.models.session_store import JournalEntry
from turncheck.sim.stress import history
from turncheck.sim.stress.history import READS_LISTED, Replay, Violation, check_run, replay
from turncheck.sim.stress.runner import RawRun, StressParams
from turncheck.sim.stress.stores import StoreSpec


def append(seq: int, op: str, turn: int) -> JournalEntry:
    return JournalEntry(seq, op, "append", (turn,), ())


def compact(seq: int, op: str, removed: tuple[int, ...], count_read: int) -> JournalEntry:
    return JournalEntry(seq, op, "compact", (), removed, count_read)


def ack(op: str, seq: int, turn: int) -> dict[str, Any]:
    """An acknowledged append, as :meth:`Recorder.append` writes it."""
    return {"op": "append", "p": op.split("-")[0], "id": op, "t0": 0.0, "t1": 0.001, "type": "ok", "seq": seq,
            "turn": turn, "trig": False, "waits": 0, "busy": 0, "lost_conn": 0}  # fmt: skip


def gave_up(op: str) -> dict[str, Any]:
    """An append whose outcome the client never learned (the connection dropped, then the deadline)."""
    return {"op": "append", "p": op.split("-")[0], "id": op, "t0": 0.0, "t1": 0.001, "type": "info", "waits": 0,
            "busy": 0, "lost_conn": 1}  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    locking: str
    max_turns: int
    journal: tuple[JournalEntry, ...]
    live: tuple[int, ...]
    records: tuple[dict[str, Any], ...]
    invariants: frozenset[str]
    lost: int = 0
    over_deleted: int = 0
    bad_reads: int = 0
    says: str = ""


def _appends(n: int, first: int = 1) -> tuple[JournalEntry, ...]:
    return tuple(append(i, f"w0.0-{i}", i) for i in range(first, first + n))


def _acks(n: int, first: int = 1) -> tuple[dict[str, Any], ...]:
    return tuple(ack(f"w0.0-{i}", i, i) for i in range(first, first + n))


def _torn_read(version: int) -> dict[str, Any]:
    return {
        "op": "read",
        "p": "w1.0",
        "t0": 0.0,
        "t1": 0.001,
        "v": version,
        "w": [[1, "UC"], [2, 2], [1, "RA"]],
    }


CASES = (
    Case(
        "an operation committed twice",  # a retry after a lost connection whose first try had committed
        "none", 8,
        (append(1, "w0.0-0", 1), append(2, "w0.0-1", 2), append(3, "w0.0-1", 3)),
        (1, 2, 3),
        (ack("w0.0-0", 1, 1), ack("w0.0-1", 3, 3)),
        frozenset({"duplicated"}),
        says="w0.0-1 was committed 2 times (seq 2, 3)",
    ),
    Case(
        # M=2 under none: the read at seq 10 counts 3 live turns, but a compactor still holding the
        # count 6 it read at seq 8 deletes 6 − 2 = 4: every live turn, the two newest among them
        "a compaction on a stale count deletes the newest turns",
        "none", 2,
        _appends(6) + (compact(7, "c.0-0", (1,), 3), append(8, "w0.0-7", 7), compact(9, "c.1-0", (2, 3, 4, 5), 6),
                       append(10, "w0.0-8", 8), append(11, "w0.0-9", 9), compact(12, "c.0-1", (6, 7, 8, 9), 6)),
        (),
        _acks(6) + (ack("w0.0-7", 8, 7), ack("w0.0-8", 10, 8), ack("w0.0-9", 11, 9)),
        frozenset({"bounded-peak-turns", "over-deletion"}),
        over_deleted=3,
        says="c.0-1 removed 4 turns, its rule allows 1",
    ),
    Case(
        "an acknowledgement lost together with its commit",  # the client saw ok; the store has no trace
        "none", 8,
        (append(1, "w0.0-1", 1), append(2, "w1.0-1", 2)),
        (1, 2),
        (ack("w0.0-1", 1, 1), ack("w0.0-2", 2, 2), ack("w1.0-1", 2, 2)),
        frozenset({"lost"}),
        lost=1,
        says="w0.0-2 was acknowledged (turn 2, seq 2) but that commit is not in the store's history",
    ),
    Case(
        "a commit without an acknowledgement is indeterminate, not lost",
        "none", 8,
        _appends(3),
        (1, 2, 3),
        (ack("w0.0-1", 1, 1), gave_up("w0.0-2"), ack("w0.0-3", 3, 3)),
        frozenset(),
    ),
    Case(
        "a turn added by two commits",
        "none", 8,
        (append(1, "w0.0-1", 1), append(2, "w1.0-1", 1)),
        (1,),
        (ack("w0.0-1", 1, 1), ack("w1.0-1", 2, 1)),
        frozenset({"duplicated"}),
        says="turn 1 was added 2 times (seq 1, 2)",
    ),
    Case(
        "a compaction with no read outstanding acts on a count already acted on",
        "mutex", 2,
        _appends(3) + (compact(4, "c.0-0", (1,), 3), compact(5, "c.0-1", (2,), 3)),
        (3,),
        _acks(3),
        frozenset({"over-deletion"}),
        over_deleted=1,
        says="c.0-1 removed 1 turns, its rule allows 0 (it acted on count_read=3; no read outstanding)",
    ),
    Case(
        "trim-to deletes live − M at commit, whatever count it read",
        "trim-to", 2,
        _appends(5) + (compact(6, "c.0-0", (1, 2, 3), 9),),
        (4, 5),
        _acks(5),
        frozenset(),  # and its peak 5 is within M + A·G, A·G = 3 measured (2 appends in the gap)
    ),
    Case(
        "append-sync trims inside the append, down to M counting its own turn",
        "append-sync", 2,
        _appends(2) + (JournalEntry(3, "w0.0-3", "append", (3,), (1,)), JournalEntry(4, "w0.0-4", "append", (4,), (2, 3))),
        (4,),
        _acks(2) + (ack("w0.0-3", 3, 3), ack("w0.0-4", 4, 4)),
        frozenset({"over-deletion"}),
        over_deleted=1,
        says="w0.0-4 removed 2 turns, its rule allows 1",
    ),
    Case(
        "every torn read is counted, three are listed",
        "none", 8,
        _appends(2),
        (1, 2),
        _acks(2) + tuple(_torn_read(2) for _ in range(5)),
        frozenset({"read-window"}),
        bad_reads=5,
        says="interleaved",
    ),
)  # fmt: skip


def _run(case: Case) -> RawRun:
    p = StressParams(StoreSpec("sqlite", "x"), case.locking, writers=1, gap_ms=1, max_turns=case.max_turns,
                     seconds=1)  # fmt: skip
    return RawRun(p, case.records, case.journal, case.live, 0.0, 1.0)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_checker_names_each_anomaly(case: Case) -> None:
    report = check_run(_run(case))
    assert {v.invariant for v in report.violations} == case.invariants, report.violations
    assert (report.lost, report.over_deleted, report.bad_reads) == (
        case.lost,
        case.over_deleted,
        case.bad_reads,
    )
    assert sum(v.invariant == "read-window" for v in report.violations) == min(case.bad_reads, READS_LISTED)
    assert case.says in " | ".join(v.reason for v in report.violations)


def test_the_replay_gives_each_delete_the_count_the_history_shows_at_its_read() -> None:
    (stale,) = [c for c in CASES if c.name.startswith("a compaction on a stale count")]
    rp = replay(_run(stale))
    assert [(d.entry.op, d.count, d.entry.count_read) for d in rp.deletes] == [
        ("c.0-0", 3, 3), ("c.1-0", 6, 6), ("c.0-1", 3, 6),
    ]  # fmt: skip
    assert rp.uncounted == (False, False, False, False, True, True, True) + (False,) * 4 + (True, False)
    assert rp.turns_per_gap == 4 and rp.peak == 6 and rp.final == frozenset()


def test_an_anomaly_is_one_function_in_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def odd_turns(run: RawRun, rp: Replay) -> list[Violation]:
        return [Violation("odd", f"turn {t}", ()) for t in sorted(rp.final) if t % 2]

    monkeypatch.setattr(history, "ANOMALIES", (*history.ANOMALIES, odd_turns))
    report = check_run(_run(CASES[-1]))
    assert [v.reason for v in report.violations if v.invariant == "odd"] == ["turn 1"]
