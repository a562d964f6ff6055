"""The real-failure corpus: every reported failure a case, each a registered value.

A :class:`Case` is one public thread (``source``: ``owner/repo#N``, its date and state as read
there) turned into an input of the product's own form and the rule or invariant the report
shows broken (``breaks``):

* :class:`ModelInput` — a vendor model of :mod:`integrations.vendors` with the variant that shows the
  report (red) and one that fixes it (green), each declared there with its kind and source, or a
  model whose parameters are the report's (``cost-trigger``: an estimate, a frame, a stale count);
* :class:`RuleInput` — a provider rule of :data:`models.provider_rules.REGISTRY`: its refused
  example is red, its accepted one green, the API's own error text the finding;
* :class:`LogInput` — two logs in a product's own format, the one the report shows written (red)
  and the one the fix writes (green), linted as ``turncheck lint`` lints them (its structural
  checks and a provider's rules);
* :class:`RaceInput` — a race test of ``examples/races`` run against the library releases the
  report names (red) and those of the fix (green);
* :class:`StressInput` — two session stores, each opened at once by several processes in fresh
  databases (``stress --first-opens``): the store the report has red, the fix green;
* :class:`HistoryInput` — a history file under ``models/corpus/data/`` (``fmt`` names the
  importer, as ``--from`` does; None is our JSONL), replayed before every model request under a
  budget by the trimmer that shows the report (red) and one that does not (green). A history
  case is what ``cases run --against`` gives a user's own trimmer;
* :class:`StoreInput` — a store scenario (concurrent appends, a compaction under faults) run by
  the race scheduler against a session store of openai-agents' ``Session`` protocol: the
  reference store that shows the report (red) and one that does not (green). A store case is
  what ``cases run --against store:…`` gives a user's own store.

The red shape must break exactly ``breaks``, the green none of it: ``turncheck cases run`` says
so for each case. A thread not expressible yet is a :class:`PendingThread` naming what it waits
on — listed, never counted as a case.

Adding a case is one entry in a module of :mod:`models.corpus` (the registries' home, which
imports each module of its folder) or one new module there; an extension registers its own with
:func:`register_case`. Invariant: a case name and a pending thread are registered once; every
case's ``source`` is ``owner/repo#N``, its date and state as read there, and from 2025 on its
``release`` names a release or says why none runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from turncheck.models.errors import BadParameter
from turncheck.models.registry import Registry

CaseClass = Literal[
    "orphan/pairing",
    "lost write",
    "compaction race",
    "summary content",
    "trigger/liveness",
    "cost",
    "store contention",
]
CASE_CLASSES: tuple[str, ...] = CaseClass.__args__  # type: ignore[attr-defined]
THREAD = re.compile(r"^[\w.-]+/[\w.-]+#\d+$")
"""A thread as ``owner/repo#N`` (an issue or a pull request)."""
DATE = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
"""A thread's date as read there (``YYYY-MM-DD``, the day it was opened)."""
STATES = ("open", "closed", "merged")
"""A thread's state as read there."""
RELEASE_SINCE = "2025-01-01"
"""From this date on, a case names the library release it was checked against or says why none
runs (issue 54): :data:`SAYS_RELEASE` must find it in ``release``."""
SAYS_RELEASE = re.compile(r"\d+\.\d+|model|provider rule|does not run|not named|not in what was read")
"""A release that names a version (``1.8.3``), or says why no release runs: it is a model, a provider
rule, the library does not run, or its release is not named in what was read."""


@dataclass(frozen=True)
class ModelInput:
    """A model of the catalogue and two of its shapes: ``red`` shows the report, ``green`` does
    not. A shape is a variant of a vendor model, or ``k=v`` parameters separated by spaces, as
    ``--param`` takes them, for a model whose parameters are the report's (``cost-trigger``)."""

    model: str
    red: str
    green: str

    kind = "model"

    @staticmethod
    def params(shape: str) -> dict[str, str]:
        """The model parameters of a shape: ``{"variant": shape}`` for a variant name."""
        if "=" not in shape:
            return {"variant": shape}
        return dict(kv.split("=", 1) for kv in shape.split())

    def command(self, side: str) -> str:
        shape = self.red if side == "red" else self.green
        flags = " ".join(f"--param {k}={v}" for k, v in self.params(shape).items())
        return f"turncheck check {self.model} {flags} --engine explore"


@dataclass(frozen=True)
class RuleInput:
    """A provider rule by provider and id: its refused example red, its accepted one green."""

    provider: str
    rule: str

    kind = "rule"

    def command(self, side: str) -> str:
        return f"turncheck lint --provider {self.provider} LOG (rule {self.rule})"


@dataclass(frozen=True)
class HistoryInput:
    """A history file (``fmt``: its importer, None for our JSONL) replayed before every request
    under ``budget`` by ``red`` (the trimmer the report shows) and ``green`` (a fix); either may
    be a ``peer:`` running the real library, at the version ``pinned`` names."""

    file: str
    fmt: str | None
    budget: int
    red: str
    green: str
    pinned: tuple[str, ...] = ()
    """``dist==version`` of each library a ``peer:`` side runs, as recorded: another version
    installed, or none, skips the case with the reason (constraints.txt pins the suite's)."""

    kind = "history"

    @property
    def provider(self) -> str | None:
        """The API whose rules every window of this history is also checked by under
        ``cases run --against``: the provider the format is named after (``openai-chat``,
        ``openai-responses``, ``anthropic``, ``gemini``, ``bedrock``), None for our JSONL or a
        format that is no provider's."""
        from turncheck.models.provider_rules import PROVIDERS

        return self.fmt if self.fmt in PROVIDERS else None

    def command(self, side: str) -> str:
        source = f" --from {self.fmt}" if self.fmt else ""
        strategy = self.red if side == "red" else self.green
        return (
            f"turncheck project -H models/corpus/data/{self.file}{source} --per-request "
            f"-b {self.budget} -s {strategy}"
        )


@dataclass(frozen=True)
class LogInput:
    """Two logs in a product's own format (``fmt``, as ``--from`` names it): ``red`` as the
    report shows it written or sent, ``green`` as the fix writes it, each linted with
    ``provider``'s rules — a store's or a serializer's fault, no trimmer involved."""

    red: str
    green: str
    fmt: str
    provider: str
    trimmed: int | None = None
    """When the thread's fault is a trimmer's window: the budget at which ``cases run --against``
    replays the green log (a whole history) through a user's trimmer, each window judged by
    ``provider``'s rules; None when the fault is a store's or a serializer's."""

    kind = "log"

    def command(self, side: str) -> str:
        file = self.red if side == "red" else self.green
        return f"turncheck lint models/corpus/data/{file} --from {self.fmt} --provider {self.provider}"


@dataclass(frozen=True)
class RaceInput:
    """A race test of the repository (``examples/races/FILE.py:test``) run by ``turncheck race``
    against the library releases each side pins (``dist==version``): ``red`` the releases the
    report names, ``green`` those of the fix. The test failing is the finding."""

    test: str
    red: tuple[str, ...]
    green: tuple[str, ...]
    schedules: int = 10

    kind = "race"

    def command(self, side: str) -> str:
        pins = " ".join(self.red if side == "red" else self.green)
        return f"turncheck race {self.test} -n {self.schedules}  # with {pins}"


STORE_PREFIX = "store:"
"""How ``cases run --against`` names a session store (``store:package.module:Factory`` or
``store:path/file.py:Factory``), apart from the trimmer targets (ids, ``messages:``, ``exec:``)."""


@dataclass(frozen=True)
class StoreInput:
    """A store scenario of :mod:`sim.store_cases` (``scenario``) raced against a session store:
    ``red`` the reference store that shows the report, ``green`` one that does not, each named as
    ``--against`` names a user's (``store:package.module:Factory``). ``fault_kinds`` (as
    ``race --fault-kinds`` takes them) injects faults at every await after a fault-free search
    finds nothing, as ``race --faults`` does; None races without faults. ``pinned``: the
    ``dist==version`` of a library the scenario runs (the compaction is the real SDK's): absent,
    the case is skipped; at another version, ``cases run`` skips it and ``--against`` says so."""

    scenario: str
    red: str
    green: str
    fault_kinds: str | None = None
    schedules: int = 50
    pinned: tuple[str, ...] = ()

    kind = "store"

    def command(self, side: str) -> str:
        store = self.red if side == "red" else self.green
        return f"turncheck cases run --against {store} (scenario {self.scenario})"


@dataclass(frozen=True)
class StressInput:
    """Two session stores (``examples/stores/FILE.py:Class``, or a registered name) each opened
    at once by ``openers`` processes in ``rounds`` fresh databases (``turncheck stress
    --first-opens``): ``red`` the store as the report has it, ``green`` the fix. A failed first
    open is the finding."""

    red: str
    green: str
    openers: int = 4
    rounds: int = 2

    kind = "stress"

    def command(self, side: str) -> str:
        store = self.red if side == "red" else self.green
        return f"turncheck stress --store {store} --first-opens {self.rounds} --writers {self.openers}"


CaseInput = ModelInput | RuleInput | HistoryInput | LogInput | RaceInput | StoreInput | StressInput


@dataclass(frozen=True)
class Case:
    """One real failure: ``source`` (``owner/repo#N``; ``also`` other threads of the same shape),
    ``date`` and ``state`` as read in the thread (:data:`DATE`, :data:`STATES`: a thread not read
    is a :class:`PendingThread`, never a case), ``cls`` (:data:`CASE_CLASSES`), ``input``, ``breaks`` (what the red shape breaks
    and the green holds: model properties, a rule id, or per-request checks), ``finding`` (the
    report's words) and ``release`` (the library release it was checked against, or why it is a
    model: required of a thread from :data:`RELEASE_SINCE` on)."""

    name: str
    source: str
    date: str
    state: str
    cls: CaseClass
    input: CaseInput
    breaks: tuple[str, ...]
    finding: str
    release: str
    also: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for thread in (self.source, *self.also):
            if not THREAD.match(thread):
                raise BadParameter(f"case {self.name}: {thread!r} is not owner/repo#N")
        if self.cls not in CASE_CLASSES:
            raise BadParameter(
                f"case {self.name}: class {self.cls!r} is not one of {', '.join(CASE_CLASSES)}"
            )
        if not self.breaks:
            raise BadParameter(f"case {self.name}: a case breaks at least one rule or invariant")
        if not DATE.match(self.date) or self.state not in STATES:
            raise BadParameter(
                f"case {self.name}: date {self.date!r} and state {self.state!r} are not as read in {self.source} "
                f"(YYYY-MM-DD; one of {', '.join(STATES)}): a thread not read is a pending thread, not a case"
            )
        if self.date >= RELEASE_SINCE and not SAYS_RELEASE.search(self.release):
            raise BadParameter(
                f"case {self.name}: {self.source} is from {self.date}: its release {self.release!r} names no "
                "library release it was checked against and does not say why it is a model"
            )

    @property
    def threads(self) -> tuple[str, ...]:
        return (self.source, *self.also)


@dataclass(frozen=True)
class PendingThread:
    """A reported thread not a case yet: what it waits on, and what it shows where it was read."""

    source: str
    waits_on: str
    shows: str = "not read yet"


CASES: Registry[Case] = Registry("case", home="turncheck.models.corpus")
"""Every case by name, built-ins (:mod:`models.corpus`) first."""

PENDING: Registry[PendingThread] = Registry("pending thread", home="turncheck.models.corpus")
"""Every thread recorded but not yet a case, by its ``source``."""


def register_case(case: Case) -> Case:
    """Register ``case`` under its name (refused when the name is taken)."""
    return CASES.register(case.name, case)


def register_pending(thread: PendingThread) -> PendingThread:
    """Record a thread not expressible yet (refused when recorded twice)."""
    if not THREAD.match(thread.source):
        raise BadParameter(f"pending thread {thread.source!r} is not owner/repo#N")
    return PENDING.register(thread.source, thread)


def case_threads() -> tuple[str, ...]:
    """Every distinct thread the cases cover, in registration order."""
    return tuple(dict.fromkeys(t for case in CASES.values() for t in case.threads))
