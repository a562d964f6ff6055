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
from turncheck.sim.stress.history import check_run
from turncheck.sim.stress.runner import RawRun, StressParams
from turncheck.sim.stress.stores import StoreSpec


def append(seq: int, op: str, turn: int) -> JournalEntry:
    return JournalEntry(seq, op, "append", (turn,), ())


def compact(seq: int, op: str, removed: tuple[int, ...], count_read: int) -> JournalEntry:
    return JournalEntry(seq, op, "compact", (), removed, count_read)


def ack(op: str, seq: int, turn: int) -> dict[str, Any]:
    """An acknowledged append, as :meth:`Recorder.append` writes it."""
    return {"op": "append", "p": op.split("-")[0], "id": op, "t0": 0.0, "t1": 0.001, "ok": True, "seq": seq,
            "turn": turn, "trig": False, "waits": 0, "busy": 0, "lost_conn": 0}  # fmt: skip


def gave_up(op: str) -> dict[str, Any]:
    """An append whose outcome the client never learned (the connection dropped, then the deadline)."""
    return {"op": "append", "p": op.split("-")[0], "id": op, "t0": 0.0, "t1": 0.001, "ok": False, "waits": 0,
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
    says: str = ""


def _appends(n: int, first: int = 1) -> tuple[JournalEntry, ...]:
    return tuple(append(i, f"w0.0-{i}", i) for i in range(first, first + n))


def _acks(n: int, first: int = 1) -> tuple[dict[str, Any], ...]:
    return tuple(ack(f"w0.0-{i}", i, i) for i in range(first, first + n))


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
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_checker_names_each_anomaly(case: Case) -> None:
    p = StressParams(StoreSpec("sqlite", "x"), case.locking, writers=1, gap_ms=1, max_turns=case.max_turns,
                     seconds=1)  # fmt: skip
    report = check_run(RawRun(p, case.records, case.journal, case.live, 0.0, 1.0))
    assert {v.invariant for v in report.violations} == case.invariants, report.violations
    assert (report.lost, report.over_deleted) == (case.lost, case.over_deleted)
    assert case.says in " | ".join(v.reason for v in report.violations)
