"""Spring AI Session: a branch-only conversation never compacts — spring-ai-session #35.

Spring AI Session writes a sub-agent's (or a forked conversation's) events to a *branch* of the
session. Its compaction lifecycle still counts root events only: ``CompactionRequest.of()`` and
the strategies take their turn boundaries from root events, so a conversation that lives on a
branch has zero root turns, and ``TurnCountTrigger(maxTurns)`` never fires however long the
branch grows — "compaction starvation", as PR #38 names it. No state is ever wrong: the broken
property is liveness — *whenever the active branch holds more than maxTurns turns, a compaction
eventually archives them* — and its counterexample is a lasso.

``variant=buggy`` counts and compacts root turns only; ``variant=scoped`` is the open (not
merged) PRs #36–#38's
``CompactionScope``: the trigger counts the turns each scope owns (the root's, the branch's) and
a compaction archives only that scope's events.

Each scope's turn count is kept up to ``max_turns + 1`` — all the trigger reads — so a branch that
keeps talking after it is over the limit goes round a loop. Each scope's compaction is weakly
fair (a user turn never disables it), named as the action ``("compact", scope)``: fairness by the
kind ``compact`` alone would let the root's compactions excuse a branch that never compacts.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import FieldValue, Property

SCOPES = ("root", "branch")


class State(NamedTuple):
    """Turns since the last compaction of each scope (each kept up to ``max_turns + 1``), and
    whether a compaction has archived anything."""

    root: int
    branch: int
    compacted: bool


class BranchCompaction(VendorModel[State]):
    """A user talking on the session's root and on a branch, and ``TurnCountTrigger(maxTurns)``."""

    name = "spring-ai-session-branch"
    variants = (
        Variant("buggy", "buggy", "spring-ai-session: TurnCountTrigger counts root turns only (issue #35)"),
        Variant(
            "scoped",
            "proposed",
            "spring-ai-session PRs #36-#38 (open): CompactionScope, each scope "
            "counted and compacted on its own",
        ),
    )
    renamed = {"fixed": "scoped"}
    lanes = ("user", "trigger")
    update_writes = (
        "not modelled: the model checks whether the trigger fires on a branch (liveness), not how a "
        "compaction writes its archive, which was not read, so no crash window is claimed either "
        "way"
    )

    def __init__(self, variant: str = "buggy", max_turns: int = 2) -> None:
        super().__init__(variant)
        self.max_turns = max_turns
        self.params = {"variant": variant, "max_turns": max_turns}

    def init_states(self) -> Iterator[State]:
        yield State(0, 0, False)

    def due(self, state: State) -> tuple[str, ...]:
        """The scopes the trigger sees over ``maxTurns``: the root only (buggy), or each scope."""
        return tuple(
            scope for scope in SCOPES if self.counts(scope) and getattr(state, scope) > self.max_turns
        )

    def counts(self, scope: str) -> bool:
        """Whether the trigger counts ``scope``'s turns: the root's always, a branch's when scoped."""
        return scope == "root" or self.variant != "buggy"

    def actions(self, state: State) -> list[Action]:
        return [("turn", "root"), ("turn", "branch"), *(("compact", scope) for scope in self.due(state))]

    def step(self, state: State, action: Action) -> State:
        verb, scope = action
        if verb == "compact":
            return (
                state._replace(root=0, compacted=True)
                if scope == "root"
                else state._replace(branch=0, compacted=True)
            )
        grown = min(getattr(state, scope) + 1, self.max_turns + 1)
        return state._replace(root=grown) if scope == "root" else state._replace(branch=grown)

    def properties(self) -> tuple[Property[State], ...]:
        m = self.max_turns
        return (
            Property.leads_to(
                "branch-compacted",
                lambda s: s.branch > m,
                lambda s: s.branch <= m,
                f"whenever the active branch holds more than maxTurns = {m} turns, a compaction eventually "
                "archives them",
            ),
            Property.leads_to(
                "root-compacted",
                lambda s: s.root > m,
                lambda s: s.root <= m,
                f"whenever the root holds more than maxTurns = {m} turns, a compaction eventually archives them",
            ),
            Property("a-compaction-runs", "sometimes", lambda s: s.compacted, "a compaction archives turns"),
        )

    def fair_actions(self) -> tuple[Hashable, ...]:
        # each scope's compaction on its own: by kind, archiving the root would excuse the branch
        return tuple(("compact", scope) for scope in SCOPES)

    def format_action(self, state: State, action: Action) -> str:
        verb, scope = action
        if verb == "compact":
            return f"trigger fires: {getattr(state, scope)} {scope} turns > maxTurns, {scope} compacted"
        count = getattr(state, scope)
        shown = f"{count + 1}" if count <= self.max_turns else f"over {self.max_turns}"
        seen = "" if self.counts(scope) else "; the trigger counts none"
        return f"user adds a turn on the {scope} ({scope} turns {shown}{seen})"

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        return [
            ("root turns since compaction", str(state.root)),
            ("branch turns since compaction", str(state.branch)),
            ("trigger sees over maxTurns", ", ".join(self.due(state)) or "nothing"),
        ]

    def columns(self, state: State) -> dict[str, object]:
        return {"root": state.root, "branch": state.branch}

    def describe_window(self, state: State) -> str:
        return f"root {state.root} turn(s), branch {state.branch} turn(s) since their last compaction"

    panel_title = "turns since the last compaction, by scope"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        m = self.max_turns
        return [
            (
                f"{scope}: {getattr(state, scope)} turn(s)",
                ("over maxTurns",) if getattr(state, scope) > m else (),
            )
            for scope in SCOPES
        ]


register_model(
    BranchCompaction.name,
    BranchCompaction,
    description="Spring AI Session: TurnCountTrigger counts root turns, a branch-only conversation never compacts (#35)",
)
