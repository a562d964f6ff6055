"""Spring AI's ``MessageWindowChatMemory`` and its ``saveAll`` store: spring-ai #5940, #6312,
langchain4j #666.

``MessageWindowChatMemory(maxMessages)`` keeps the newest messages of a conversation. Its cut is
a plain count (``variant=buggy``, spring-ai #5940, open: "truncation breaks tool_use/tool_result
pairs"): once the window slides past an assistant message with a tool call, the conversation
opens with its orphan tool response, and Anthropic answers ``400 … Each tool_result block must
have a corresponding tool_use block in the previous message``. Spring AI's PR #6312
(``variant=turn-snapped``) advances the cut to the next USER message — which, when one turn is
longer than the window, is no message at all: the whole window is evicted and the model is sent
nothing. langchain4j settled it in PR #666 (``variant=langchain4j``): evict the oldest message,
and with an evicted tool call the tool results that follow it, so the window is the longest
suffix that fits and opens on no orphan.

The store is the second half. ``MessageWindowChatMemory.add`` reads the conversation from the
repository, applies the window and writes it back with ``saveAll`` — delete every message of the
conversation, insert the new list (langchain4j's ``ChatMemoryStore.updateMessages`` replaces
the list the same way). Two requests on one conversation (``writers=2``) both read, both write:
the second ``saveAll`` deletes what the first inserted. ``variant=append-only``, a design of
ours, is langchain4j's cut over an append-only store: a message is inserted on its own and the
window is applied when the conversation is read.

Invariants, in the order a check reports them: ``no-lost-append`` (every message added is stored
or was evicted by the window), ``non-empty`` (the window is not empty while a suffix of the
conversation that opens on no orphan fits it) and ``no-orphan-tool-response`` (every tool
response in the window follows its tool call there). The goal ``window-slid``: the window evicted something. Bounded by
``messages`` added by the conversation and one tool call per assistant message;
``writers=2`` adds a second request's user message and makes every add a read and a write.

``saveAll`` is two writes — delete every message, insert the new list — with no transaction in
``MongoChatMemoryRepository`` and ``Neo4jChatMemoryRepository`` (spring-ai #6770; the JDBC one
wraps both in a transaction). ``crashes=1`` declares that crash window
(:mod:`turncheck.models.crash_points`): a writer may die between the delete and the insert,
leaving the conversation empty; ``no-lost-append`` then fails in two steps for every variant
that saves through ``saveAll`` (langchain4j's ``updateMessages`` replaces the list the same
way), and ``append-only``, one insert per message, passes. ``crashes=0``, the default, keeps the
window verdicts above.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.crash_points import CrashPoint
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import FieldValue, Property, plain_fields

Messages = tuple[str, ...]


def count_cut(messages: Messages, size: int) -> Messages:
    return messages[-size:] if len(messages) > size else messages


def turn_snapped_cut(messages: Messages, size: int) -> Messages:
    if len(messages) <= size:
        return messages
    cut = len(messages) - size
    while cut < len(messages) and not messages[cut].startswith("user"):
        cut += 1
    return messages[cut:]


def pair_safe_cut(messages: Messages, size: int) -> Messages:
    cut = max(0, len(messages) - size)
    while cut < len(messages) and messages[cut].startswith("tool_response"):
        cut += 1
    return messages[cut:]


def orphans(window: Messages) -> list[str]:
    return [m for k, m in enumerate(window) if m.startswith("tool_response") and
            "tool_call" + m[len("tool_response"):] not in window[:k]]  # fmt: skip


def orphan_free_cut(messages: Messages, size: int) -> Messages:
    """The longest suffix within ``size`` with no orphan: langchain4j's rule, also when another
    request's message sits between a tool call and its response."""
    cut = max(0, len(messages) - size)
    while cut < len(messages) and orphans(messages[cut:]):
        cut += 1
    return messages[cut:]


CUTS: dict[str, Callable[[Messages, int], Messages]] = {
    "buggy": count_cut,
    "turn-snapped": turn_snapped_cut,
    "langchain4j": pair_safe_cut,
    "append-only": orphan_free_cut,
}


class State(NamedTuple):
    """``store``: the conversation's rows in the repository (under ``append-only`` every message;
    otherwise the window last saved); ``added``: every message added, in order; ``evicted``:
    messages the window rule dropped; ``reads``: what each writer read for the add it is making
    (None: not reading); ``calls``: tool calls handed out; ``sent``: messages the conversation
    added."""

    store: Messages
    added: Messages
    evicted: Messages
    reads: tuple[Messages | None, ...]
    calls: int
    sent: int


class MessageWindow(VendorModel[State]):
    """A conversation (writer 1), a second request (writer 2) and the window of ``max_messages``."""

    name = "spring-ai-window"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "Spring AI's MessageWindowChatMemory before PR #6312: a plain count cut "
            "(spring-ai #5940) over a saveAll store",
        ),
        Variant(
            "turn-snapped",
            "upstream",
            "spring-ai PR #6312 (merged): the cut advances to the next USER message",
        ),
        Variant(
            "langchain4j",
            "upstream",
            "langchain4j PR #666 (merged): an evicted tool call takes its tool "
            "results with it — langchain4j's MessageWindowChatMemory, not Spring AI's",
        ),
        Variant(
            "append-only",
            "proposed",
            "ours: langchain4j's cut over an append-only store, the window applied when read",
        ),
    )
    renamed = {"fixed": "append-only"}
    lanes = ("writer",)

    update_writes = (
        "two: saveAll deletes the conversation, then inserts the window (MongoDB and Neo4j, no "
        "transaction, spring-ai #6770); crashes=1 declares the crash window between them; "
        "append-only inserts one message, one write"
    )

    def __init__(
        self,
        variant: str = "buggy",
        max_messages: int = 3,
        messages: int = 6,
        writers: int = 1,
        crashes: int = 0,
    ) -> None:
        super().__init__(variant)
        for label, value in (("writers", writers), ("crashes", crashes)):
            if value not in ((1, 2) if label == "writers" else (0, 1)):
                allowed = "1 or 2" if label == "writers" else "0 or 1"
                raise BadParameter(f"model {self.name}: parameter {label}: must be {allowed}, got {value}")
        self.size = max_messages
        self.messages = messages
        self.writers = writers
        self.crashes = crashes
        self.params = {
            "variant": variant,
            "max_messages": max_messages,
            "messages": messages,
            "writers": writers,
            "crashes": crashes,
        }

    def init_states(self) -> Iterator[State]:
        yield State((), (), (), (None,) * self.writers, 0, 0)

    def keep(self, messages: Messages) -> Messages:
        """The window rule: what of ``messages`` the memory keeps (a subclass's own rule goes
        here: ``turncheck check examples/my_window.py:DropOrphans``)."""
        return CUTS[self.variant](messages, self.size)

    def window(self, state: State) -> Messages:
        """What the next request sends: the stored rows, cut when read under ``append-only``."""
        return self.keep(state.store) if self.variant == "append-only" else state.store

    def next_message(self, state: State, w: int) -> str | None:
        """The message writer ``w`` adds next (None: it has no more to add)."""
        if w == 1:
            return None if "user from request 2" in state.added else "user from request 2"
        if state.sent >= self.messages:
            return None
        own = [m for m in state.added if m != "user from request 2"]
        last = own[-1] if own else "assistant"
        if last.startswith("tool_call"):
            return "tool_response" + last[len("tool_call") :]
        if last.startswith("assistant"):
            return f"user {sum(m.startswith('user ') and m[5:].isdigit() for m in own) + 1}"
        return f"tool_call c{state.calls}"

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        for w in range(self.writers):
            message = self.next_message(state, w)
            if message is None:
                continue
            if self.writers == 1 or self.variant == "append-only":
                out.append(("add", w))
                if w == 0 and message.startswith("tool_call"):
                    out.append(("answer", w))  # the assistant answers in text instead
            elif state.reads[w] is None:
                out.append(("read", w))
            else:
                out.append(("save", w))
                if w == 0 and message.startswith("tool_call"):
                    out.append(("save-answer", w))
        return out

    def _message(self, state: State, action: Action) -> str:
        verb, w = action
        if verb in ("answer", "save-answer"):
            return f"assistant {sum(m.startswith('assistant') for m in state.added) + 1}"
        return self.next_message(state, w) or ""

    def step(self, state: State, action: Action) -> State:
        verb, w = action
        if verb == "read":
            return state._replace(
                reads=tuple(state.store if k == w else r for k, r in enumerate(state.reads))
            )
        message = self._message(state, action)
        calls = state.calls + message.startswith("tool_call")
        sent = state.sent + (w == 0)
        added = (*state.added, message)
        if self.variant == "append-only":
            return state._replace(store=(*state.store, message), added=added, calls=calls, sent=sent)
        read = state.store if verb in ("add", "answer") else state.reads[w] or ()
        kept = self.keep((*read, message))
        evicted = (*state.evicted, *(m for m in (*read, message) if m not in kept))
        reads = tuple(None if k == w else r for k, r in enumerate(state.reads))
        return State(kept, added, evicted, reads, calls, sent)

    def crash_points(self, state: State) -> Sequence[CrashPoint[State]]:
        """With ``crashes=1``: a writer about to ``saveAll`` (every variant but ``append-only``,
        which inserts one message) may crash after its ``deleteByConversationId``, before its
        insert — the conversation is left empty, the window it was writing (memory only) is lost,
        and it restarts with nothing read. No crash count is kept: a crash adds no message, so the
        state space stays finite."""
        if not self.crashes or self.variant == "append-only":
            return ()
        return tuple(
            CrashPoint(
                f"writer {w + 1}",
                "in saveAll, after deleteByConversationId, before insert",
                state._replace(
                    store=(), reads=tuple(None if k == w else r for k, r in enumerate(state.reads))
                ),
            )
            for w in range(self.writers)
            if self.next_message(state, w) is not None and (self.writers == 1 or state.reads[w] is not None)
        )

    def properties(self) -> tuple[Property[State], ...]:
        def non_empty(s: State) -> bool:
            fits = any(
                not orphans(s.added[k:]) for k in range(max(0, len(s.added) - self.size), len(s.added))
            )
            return bool(self.window(s)) or not fits

        def nothing_lost(s: State) -> bool:
            stored, gone = set(s.store), set(s.evicted)
            return all(m in stored or m in gone for m in s.added)

        return (
            Property(
                "no-lost-append", "always", nothing_lost, "every message added is stored or was evicted"
            ),
            Property(
                "non-empty",
                "always",
                non_empty,
                "the window is not empty while a suffix of the conversation that opens on no orphan fits it",
            ),
            Property(
                "no-orphan-tool-response",
                "always",
                lambda s: not orphans(self.window(s)),
                "every tool response in the window follows its tool call there",
            ),
            Property(
                "window-slid",
                "sometimes",
                lambda s: bool(s.evicted) or len(self.keep(s.store)) < len(s.store),
                "the window evicted a message",
            ),
        )

    def format_action(self, state: State, action: Action) -> str:
        verb, w = action
        who = f"writer {w + 1}"
        if verb == "read":
            return f"{who} reads the conversation: {len(state.store)} stored"
        message = self._message(state, action)
        if verb in ("add", "answer"):
            if self.variant == "append-only":
                return f"{who} inserts {message}"
            kept = self.keep((*state.store, message))
            return f"{who} adds {message} (keeps {len(kept)})"
        return f"{who} saveAll: deletes all, inserts its window + {message}"

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        reads = [f"writer {w + 1}: " + ("not reading" if r is None else " · ".join(r) or "(nothing)")
                 for w, r in enumerate(state.reads)]  # fmt: skip
        return [*plain_fields(state._replace(reads=()))[:3], ("reads", reads), *plain_fields(state)[4:]]

    def columns(self, state: State) -> dict[str, object]:
        return {"window": len(self.window(state)), "added": len(state.added)}

    def describe_window(self, state: State) -> str:
        window = self.window(state)
        lost = [m for m in state.added if m not in state.store and m not in state.evicted]
        text = "next request sends: " + (" · ".join(window) if window else "(nothing)")
        return text + (f"  (lost: {', '.join(lost)})" if lost else "")

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        window = self.window(state)
        orphaned = set(orphans(window))
        lost = [m for m in state.added if m not in state.store and m not in state.evicted]
        return [(m, ("orphan",) if m in orphaned else ()) for m in window] + [
            (f"{m}: not sent", ("lost",)) for m in lost
        ]


register_model(
    MessageWindow.name,
    MessageWindow,
    description="Spring AI message window splitting tool pairs (#5940), turn-snapped (#6312), langchain4j (#666)",
)
