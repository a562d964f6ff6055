"""One process's share of the parallel explorer: the states it owns, and one BFS level of them.

The states are partitioned by ``table[owner(state) % len(table)]`` (``owner`` is :func:`hash` when
every process hashes alike, else :func:`stable_hash`; the table is :func:`ownership`'s), so each
process keeps only the states it owns:
their index, the states in discovery order, and per state its global id, its BFS parent's id
and the action that reached it. A level runs in four steps on every rank at once:

1. *expand* the rank's frontier (its states of depth ``d``, in id order), stepping every enabled
   action; a successor owned here is checked against the index at once, one owned elsewhere goes
   to that rank's outbox (deduplicated, first occurrence kept);
2. *exchange* the outboxes with every other rank, in bulk (one pickle per pair and level);
3. *merge*: a successor that is new here becomes a candidate for depth ``d + 1`` under its
   smallest *key* ``parent id << SHIFT | action index`` — exactly the order in which the
   one-process explorer, expanding parents in id order and actions in order, first meets it;
4. *number*: the ranks exchange their candidates' sorted keys, so each knows every new key of the
   level, and a candidate's global id is the level's first id plus the count of smaller keys on
   every rank. Every rank thus gives every state the id the one-process explorer gives it, and
   every rank sees where a ``max_states`` bound cuts the level and which parent it stopped at.

Invariants: a rank's local order is global-id order (levels in order, each level's candidates
sorted by key), so a scan of the local arrays meets ids in increasing order; ``index`` holds
every state owned here exactly once, under a serial number that is below ``_below`` for the
states of earlier levels and is ``_below`` + its place among the candidates for a new one.
"""

from __future__ import annotations

import dataclasses
import pickle
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

import numpy as np

from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property, ProtocolModel

_new = tuple.__new__
SHIFT = 24
"""Bits of the action index in a discovery key: states with up to 16 million actions."""

Owner = Callable[[Any], int]


def probe() -> tuple[int, ...]:
    """Hashes that differ between interpreters unless they share a hash secret and an address
    space layout (``None``'s hash is its address before Python 3.12)."""
    return (hash(None), hash(Ellipsis), hash(NotImplemented), hash("turncheck"), hash(b"turncheck"))


def stable_hash(value: Any) -> int:
    """A hash equal values share in every process (the fallback when :func:`hash` is not):
    tuples and frozen dataclasses field by field, ``None`` and the other singletons as
    constants, every other value by its own (value-based) hash."""
    if value is None or value is Ellipsis or value is NotImplemented:
        return 0x5EED
    if isinstance(value, tuple):
        h = 0x345678
        for item in value:
            h = (h * 1000003 ^ stable_hash(item)) & 0xFFFFFFFFFFFF
        return h
    if isinstance(value, frozenset):
        return sum(stable_hash(item) for item in value) & 0xFFFFFFFFFFFF
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return stable_hash(tuple(getattr(value, f.name) for f in dataclasses.fields(value)))
    return hash(value)


def ownership(ranks: int, lighter: int | None = None) -> list[int]:
    """Which rank owns a state of hash ``h``: ``table[h % len(table)]``.

    The table's length is a prime, so the residue is independent of the low bits of ``h`` that
    a dict indexes by (owning only even hashes, say, would crowd every rank's index into half
    its slots). ``lighter``, the rank that also assembles the result, owns a tenth less than
    the others, so that it does not finish last."""
    size = next(p for p in range(max(61, 8 * ranks), 10 * max(61, 8 * ranks)) if _is_prime(p))
    weights = [0.9 if r == lighter else 1.0 for r in range(ranks)]
    exact = [size * w / sum(weights) for w in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(ranks), key=lambda r: (counts[r] - exact[r], r))
    for r in by_remainder[: size - sum(counts)]:
        counts[r] += 1
    return [r for r in range(ranks) for _ in range(counts[r])]


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def owner_function(kind: str) -> Owner:
    return hash if kind == "hash" else stable_hash


def encode(states: list[Any]) -> Any:
    """States for a pickle: named tuples as plain tuples plus their class once (pickling a named
    tuple runs Python code per state; a plain tuple does not), anything else as it is."""
    if states:
        cls = type(states[0])
        if (
            cls is not tuple
            and issubclass(cls, tuple)
            and getattr(cls, "__slots__", None) == ()
            and hasattr(cls, "_fields")
            and all(type(s) is cls for s in states)
        ):
            return ("tuples", cls, list(map(tuple, states)))
    return ("as-is", None, states)


def decode(encoded: Any) -> list[Any]:
    how, cls, states = encoded
    if how == "tuples":
        return list(map(partial(_new, cls), states))
    return list(states)


class Share:
    """The states one rank owns and the search arrays for them (see the module docstring)."""

    def __init__(
        self,
        model: ProtocolModel[Any, Any],
        canon: Callable[[Any], Hashable],
        rank: int,
        table: list[int],
        owner: Owner,
    ) -> None:
        self.model = model
        self.canon = canon
        self.rank = rank
        self.table = table
        self.ranks = max(table) + 1
        self.owner = owner
        size = len(table)
        self.index: dict[Any, int] = {}  # state -> serial number
        self.states: list[Any] = []
        self.gids = array("q")
        self.parent = array("q")
        self.via: list[Any] = []
        self.lo = 0  # local position of the frontier's first state
        seen: dict[Any, int] = {}
        for s in model.init_states():
            c = canon(s)
            if c in seen:
                continue
            seen[c] = len(seen)
            if table[owner(c) % size] == rank:
                self.index[c] = len(self.states)
                self.states.append(c)
                self.gids.append(seen[c])
                self.parent.append(-1)
                self.via.append(None)
        self.distinct = len(seen)  # states with an id so far, on every rank
        self.serial = len(self.states)
        self.counts = array("q")  # actions of each frontier state, after expand
        self._candidates: tuple[list[Any], list[int], list[Any]] = ([], [], [])
        self._below = self.serial
        self._frontier_lo = 0
        self._keys = np.empty(0, dtype=np.int64)
        self._order = np.empty(0, dtype=np.int64)

    def expand(self) -> list[bytes | None]:
        """Expand the frontier; keep the successors owned here as candidates and return, per
        rank, the pickled outbox for it (None for this rank)."""
        actions_of, step, canon, owner = self.model.actions, self.model.step, self.canon, self.owner
        states, gids = self.states, self.gids
        setdefault = self.index.setdefault
        ranks, me, table = self.ranks, self.rank, self.table
        size = len(table)
        cand_states: list[Any] = []
        cand_keys: list[int] = []
        cand_actions: list[Any] = []
        add_state, add_key, add_action = cand_states.append, cand_keys.append, cand_actions.append
        boxes: list[dict[Any, int]] = [{} for _ in range(ranks)]  # state -> its first key
        box_actions: list[list[Any]] = [[] for _ in range(ranks)]
        counts = array("q")
        count = counts.append
        serial = self.serial
        self._below = serial
        self._frontier_lo = self.lo
        for i in range(self.lo, len(states)):
            state = states[i]
            enabled = actions_of(state)
            if type(enabled) is not list:
                enabled = list(enabled)
            count(len(enabled))
            key = gids[i] << SHIFT
            for action in enabled:
                c = canon(step(state, action))
                o = table[owner(c) % size]
                if o == me:
                    if setdefault(c, serial) == serial:
                        add_state(c)
                        add_key(key)
                        add_action(action)
                        serial += 1
                elif boxes[o].setdefault(c, key) == key:  # the first key met is the smallest
                    box_actions[o].append(action)
                key += 1
        if counts and max(counts) >> SHIFT:
            raise BadParameter(f"a state of model {self.model.name} has more than {1 << SHIFT} actions")
        self.counts = counts
        self.serial = serial
        self._candidates = (cand_states, cand_keys, cand_actions)
        return [
            None
            if o == me
            else pickle.dumps(
                (array("q", boxes[o].values()).tobytes(), encode(list(boxes[o])), box_actions[o]),
                pickle.HIGHEST_PROTOCOL,
            )
            for o in range(ranks)
        ]

    def merge(self, received: Sequence[bytes]) -> bytes:
        """Add the other ranks' successors owned here (each new one a candidate under its
        smallest key); return this rank's candidate keys, sorted, as ``int64`` bytes.

        A received state is looked up as it arrived (a plain tuple equals and hashes as the named
        tuple it stands for); only a new one is rebuilt, and passed through ``canonical`` once
        more when that gives an equal value — the model's own objects for its parts (models that
        intern parts, as the trigger model does, then meet them by identity again)."""
        cand_states, cand_keys, cand_actions = self._candidates
        index = self.index
        get = index.get
        canon = self.canon
        below = self._below
        serial = self.serial
        for payload in received:
            key_bytes, (how, cls, arrived), actions = pickle.loads(payload)
            keys = array("q")
            keys.frombytes(key_bytes)
            rebuild = how == "tuples"
            for c, key, action in zip(arrived, keys, actions, strict=True):
                v = get(c)
                if v is None:
                    if rebuild:
                        c = _new(cls, c)
                    again = canon(c)
                    if again is not c and again == c:
                        c = again
                    index[c] = serial
                    cand_states.append(c)
                    cand_keys.append(key)
                    cand_actions.append(action)
                    serial += 1
                elif v >= below and key < cand_keys[v - below]:
                    cand_keys[v - below] = key
                    cand_actions[v - below] = action
        self.serial = serial
        keys_np = np.array(cand_keys, dtype=np.int64)
        self._order = np.argsort(keys_np, kind="stable")
        self._keys = keys_np[self._order]
        return self._keys.tobytes()

    def number(self, others: Sequence[bytes], limit: int) -> tuple[int, int | None]:
        """Give this rank's candidates their global ids from every rank's sorted keys; keep those
        below ``limit``. Returns the level's new state count over all ranks (before the cut) and,
        when ``limit`` cuts the level, the id of the parent the one-process search stopped at."""
        mine = self._keys
        other_keys = [np.frombuffer(b, dtype=np.int64) for b in others]
        total = len(mine) + sum(len(k) for k in other_keys)
        first = self.distinct
        gid = first + np.arange(len(mine), dtype=np.int64)
        for k in other_keys:
            gid += np.searchsorted(k, mine)
        stopped_at: int | None = None
        keep = len(mine)
        if first + total > limit:
            cut = max(0, limit - first)  # new states kept, over all ranks
            merged = np.sort(np.concatenate([mine, *other_keys]))
            stopped_at = int(merged[cut]) >> SHIFT
            keep = int(np.searchsorted(gid, limit))
        cand_states, _keys, cand_actions = self._candidates
        order = self._order[:keep].tolist()
        self.lo = len(self.states)
        self.states.extend(map(cand_states.__getitem__, order))
        self.via.extend(map(cand_actions.__getitem__, order))
        self.gids.frombytes(gid[:keep].tobytes())
        self.parent.frombytes((mine[:keep] >> SHIFT).tobytes())
        self.distinct = first + max(0, min(total, limit - first))
        self._candidates = ([], [], [])
        return total, stopped_at

    def tally(self, upto: int | None) -> tuple[int, int]:
        """Transitions generated and terminal states among the expanded frontier — only parents
        with id ≤ ``upto`` when given (where a ``max_states`` bound stopped the one-process search)."""
        counts = self.counts
        if upto is not None:
            frontier_gids = self.gids[self._frontier_lo : self._frontier_lo + len(counts)]
            counts = counts[: bisect_right(frontier_gids, upto)]
        return sum(counts), counts.count(0)

    def movable(self) -> bool:
        """Whether any state of the (new) frontier has an enabled action."""
        actions_of = self.model.actions
        return any(any(True for _ in actions_of(self.states[i])) for i in range(self.lo, len(self.states)))

    def judge(self, props: Sequence[Property[Any]]) -> list[int | None]:
        """Per property, the lowest id here breaking it (``always``) or meeting it (goal)."""
        out: list[int | None] = []
        for p in props:
            holds, want = p.holds, p.expectation != "always"
            at = next((i for i, st in enumerate(self.states) if bool(holds(st)) == want), None)
            out.append(None if at is None else self.gids[at])
        return out

    def worst(self) -> dict[str, tuple[int, int]]:
        """Per metric: the largest value here and the lowest id reaching it."""
        metrics_of = self.model.metrics
        worst: dict[str, int] = {}
        worst_at: dict[str, int] = {}
        for i, st in enumerate(self.states):
            for name, value in metrics_of(st).items():
                if value > worst.get(name, -sys.maxsize):
                    worst[name] = value
                    worst_at[name] = i
        return {name: (worst[name], self.gids[worst_at[name]]) for name in worst}

    def shipment(self) -> bytes:
        """Everything this rank found, pickled for the process that assembles the result."""
        return pickle.dumps(
            (self.gids.tobytes(), self.parent.tobytes(), encode(self.states), self.via),
            pickle.HIGHEST_PROTOCOL,
        )
