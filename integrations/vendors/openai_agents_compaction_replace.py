"""openai-agents-python's compaction replacement: clear, then add — issue #3116, PR #3117.

``OpenAIResponsesCompactionSession.run_compaction()`` calls ``responses.compact`` and then
replaces the underlying session's items with its output in two writes::

    await self.underlying_session.clear_session()
    ...
    if output_items:
        await self.underlying_session.add_items(output_items)

"If ``clear_session()`` succeeds and ``add_items()`` fails, the original session history has
already been deleted" (issue #3116, ``variant=buggy``). PR #3117 (merged, closes #3116;
``variant=restore-on-failure``) snapshots the history before the clear and re-adds it when the
replacement write fails. That handler runs on an exception; a process that dies between the two
writes runs nothing, and the snapshot was only in memory — the crash window stays, as
``turncheck race --faults`` finds against the real 0.24.0 (docs/races.md).
``variant=one-step-swap`` (a design of ours) writes the replacement as one step, which a failure
or a crash leaves whole or not at all.

Two faults are declared: ``add_items`` raising once (an action of the model, which the variant's
handler meets) and the session's process crashing mid-compaction (a crash point,
:mod:`turncheck.models.crash_points`: the store keeps what it holds, the compacted output and
the snapshot in memory are lost, the process restarts). ``crashes=0`` leaves the crash out,
which the upstream fix then passes.

The invariant ``history-kept``: with no compaction in flight, every item the session held is
stored, raw or summarised by a compaction item. The goal ``compaction-written``. Bounded by one
compaction of the persisted ``user 0``, ``assistant 0``, one failure and ``crashes`` crashes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.crash_points import CrashPoint
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property

Items = tuple[str, ...]
IDLE, COMPACTED, CLEARED = "idle", "compacted", "cleared"
HISTORY: Items = ("user 0", "assistant 0")
COMPACTION = "compaction of user 0, assistant 0"


def covered(stored: Items) -> set[str]:
    """The items ``stored`` holds, raw or summarised by its compaction item."""
    return set(stored) | (set(HISTORY) if COMPACTION in stored else set())


class State(NamedTuple):
    """``stored``: the underlying session's items (durable); ``phase``: where ``run_compaction``
    is; ``output``: the compacted items and ``snapshot`` the history kept for a restore (both in
    memory only); ``compactions``/``failures``/``crashes``: so far."""

    stored: Items
    phase: str
    output: Items
    snapshot: Items
    compactions: int
    failures: int
    crashes: int


class CompactionReplace(VendorModel[State]):
    """One compaction replacing the session's items, with a failing write and a crash."""

    name = "openai-agents-compaction-replace"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "openai-agents-python before PR #3117 (0.6.7 checked by race --faults): clear_session, "
            "then add_items, nothing restores (issue #3116)",
        ),
        Variant(
            "restore-on-failure",
            "upstream",
            "openai-agents-python PR #3117 (merged, in 0.24.0): snapshot, clear, add, re-add the "
            "snapshot when add_items raises",
        ),
        Variant("one-step-swap", "proposed", "ours: the replacement written as one step"),
    )
    lanes = ("session",)
    update_writes = (
        "two: clear_session, then add_items (#3116); the crash window is declared (crashes=1, the "
        "default); one-step-swap is one write"
    )

    def __init__(self, variant: str = "buggy", crashes: int = 1) -> None:
        super().__init__(variant)
        if not 0 <= crashes <= 3:
            raise BadParameter(f"model {self.name}: parameter crashes: must be 0..3, got {crashes}")
        self.crashes = crashes
        self.params = {"variant": variant, "crashes": crashes}

    def init_states(self) -> Iterator[State]:
        yield State(HISTORY, IDLE, (), (), 0, 0, 0)

    def actions(self, state: State) -> list[Action]:
        if state.phase == IDLE:
            return [("compact",)] if state.compactions < 1 else []
        if state.phase == COMPACTED:
            write = ("swap",) if self.variant == "one-step-swap" else ("clear",)
            return [write, *([("swap-fails",)] if write == ("swap",) and state.failures < 1 else [])]
        return [("add",), *([("add-fails",)] if state.failures < 1 else [])]

    def step(self, state: State, action: Action) -> State:
        verb = action[0]
        if verb == "compact":
            snapshot = state.stored if self.variant == "restore-on-failure" else ()
            return state._replace(phase=COMPACTED, output=(COMPACTION,), snapshot=snapshot,
                                  compactions=state.compactions + 1)  # fmt: skip
        if verb == "clear":
            return state._replace(stored=(), phase=CLEARED)
        done = state._replace(phase=IDLE, output=(), snapshot=())
        if verb in ("add", "swap"):
            return done._replace(stored=state.output)
        # add_items or the swap raised: PR #3117 re-adds its snapshot, the others do nothing
        restored = (
            state.snapshot if verb == "add-fails" and self.variant == "restore-on-failure" else state.stored
        )
        return done._replace(stored=restored, failures=state.failures + 1)

    def crash_points(self, state: State) -> Sequence[CrashPoint[State]]:
        if state.phase == IDLE or state.crashes >= self.crashes:
            return ()
        where = {COMPACTED: "after responses.compact, before its first write",
                 CLEARED: "after clear_session, before add_items"}[state.phase]  # fmt: skip
        after = state._replace(phase=IDLE, output=(), snapshot=(), crashes=state.crashes + 1)
        return (CrashPoint("session", where, after),)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "history-kept",
                "always",
                lambda s: s.phase != IDLE or set(HISTORY) <= covered(s.stored),
                "with no compaction in flight, every item the session held is stored, raw or compacted",
            ),
            Property(
                "compaction-written",
                "sometimes",
                lambda s: COMPACTION in s.stored,
                "the compacted output replaces the history",
            ),  # fmt: skip
        )

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        kept = " (snapshot kept in memory)" if self.variant == "restore-on-failure" else ""
        return {
            "compact": f"session runs responses.compact on {len(state.stored)} items{kept}",
            "clear": "session clear_session: the session is empty",
            "add": "session add_items(the compacted output)",
            "swap": "session swaps in the compacted output in one write",
            "swap-fails": "session swap raises: nothing was written",
            "add-fails": "session add_items raises"
            + (
                ": the snapshot is added back"
                if self.variant == "restore-on-failure"
                else ": the history is gone"
            ),
        }[verb]

    def columns(self, state: State) -> dict[str, object]:
        return {"stored": len(state.stored), "covered": len(covered(state.stored) & set(HISTORY))}

    def describe_window(self, state: State) -> str:
        return "session: " + (" · ".join(state.stored) or "nothing")

    panel_title = "what get_items returns"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        lost = [m for m in HISTORY if m not in covered(state.stored)]
        return [(m, ()) for m in state.stored] + [(m, ("lost",)) for m in lost]


register_model(
    CompactionReplace.name,
    CompactionReplace,
    description="openai-agents run_compaction clears, then adds (#3116); PR #3117 restores on error, not on a crash",
)
