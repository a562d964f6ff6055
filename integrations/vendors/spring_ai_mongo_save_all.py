"""Spring AI's ``MongoChatMemoryRepository.saveAll``: delete, then insert — spring-ai #6770.

``MessageWindowChatMemory.add`` reads a conversation, appends the new messages and hands the
whole list to ``ChatMemoryRepository.saveAll``, which "replaces all the existing messages".
``MongoChatMemoryRepository`` does that in two writes with no transaction between them
(``variant=buggy``, issue #6770, open, read against main 2.0.1-SNAPSHOT)::

    deleteByConversationId(conversationId);
    this.mongoTemplate.insert(conversations, Conversation.class);

"If the delete succeeds and the subsequent insert fails, the existing messages have already been
removed, leaving the conversation without its previously persisted history." A process that dies
between the two writes does the same: the delete is committed, the list it was about to insert
was only in memory. ``Neo4jChatMemoryRepository.saveAll`` has the same shape (its delete commits
in its own session before the insert's session opens). The fixes proposed are one transaction
round both writes (``variant=transaction``): PR #6774 (MongoDB, a ``TransactionTemplate`` over a
``MongoTransactionManager``) and PR #6798 (Neo4j, the deletes inside the insert's write
transaction), both open when read — the shape ``JdbcChatMemoryRepository`` already ships.

The crash is a declared crash point (:mod:`turncheck.models.crash_points`): the repository may
crash after reading the conversation and, under ``buggy``, between the delete and the insert;
a crash keeps what the store holds and loses the list in flight, and the repository restarts.
The conversation starts persisted (the issue's step 1: ``user 0``, ``assistant 0``).

The invariant ``history-kept``: whenever no ``saveAll`` is in flight, every message a
``saveAll`` acknowledged is stored. (While one is in flight the buggy store is briefly empty —
what a concurrent reader would see — which this invariant does not judge.) The goal
``message-added``: some ``saveAll`` of a new message is acknowledged. Bounded by ``turns`` new
user messages and ``crashes`` crashes a run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.crash_points import CrashPoint
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property

Messages = tuple[str, ...]
IDLE, READ, DELETED = "idle", "read", "deleted"
PERSISTED: Messages = ("user 0", "assistant 0")


class State(NamedTuple):
    """``stored``: the conversation's documents in MongoDB (durable); ``phase``: where the
    repository's ``add`` is; ``pending``: the list ``saveAll`` is writing (memory only);
    ``acknowledged``: every message a ``saveAll`` returned for; ``turns``/``crashes``: so far."""

    stored: Messages
    phase: str
    pending: Messages
    acknowledged: Messages
    turns: int
    crashes: int


class MongoSaveAll(VendorModel[State]):
    """One conversation, one repository adding messages through ``saveAll``, which may crash."""

    name = "spring-ai-mongo-save-all"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "spring-ai MongoChatMemoryRepository.saveAll on main (2.0.1-SNAPSHOT): "
            "deleteByConversationId, then insert, no transaction (issue #6770)",
        ),
        Variant(
            "transaction",
            "proposed",
            "spring-ai PR #6774 (MongoDB) and PR #6798 (Neo4j), both open: delete and insert in one "
            "transaction, as JdbcChatMemoryRepository does",
        ),
    )
    lanes = ("repository",)
    update_writes = (
        "two: deleteByConversationId, then insert (#6770); the crash window is declared (crashes=1, "
        "the default); transaction is one write"
    )

    def __init__(self, variant: str = "buggy", turns: int = 1, crashes: int = 1) -> None:
        super().__init__(variant)
        for label, value, top in (("turns", turns, 4), ("crashes", crashes, 3)):
            if not 0 <= value <= top:
                raise BadParameter(f"model {self.name}: parameter {label}: must be 0..{top}, got {value}")
        self.turns = turns
        self.crashes = crashes
        self.params = {"variant": variant, "turns": turns, "crashes": crashes}

    def init_states(self) -> Iterator[State]:
        yield State(PERSISTED, IDLE, (), PERSISTED, 0, 0)

    def actions(self, state: State) -> list[Action]:
        if state.phase == IDLE:
            return [("add",)] if state.turns < self.turns else []
        if state.phase == READ:
            return [("delete",)] if self.variant == "buggy" else [("save",)]
        return [("insert",)]

    def step(self, state: State, action: Action) -> State:
        verb = action[0]
        if verb == "add":
            turn = state.turns + 1
            pending = (*state.stored, f"user {turn}", f"assistant {turn}")
            return state._replace(phase=READ, pending=pending, turns=turn)
        if verb == "delete":
            return state._replace(stored=(), phase=DELETED)
        # insert (buggy, after the delete) or save (one transaction): the list is stored whole
        return state._replace(stored=state.pending, phase=IDLE, pending=(), acknowledged=state.pending)

    def crash_points(self, state: State) -> Sequence[CrashPoint[State]]:
        if state.phase == IDLE or state.crashes >= self.crashes:
            return ()
        where = {READ: "after findByConversationId, before saveAll",
                 DELETED: "after deleteByConversationId, before insert"}[state.phase]  # fmt: skip
        after = state._replace(phase=IDLE, pending=(), crashes=state.crashes + 1)
        return (CrashPoint("repository", where, after),)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "history-kept",
                "always",
                lambda s: s.phase != IDLE or set(s.acknowledged) <= set(s.stored),
                "with no saveAll in flight, every message a saveAll acknowledged is stored",
            ),
            Property(
                "message-added", "sometimes", lambda s: s.acknowledged != PERSISTED, "a new message is saved"
            ),
        )

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        if verb == "add":
            return (
                f"repository reads {len(state.stored)} messages, adds user {state.turns + 1} and its answer"
            )
        if verb == "delete":
            return "repository deleteByConversationId: the conversation is empty"
        if verb == "insert":
            return f"repository inserts {len(state.pending)} messages"
        return f"repository saveAll in one transaction: {len(state.pending)} messages"

    def columns(self, state: State) -> dict[str, object]:
        return {"stored": len(state.stored), "acknowledged": len(state.acknowledged)}

    def describe_window(self, state: State) -> str:
        return "stored: " + (" · ".join(state.stored) or "nothing")

    panel_title = "what findByConversationId returns"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        lost = [m for m in state.acknowledged if m not in state.stored]
        return [(m, ()) for m in state.stored] + [(m, ("lost",)) for m in lost]


register_model(
    MongoSaveAll.name,
    MongoSaveAll,
    description="spring-ai MongoChatMemoryRepository.saveAll crashes between delete and insert (#6770) vs one transaction",
)
