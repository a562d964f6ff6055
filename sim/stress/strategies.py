"""The five locking strategies as real code over the session-store contract.

Same meaning as :mod:`turncheck.models.locking`, with the gap in wall-clock seconds:

* the **read**: the trigger is evaluated inside every append's transaction — after inserting
  the turn it counts live turns, and when the count exceeds ``maxTurns`` and no compaction is
  pending it records the read in the session header (``pending``, ``count_read``,
  ``read_version``, ``read_at``) in the same commit;
* the **gap**: the compactor process acts once ``read_at + gap`` has passed;
* the **act**: ``none`` deletes ``count_read − maxTurns``; ``trim-to`` deletes ``live − maxTurns``
  counted inside the act's own locked transaction; ``mutex`` does the same as ``none`` but the
  pending read *is* a lock — appends refuse to go on while it is held (they wait and retry), and
  the compactor spends the gap inside ``BEGIN IMMEDIATE``/``FOR UPDATE``; ``cas`` commits its delete
  with ``UPDATE … WHERE version = read_version`` and on conflict re-reads (a new count, version
  and gap); ``append-sync`` never hands anything to the compactor: the appending transaction
  itself deletes ``live − maxTurns`` and keeps the store locked for the gap before committing,
  so the new turn becomes visible already trimmed.

Append and act return small frozen records of what happened; :mod:`sim.stress.runner` times and
records them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from turncheck.models.errors import BadParameter
from turncheck.models.locking import LOCKING_NAMES, LOCKINGS
from turncheck.models.session_store import SessionHeader, SessionStore

APPEND, COMPACT, REREAD = "append", "compact", "reread"


class LockHeld(Exception):
    """``mutex``: a compaction holds the session; the append must wait and try again."""


@dataclass(frozen=True)
class AppendDone:
    """A committed append: its commit sequence number, turn id, and whether it read the count."""

    seq: int
    turn: int
    triggered: bool
    trimmed: int


@dataclass(frozen=True)
class ActDone:
    """A compactor step: ``committed`` (the delete) or a ``cas`` conflict (``seq`` of the re-read)."""

    seq: int
    committed: bool
    deleted: int


def check_locking(name: str) -> str:
    if name not in LOCKING_NAMES:
        raise BadParameter(f"parameter locking: {name!r} is not one of {', '.join(LOCKING_NAMES)}")
    return name


def append_turn(
    store: SessionStore, strategy: str, op: str, writer: int, n: int, max_turns: int, gap_s: float
) -> AppendDone:
    """One whole turn appended under ``strategy``; raises :class:`LockHeld` under ``mutex`` while a
    compaction is pending (nothing written)."""
    rule = LOCKINGS[strategy]
    sync = rule.trims_in_append
    with store.write(op, APPEND, lock=True) as tx:
        head = tx.header()
        if rule.blocks_appends_in_gap and head.pending:
            raise LockHeld()
        turn = tx.append(writer, n)
        live = tx.count()
        triggered = live > max_turns and not head.pending
        trimmed = 0
        new = head
        if triggered and sync:
            trimmed = len(tx.delete_oldest(live - max_turns))
            if gap_s > 0:
                time.sleep(gap_s)  # the trim takes the gap, the store stays locked
        elif triggered:
            new = SessionHeader(head.version, True, live, head.version + 1, time.time())
        seq = tx.commit_header(new)
        assert seq is not None
    return AppendDone(seq, turn, triggered, trimmed)


def act(
    store: SessionStore, strategy: str, op: str, head: SessionHeader, max_turns: int, gap_s: float
) -> ActDone:
    """The compactor's act on the pending read ``head`` (already seen as due, except ``mutex``,
    which takes the lock first and spends the rest of the gap holding it)."""
    idle = SessionHeader()
    rule = LOCKINGS[strategy]
    if rule.commit_needs_clean:
        with store.write(op, COMPACT, lock=False, count_read=head.count_read) as tx:
            seq = tx.commit_header(idle, expect_version=head.read_version)
            if seq is not None:
                deleted = len(tx.delete_oldest(head.count_read - max_turns))
                return ActDone(seq, True, deleted)
        # conflict: re-read the count and the version, and wait another gap
        with store.write(op, REREAD, lock=True) as tx:
            now = tx.header()
            live = tx.count()
            seq = tx.commit_header(SessionHeader(0, True, live, now.version + 1, time.time()))
            assert seq is not None
        return ActDone(seq, False, 0)
    with store.write(op, COMPACT, lock=True, count_read=head.count_read) as tx:
        if rule.blocks_appends_in_gap:
            wait = head.read_at + gap_s - time.time()
            if wait > 0:
                time.sleep(wait)
        if rule.trims_to:
            n = tx.count() - max_turns
        else:
            n = head.count_read - max_turns
        deleted = len(tx.delete_oldest(n))
        seq = tx.commit_header(idle)
        assert seq is not None
    return ActDone(seq, True, deleted)
