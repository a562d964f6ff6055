"""openai-agents-js's automatic compaction against concurrent writes: PR #1842.

``OpenAIResponsesCompactionSession`` wraps a session; after a run appends its result, automatic
compaction takes the session's items, awaits ``responses.compact`` and then *replaces* the
session's contents with the compacted output. PR #1842 ("fix(sessions): preserve concurrent
writes during automatic compaction") fixes that replacement overwriting writes made through the
same session instance after the run read its history or appended its result: a write that lands
after the snapshot (``variant=buggy``) is neither in the replacement nor summarised by it — it is
silently gone (the Python SDK's twin is issue #4679). The fix (``variant=fixed``) carries an
ownership receipt through persistence and compaction: the receipt is the session's mutation count
after the run's own read or append, any other write makes it stale, and a stale receipt skips
automatic compaction — both when it would start and when its result would be written — while
the appends are kept.

The invariant ``no-write-lost``: every item ever written is in the session, raw or summarised by
the compaction item there. The goal ``compaction-replaced``: some run's compaction is written.
One run and ``writes`` concurrent writes through the same session instance.

The replacement itself is two writes, in both variants and on main still
(``packages/agents-openai/src/memory/openaiResponsesCompactionSession.ts``)::

    await this.underlyingSession.clearSession();
    if (outputItems.length > 0) {
      await this.underlyingSession.addItems(outputItems);
    }

— the Python SDK's issue #3116, with no restore. ``crashes=1`` declares the crash window between
them (:mod:`turncheck.models.crash_points`): the compactor dies after ``clearSession``, the
session is empty, and ``no-write-lost`` fails in both variants (PR #1842 is about concurrent
writes, not this). ``crashes=0``, the default, leaves it out, so the catalogue's verdicts are
PR #1842's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.crash_points import CrashPoint
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property

NONE = -1
START, READ, APPENDED, COMPACTING, DONE = "start", "read", "appended", "compacting", "done"


class State(NamedTuple):
    """``items``: the session's items, oldest first; ``summarised``: the items the compaction
    item in the session stands for; ``written``: every item ever written; ``generation``: the
    session's mutation count; ``receipt``: the run's ownership receipt (the generation it last
    saw as owner; -1: none); ``phase``: the run's progress; ``snapshot``: the items sent to
    ``responses.compact``; ``writes``: concurrent writes made."""

    items: tuple[str, ...]
    summarised: tuple[str, ...]
    written: tuple[str, ...]
    generation: int
    receipt: int
    phase: str
    snapshot: tuple[str, ...]
    writes: int


class AutomaticCompaction(VendorModel[State]):
    """One run (read, append, compact) and concurrent writes through the same session."""

    name = "agents-js-compaction"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "openai-agents-js before PR #1842: the compacted output replaces the "
            "session's items, writes made after the snapshot included",
        ),
        Variant(
            "fixed",
            "upstream",
            "openai-agents-js PR #1842 (merged): the ownership receipt; a stale "
            "receipt skips automatic compaction",
        ),
    )
    lanes = ("run", "writer", "compactor")
    update_writes = (
        "two: replaceHistoryWithCompaction is clearSession, then addItems; crashes=1 declares the "
        "crash window"
    )

    def __init__(self, variant: str = "buggy", writes: int = 1, crashes: int = 0) -> None:
        super().__init__(variant)
        if crashes not in (0, 1):
            raise BadParameter(f"model {self.name}: parameter crashes: must be 0 or 1, got {crashes}")
        self.writes, self.crashes = writes, crashes
        self.params = {"variant": variant, "writes": writes, "crashes": crashes}

    def init_states(self) -> Iterator[State]:
        yield State(("user",), (), ("user",), 1, NONE, START, (), 0)

    def owner(self, state: State) -> bool:
        return self.variant == "buggy" or state.receipt == state.generation

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.phase == START:
            out.append(("read",))
        elif state.phase == READ:
            out.append(("append",))
        elif state.phase == APPENDED:
            out.append(("compact",) if self.owner(state) else ("skip",))
        elif state.phase == COMPACTING:
            out.append(("replace",) if self.owner(state) else ("skip",))
        if state.writes < self.writes:
            out.append(("write",))
        return out

    def step(self, state: State, action: Action) -> State:
        verb = action[0]
        if verb == "read":
            return state._replace(receipt=state.generation, phase=READ)
        if verb == "append":
            receipt = state.generation + 1 if state.receipt == state.generation else state.receipt
            return state._replace(items=(*state.items, "result"), written=(*state.written, "result"),
                                  generation=state.generation + 1, receipt=receipt, phase=APPENDED)  # fmt: skip
        if verb == "write":
            item = f"write {state.writes}"
            return state._replace(items=(*state.items, item), written=(*state.written, item),
                                  generation=state.generation + 1, writes=state.writes + 1)  # fmt: skip
        if verb == "compact":
            return state._replace(phase=COMPACTING, snapshot=state.items)
        if verb == "skip":
            return state._replace(phase=DONE, snapshot=())
        covered = tuple(i for i in state.snapshot if i != "compaction") + (
            state.summarised if "compaction" in state.snapshot else ()
        )
        return state._replace(items=("compaction",), summarised=covered, generation=state.generation + 1,
                              phase=DONE, snapshot=())  # fmt: skip

    def crash_points(self, state: State) -> Sequence[CrashPoint[State]]:
        """With ``crashes=1``: the compactor about to write its replacement may die between
        ``clearSession`` and ``addItems`` — the session is left empty, the compacted output (in
        memory only) is lost, and the run is over."""
        if not self.crashes or state.phase != COMPACTING or not self.owner(state):
            return ()
        after = state._replace(items=(), summarised=(), generation=state.generation + 1, phase=DONE, snapshot=())
        return (CrashPoint("compactor", "after clearSession, before addItems", after, restarts=False),)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "no-write-lost",
                "always",
                lambda s: all(i in s.items or i in s.summarised for i in s.written),
                "every item written is in the session, raw or summarised by its compaction item",
            ),
            Property(
                "compaction-replaced",
                "sometimes",
                lambda s: "compaction" in s.items,
                "a compaction is written",
            ),
        )

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        if verb == "read":
            return f"run reads its history (receipt {state.generation})"
        if verb == "append":
            return "run appends its result"
        if verb == "write":
            return f"writer adds write {state.writes} through the same session"
        if verb == "compact":
            return f"compactor sends {len(state.items)} items to responses.compact"
        if verb == "skip":
            return f"compactor skips: receipt {state.receipt} is stale (session at {state.generation})"
        return f"compactor replaces the session with the compaction of {len(state.snapshot)} items"

    def columns(self, state: State) -> dict[str, object]:
        return {"items": len(state.items), "generation": state.generation}

    def describe_window(self, state: State) -> str:
        lost = [i for i in state.written if i not in state.items and i not in state.summarised]
        shown = "session: " + " · ".join(state.items)
        return shown + (f"  (lost: {', '.join(lost)})" if lost else "")

    panel_title = "the session's items"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        lost = [i for i in state.written if i not in state.items and i not in state.summarised]
        shown = [(i, ()) if i != "compaction" else (f"compaction of {', '.join(state.summarised)}", ())
                 for i in state.items]  # fmt: skip
        return shown + [(f"{i}: not in the session", ("lost",)) for i in lost]


register_model(
    AutomaticCompaction.name,
    AutomaticCompaction,
    description="openai-agents-js compaction overwriting concurrent writes vs the ownership receipt (PR #1842)",
)
