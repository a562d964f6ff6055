"""The trigger model's values: the names of its properties and metric, its state's layout, its
parameters (checked when built) and the writer classes its multisets count.

Kept apart from the rules (:mod:`models.trigger`), which import them; a state is a plain tuple in
:class:`TriggerState`'s layout, so the values here cost the explorer nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from turncheck.models.errors import BadParameter
from turncheck.models.locking import LOCKINGS

TRIGGER_FIRES = "trigger-fires"
DUE_COMPACTION_RUNS = "due-compaction-runs"
WRITERS_FINISH = "writers-finish"
POST_COMPACTION = "post_compaction_turns"  # the metric: live turns right after a compaction
UNBOUNDED = -1  # turns left of a writer that never runs out

Action = tuple[Any, ...]


def post_compaction_turns(state: tuple[Any, ...]) -> int:
    """The ``post_compaction_turns`` metric of a state (see ``TriggerModel.metrics``): live
    turns once the trigger has fired and no compaction is in flight, else 0."""
    return state[0] if state[7] and state[3] < 0 else 0


APPEND, TICK, COMPACT = "append", "tick", "compact"


class TriggerState(NamedTuple):
    """One moment of the protocol, its fields by name.

    The model's states are plain tuples in this layout, and this named view is built from one
    (``TriggerState(*state)``) only where a state is shown: the explorer builds millions of
    states, and a plain tuple builds in about two thirds of the time a named one takes (the
    successors of a state, measured), with the same hash and equality.

    ``writers`` is the multiset of writer classes as one integer, digit ``c`` in base ``W + 1``
    the number of writers of class ``c`` (see :class:`Classes`): a move of one writer from one
    class to another is one addition, and the hash is the integer's. ``names`` is each writer's
    class, or ``None`` in an anonymous state. ``pending`` is -1 when the compactor is idle, else
    the slot boundaries left before it acts (0: due now); ``count_read`` is the count it read;
    ``dirty`` says a turn was appended since the read (what a ``cas`` commit checks); ``busy`` is
    the slots the store stays locked by a synchronous trim (``append-sync``); ``fired`` says the
    trigger has fired at least once.
    """

    live: int
    peak: int
    writers: int
    pending: int
    count_read: int
    dirty: bool
    busy: int
    fired: bool
    names: tuple[int, ...] | None


State = tuple[int, int, int, int, int, bool, int, bool, tuple[int, ...] | None]  # a TriggerState's fields


MAX_WRITERS = 1024
"""Writers of one session the model takes: far past any agent's, and small enough that the
successors of one state (W states of W names each) take well under a second, so ``--timeout`` and
``--max-states``, checked between states, are honoured within one."""


@dataclass(frozen=True)
class TriggerParams:
    """The configuration: writers ``W`` (= arrivals per slot ``A``), gap ``G``, ``maxTurns``,
    the locking strategy, and the turns each writer appends in all. ``turns`` is 0 (unbounded:
    writers that never stop) by default, because a starvation is an infinite run — with a bound
    the writers finish and a starved compaction commits after them."""

    writers: int = 2
    gap: int = 1
    max_turns: int = 2
    locking: str = "none"
    turns: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.writers, bool) or not isinstance(self.writers, int) or self.writers < 1:
            raise BadParameter(f"parameter writers must be an integer >= 1, got {self.writers!r}")
        if self.writers > MAX_WRITERS:
            raise BadParameter(
                f"parameter writers must be <= {MAX_WRITERS} (a state names every writer, so one "
                f"state's successors cost writers² and no time limit could cut them short), got {self.writers}"
            )
        if isinstance(self.gap, bool) or not isinstance(self.gap, int) or self.gap < 0:
            raise BadParameter(f"parameter gap must be an integer >= 0, got {self.gap!r}")
        if isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int) or self.max_turns < 1:
            raise BadParameter(f"parameter max_turns must be an integer >= 1, got {self.max_turns!r}")
        if isinstance(self.turns, bool) or not isinstance(self.turns, int) or self.turns < 0:
            raise BadParameter(f"parameter turns must be an integer >= 0 (0: unbounded), got {self.turns!r}")
        if self.locking not in LOCKINGS:
            raise BadParameter(f"parameter locking: {self.locking!r} is not one of {', '.join(LOCKINGS)}")


class Classes:
    """The writer classes ``(used, left)`` of one configuration, numbered in their sorted order.

    With ``T`` turns per writer, ``left`` runs over ``0..T`` (``K = T + 1`` values), else it is
    always -1 (``K = 1``); class ``c`` is ``used·K + (its place among the lefts)``, so listing the
    writers class by class lists their records sorted. The three rules on one writer's record
    live here as tables: whether it may append, the class an append leaves it in, the class a
    tick leaves it in; on the multiset an append is one addition (``moved``).
    """

    def __init__(self, writers: int, turns: int) -> None:
        k = turns + 1 if turns > 0 else 1
        self.base = writers + 1
        self.records: tuple[tuple[int, int], ...] = tuple(
            (used, left if turns > 0 else UNBOUNDED) for used in (0, 1) for left in range(k)
        )
        self.may_append = tuple(used == 0 and left != 0 for used, left in self.records)
        self.appended = tuple(self.index(1, left - 1 if left > 0 else left) for _u, left in self.records)
        self.ticked = tuple(self.index(0, left) for _u, left in self.records)
        self.start = self.index(0, turns if turns > 0 else UNBOUNDED)
        self.unit = tuple(self.base**c for c in range(len(self.records)))
        self.moved = tuple(self.unit[to] - self.unit[c] for c, to in enumerate(self.appended))

    def index(self, used: int, left: int) -> int:
        return self.records.index((used, left))

    def counts(self, writers: int) -> list[int]:
        """The multiset's digits: writers per class."""
        out = []
        for _ in self.records:
            writers, n = divmod(writers, self.base)
            out.append(n)
        return out
