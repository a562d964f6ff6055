"""Google ADK: an orphaned ``function_call`` disables compaction for ever — adk-python #7236.

ADK cuts a compaction window at ``_longest_self_contained_prefix``: it walks the events since the
last compaction keeping the set of call ids still open (a ``function_call`` opens its id, the
matching ``function_response`` closes it) and cuts only where that set is empty. When the process
running a tool dies (a pod restart), its call never gets a response: an *orphan*. The first
compaction cuts just before it, so the orphan is the first event of every later window, the set
never empties again, ``safe_length`` stays 0 and the prompt grows past ``token_threshold`` with
no compaction, no log and no error. Nothing is ever wrong in any one state: the property broken
is liveness — *whenever the window is over the threshold, a compaction eventually runs* — and the
counterexample is a lasso.

``variant=buggy`` is that helper; ``variant=dead-call-retry`` is the retry of PR #7237 (open,
not merged): when the strict pass
finds no cut, cut again ignoring the calls provably dead (no response anywhere in the session,
and no tool still running them).

The window keeps its first ``threshold + 1`` events and any response to a call among them, which
is all the cut and the threshold read: past that a user turn only makes an over-threshold prompt
longer (the step says so; a tool is called only below the threshold), so the state space is finite and a session that never compacts again goes round a loop. Fairness: the
compactor is strongly fair (a call in flight disables it, and a session keeps calling tools), a
tool call in flight eventually responds or dies (weakly fair).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import FieldValue, Property

TURN, CALL, RESPONSE, ORPHAN = "turn", "function_call", "function_response", "orphaned function_call"


class State(NamedTuple):
    """``window``: the events since the last compaction, oldest first (a call whose tool died is
    an ``orphaned function_call``); ``calling``: a tool is running the last call; ``compacted``:
    a compaction has run."""

    window: tuple[str, ...]
    calling: bool
    compacted: bool


class OrphanCompaction(VendorModel[State]):
    """A user, an agent calling a tool that may die, and ADK's token-threshold compactor."""

    name = "adk-orphan-compaction"
    variants = (
        Variant("buggy", "buggy", "google-adk's _longest_self_contained_prefix (2.9.2 in adk-python #7236)"),
        Variant(
            "dead-call-retry",
            "proposed",
            "adk-python PR #7237 (open): retry the cut ignoring calls provably dead",
        ),
    )
    renamed = {"fixed": "dead-call-retry"}
    lanes = ("user", "agent", "tool", "compactor")
    update_writes = (
        "one: a compaction is one appended compaction event (append_event); the events it "
        "summarises stay, so a crash leaves the session as it was or with the summary"
    )

    def __init__(self, variant: str = "buggy", threshold: int = 3) -> None:
        super().__init__(variant)
        self.threshold = threshold
        self.params = {"variant": variant, "threshold": threshold}

    def init_states(self) -> Iterator[State]:
        yield State((), False, False)

    def safe_length(self, window: Sequence[str]) -> int:
        """``_longest_self_contained_prefix``: the longest prefix with no call left open — with
        ``dead-call-retry``, retried ignoring orphans when the strict pass finds none."""
        strict = _balanced_prefix(window, ignore_orphans=False)
        if strict or self.variant == "buggy":
            return strict
        return _balanced_prefix(window, ignore_orphans=True)

    def over(self, state: State) -> bool:
        return len(state.window) > self.threshold

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.calling:
            out += [("respond",), ("die",)]
        else:
            out.append(("user",))
            if not self.over(state):
                out.append(("call",))
        if self.over(state) and self.safe_length(state.window):
            out.append(("compact",))
        return out

    def step(self, state: State, action: Action) -> State:
        verb, window = action[0], state.window
        if verb == "compact":
            return state._replace(window=window[self.safe_length(window) :], compacted=True)
        if verb == "die":
            last = len(window) - 1 - window[::-1].index(CALL)
            return state._replace(window=(*window[:last], ORPHAN, *window[last + 1 :]), calling=False)
        event = {"user": TURN, "call": CALL, "respond": RESPONSE}[verb]
        if verb == "user" and self.over(state):  # over the threshold already: the prompt only grows
            return state
        return state._replace(window=(*window, event), calling=verb == "call")

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property.leads_to(
                "compaction-runs-when-over-threshold",
                self.over,
                lambda s: not self.over(s),
                f"whenever the prompt is over token_threshold ({self.threshold} events), a compaction "
                "eventually runs",
            ),
            Property("a-compaction-runs", "sometimes", lambda s: s.compacted, "a compaction runs"),
        )

    def fair_actions(self) -> tuple[Hashable, ...]:
        return ("respond", "die")

    def strongly_fair_actions(self) -> tuple[Hashable, ...]:
        return ("compact",)

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        if verb == "compact":
            n = self.safe_length(state.window)
            return f"compactor summarises the first {n} event(s) (safe_length {n})"
        if verb == "die":
            return "tool process dies: its function_call never gets a response (orphan)"
        if verb == "respond":
            return "tool returns its function_response"
        if verb == "call":
            return "agent emits a function_call and waits for the tool"
        if self.over(state):
            safe = self.safe_length(state.window)
            return f"user sends a turn: the prompt grows, over token_threshold, safe_length {safe}"
        return "user sends a turn"

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        return [
            ("window since the last compaction", [f"{k}: {e}" for k, e in enumerate(state.window)]),
            ("safe_length", str(self.safe_length(state.window))),
            ("tool running", "yes" if state.calling else "no"),
        ]

    def columns(self, state: State) -> dict[str, object]:
        return {"window": len(state.window), "safe": self.safe_length(state.window)}

    def describe_window(self, state: State) -> str:
        over = "over" if self.over(state) else "within"
        return (
            f"{len(state.window)} event(s) since the last compaction, {over} token_threshold {self.threshold}"
        )

    panel_title = "the events since the last compaction"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        return [(e, ("orphan",) if e == ORPHAN else ()) for e in state.window]


def _balanced_prefix(window: Sequence[str], ignore_orphans: bool) -> int:
    """The longest prefix after which no call is open (calls and responses pair in order: one
    tool call runs at a time)."""
    open_calls, best = 0, 0
    for k, e in enumerate(window, start=1):
        if e == CALL or (e == ORPHAN and not ignore_orphans):
            open_calls += 1
        elif e == RESPONSE:
            open_calls -= 1
        if open_calls == 0:
            best = k
    return best


register_model(
    OrphanCompaction.name,
    OrphanCompaction,
    description="ADK: an orphaned function_call freezes safe_length at 0, compaction never runs again (#7236, PR #7237)",
)
