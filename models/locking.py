"""Locking strategies for the compaction trigger, and the live-turn bound each one guarantees.

A strategy is a value, not a code path: one frozen :class:`Locking` per strategy carries its
rule — when it *reads* the count (the trigger sees ``live > maxTurns`` inside an append), when it
*acts* (``G`` slot boundaries later, or inside the append), what it *locks* and how many turns
the act *deletes* — next to its closed-form bounds in both readings, its declared bound, its
display name and its house colour. :mod:`models.trigger` is the one place the rule is
interpreted; the closed forms, the scenarios, the plots and the CLI choices read the same value
from the registry :data:`LOCKINGS`, so adding a strategy is one :func:`register_locking` — in a
module of its own for an extension (``turncheck.register_locking``).

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from turncheck.models.registry import Registry

Reads = Literal["on-trigger", "on-trigger-and-after-conflict", "in-append"]
Acts = Literal["after-gap", "after-gap-if-unchanged", "in-append"]
Locks = Literal["nothing", "appends-until-act", "store-while-trimming"]
Deletes = Literal["count-read", "live-at-commit"]
Bound = Callable[[int, int, int], "int | None"]  # (A, G ≥ 1, M) → a closed form; None: unbounded


def _ceil(n: int, d: int) -> int:
    return -(-n // d)


@dataclass(frozen=True)
class Locking:
    """One locking strategy: its rule, its closed forms and how it is shown.

    Attributes
    ----------
    name:
        The strategy's id on the command line and in result files.
    title:
        The display name (a few words, for tables and help texts).
    doc:
        One line saying what the strategy does.
    reads:
        When the count is read: ``on-trigger`` (inside the append that leaves ``live > M``),
        ``on-trigger-and-after-conflict`` (again after a failed commit) or ``in-append`` (the
        append itself reads and trims).
    acts:
        When the delete happens: ``after-gap`` (``G`` slot boundaries after the read),
        ``after-gap-if-unchanged`` (then, and only if nothing was appended since the read;
        otherwise it re-reads and waits another gap) or ``in-append``.
    locks:
        What it locks: ``nothing``, ``appends-until-act`` (a critical section from the read to the
        act that appends also take) or ``store-while-trimming`` (the append holds the store for the
        ``G`` slots its trim takes).
    deletes:
        ``count-read`` deletes ``count_read − M``; ``live-at-commit`` deletes ``live − M``
        computed at commit time.
    peak_after_gap, turns_to_peak_after_gap, post_after_gap:
        The closed forms for ``G ≥ 1`` (``A``, ``G``, ``M`` → value; None: unbounded): the
        instantaneous worst-case peak, the turns per writer a run needs to reach it, and the worst
        case right after a compaction (see the module docstring for the derivations).
    declared:
        The bound the strategy promises, ``(A or None for unbounded arrivals, G, M) → bound``.
    peak_formula, post_formula:
        The two closed forms in words, for ``G ≥ 1`` (the cross-check lines print them).
    strength:
        Rank by the guarantee (0: weakest); plots list strategies in this order.
    colour, marker:
        The house colour and marker of the strategy's series in every plot.

    Invariant: every closed form is a pure function of ``(A, G, M)``; ``G = 0`` is handled once,
    by the methods below (every strategy then peaks at, and compacts to, exactly ``M``).
    """

    name: str
    title: str
    doc: str
    reads: Reads
    acts: Acts
    locks: Locks
    deletes: Deletes
    peak_after_gap: Bound
    turns_to_peak_after_gap: Bound
    post_after_gap: Callable[[int, int, int], int]
    declared: Callable[[int | None, int, int], int | None]
    peak_formula: str
    post_formula: str
    strength: int
    colour: str
    marker: str

    # -- the rule, as the model's hot paths read it --------------------------------------------

    @property
    def blocks_appends_in_gap(self) -> bool:
        """Appends wait from the read to the act (the compactor's critical section)."""
        return self.locks == "appends-until-act"

    @property
    def commit_needs_clean(self) -> bool:
        """The act commits only if no turn was appended since the read."""
        return self.acts == "after-gap-if-unchanged"

    @property
    def trims_in_append(self) -> bool:
        """The trigger is evaluated and the trim done inside the append."""
        return self.acts == "in-append"

    @property
    def always_bounded(self) -> bool:
        """The strategy declares a bound whatever the arrivals, even unbounded (Poisson) ones."""
        return self.declared(None, 1, 1) is not None

    @property
    def trims_to(self) -> bool:
        """The delete count is computed at commit time (``live − M``), not at the read."""
        return self.deletes == "live-at-commit"

    def delete_count(self, live: int, count_read: int, max_turns: int) -> int:
        """Turns one successful act deletes: the compaction arithmetic, written once."""
        if self.deletes == "live-at-commit":
            return live - max_turns if live > max_turns else 0
        return count_read - max_turns

    # -- closed forms ---------------------------------------------------------------------------

    def worst_case_peak(self, writers: int, gap: int, max_turns: int) -> int | None:
        """The instantaneous worst-case peak of live turns (None: unbounded)."""
        return max_turns if gap == 0 else self.peak_after_gap(writers, gap, max_turns)

    def turns_to_reach_worst_case(self, writers: int, gap: int, max_turns: int) -> int | None:
        """Turns per writer a run needs for :meth:`worst_case_peak` (None: unbounded)."""
        if gap == 0:
            return _ceil(max_turns, writers)
        return self.turns_to_peak_after_gap(writers, gap, max_turns)

    def post_compaction_peak(self, writers: int, gap: int, max_turns: int) -> int:
        """The worst case of the live turns right after a compaction (always finite)."""
        return max_turns if gap == 0 else self.post_after_gap(writers, gap, max_turns)

    def turns_to_reach_post_compaction_peak(self, writers: int, gap: int, max_turns: int) -> int:
        """Turns per writer a run needs for :meth:`post_compaction_peak`: a saturated gap after
        filling the log when the peak is above ``M``, else one firing of the trigger."""
        if self.post_compaction_peak(writers, gap, max_turns) > max_turns:
            return _ceil(max_turns, writers) + gap
        return _ceil(max_turns + 1, writers)

    def peak_formula_at(self, gap: int) -> str:
        """:meth:`worst_case_peak` in words."""
        return "M" if gap == 0 else self.peak_formula

    def post_formula_at(self, writers: int, gap: int, max_turns: int) -> str:
        """:meth:`post_compaction_peak` in words."""
        return "M" if self.post_compaction_peak(writers, gap, max_turns) == max_turns else self.post_formula

    def declared_bound(self, writers: int | None, gap: int, max_turns: int) -> int | None:
        """The live-turn bound this strategy guarantees, or None when it guarantees none.

        Parameters
        ----------
        writers:
            Maximum turns appended per slot (``A``); None for unbounded (Poisson) arrivals.
        gap, max_turns:
            ``G`` and ``M`` of the trigger.
        """
        return self.declared(writers, gap, max_turns)

    def checked_bound(self, writers: int | None, gap: int, max_turns: int) -> int:
        """The bound ``bounded-peak-turns`` checks: the declared one, else ``maxTurns`` itself.

        A strategy that declares nothing is held to the nominal promise of the trigger's name,
        ``maxTurns`` — the promise the check-then-act gap breaks.
        """
        bound = self.declared_bound(writers, gap, max_turns)
        return max_turns if bound is None else bound


def _cas_peak(a: int, g: int, m: int) -> int | None:
    return m + 1 if a * g == 1 else None


def _cas_turns(a: int, g: int, m: int) -> int | None:
    return m + 1 if a * g == 1 else None


def _none_turns(a: int, g: int, m: int) -> int | None:
    # with A·G = 1, none never carries a backlog: one saturated gap reaches the peak
    return _ceil(m, a) + (g if a * g == 1 else 2 * g)


def _trim_to_declared(a: int | None, g: int, m: int) -> int | None:
    return None if a is None else m + a * g


LOCKINGS: Registry[Locking] = Registry("locking strategy")
"""Every locking strategy by name: the built-ins below, then what extensions registered."""


def register_locking(strategy: Locking) -> Locking:
    """Register ``strategy`` under its name; refused if the name or the colour is taken."""
    return LOCKINGS.register(strategy.name, strategy)


LOCKING_NAMES: tuple[str, ...] = tuple(register_locking(s).name for s in (
        Locking(
            "none", "no lock", "no lock: read the count, delete count_read − maxTurns a gap later",
            reads="on-trigger", acts="after-gap", locks="nothing", deletes="count-read",
            peak_after_gap=lambda a, g, m: m + 2 * a * g - 1,
            turns_to_peak_after_gap=_none_turns,
            post_after_gap=lambda a, g, m: max(m, m + a * g - 1),
            declared=lambda a, g, m: None,
            peak_formula="M + 2·A·G − 1", post_formula="M + A·G − 1",
            strength=0, colour="#843c39", marker="o",
        ),
        Locking(
            "mutex", "mutex", "read and delete in one critical section that appends also take",
            reads="on-trigger", acts="after-gap", locks="appends-until-act", deletes="count-read",
            peak_after_gap=lambda a, g, m: m + 1,
            turns_to_peak_after_gap=lambda a, g, m: _ceil(m + 1, a),
            post_after_gap=lambda a, g, m: m,
            declared=lambda a, g, m: m + (1 if g > 0 else 0),
            peak_formula="M + 1", post_formula="M",
            strength=3, colour="#6baed6", marker="D",
        ),
        Locking(
            "cas", "compare-and-swap",
            "versioned commit: the delete fails if anything was appended since the read, then retries",
            reads="on-trigger-and-after-conflict", acts="after-gap-if-unchanged", locks="nothing",
            deletes="count-read",
            peak_after_gap=_cas_peak,
            turns_to_peak_after_gap=_cas_turns,
            post_after_gap=lambda a, g, m: m,
            declared=lambda a, g, m: None,
            peak_formula="M + 1 if A·G = 1, else unbounded", post_formula="M",
            strength=1, colour="#e7969c", marker="s",
        ),
        Locking(
            "append-sync", "trim inside the append",
            "the trigger is evaluated and the trim done inside the append",
            reads="in-append", acts="in-append", locks="store-while-trimming", deletes="count-read",
            peak_after_gap=lambda a, g, m: m,
            turns_to_peak_after_gap=lambda a, g, m: _ceil(m, a),
            post_after_gap=lambda a, g, m: m,
            declared=lambda a, g, m: m,
            peak_formula="M", post_formula="M",
            strength=4, colour="#74c476", marker="v",
        ),
        Locking(
            "trim-to", "trim to maxTurns at commit", "no lock; the delete count is computed at commit time",
            reads="on-trigger", acts="after-gap", locks="nothing", deletes="live-at-commit",
            peak_after_gap=lambda a, g, m: m + a * g,
            turns_to_peak_after_gap=lambda a, g, m: _ceil(m, a) + g,
            post_after_gap=lambda a, g, m: m,
            declared=_trim_to_declared,
            peak_formula="M + A·G", post_formula="M",
            strength=2, colour="#8c6d31", marker="^",
        ),
))  # fmt: skip
"""The built-in strategies: what a scenario runs unless told otherwise, so results stay the same
whatever extensions are installed."""
ALWAYS_BOUNDED: tuple[str, ...] = tuple(n for n in LOCKING_NAMES if LOCKINGS[n].always_bounded)

if TYPE_CHECKING:
    LockingName = str
else:  # the choices typer offers are the table's names, in its order
    LockingName = Literal[LOCKING_NAMES]


def locking(name: str) -> Locking:
    """The strategy called ``name``; raises :class:`~turncheck.models.registry.UnknownRegistration`
    (an ``UnknownName``) listing the known ones."""
    return LOCKINGS[name]


def by_strength(names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Strategy names from the weakest guarantee to the strongest (the plots' order)."""
    return tuple(sorted(names or LOCKING_NAMES, key=lambda n: LOCKINGS[n].strength))


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
    return locking(strategy).worst_case_peak(writers, gap, max_turns)


def turns_to_reach_worst_case(writers: int, gap: int, max_turns: int, strategy: str) -> int | None:
    """Turns per writer a run needs for the worst-case peak to be reachable (None: unbounded).

    The witness runs fill the log to ``M`` (``⌈M/A⌉`` slots) and then saturate one gap
    (``trim-to``: every writer appends in each of its ``G`` slots) or two consecutive gaps
    (``none``, when ``A·G ≥ 2``); ``mutex`` and ``cas`` with ``A·G = 1`` need one turn past
    ``M``; ``append-sync`` and ``G = 0`` only ``M`` turns. Tight: one turn fewer per writer
    does not reach the worst case (checked by ``tests/test_trigger.py``).
    """
    return locking(strategy).turns_to_reach_worst_case(writers, gap, max_turns)


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
    return locking(strategy).post_compaction_peak(writers, gap, max_turns)


def turns_to_reach_post_compaction_peak(writers: int, gap: int, max_turns: int, strategy: str) -> int:
    """Turns per writer a run needs to reach :func:`post_compaction_peak`.

    ``none`` with ``A·G ≥ 2`` needs ``M + A·G`` turns in all — ``M`` to fill, the reading turn,
    ``A·G − 1`` in its gap — so ``⌈M/A⌉ + G`` per writer; every other case needs the trigger to
    fire once, ``M + 1`` turns: ``⌈(M + 1)/A⌉`` per writer. Tight: one turn fewer per writer
    leaves too few turns in all (checked by ``tests/test_post_compaction.py``).
    """
    return locking(strategy).turns_to_reach_post_compaction_peak(writers, gap, max_turns)
