"""A user's own locking scheme, checked by turncheck without changing turncheck.

Scheme: before compacting, a worker looks at a shared ``busy`` flag; if it is clear, the worker
sets it and compacts; when done it clears it. With ``atomic=False`` the look and the set are two
steps (check-then-act), so two workers can both see the flag clear and compact at once. With
``atomic=True`` the look-and-set is one step (a test-and-set) and at most one worker compacts.

Run it with::

    turncheck check examples.my_lock:FlagLock --param workers=2
    turncheck check examples.my_lock:FlagLock --param atomic=true
    turncheck explore examples/my_lock.py:FlagLock --param workers=3

The class subclasses the protocol base (``turncheck.ProtocolModel``) and fills in its required
core — immutable hashable states, the enabled actions in a stable order, a pure ``step``, named
properties — plus three of its optional hooks: integer metrics, a canonical form for
interchangeable workers, and readable actions. Every other hook (the lane of a step, the lanes'
order, a state's fields …) keeps the base's default: the lane is read off the text, "worker 0 …".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from turncheck.models.protocol import Property, ProtocolModel

IDLE, SAW_CLEAR, COMPACTING = 0, 1, 2
PHASES = ("idle", "saw-clear", "compacting")

# state: (busy flag, phase of worker 0, phase of worker 1, ...)
State = tuple[int, ...]
Action = tuple[str, int]


class FlagLock(ProtocolModel[State, Action]):
    """Workers guarding compaction with a shared flag; ``atomic`` makes check-and-set one step."""

    name = "flag-lock"

    def __init__(self, workers: int = 2, atomic: bool = False) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.atomic = atomic
        self.params: Mapping[str, Any] = {"workers": workers, "atomic": atomic}

    def init_states(self) -> Iterator[State]:
        yield (0,) + (IDLE,) * self.workers

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        busy = state[0]
        for w in range(self.workers):
            phase = state[1 + w]
            if phase == IDLE and not busy:
                out.append(("acquire" if self.atomic else "check", w))
            elif phase == SAW_CLEAR:
                out.append(("set", w))
            elif phase == COMPACTING:
                out.append(("release", w))
        return out

    def step(self, state: State, action: Action) -> State:
        verb, w = action
        phases = list(state[1:])
        busy = state[0]
        if verb == "check":
            phases[w] = SAW_CLEAR
        elif verb in ("set", "acquire"):
            phases[w] = COMPACTING
            busy = 1
        elif verb == "release":
            phases[w] = IDLE
            busy = 0
        return (busy, *phases)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "one-compactor",
                "always",
                lambda s: sum(1 for p in s[1:] if p == COMPACTING) <= 1,
                "at most one worker compacts at a time",
            ),
            Property(
                "someone-compacts",
                "sometimes",
                lambda s: COMPACTING in s[1:],
                "the lock does not simply block everyone",
            ),
        )

    def metrics(self, state: State) -> Mapping[str, int]:
        return {"compacting": sum(1 for p in state[1:] if p == COMPACTING)}

    def canonical(self, state: State) -> State:
        # workers are interchangeable: sort their phases
        return (state[0], *sorted(state[1:]))

    def format_action(self, state: State, action: Action) -> str:
        verb, w = action
        return {
            "check": f"worker {w} sees the flag clear",
            "set": f"worker {w} sets the flag and compacts",
            "acquire": f"worker {w} test-and-sets the flag and compacts",
            "release": f"worker {w} clears the flag",
        }[verb]
