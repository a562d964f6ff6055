"""The compaction trigger as a protocol model: writers, ``TurnCountTrigger(maxTurns)``, a gap.

``W`` writers append whole turns to one session's log. Time is cut into slots; in a slot each
writer appends at most one turn (so at most ``A = W`` turns arrive per slot) and a ``tick``
ends the slot. The trigger is evaluated inside every append: when the append leaves
``live > maxTurns`` and no compaction is in flight, it reads the count ``c = live`` and hands the
work to the compactor, which acts ``G`` slot boundaries later — deleting the oldest
``c − maxTurns`` turns (or, under ``trim-to``, ``live − maxTurns`` computed at commit time).
Turns appended inside the gap were not counted by the read, so the peak exceeds ``maxTurns``.
With ``G = 0`` the act happens in the appending step itself. After an act the trigger is next
evaluated by the next append.

The locking strategy (:mod:`models.locking`) changes who may act when: ``mutex`` blocks appends
from the read to the act, ``append-sync`` trims inside the append and keeps the store locked for
the ``G`` slots the trim takes, ``cas`` fails its commit (and re-reads) when anything was appended
since the read. Its closed-form worst-case peak is derived in :mod:`models.locking`.

Actions, as JSON-scalar tuples: ``("append", w)`` writer ``w`` appends a turn; ``("tick",)`` the
slot ends; ``("compact",)`` the compactor acts — enabled only when due, and then the only action
(the act happens at the slot boundary, before anything else). States are small named tuples of
ints, hashable and immutable; writers are interchangeable, so :meth:`TriggerModel.canonical`
sorts their per-writer records.

Two drivers in :mod:`turncheck.models.trigger_slots` give the model arrival timing without
re-implementing it: ``drive_slots`` steps the model through per-slot arrival counts, and
``fast_slots`` is the same semantics as a tight integer loop for the 200 000-slot tables (a test keeps the two identical).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from turncheck.models.errors import BadParameter
from turncheck.models.invariants import BOUNDED_PEAK_TURNS, NO_UNCOUNTED_GAP_TURN, WITHIN_MAX_TURNS
from turncheck.models.locking import LOCKINGS, Locking, locking
from turncheck.models.protocol import (
    ClosedForm,
    FieldValue,
    Limit,
    Property,
    ProtocolModel,
    WindowItem,
    WindowPanel,
    field_text,
)
from turncheck.models.writer_tables import Action, WriterTables

TRIGGER_FIRES = "trigger-fires"
POST_COMPACTION = "post_compaction_turns"  # the metric: live turns right after a compaction
UNBOUNDED = -1  # turns left of a writer that never runs out

APPEND, TICK, COMPACT = "append", "tick", "compact"
_TICK: Action = (TICK,)
_COMPACT: Action = (COMPACT,)


class TriggerState(NamedTuple):
    """One moment of the protocol.

    A named tuple rather than a frozen dataclass: the explorer builds hundreds of thousands per
    second, and tuple construction and hashing are the cheapest immutable values Python has.

    ``writers`` holds, per writer, ``(appended in this slot: 0/1, turns left or -1)``;
    ``pending`` is -1 when the compactor is idle, else the slot boundaries left before it acts
    (0: due now); ``count_read`` is the count it read; ``dirty`` says a turn was appended since
    the read (what a ``cas`` commit checks); ``busy`` is the slots the store stays locked by a
    synchronous trim (``append-sync``); ``fired`` says the trigger has fired at least once.
    """

    live: int
    peak: int
    writers: tuple[tuple[int, int], ...]
    pending: int
    count_read: int
    dirty: bool
    busy: int
    fired: bool


_new = tuple.__new__  # builds a TriggerState from a tuple, without the NamedTuple constructor's frame


@dataclass(frozen=True)
class TriggerParams:
    """The configuration: writers ``W`` (= arrivals per slot ``A``), gap ``G``, ``maxTurns``,
    the locking strategy, and the turns each writer appends in all (0: unbounded)."""

    writers: int = 2
    gap: int = 1
    max_turns: int = 2
    locking: str = "none"
    turns: int = 4

    def __post_init__(self) -> None:
        if isinstance(self.writers, bool) or not isinstance(self.writers, int) or self.writers < 1:
            raise BadParameter(f"parameter writers must be an integer >= 1, got {self.writers!r}")
        if isinstance(self.gap, bool) or not isinstance(self.gap, int) or self.gap < 0:
            raise BadParameter(f"parameter gap must be an integer >= 0, got {self.gap!r}")
        if isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int) or self.max_turns < 1:
            raise BadParameter(f"parameter max_turns must be an integer >= 1, got {self.max_turns!r}")
        if isinstance(self.turns, bool) or not isinstance(self.turns, int) or self.turns < 0:
            raise BadParameter(f"parameter turns must be an integer >= 0 (0: unbounded), got {self.turns!r}")
        if self.locking not in LOCKINGS:
            raise BadParameter(f"parameter locking: {self.locking!r} is not one of {', '.join(LOCKINGS)}")


class TriggerModel(ProtocolModel[TriggerState, Action]):
    """``TurnCountTrigger(maxTurns)`` with a check-then-act gap under one locking strategy.

    Properties: ``bounded-peak-turns`` (always: live turns ≤ the strategy's declared bound, or
    ``maxTurns`` when it declares none) and ``trigger-fires`` (sometimes: the count exceeded
    ``maxTurns`` at least once — otherwise the run never exercised the trigger).
    """

    name = "trigger"

    def __init__(
        self, writers: int = 2, gap: int = 1, max_turns: int = 2, locking: str = "none", turns: int = 4
    ) -> None:
        p = TriggerParams(writers, gap, max_turns, locking, turns)
        self.config = p
        self.params: Mapping[str, Any] = {
            "writers": p.writers,
            "gap": p.gap,
            "max_turns": p.max_turns,
            "locking": p.locking,
            "turns": p.turns,
        }
        self.strategy: Locking = locking_of(p.locking)
        self.bound = self.strategy.checked_bound(p.writers, p.gap, p.max_turns)
        self._w = p.writers
        self._g = p.gap
        self._m = p.max_turns
        # the strategy's rule, read once: the hot paths below test plain attributes
        s = self.strategy
        self._blocks = s.blocks_appends_in_gap
        self._cas = s.commit_needs_clean
        self._sync = s.trims_in_append
        self._append_actions: tuple[Action, ...] = tuple((APPEND, w) for w in range(p.writers))
        self._tables = WriterTables(p.writers)

    # -- the protocol -------------------------------------------------------------------------

    def init_states(self) -> Iterator[TriggerState]:
        left = self.config.turns if self.config.turns > 0 else UNBOUNDED
        yield TriggerState(0, 0, ((0, left),) * self._w, -1, 0, False, 0, False)

    def can_append(self, state: TriggerState, w: int) -> bool:
        """Whether writer ``w`` may append now (the SimPy runner asks this on every arrival)."""
        used, left = state[2][w]
        pending = state[3]
        if used or left == 0 or state[6] or pending == 0:
            return False
        return not (pending > 0 and self._blocks)

    def is_enabled(self, state: TriggerState, action: Action) -> bool:
        """``action in actions(state)``, without building the list (the SimPy runner's hot path:
        :meth:`can_append` inlined, as every blocked writer asks again on every state change)."""
        verb = action[0]
        pending = state[3]
        if verb == APPEND:
            w = action[1]
            if not 0 <= w < self._w:
                return False
            used, left = state[2][w]
            return not (used or left == 0 or state[6] or pending == 0 or (pending > 0 and self._blocks))
        if verb == TICK:
            return pending != 0
        return verb == COMPACT and pending == 0

    def guard(self, action: Action) -> Callable[[TriggerState], bool]:
        """:meth:`is_enabled` for one action, specialized once: the SimPy runner's actors ask it
        on every wake-up, and a function of the state alone, closed over the writer's index and
        the strategy's rule, skips the verb dispatch (the same rule, field for field; a test
        compares the two on every explored state)."""
        verb = action[0]
        if verb == APPEND:
            w = action[1]
            if not 0 <= w < self._w:
                return _never
            if self._blocks:

                def may_append(state: TriggerState) -> bool:
                    used, left = state[2][w]  # no append while a compaction is in flight or due
                    return not (used or left == 0 or state[6] or state[3] >= 0)

            else:

                def may_append(state: TriggerState) -> bool:
                    used, left = state[2][w]
                    return not (used or left == 0 or state[6] or state[3] == 0)

            return may_append
        if verb == TICK:
            return _pending_not_due
        if verb == COMPACT:
            return _pending_due
        return _never

    def stepper(self, action: Action) -> Callable[[TriggerState], TriggerState | None]:
        """:meth:`step` for one action where it is enabled, ``None`` where it is not, specialized
        once: the SimPy runner's actors ask it on every wake-up and act on what it returns, and a
        function of the state alone — closed over the writer's index, its memo table and the
        strategy's branch — asks and steps in one call, with no verb dispatch (the same rules as
        :meth:`guard` and :meth:`step`, field for field; a test compares them on every explored
        state). An action the model does not have is never enabled: ``None``."""
        verb = action[0]
        m, g, blocks = self._m, self._g, self._blocks
        if verb == APPEND and type(action[1]) is int and 0 <= action[1] < self._w:
            w = action[1]
            seen, learn = self._tables.appended_by_id[w], self._tables.learn_appended
            sync = self._sync

            def append(state: TriggerState) -> TriggerState | None:
                live, peak, writers, pending, count, dirty, busy, fired = state
                hit = seen.get(id(writers))
                after = hit[1] if hit is not None else learn(writers, w)
                if after is None or busy or (pending >= 0 if blocks else pending == 0):
                    return None
                live += 1
                if pending > 0:
                    dirty = True
                elif live > m:  # the trigger fires (rare): the strategy's branch of :meth:`step`
                    fired = True
                    if sync:
                        live, busy = m, g  # trimmed before the new turn is visible
                    elif g == 0:
                        live = m  # read and act in the appending step
                    else:
                        pending, count, dirty = g, live, False
                if live > peak:
                    peak = live
                return _new(TriggerState, (live, peak, after, pending, count, dirty, busy, fired))

            return append
        if verb == TICK:
            ticked, learn_ticked = self._tables.ticked_by_id, self._tables.learn_ticked

            def tick(state: TriggerState) -> TriggerState | None:
                live, peak, writers, pending, count, dirty, busy, fired = state
                if pending == 0:  # the compactor acts first
                    return None
                hit = ticked.get(id(writers))
                after = hit[1] if hit is not None else learn_ticked(writers)
                if pending > 0:
                    pending -= 1
                if busy > 0:
                    busy -= 1
                else:
                    busy = 0
                return _new(TriggerState, (live, peak, after, pending, count, dirty, busy, fired))

            return tick
        if verb == COMPACT:
            cas, delete_count = self._cas, self.strategy.delete_count

            def compact(state: TriggerState) -> TriggerState | None:
                if state[3] != 0:  # not due: the usual answer, read off one field
                    return None
                live, peak, writers, _pending, count, dirty, busy, fired = state
                if cas and dirty:  # version changed: re-read, wait again
                    return _new(TriggerState, (live, peak, writers, g, live, False, busy, fired))
                live -= delete_count(live, count, m)
                return _new(TriggerState, (live, peak, writers, -1, 0, False, busy, fired))

            return compact
        return _never_steps

    def repeats(self, action: Action) -> bool:
        """An append marks its writer as having appended in this slot and an act leaves the
        compactor idle or waiting ``G`` slots, so neither is enabled again right after it
        happened; a tick may be (a test checks this on every explored state)."""
        return action[0] == TICK

    # The three methods below are the explorer's inner loop (hundreds of thousands of calls per
    # second), so they index the state instead of naming fields, build states with
    # ``tuple.__new__`` (the NamedTuple constructor adds a Python frame) and look the writer
    # records up in memo tables (:class:`~turncheck.models.writer_tables.WriterTables`). Each
    # returns exactly what the plain reading of the rules in the module docstring gives — tests
    # pin the explored state sets.

    def actions(self, state: TriggerState) -> list[Action]:
        pending = state[3]
        if pending == 0:
            return [_COMPACT]
        if state[6] or (pending > 0 and self._blocks):  # store locked: no writer may append
            return [_TICK]
        writers = state[2]
        enabled = self._tables.enabled.get(writers)
        if enabled is None:
            enabled = self._tables.remember_enabled(writers, self._append_actions, _TICK)
        return enabled[:]  # a fresh list: callers may keep or change it

    def step(self, state: TriggerState, action: Action) -> TriggerState:
        live, peak, writers, pending, count, dirty, busy, fired = state
        verb = action[0]
        if verb == APPEND:
            w = action[1]
            after = self._tables.appended[w].get(writers)
            if after is None:
                after = self._tables.remember_appended(writers, w)
            live += 1
            if pending > 0:
                dirty = True
            elif live > self._m:
                fired = True
                if self._sync:
                    live, busy = self._m, self._g  # trimmed before the new turn is visible
                elif self._g == 0:
                    live = self._m  # read and act in the appending step: both delete rules leave M
                else:
                    pending, count, dirty = self._g, live, False
            if live > peak:
                peak = live
            return _new(TriggerState, (live, peak, after, pending, count, dirty, busy, fired))
        if verb == TICK:
            after = self._tables.ticked.get(writers)
            if after is None:
                after = self._tables.remember_ticked(writers)
            return _new(
                TriggerState,
                (
                    live,
                    peak,
                    after,
                    pending - 1 if pending > 0 else pending,
                    count,
                    dirty,
                    busy - 1 if busy > 0 else 0,
                    fired,
                ),
            )
        if verb == COMPACT:
            if self._cas and dirty:  # version changed: re-read, wait again
                return _new(TriggerState, (live, peak, writers, self._g, live, False, busy, fired))
            delete = self.strategy.delete_count(live, count, self._m)
            return _new(TriggerState, (live - delete, peak, writers, -1, 0, False, busy, fired))
        raise BadParameter(f"model trigger has no action {action!r}")

    def canonical(self, state: TriggerState) -> TriggerState:
        writers = state[2]
        ordered = self._tables.ordered.get(writers)
        if ordered is None:
            ordered = self._tables.remember_ordered(writers)
        if ordered is writers:  # already in order (the tables hand out one object per value)
            return state
        live, peak, _, pending, count, dirty, busy, fired = state
        return _new(TriggerState, (live, peak, ordered, pending, count, dirty, busy, fired))

    def deletes(self, s: TriggerState) -> int:
        """Turns the compactor deletes if it acts in ``s`` (0 for a failing ``cas`` commit)."""
        if self._cas and s.dirty:
            return 0
        return self.strategy.delete_count(s.live, s.count_read, self._m)

    def properties(self) -> tuple[Property[TriggerState], ...]:
        """Every strategy is held to the same two named invariants, then to its own bound.

        ``no-uncounted-gap-turn`` (live ≤ maxTurns + 1) breaks exactly when a turn is appended
        while a compaction is in flight — a turn the read did not count; ``within-max-turns``
        (live ≤ maxTurns) is the promise the trigger's name makes, which even a locked trigger
        breaks by one while its triggering turn waits for the act. ``bounded-peak-turns`` is the
        strategy's declared bound; a strategy that declares none (``none``, ``cas``) is held to
        ``maxTurns`` there and its bound is reported as *unbounded*, never as met.
        """
        bound = self.bound
        m = self._m
        declared = self.strategy.declared_bound(self._w, self._g, self._m)
        what = "its declared bound" if declared is not None else "maxTurns (it declares no bound: unbounded)"
        return (
            Property(
                NO_UNCOUNTED_GAP_TURN,
                "always",
                lambda s: s.live <= m + 1,
                f"no turn arrives uncounted in the gap: live turns never exceed maxTurns + 1 = {m + 1}",
            ),
            Property(
                WITHIN_MAX_TURNS,
                "always",
                lambda s: s.live <= m,
                f"live turns never exceed maxTurns = {m}, the trigger's nominal promise",
            ),
            Property(
                BOUNDED_PEAK_TURNS,
                "always",
                lambda s: s.live <= bound,
                f"live turns never exceed {bound}: {self.strategy.name}'s {what}",
            ),
            Property(
                TRIGGER_FIRES,
                "sometimes",
                lambda s: s.fired,
                f"live turns exceed maxTurns={self._m} at least once, so the trigger is exercised",
            ),
        )

    def metrics(self, state: TriggerState) -> Mapping[str, int]:
        """``live_turns``, ``peak_turns`` (instantaneous) and ``post_compaction_turns``.

        ``post_compaction_turns`` is the live count in a state where the trigger has fired and no
        compaction is in flight (0 otherwise). Its maximum over a run is exactly the largest
        live count right after a compaction: from such a state an append either keeps
        ``live ≤ maxTurns`` or fires the trigger (leaving the state class), so a value above
        ``maxTurns`` is only ever seen right after an act, and every act leaves ``≥ maxTurns``.
        """
        post = state.live if state.fired and state.pending < 0 else 0
        return {"live_turns": state.live, "peak_turns": state.peak, POST_COMPACTION: post}

    def format_action(self, state: TriggerState, action: Action) -> str:
        verb = action[0]
        if verb == APPEND:
            w = action[1]
            after = self.step(state, action)
            text = f"writer {w} appends a turn (live {state.live} → {state.live + 1})"
            if state.pending > 0:
                stale = "uncounted"
                if self.strategy.commit_needs_clean:
                    stale = "the compactor's version is now stale"
                return f"{text} — inside the gap, {stale}"
            if state.pending < 0 and state.live + 1 > self._m:
                if self.strategy.trims_in_append:
                    locked = f"; store locked {self._g} slots" if self._g else ""
                    return text + f"; trims {state.live + 1 - after.live} oldest inside the append{locked}"
                if self._g == 0:
                    return f"{text}; trigger reads count={state.live + 1}, deletes now (live {after.live})"
                lock = " and takes the lock" if self.strategy.blocks_appends_in_gap else ""
                return text + f"; trigger reads count={after.count_read}{lock}, acts in {self._g} slot(s)"
            return text
        if verb == TICK:
            text = "slot ends"
            if state.pending == 1:
                text += " — compaction due"
            if state.busy == 1:
                text += " — synchronous trim done, store unlocked"
            return text
        if verb == COMPACT:
            if self.strategy.commit_needs_clean and state.dirty:
                return f"compactor's commit fails (appends since the read); re-reads count={state.live}"
            k = self.deletes(state)
            why = (
                f"live {state.live} − maxTurns {self._m}"
                if self.strategy.trims_to
                else f"count_read {state.count_read} − maxTurns {self._m}"
            )
            unlock = ", releases the lock" if self.strategy.blocks_appends_in_gap else ""
            return f"compactor deletes {k} oldest ({why}; live {state.live} → {state.live - k}){unlock}"
        return repr(action)

    def closed_forms(self) -> tuple[ClosedForm, ...]:
        """The explored worst-case peak (instantaneous) and the explored live turns right after a
        compaction, each against its closed form (:mod:`models.locking`)."""
        p, s = self.config, self.strategy
        a, g, m, turns = p.writers, p.gap, p.max_turns, p.turns
        needed = s.turns_to_reach_worst_case(a, g, m)
        where = f" with A={a}, G={g}, M={m}"
        return (
            ClosedForm(
                "peak_turns", "worst-case peak", s.worst_case_peak(a, g, m), s.peak_formula_at(g) + where,
                turns == 0 or (needed is not None and turns >= needed),
            ),
            ClosedForm(
                POST_COMPACTION, "post-compaction peak", s.post_compaction_peak(a, g, m),
                s.post_formula_at(a, g, m) + where, turns == 0 or turns >= s.turns_to_reach_post_compaction_peak(a, g, m),
            ),
        )  # fmt: skip

    # -- how a run reads (transcript, viewer, timeline) ---------------------------------------

    def actor(self, state: TriggerState, action: Action) -> str:
        verb = action[0]
        if verb == APPEND:
            return f"writer {action[1]}"
        return "compactor" if verb == COMPACT else "clock"

    def lane_order(self) -> tuple[str, ...]:
        return ("writer", "compactor", "clock")

    def columns(self, state: TriggerState) -> Mapping[str, Any]:
        read = state.count_read if state.pending >= 0 else "-"
        return {"live": state.live, "peak": state.peak, "read": read}

    def state_fields(self, state: TriggerState) -> list[tuple[str, FieldValue]]:
        writers = [
            f"writer {w}: {'appended this slot' if used else 'idle this slot'}, "
            + ("unbounded" if left < 0 else f"{left} turn(s) left")
            for w, (used, left) in enumerate(state.writers)
        ]
        pending = (
            "idle"
            if state.pending < 0
            else "due now"
            if state.pending == 0
            else f"acts in {state.pending} slot(s)"
        )
        return [
            ("live turns", str(state.live)),
            ("peak", str(state.peak)),
            ("compactor", pending),
            ("count read", str(state.count_read) if state.pending >= 0 else "-"),
            ("appended since the read", field_text(state.dirty)),
            ("store locked (slots)", str(state.busy)),
            ("trigger has fired", field_text(state.fired)),
            ("writers", writers),
        ]

    def step_marks(self, before: TriggerState, action: Action) -> tuple[str, ...]:
        if action[0] == APPEND and before.pending > 0:
            return ("uncounted gap turn",)
        return ()

    def window_panels(
        self, states: Sequence[TriggerState], actions: Sequence[Action]
    ) -> list[WindowPanel | None]:
        """The live turns in the store, step by step (the state keeps only their count).

        Each append adds a turn named by the step that wrote it; whatever lowers ``live``
        deletes the oldest (compaction and synchronous trims both delete from the front). A turn
        is *uncounted* when it arrived while a compaction was in flight: the count the trigger
        read does not include it, which is how the peak overshoots ``maxTurns``.
        """
        turns: list[tuple[int, str, bool]] = []
        panels: list[WindowPanel | None] = [self._store_panel(turns, 0)]
        for k, action in enumerate(actions, start=1):
            before, after = states[k - 1], states[k]
            if action[0] == APPEND:
                turns.append((k, f"writer {action[1]}", before.pending > 0))
            drop = len(turns) - after.live
            if drop > 0:
                del turns[:drop]
            panels.append(self._store_panel(turns, k))
        return panels

    def _store_panel(self, turns: Sequence[tuple[int, str, bool]], index: int) -> WindowPanel:
        items = []
        for k, who, uncounted in turns:
            marks = ["uncounted"] if uncounted else []
            if k == index:
                marks.append("new")
            items.append(WindowItem(f"step {k}: {who}", tuple(marks)))
        n_unc = sum(1 for *_x, u in turns if u)
        summary = f"{len(turns)} live turn(s), maxTurns {self.config.max_turns}, bound checked {self.bound}"
        if n_unc:
            summary += f"; {n_unc} arrived inside the gap, not in the count read"
        return WindowPanel(
            "turns in the store (what the agent would send), by the step and writer that appended each",
            tuple(items),
            summary,
        )

    def window_steps(self, states: Sequence[TriggerState], actions: Sequence[Action]) -> tuple[set[int], str]:
        """The turns still live when the run ended (compaction deletes the oldest)."""
        if not actions:
            return set(), ""
        appends = [k for k, a in enumerate(actions, start=1) if a[0] == APPEND]
        live = int(self.metrics(states[-1]).get("live_turns", 0))
        kept = appends[len(appends) - live :] if live else []
        return set(kept), f"the {live} turns live when it broke (compaction deletes the oldest)"

    def limit(self) -> Limit:
        return Limit("live_turns", "bound", float(self.bound))


def _never(state: TriggerState) -> bool:
    return False


def _never_steps(state: TriggerState) -> None:
    return None


def _pending_due(state: TriggerState) -> bool:
    return state[3] == 0


def _pending_not_due(state: TriggerState) -> bool:
    return state[3] != 0


def locking_of(name: str) -> Locking:
    try:
        return locking(name)
    except KeyError:
        raise BadParameter(f"parameter locking: {name!r} is not one of {', '.join(LOCKINGS)}") from None
