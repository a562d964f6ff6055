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

Writers are interchangeable, so the state keeps them as a multiset: how many writers are in each
*class* ``(appended in this slot: 0/1, turns left or -1)``. Symmetry is structural — two states
that differ only by which writer is which are one state — and an append is one per class, not
one per writer. A state may also *name* its writers (``names``: each writer's class): the
initial state does, so a run from it — the SimPy runner's, a replayed trace, a counterexample —
says which writer acted; :meth:`TriggerModel.canonical` forgets the names, which is all the
explorer needs to search the anonymous multisets. The rules below are written once, on the
counts; a name only follows its writer.

Actions, as JSON-scalar tuples: ``("append", w)`` writer ``w`` appends a turn (in an anonymous
state ``w`` is the first writer of its class, writers listed class by class); ``("tick",)`` the
slot ends; ``("compact",)`` the compactor acts — enabled only when due, and then the only action
(the act happens at the slot boundary, before anything else).

:func:`turncheck.models.trigger_slots.drive_slots` gives the model arrival timing by stepping it
through per-slot arrival counts, without re-implementing it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from turncheck.models.catalog import register_model
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
from turncheck.models.trigger_state import (
    APPEND,
    COMPACT,
    DUE_COMPACTION_RUNS,
    POST_COMPACTION,
    TICK,
    TRIGGER_FIRES,
    WRITERS_FINISH,
    Action,
    Classes,
    State,
    TriggerParams,
    TriggerState,
    post_compaction_turns,
)

_TICK: Action = (TICK,)
_COMPACT: Action = (COMPACT,)


class _Writers(NamedTuple):
    """What the writers of one anonymous multiset can do, worked out once per multiset (the
    model keeps one per multiset it meets): the appends its classes allow (each class's first
    writer's) with the multiset each leaves, the same by writer, and the multiset after a tick."""

    moves: list[tuple[Action, int, None]]
    appended: dict[int, int]
    ticked: int


class TriggerModel(ProtocolModel[State, Action]):
    """``TurnCountTrigger(maxTurns)`` with a check-then-act gap under one locking strategy.

    Properties: ``bounded-peak-turns`` (always: live turns ≤ the strategy's declared bound, or
    ``maxTurns`` when it declares none), ``trigger-fires`` (sometimes: the count exceeded
    ``maxTurns`` at least once — otherwise the run never exercised the trigger) and two
    liveness properties, ``due-compaction-runs`` and (with ``turns`` bounded)
    ``writers-finish``, under weak fairness of every action (see :meth:`properties`).
    """

    name = "trigger"

    def __init__(
        self, writers: int = 2, gap: int = 1, max_turns: int = 2, locking: str = "none", turns: int = 0
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
        self.classes = Classes(p.writers, p.turns)
        self._w = p.writers
        self._g = p.gap
        self._m = p.max_turns
        # the strategy's rule, read once: the hot paths below test plain attributes
        s = self.strategy
        self._blocks = s.blocks_appends_in_gap
        self._cas = s.commit_needs_clean
        self._sync = s.trims_in_append
        self._anonymous: dict[int, _Writers] = {}
        self._class_sizes: dict[int, int] = {}  # multiset -> its name tuples
        # cas with unbounded writers: the counting abstraction (see saturation); None: no cap
        self._cap = p.max_turns + 2 if self._cas and p.turns == 0 and p.gap > 0 else None

    # -- the protocol -------------------------------------------------------------------------

    def init_states(self) -> Iterator[State]:
        c = self.classes
        yield (0, 0, c.unit[c.start] * self._w, -1, 0, False, 0, False, (c.start,) * self._w)

    # The rules, written once in :meth:`successors` (the explorer's one call per state):
    # ``actions``, ``is_enabled`` and ``step`` each read them from there. It is the
    # explorer's inner loop (hundreds of thousands of states per second).

    def _writers(self, writers: int) -> _Writers:
        """What the anonymous multiset ``writers`` can do (see :class:`_Writers`)."""
        known = self._anonymous.get(writers)
        if known is not None:
            return known
        c = self.classes
        appended: dict[int, int] = {}
        first = ticked = 0
        for k, n in enumerate(c.counts(writers)):
            if n and c.may_append[k]:
                appended[first] = writers + c.moved[k]
            first += n
            ticked += n * c.unit[c.ticked[k]]
        moves = [((APPEND, w), after, None) for w, after in appended.items()]
        known = self._anonymous[writers] = _Writers(moves, appended, ticked)
        return known

    def _appends(
        self, state: State, only: Action | None
    ) -> Sequence[tuple[Action, int, tuple[int, ...] | None]]:
        """The appends the writers' classes allow (all, or just ``only``), each with the
        multiset and the names it leaves."""
        writers, names = state[2], state[8]
        if names is None:
            known = self._anonymous.get(writers) or self._writers(writers)
            if only is None:
                return known.moves
            after = known.appended.get(only[1]) if len(only) == 2 else None
            return [] if after is None else [(only, after, None)]
        if only is None:
            found = [self._named_append(writers, names, w) for w in range(self._w)]
            return [move for move in found if move is not None]
        move = None
        if len(only) == 2 and type(only[1]) is int and 0 <= only[1] < self._w:
            move = self._named_append(writers, names, only[1])
        return [] if move is None else [move]

    def _named_append(
        self, writers: int, names: tuple[int, ...], w: int
    ) -> tuple[Action, int, tuple[int, ...]] | None:
        """Writer ``w``'s append in a named state, if its class may append: the action with the
        multiset and the names it leaves."""
        c, k = self.classes, names[w]
        if not c.may_append[k]:
            return None
        return ((APPEND, w), writers + c.moved[k], (*names[:w], c.appended[k], *names[w + 1 :]))

    def successors(self, state: State, only: Action | None = None) -> list[tuple[Action, State]]:
        """Every enabled action with the state it leads to, in a stable order — or just ``only``,
        when it is enabled. Each action's rule is written once, in :meth:`_compacted`,
        :meth:`_append_fields` (with the writer's class, :meth:`_appends`) and :meth:`_ticked`;
        :meth:`step` and :meth:`is_enabled` read the same ones."""
        if state[3] == 0:  # the compactor acts at the slot boundary, before anything else
            return [] if only is not None and only != _COMPACT else [(_COMPACT, self._compacted(state))]
        known = self._anonymous.get(state[2]) or self._writers(state[2])
        out: list[tuple[Action, State]] = []  # plain loops: a comprehension costs a call a state
        if (only is None or only[0] == APPEND) and self._open(state):
            a_live, a_peak, a_pending, a_count, a_dirty, a_busy, a_fired = self._append_fields(state)
            moves = known.moves if state[8] is None and only is None else self._appends(state, only)
            for a, multiset, named in moves:
                out.append(
                    (a, (a_live, a_peak, multiset, a_pending, a_count, a_dirty, a_busy, a_fired, named))
                )
        if only is None or only == _TICK:
            out.append((_TICK, self._ticked(state, known)))
        return out

    def _compacted(self, state: State) -> State:
        """The compactor's act (it is due: ``pending == 0``): a ``cas`` commit that finds the
        version changed re-reads and waits again; otherwise the strategy's delete."""
        live, peak, writers, _pending, count, dirty, busy, fired, names = state
        if self._cas and dirty:
            return (live, peak, writers, self._g, live, False, busy, fired, names)
        live -= self.strategy.delete_count(live, count, self._m)
        return (live, peak, writers, -1, 0, False, busy, fired, names)

    def _append_fields(self, state: State) -> tuple[int, int, int, int, bool, int, bool]:
        """What any append (the store is open, :meth:`_open`) does to the fields but the
        writers': ``(live, peak, pending, count, dirty, busy, fired)``."""
        live, peak, _writers, pending, count, dirty, _busy, fired, _names = state
        a_live, a_busy = live + 1, 0  # the store is open: no trim holds it
        if pending > 0:
            dirty = True
        elif a_live > self._m:
            fired = True
            if self._sync:
                a_live, a_busy = self._m, self._g  # trimmed before the new turn is visible
            elif self._g == 0:
                a_live = self._m  # read and act in the appending step: both delete rules leave M
            else:
                pending, count, dirty = self._g, a_live, False
        return (a_live, a_live if a_live > peak else peak, pending, count, dirty, a_busy, fired)

    def _ticked(self, state: State, known: _Writers | None = None) -> State:
        """The slot ends (the compactor is not due): every writer may append again, and the gap
        and a synchronous trim's hold count one slot down."""
        live, peak, writers, pending, count, dirty, busy, fired, names = state
        if names is not None:
            ticked = self.classes.ticked
            names = tuple([ticked[k] for k in names])
        known = known or self._anonymous.get(writers) or self._writers(writers)
        pending = pending - 1 if pending > 0 else pending
        return (live, peak, known.ticked, pending, count, dirty, busy - 1 if busy > 0 else 0, fired, names)

    def actions(self, state: State) -> list[Action]:
        return [a for a, _after in self.successors(state)]

    def _open(self, state: State) -> bool:
        """Whether a writer may append: the compactor is not due, and neither a synchronous trim
        nor a lock taken at the read holds the store."""
        pending = state[3]
        return not (pending == 0 or state[6] or (pending > 0 and self._blocks))

    def is_enabled(self, state: State, action: Action) -> bool:
        """``action in actions(state)``, read off the state without building the next one (the
        SimPy runner asks on every wake-up): the compactor when due, else a tick, or an append
        in an open store (:meth:`_open`) by a writer whose class may append."""
        kind = action[0]
        if kind != APPEND:
            return action == (_COMPACT if state[3] == 0 else _TICK)
        if len(action) != 2 or not self._open(state):
            return False
        w, names = action[1], state[8]
        if names is None:
            return w in self._writers(state[2]).appended
        return type(w) is int and 0 <= w < self._w and self.classes.may_append[names[w]]

    def step(self, state: State, action: Action) -> State:
        """The state ``action`` leads to, by that action's rule alone (the SimPy runner's and a
        replay's call: nothing else is built)."""
        if action == _TICK and state[3] != 0:
            return self._ticked(state)
        if action == _COMPACT and state[3] == 0:
            return self._compacted(state)
        if action[0] == APPEND and self._open(state):
            for _a, multiset, named in self._appends(state, action):
                a_live, a_peak, a_pending, a_count, a_dirty, a_busy, a_fired = self._append_fields(state)
                return (a_live, a_peak, multiset, a_pending, a_count, a_dirty, a_busy, a_fired, named)
        raise BadParameter(f"model trigger: action {action!r} is not enabled in this state")

    def canonical(self, state: State) -> State:
        """The state without its writers' names: the multiset alone — and, under ``cas`` with
        unbounded writers, with live turns past the cap merged (:meth:`saturation`)."""
        cap = self._cap
        if cap is not None:
            live, peak, writers, pending, count, dirty, busy, fired, _names = state
            if pending >= 0 and count > cap:
                live, count = live - count + cap, cap
            return (live, min(peak, cap), writers, pending, count, dirty, busy, fired, None)
        if state[8] is None:
            return state
        return (*state[:8], None)

    def class_size(self, state: State) -> int | None:
        """The writers' name tuples the multiset stands for: ``W! / Π count_c!`` (the initial
        state names every writer alike, and the rules read a writer's class, never its name, so
        each of them is reachable with the class). None under the counting abstraction, which
        merges more than names."""
        if self._cap is not None:
            return None
        size = self._class_sizes.get(state[2])
        if size is None:
            size = self._class_sizes[state[2]] = math.factorial(self._w) // math.prod(
                map(math.factorial, self.classes.counts(state[2]))
            )
        return size

    def successors_are_canonical(self) -> bool:
        """Anonymous states lead to anonymous states; only the counting abstraction (``cas``
        with unbounded writers) needs :meth:`canonical` on each successor."""
        return self._cap is None

    def saturation(self) -> str | None:
        """Under ``cas`` with unbounded writers (``turns=0``) every failed commit follows an
        append, so live turns grow for ever while the compactor starves and no state repeats.
        The abstraction merges them, exactly: while a compaction is in flight only the turns
        appended since the read matter (a clean commit finds none and leaves ``maxTurns``, a failed
        one re-reads), so a count read past the cap ``C = maxTurns + 2`` is kept as ``C`` with
        those turns on top; ``C`` exceeds every threshold the properties test, and the peak (read
        by no rule) is kept up to ``C``. The idle trigger never holds more than ``maxTurns``."""
        cap = self._cap
        if cap is None:
            return None
        return (
            f"cas with unbounded writers: a count read above {cap} while a compaction is in flight is "
            f"kept as {cap} with the turns appended since (exact: a clean commit leaves maxTurns "
            f"whatever was read); past {cap}, live turns and the peak below are floors, not worst cases"
        )

    def records(self, state: State) -> list[tuple[int, int]]:
        """Each writer's ``(used, left)``: by name, or class by class in an anonymous state."""
        view = TriggerState(*state)
        records = self.classes.records
        if view.names is not None:
            return [records[k] for k in view.names]
        counts = self.classes.counts(view.writers)
        return [records[k] for k, n in enumerate(counts) for _ in range(n)]

    def deletes(self, s: State) -> int:
        """Turns the compactor deletes if it acts in ``s`` (0 for a failing ``cas`` commit)."""
        view = TriggerState(*s)
        if self._cas and view.dirty:
            return 0
        return self.strategy.delete_count(view.live, view.count_read, self._m)

    def properties(self) -> tuple[Property[State], ...]:
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
        name = self.strategy.name
        what = (
            f"{name}'s declared bound"
            if declared is not None
            else f"maxTurns ({name} declares no bound: unbounded)"
        )
        return self._safety(bound, m, what) + self._liveness()

    def _liveness(self) -> tuple[Property[State], ...]:
        """A compaction in flight (the trigger read the count) eventually commits its delete —
        a ``cas`` commit that fails re-reads and stays in flight — and, with ``turns`` bounded,
        every writer eventually appends all its turns (no lock keeps one out for ever). Both
        under weak fairness of every action (:meth:`fair_actions`)."""
        due = Property.leads_to(
            DUE_COMPACTION_RUNS,
            lambda s: s[3] >= 0,
            lambda s: s[3] < 0,
            "a compaction in flight (the trigger read the count) eventually commits its delete",
        )
        if self.config.turns == 0:
            return (due,)
        c = self.classes
        base, units = c.base, [c.unit[k] for k, (_u, left) in enumerate(c.records) if left > 0]

        def finished(s: State) -> bool:  # no writer in a class with turns left
            return all(s[2] // u % base == 0 for u in units)

        return (
            due,
            Property(
                WRITERS_FINISH,
                "eventually",
                finished,
                f"every writer eventually appends all its {self.config.turns} turns",
            ),
        )

    def fair_actions(self) -> tuple[str, ...]:
        """Appends, ticks and the compactor: none is enabled for ever without being taken."""
        return (APPEND, TICK, COMPACT)

    def _safety(self, bound: int, m: int, what: str) -> tuple[Property[State], ...]:
        return (
            Property(
                NO_UNCOUNTED_GAP_TURN,
                "always",
                lambda s: s[0] <= m + 1,
                f"no turn arrives uncounted in the gap: live turns never exceed maxTurns + 1 = {m + 1}",
            ),
            Property(WITHIN_MAX_TURNS, "always", lambda s: s[0] <= m,
                     f"live turns never exceed maxTurns = {m}, the trigger's nominal promise"),  # fmt: skip
            Property(BOUNDED_PEAK_TURNS, "always", lambda s: s[0] <= bound, f"live turns never exceed {bound}: {what}"),
            Property(
                TRIGGER_FIRES,
                "sometimes",
                lambda s: s[7],
                f"live turns exceed maxTurns={self._m} at least once, so the trigger is exercised",
            ),
        )

    def live_turns(self, state: State) -> int:
        return state[0]  # what ``metrics`` reports as ``live_turns``

    def metrics(self, state: State) -> Mapping[str, int]:
        """``live_turns``, ``peak_turns`` (instantaneous) and ``post_compaction_turns``.

        ``post_compaction_turns`` is the live count in a state where the trigger has fired and no
        compaction is in flight (0 otherwise). Its maximum over a run is exactly the largest
        live count right after a compaction: from such a state an append either keeps
        ``live ≤ maxTurns`` or fires the trigger (leaving the state class), so a value above
        ``maxTurns`` is only ever seen right after an act, and every act leaves ``≥ maxTurns``.
        """
        return {"live_turns": state[0], "peak_turns": state[1], POST_COMPACTION: post_compaction_turns(state)}

    def metric_columns(self) -> Mapping[str, Callable[[State], int]]:
        """:meth:`metrics`, one function per metric (the explorer's worst cases read them)."""
        return {"live_turns": itemgetter(0), "peak_turns": itemgetter(1), POST_COMPACTION: post_compaction_turns}

    def format_action(self, state: State, action: Action) -> str:
        view = TriggerState(*state)
        verb = action[0]
        if verb == APPEND:
            w = action[1]
            after = TriggerState(*self.step(state, action))
            text = f"writer {w} appends a turn (live {view.live} → {view.live + 1})"
            if view.pending > 0:
                stale = "uncounted"
                if self.strategy.commit_needs_clean:
                    stale = "the compactor's version is now stale"
                return f"{text} — inside the gap, {stale}"
            if view.pending < 0 and view.live + 1 > self._m:
                if self.strategy.trims_in_append:
                    locked = f"; store locked {self._g} slots" if self._g else ""
                    return text + f"; trims {view.live + 1 - after.live} oldest inside the append{locked}"
                if self._g == 0:
                    return f"{text}; trigger reads count={view.live + 1}, deletes now (live {after.live})"
                lock = " and takes the lock" if self.strategy.blocks_appends_in_gap else ""
                return text + f"; trigger reads count={after.count_read}{lock}, acts in {self._g} slot(s)"
            return text
        if verb == TICK:
            text = "slot ends"
            if view.pending == 1:
                text += " — compaction due"
            if view.busy == 1:
                text += " — synchronous trim done, store unlocked"
            return text
        if verb == COMPACT:
            if self.strategy.commit_needs_clean and view.dirty:
                return f"compactor: commit fails (turns appended since the read); re-reads count={view.live}"
            k = self.deletes(state)
            why = (
                f"live {view.live} − maxTurns {self._m}"
                if self.strategy.trims_to
                else f"count_read {view.count_read} − maxTurns {self._m}"
            )
            unlock = ", releases the lock" if self.strategy.blocks_appends_in_gap else ""
            return f"compactor deletes {k} oldest ({why}; live {view.live} → {view.live - k}){unlock}"
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

    def actor(self, state: State, action: Action) -> str:
        verb = action[0]
        if verb == APPEND:
            return f"writer {action[1]}"
        return "compactor" if verb == COMPACT else "clock"

    def lane_order(self) -> tuple[str, ...]:
        return ("writer", "compactor", "clock")

    def columns(self, state: State) -> Mapping[str, Any]:
        view = TriggerState(*state)
        read = view.count_read if view.pending >= 0 else "-"
        return {"live": view.live, "peak": view.peak, "read": read}

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        view = TriggerState(*state)
        writers = [
            f"writer {w}: {'appended this slot' if used else 'idle this slot'}, "
            + ("unbounded" if left < 0 else f"{left} turn(s) left")
            for w, (used, left) in enumerate(self.records(state))
        ]
        pending = (
            "idle"
            if view.pending < 0
            else "due now"
            if view.pending == 0
            else f"acts in {view.pending} slot(s)"
        )
        return [
            ("live turns", str(view.live)),
            ("peak", str(view.peak)),
            ("compactor", pending),
            ("count read", str(view.count_read) if view.pending >= 0 else "-"),
            ("appended since the read", field_text(view.dirty)),
            ("store locked (slots)", str(view.busy)),
            ("trigger has fired", field_text(view.fired)),
            ("writers", writers),
        ]

    def step_marks(self, before: State, action: Action) -> tuple[str, ...]:
        if action[0] == APPEND and before[3] > 0:
            return ("uncounted gap turn",)
        return ()

    def window_panels(self, states: Sequence[State], actions: Sequence[Action]) -> list[WindowPanel | None]:
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
                turns.append((k, f"writer {action[1]}", before[3] > 0))
            drop = len(turns) - after[0]
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

    def window_steps(self, states: Sequence[State], actions: Sequence[Action]) -> tuple[set[int], str]:
        """The turns still live when the run ended (compaction deletes the oldest)."""
        if not actions:
            return set(), ""
        appends = [k for k, a in enumerate(actions, start=1) if a[0] == APPEND]
        live = int(self.metrics(states[-1]).get("live_turns", 0))
        kept = appends[len(appends) - live :] if live else []
        return set(kept), f"the {live} turns live when it broke (compaction deletes the oldest)"

    def limit(self) -> Limit:
        return Limit("live_turns", "bound", float(self.bound))


def locking_of(name: str) -> Locking:
    try:
        return locking(name)
    except KeyError:
        raise BadParameter(f"parameter locking: {name!r} is not one of {', '.join(LOCKINGS)}") from None


register_model("trigger", TriggerModel, description="writers, TurnCountTrigger(maxTurns), a gap and a locking")
