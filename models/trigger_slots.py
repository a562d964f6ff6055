"""Driving the trigger model slot by slot: arrival timing for the model, never a second copy of it.

:func:`drive_slots` steps a :class:`~turncheck.models.trigger.TriggerModel` through slots of
arrivals with the model's own actions; :func:`fast_slots` is the same run on plain integers, for
scenarios that run hundreds of thousands of slots, and a test holds the two equal on random
arrivals. The compaction arithmetic both use is the locking strategy's
(:meth:`~turncheck.models.locking.Locking.delete_count`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from turncheck.models.trigger import (
    APPEND,
    COMPACT,
    TICK,
    Action,
    TriggerModel,
    TriggerParams,
    TriggerState,
    locking_of,
)

_TICK: Action = (TICK,)
_COMPACT: Action = (COMPACT,)

# -- drivers: arrival timing for the model, without re-implementing it --------------------------


@dataclass(frozen=True)
class SlotRun:
    """What a slotted run observed: peak and final live turns, appends, acts, failed commits,
    the largest backlog of turns waiting for a blocked append, slot-waits summed over turns, and
    ``post_peak`` — the most live turns right after any compaction (0: none happened), the
    reading of seed 004 §9."""

    peak: int
    live: int
    appends: int
    compactions: int
    retries: int
    max_backlog: int
    waited_slots: int
    post_peak: int = 0


def drive_slots(model: TriggerModel, arrivals: Iterable[int]) -> SlotRun:
    """Step ``model`` through slots with the given arrival counts (each ≤ writers).

    Each slot after the first opens with the previous slot's end — ``tick``, then the
    compactor's act when it is due; then the slot's arrivals join a FIFO backlog and writers
    ``0, 1, …`` take turns from it while their append is enabled (a blocked append stays in the
    backlog: that is its wait). This is the reference semantics :func:`fast_slots` must equal,
    and the order of events the SimPy runner produces in slot mode.
    """
    (state,) = tuple(model.init_states())
    backlog = appends = compactions = retries = max_backlog = waited = post = 0
    for t, k in enumerate(arrivals):
        if t:
            state = model.step(state, _TICK)
            if TriggerState(*state).pending == 0:
                state = model.step(state, _COMPACT)
                after = TriggerState(*state)
                if after.pending == -1:
                    compactions += 1
                    post = max(post, after.live)
                else:
                    retries += 1
        backlog += k
        for w in range(model.config.writers):
            if backlog == 0:
                break
            if model.is_enabled(state, (APPEND, w)):
                before = TriggerState(*state).live
                state = model.step(state, (APPEND, w))
                if TriggerState(*state).live <= before:  # trimmed inside the append (G = 0, append-sync)
                    post = max(post, TriggerState(*state).live)
                backlog -= 1
                appends += 1
        max_backlog = max(max_backlog, backlog)
        waited += backlog
    end = TriggerState(*state)
    return SlotRun(end.peak, end.live, appends, compactions, retries, max_backlog, waited, post)


def fast_slots(config: TriggerParams, arrivals: Sequence[int]) -> SlotRun:
    """:func:`drive_slots` for an unbounded-turns model, as one tight integer loop.

    Same semantics, step for step (``tests/test_trigger.py`` compares the two on random runs for
    every strategy); it exists because the 200 000-slot tables call the model ~10⁶ times.
    """
    s = locking_of(config.locking)
    w_count, g, m = config.writers, config.gap, config.max_turns
    mutex, cas, sync = s.blocks_appends_in_gap, s.commit_needs_clean, s.trims_in_append
    deletes = s.delete_count
    live = peak = count = busy = 0
    pending = -1
    dirty = False
    backlog = appends = compactions = retries = max_backlog = waited = post = 0
    first = True
    for k in arrivals:
        if first:
            first = False
        else:  # the previous slot ends: tick, then the compactor when due
            if busy > 0:
                busy -= 1
            if pending > 0:
                pending -= 1
                if pending == 0:
                    if cas and dirty:
                        pending, count, dirty = g, live, False
                        retries += 1
                    else:
                        live -= deletes(live, count, m)
                        pending, count, dirty = -1, 0, False
                        compactions += 1
                        if live > post:
                            post = live
        backlog += k
        # appends of this slot: each writer at most once, while enabled
        for _ in range(backlog if backlog < w_count else w_count):
            if busy or (mutex and pending > 0):
                break
            live += 1
            backlog -= 1
            appends += 1
            if pending > 0:
                dirty = True
            elif live > m:
                if sync:
                    live, busy = m, g
                    post = m if m > post else post
                elif g == 0:
                    live = m
                    post = m if m > post else post
                else:
                    pending, count, dirty = g, live, False
            if live > peak:
                peak = live
        if backlog > max_backlog:
            max_backlog = backlog
        waited += backlog
    return SlotRun(peak, live, appends, compactions, retries, max_backlog, waited, post)
