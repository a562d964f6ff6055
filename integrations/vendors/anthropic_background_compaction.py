"""Anthropic's background compaction swap, from the Claude Platform docs.

"Compaction in the background" (platform.claude.com/docs/en/build-with-claude/compaction-background)
lets the conversation go on while a compaction request runs: *send the compaction request with
your history as it stands, and record how many messages it held*; keep appending turns; when the
response arrives, *drop exactly the messages you sent from the front of your history and put the
returned message in their place*. The procedure never says where the request may start. Started
right after an assistant message with a ``tool_use`` (``variant=buggy``), the request holds the
``tool_use`` but not its ``tool_result``, which is appended while the request runs; the swap then
drops the ``tool_use`` and leaves a ``tool_result`` with no ``tool_use`` before it — the next
request is refused by the Messages API. Not starting a compaction on an unanswered ``tool_use``
(``variant=guarded``, a design of ours: the docs name no guard) keeps every pair on one side of the
cut.

The invariant ``tool-result-follows-its-use``: every ``tool_result`` in the history is the
message right after the ``tool_use`` it answers. The goal ``compaction-swapped-in``: some run
swaps a summary in. Bounded by ``messages`` appended and ``compactions`` swapped in, one request
in flight at a time as the docs require; each check is exhaustive in a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import Property

NONE = -1


class State(NamedTuple):
    """``history``: the messages, oldest first (``user``, ``tool_use tN``, ``tool_result tN``,
    ``assistant``, ``compaction``); ``sent``: how many messages the compaction request in flight
    held (-1: none in flight); ``appended``: messages appended so far; ``calls``: tool_use ids
    handed out; ``swapped``: compactions swapped in."""

    history: tuple[str, ...]
    sent: int
    appended: int
    calls: int
    swapped: int


def orphaned(history: tuple[str, ...]) -> list[int]:
    """Positions of the tool_results not right after the tool_use they answer."""
    return [
        k
        for k, m in enumerate(history)
        if m.startswith("tool_result") and (k == 0 or history[k - 1] != "tool_use" + m[len("tool_result") :])
    ]


class BackgroundCompaction(VendorModel[State]):
    """A user, an agent with one tool, and a background compactor swapping a summary in."""

    name = "anthropic-background-compaction"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "the procedure of platform.claude.com/docs/en/build-with-claude/compaction-background, "
            "which never says where a compaction request may start",
        ),
        Variant("guarded", "proposed", "ours: no compaction request starts on an unanswered tool_use"),
    )
    renamed = {"fixed": "guarded"}
    lanes = ("user", "agent", "tool", "compactor")
    update_writes = (
        "one: the docs' swap replaces the messages sent by the returned one in the client's own "
        "list, one assignment; the docs write no store"
    )

    def __init__(self, variant: str = "buggy", messages: int = 6, compactions: int = 2) -> None:
        super().__init__(variant)
        self.messages = messages
        self.compactions = compactions
        self.params = {"variant": variant, "messages": messages, "compactions": compactions}

    def init_states(self) -> Iterator[State]:
        yield State((), NONE, 0, 0, 0)

    def actions(self, state: State) -> list[Action]:
        history, sent, appended, _calls, swapped = state
        last = history[-1] if history else "assistant"
        out: list[Action] = []
        if appended < self.messages:
            if last in ("assistant", "compaction"):
                out.append(("user",))
            elif last.startswith("tool_use"):
                out.append(("tool_result",))
            else:  # after the user or a tool result the agent answers: a tool_use or text
                out += [("tool_use",), ("answer",)]
        if sent == NONE and swapped < self.compactions and history:
            if self.variant == "buggy" or not last.startswith("tool_use"):
                out.append(("start",))
        if sent != NONE:
            out.append(("swap",))
        return out

    def step(self, state: State, action: Action) -> State:
        history, sent, appended, calls, swapped = state
        verb = action[0]
        if verb == "start":
            return State(history, len(history), appended, calls, swapped)
        if verb == "swap":
            return State(("compaction", *history[sent:]), NONE, appended, calls, swapped + 1)
        if verb == "tool_use":
            return State((*history, f"tool_use t{calls}"), sent, appended + 1, calls + 1, swapped)
        if verb == "tool_result":
            message = "tool_result" + history[-1][len("tool_use") :]
        else:
            message = "user" if verb == "user" else "assistant"
        return State((*history, message), sent, appended + 1, calls, swapped)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "tool-result-follows-its-use",
                "always",
                lambda s: not orphaned(s.history),
                "every tool_result is the message right after the tool_use it answers",
            ),
            Property(
                "compaction-swapped-in", "sometimes", lambda s: s.swapped > 0, "a summary is swapped in"
            ),
        )

    def format_action(self, state: State, action: Action) -> str:
        history, sent = state.history, state.sent
        verb = action[0]
        if verb == "start":
            return f"compactor requests a summary of the {len(history)} messages held"
        if verb == "swap":
            return f"compactor swaps the summary in for the {sent} messages sent"
        if verb == "user":
            return "user sends a message"
        if verb == "answer":
            return "agent answers in text"
        if verb == "tool_use":
            return f"agent answers with {self.step(state, action).history[-1]}"
        return f"tool returns {self.step(state, action).history[-1]}"

    def columns(self, state: State) -> dict[str, object]:
        return {"messages": len(state.history), "in flight": state.sent if state.sent != NONE else "-"}

    def describe_window(self, state: State) -> str:
        return "next request sends: " + " · ".join(state.history)

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        bad = orphaned(state.history)
        return [(m, ("orphan",) if k in bad else ()) for k, m in enumerate(state.history)]


register_model(
    BackgroundCompaction.name,
    BackgroundCompaction,
    description="Anthropic docs' background compaction swap: started after a tool_use (buggy) vs guarded (proposed)",
)
