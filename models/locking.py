"""Locking strategies for the compaction trigger, and the live-turn bound each one guarantees.

A strategy is a value, not a code path: it says what happens at the protocol's three moments —
the *read* (the trigger sees ``live > maxTurns`` inside an append and reads the count), the
*gap* (``G`` slot boundaries later) and the *act* (the delete). :mod:`models.trigger` is the
one place these fields are interpreted.

Closed-form worst-case peak of live turns
-----------------------------------------
Notation: ``M`` = maxTurns, ``A`` = writers (each appends at most one turn per slot, so at most
``A`` turns arrive per slot), ``G`` = gap in slots between the read and the act. The model's
timing (see :mod:`models.trigger`) gives two facts every bound below rests on:

1. The trigger is evaluated inside the append that makes ``live > M``, so a read taken from
   idle sees ``c = live``, and with ``G = 0`` the act happens in that same step: no state ever
   shows more than ``M`` live turns, whatever the strategy.
2. The act happens at the ``G``-th slot boundary after the read. The reading append used one of
   its slot's ``A`` places, so at most ``g ≤ A·G − 1`` turns are appended between a read and
   its act (fewer when appends are blocked).

Then, for ``G ≥ 1``:

* ``none`` — the act deletes ``c − M`` and leaves ``M + g ≤ M + A·G − 1`` live turns: the
  turns of the gap are never counted by the compaction that was in flight, so they stay as a
  backlog. The next append reads ``c' = M + g + 1 ≤ M + A·G`` and its own gap adds up to
  ``A·G − 1`` more: **peak = M + 2·A·G − 1**, reached when two consecutive gaps are saturated
  (every writer appends in every slot, the read falling on a slot's first append). It never
  grows further, because every act removes exactly the previous gap's backlog.
* ``trim-to`` — the act deletes ``live − M`` computed at commit time, so it always leaves exactly
  ``M``; every read sees ``c = M + 1``: **peak = M + A·G**.
* ``mutex`` — read and act form one critical section that appends also take: no append lands in
  the gap (``g = 0``), appends wait instead: **peak = M + 1**.
* ``append-sync`` — the trim runs inside the append, before the new turn becomes visible; the
  store stays locked for the ``G`` slots the trim takes: **peak = M**.
* ``cas`` — the act commits only if nothing was appended since the read (a version check); on
  conflict it re-reads and waits another gap. With ``A·G = 1`` no append can fall in a gap, so
  **peak = M + 1**; with ``A·G ≥ 2`` writers can land an append in every gap, the compactor
  starves and live turns grow without bound (**unbounded**, ``None``): optimistic concurrency
  buys correctness of each delete, not a bound.

And for ``G = 0`` every strategy peaks at exactly ``M`` (fact 1).

Closed-form worst case right after a compaction
-----------------------------------------------
The *instantaneous* peak above is what a context window feels. Seed 004 §9 reads the peak at
another moment: **the live turns right after each compaction** (the act's result). With the
same two facts, for ``G ≥ 1``:

* ``none`` — the act leaves ``M + g`` with ``g ≤ A·G − 1`` turns of its gap uncounted:
  **post = M + A·G − 1** (``M`` when ``A·G = 1``), reached by one saturated gap. This is the
  seed's table row for row (8, 9, 12, 27, 8, 23, 47 at ``M = 8``; 55 at ``M = 16``, where the
  seed's 200 000 random slots saw 54).
* ``trim-to`` — the act deletes down to ``M`` at commit time: **post = M**. (Its *instantaneous*
  peak ``M + A·G`` is one above the seed on every ``G > 0`` row, so ``trim-to`` is not how the
  seed's level arises.)
* ``mutex`` — no turn lands in the gap: **post = M**. ``append-sync``: **post = M**.
* ``cas`` — a commit succeeds only when nothing was appended since its read, so every
  successful act leaves exactly ``M``: **post = M** — even where its instantaneous peak is
  unbounded (the acts become rare, not imprecise).

With ``G = 0`` every act leaves ``M``. In one formula for ``none``: ``max(M, M + A·G − 1)``.
:func:`post_compaction_peak` returns these; ``tests/test_post_compaction.py`` explores all 135
small configurations and checks the explored maximum equals it, with a tight witness length
(:func:`turns_to_reach_post_compaction_peak`). With fewer total turns than
the run needs to saturate, the observed peak is lower; :func:`turns_to_reach_worst_case` says
how many turns per writer the worst case needs.

The *declared* bound is what a strategy promises for any arrival pattern within ``A`` per slot:
``mutex`` ``M + 1``, ``append-sync`` ``M``, ``trim-to`` ``M + A·G`` (only while arrivals are
bounded: with Poisson arrivals it declares nothing), ``none`` and ``cas`` nothing (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from turncheck.models.errors import UnknownName

DeleteRule = Literal["count-read", "trim-to"]


@dataclass(frozen=True)
class Locking:
    """What a strategy does at the read, during the gap and at the act.

    Attributes
    ----------
    name:
        The strategy's id on the command line.
    blocks_appends_in_gap:
        The compactor holds a lock from the read to the act that appends also take (``mutex``).
    commit_needs_clean:
        The act commits only if no turn was appended since the read; otherwise it re-reads and
        waits another gap (``cas``).
    trims_in_append:
        The trigger is evaluated and the trim done inside the append, which holds the store
        lock for the ``G`` slots the trim takes (``append-sync``).
    delete_rule:
        ``count-read`` deletes ``count_read − maxTurns``; ``trim-to`` deletes ``live − maxTurns``
        computed at commit time.
    doc:
        One line for tables and help texts.
    """

    name: str
    blocks_appends_in_gap: bool = False
    commit_needs_clean: bool = False
    trims_in_append: bool = False
    delete_rule: DeleteRule = "count-read"
    doc: str = ""

    def declared_bound(self, writers: int | None, gap: int, max_turns: int) -> int | None:
        """The live-turn bound this strategy guarantees, or None when it guarantees none.

        Parameters
        ----------
        writers:
            Maximum turns appended per slot (``A``); None for unbounded (Poisson) arrivals.
        gap, max_turns:
            ``G`` and ``M`` of the trigger.
        """
        if self.trims_in_append:
            return max_turns
        if self.blocks_appends_in_gap:
            return max_turns + (1 if gap > 0 else 0)
        if self.delete_rule == "trim-to" and not self.commit_needs_clean:
            if writers is None:
                return None
            return max_turns + writers * gap
        return None

    def checked_bound(self, writers: int | None, gap: int, max_turns: int) -> int:
        """The bound ``bounded-peak-turns`` checks: the declared one, else ``maxTurns`` itself.

        A strategy that declares nothing is held to the nominal promise of the trigger's name,
        ``maxTurns`` — the promise the check-then-act gap breaks.
        """
        bound = self.declared_bound(writers, gap, max_turns)
        return max_turns if bound is None else bound


LOCKINGS: dict[str, Locking] = {
    s.name: s
    for s in (
        Locking("none", doc="no lock: read the count, delete count_read − maxTurns a gap later"),
        Locking(
            "mutex",
            blocks_appends_in_gap=True,
            doc="read and delete in one critical section that appends also take",
        ),
        Locking(
            "cas",
            commit_needs_clean=True,
            doc="versioned commit: the delete fails if anything was appended since the read, then retries",
        ),
        Locking(
            "append-sync",
            trims_in_append=True,
            doc="the trigger is evaluated and the trim done inside the append",
        ),
        Locking("trim-to", delete_rule="trim-to", doc="no lock; the delete count is computed at commit time"),
    )
}

LOCKING_NAMES: tuple[str, ...] = tuple(LOCKINGS)


def locking(name: str) -> Locking:
    """The strategy called ``name``; raises :class:`UnknownName` listing the known ones."""
    try:
        return LOCKINGS[name]
    except KeyError:
        raise UnknownName(f"unknown locking strategy {name!r} (known: {', '.join(LOCKINGS)})") from None


def worst_case_peak(writers: int, gap: int, max_turns: int, strategy: str) -> int | None:
    """The closed-form worst-case peak of live turns (None: unbounded).

    Parameters
    ----------
    writers:
        ``A``, the most turns appended in one slot (each writer appends at most one per slot).
    gap:
        ``G``, slots between the trigger's read and its act.
    max_turns:
        ``M``, the trigger's threshold.
    strategy:
        A locking strategy name.

    Returns
    -------
    int or None
        The exact maximum of live turns over every run with enough turns (see the module
        docstring for the derivation); None when live turns grow without bound (``cas`` with
        ``A·G ≥ 2``).

    Examples
    --------
    >>> worst_case_peak(8, 5, 8, "none")
    87
    >>> worst_case_peak(8, 5, 8, "trim-to"), worst_case_peak(8, 5, 8, "mutex")
    (48, 9)
    """
    s = locking(strategy)
    m, a, g = max_turns, writers, gap
    if g == 0 or s.trims_in_append:
        return m
    if s.blocks_appends_in_gap:
        return m + 1
    if s.commit_needs_clean:
        return m + 1 if a * g == 1 else None
    if s.delete_rule == "trim-to":
        return m + a * g
    return m + 2 * a * g - 1


def turns_to_reach_worst_case(writers: int, gap: int, max_turns: int, strategy: str) -> int | None:
    """Turns per writer a run needs for the worst-case peak to be reachable (None: unbounded).

    The witness runs fill the log to ``M`` (``⌈M/A⌉`` slots) and then saturate one gap
    (``trim-to``: every writer appends in each of its ``G`` slots) or two consecutive gaps
    (``none``, when ``A·G ≥ 2``); ``mutex`` and ``cas`` with ``A·G = 1`` need one turn past
    ``M``; ``append-sync`` and ``G = 0`` only ``M`` turns. Tight: one turn fewer per writer
    does not reach the worst case (checked by ``tests/test_trigger.py``).
    """
    s = locking(strategy)
    m, a, g = max_turns, writers, gap
    fill = -(-m // a)  # slots (and turns per writer) to bring the log to M
    if g == 0 or s.trims_in_append:
        return fill  # the peak is M itself
    if s.blocks_appends_in_gap:
        return -(-(m + 1) // a)
    if s.commit_needs_clean:
        return m + 1 if a * g == 1 else None
    if s.delete_rule == "trim-to" or a * g == 1:  # with A·G = 1, none never carries a backlog
        return fill + g
    return fill + 2 * g


def post_compaction_peak(writers: int, gap: int, max_turns: int, strategy: str) -> int:
    """The closed-form worst case of the live turns right after a compaction (seed 004 §9's peak).

    ``none`` with ``G ≥ 1``: ``M + A·G − 1`` (the gap's uncounted turns survive the act); every
    other strategy, and every strategy with ``G = 0``: ``M``. Always finite — see the module
    docstring for the derivation.

    Examples
    --------
    >>> [post_compaction_peak(a, g, 8, "none") for a, g in [(1, 0), (1, 2), (1, 5), (4, 5), (8, 2), (8, 5)]]
    [8, 9, 12, 27, 23, 47]
    >>> post_compaction_peak(8, 5, 16, "none"), post_compaction_peak(8, 5, 16, "cas")
    (55, 16)
    """
    s = locking(strategy)
    m, a, g = max_turns, writers, gap
    if g == 0 or s.trims_in_append or s.blocks_appends_in_gap or s.commit_needs_clean:
        return m
    if s.delete_rule == "trim-to":
        return m
    return max(m, m + a * g - 1)


def turns_to_reach_post_compaction_peak(writers: int, gap: int, max_turns: int, strategy: str) -> int:
    """Turns per writer a run needs to reach :func:`post_compaction_peak`.

    ``none`` with ``A·G ≥ 2`` needs ``M + A·G`` turns in all — ``M`` to fill, the reading turn,
    ``A·G − 1`` in its gap — so ``⌈M/A⌉ + G`` per writer; every other case needs the trigger to
    fire once, ``M + 1`` turns: ``⌈(M + 1)/A⌉`` per writer. Tight: one turn fewer per writer
    leaves too few turns in all (checked by ``tests/test_post_compaction.py``).
    """
    s = locking(strategy)
    m, a, g = max_turns, writers, gap
    if post_compaction_peak(a, g, m, strategy) > m and not s.blocks_appends_in_gap:
        return -(-m // a) + g
    return -(-(m + 1) // a)
