"""Two real processes appending to one log through the ownership lock.

The lock is held per open, so concurrent writers take turns: each opens with ``wait`` (queueing
on the ``flock``), commits, and closes. Nothing is lost and no frames interleave: the file reads
back clean, with every turn of both writers, each writer's turns in its own order, and seqs
strictly increasing across the whole file (each opener continues from the log's last seq).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_store import make_turn

from benchmarks.store_lines import LineTurnLog
from turncheck.models.store import LogBusy, TurnLog, TurnStore

STORES = {"frames": TurnLog, "lines": LineTurnLog}
TURNS = 25


def _context() -> mp.context.BaseContext:
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def take_turns(fmt: str, path: str, writer: int, turns: int, start: mp.synchronize.Event) -> None:
    """Open, commit one turn, close — ``turns`` times, queueing on the lock."""
    cls = STORES[fmt]
    start.wait(10)
    for i in range(turns):
        with cls.open(path, wait=30, fsync="batch") as log:
            log.commit(make_turn(f"w{writer}", i, log.next_seq, calls=i % 3), turn_id=f"w{writer}-{i}")
        time.sleep(0.001)  # work between turns, outside the lock: the other writer gets its go


def hold_for_a_batch(fmt: str, path: str, writer: int, turns: int, start: mp.synchronize.Event) -> None:
    """Open once (waiting for the other owner), commit a whole batch, close."""
    cls = STORES[fmt]
    start.wait(10)
    with cls.open(path, wait=30, fsync="batch") as log:
        for i in range(turns):
            log.commit(make_turn(f"w{writer}", i, log.next_seq, calls=1), turn_id=f"w{writer}-{i}")


def try_without_waiting(fmt: str, path: str, out: mp.queues.Queue) -> None:
    try:
        STORES[fmt].open(path).close()
        out.put("opened")
    except LogBusy as exc:
        out.put(str(exc))


def check_log(cls: type[TurnStore], path: Path, writers: int, turns: int) -> list[str]:
    with cls.open(path, readonly=True) as log:
        assert log.recovery.clean, log.recovery.summary()
        ids = log.turn_ids()
        assert len(ids) == writers * turns
        for w in range(writers):
            assert [i for i in ids if i.startswith(f"w{w}-")] == [f"w{w}-{i}" for i in range(turns)]
        seqs = [e.seq for e in log.events()]
        assert seqs == sorted(set(seqs))
        for t in log.turns():
            calls = len(t.events) // 2 - 1
            assert t.events == tuple(make_turn(t.session, t.turn, t.events[0].seq, calls=calls))
        return [i.split("-")[0] for i in ids]


def race_two_writers(tmp_path: Path, fmt: str, target: Callable[..., None]) -> Path:
    """A fresh log and two real processes running ``target`` against it, released together;
    both must exit cleanly. Returns the log's path."""
    path = tmp_path / "log"
    STORES[fmt].open(path, create=True).close()
    ctx = _context()
    start = ctx.Event()
    procs = [ctx.Process(target=target, args=(fmt, str(path), w, TURNS, start)) for w in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return path


@pytest.mark.parametrize("fmt", STORES)
def test_two_processes_taking_turns_lose_nothing(tmp_path: Path, fmt: str) -> None:
    path = race_two_writers(tmp_path, fmt, take_turns)
    check_log(STORES[fmt], path, 2, TURNS)


@pytest.mark.parametrize("fmt", STORES)
def test_one_process_holds_the_log_for_a_batch_while_the_other_waits(tmp_path: Path, fmt: str) -> None:
    path = race_two_writers(tmp_path, fmt, hold_for_a_batch)
    owners = check_log(STORES[fmt], path, 2, TURNS)
    assert owners in (["w0"] * TURNS + ["w1"] * TURNS, ["w1"] * TURNS + ["w0"] * TURNS)  # one batch each


@pytest.mark.parametrize("fmt", STORES)
def test_a_second_process_is_refused_while_the_owner_is_open(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "log"
    ctx = _context()
    out = ctx.Queue()
    with STORES[fmt].open(path, create=True) as owner:
        owner.commit(make_turn("s", 0, 0))
        p = ctx.Process(target=try_without_waiting, args=(fmt, str(path), out))
        p.start()
        message = out.get(timeout=30)
        p.join(30)
    assert "already open by another owner" in message and "\n" not in message
    p = ctx.Process(target=try_without_waiting, args=(fmt, str(path), out))
    p.start()
    assert out.get(timeout=30) == "opened"
    p.join(30)
