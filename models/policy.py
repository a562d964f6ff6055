"""A compaction policy stated as values, checked by every engine through the trigger model.

A user who wants to know what *their* policy guarantees should not have to write a
:class:`~turncheck.models.protocol.ProtocolModel`. A :class:`Policy` names the four things that
decide it — the trigger (``TurnCountTrigger(maxTurns)``: compaction is due when more than
``trigger`` turns are live), the gap from the read of the count to the act, the locking and the
delete rule — plus the load to check it under (writers, turns each). It holds values only: it
*is* the parameters of :class:`~turncheck.models.trigger.TriggerModel`, so the explorer,
Hypothesis and the SimPy simulation run the one encoding of the rules there (no second one).

The delete rule picks, among the registered lockings (:data:`~turncheck.models.locking.LOCKINGS`),
the one with the named locking's read, act and lock rules and that delete rule: ``locking =
"none"`` with ``delete = "live-at-commit"`` is ``trim-to``. A combination no registered locking
has is refused (it would have no rule to run and no closed form to check against).

A policy is a TOML file (``turncheck check policy.toml``) with a ``[policy]`` table, or a
``Policy(...)`` object in a user's Python file (``turncheck check my_policy.py:POLICY``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.locking import LOCKINGS, Deletes, locking
from turncheck.models.trigger import TriggerModel, TriggerParams

DELETES: tuple[Deletes, ...] = ("count-read", "live-at-commit")


@dataclass(frozen=True)
class Policy:
    """One compaction policy as values (see the module docstring).

    Attributes
    ----------
    trigger:
        ``maxTurns``: compaction is due when an append leaves more than ``trigger`` live turns.
    gap:
        Slot boundaries from the read of the count to the act (0: in the same step).
    locking:
        A registered locking's name (``turncheck list lockings``).
    delete:
        ``count-read`` (delete the count read minus ``trigger``) or ``live-at-commit`` (delete
        down to ``trigger`` at commit time); empty: the locking's own rule.
    writers, turns:
        The load it is checked under: concurrent writers, turns each appends (0: unbounded).

    Invariant: a constructed policy always names a registered locking, so :meth:`model` cannot
    fail on it; every other value is checked by :class:`~turncheck.models.trigger_state.TriggerParams`.
    """

    trigger: int = 2
    gap: int = 1
    locking: str = "none"
    delete: str = ""
    writers: int = 2
    turns: int = 0

    def __post_init__(self) -> None:
        if self.delete not in ("", *DELETES):
            raise BadParameter(f"policy delete must be one of {', '.join(DELETES)}, got {self.delete!r}")
        TriggerParams(**self.trigger_params())

    def locking_name(self) -> str:
        """The registered locking with this policy's read/act/lock rules and delete rule."""
        base = locking(self.locking)
        if not self.delete or self.delete == base.deletes:
            return base.name
        rule = (base.reads, base.acts, base.locks, self.delete)
        for name in LOCKINGS:
            s = LOCKINGS[name]
            if (s.reads, s.acts, s.locks, s.deletes) == rule:
                return name
        raise BadParameter(
            f"policy: locking {self.locking!r} with delete {self.delete!r} is no registered locking"
            f" (known: {', '.join(LOCKINGS)})"
        )

    def trigger_params(self) -> dict[str, Any]:
        """The trigger model's parameters this policy is."""
        return {
            "writers": self.writers,
            "gap": self.gap,
            "max_turns": self.trigger,
            "locking": self.locking_name(),
            "turns": self.turns,
        }

    def model(self) -> TriggerModel:
        """The trigger model that runs this policy in every engine."""
        return TriggerModel(**self.trigger_params())


def read_policy(path: str | Path) -> Policy:
    """The policy of a TOML file's ``[policy]`` table; one-line errors naming the file."""
    path = Path(path)
    if not path.is_file():
        raise UnknownName(f"policy file {str(path)!r} does not exist (or is not a regular file)")
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("policy")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise BadParameter(f"{path}: not a TOML file: {exc}") from None
    if not isinstance(table, dict):
        raise BadParameter(f"{path}: needs a [policy] table")
    known = {f.name: f for f in fields(Policy)}
    for key, value in table.items():
        if key not in known:
            raise BadParameter(f"{path}: unknown policy key {key!r} (known: {', '.join(known)})")
        if type(value) is not type(getattr(Policy, key)):
            raise BadParameter(
                f"{path}: policy {key} must be a {type(getattr(Policy, key)).__name__}, got {value!r}"
            )
    try:
        return Policy(**table)
    except BadParameter as exc:
        raise BadParameter(f"{path}: {exc}") from None
