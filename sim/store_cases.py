"""The corpus's store cases raced against a session store — a reference one or the user's own.

A store is made by a factory called with a session id (``Factory(session_id)``; an ``async def``
factory is awaited), as openai-agents' stores are (``SQLiteSession("s")``), and must answer
openai-agents' ``Session`` protocol: ``get_items``, ``add_items``, ``pop_item``,
``clear_session``, each an ``async def``. Each scenario of :data:`SCENARIOS` is an async test,
made fresh for every schedule (a new session id each time, so a persistent store's schedules do
not share rows), that the race scheduler runs as ``turncheck race`` does:

* ``concurrent-appends`` — a user message and a tool result appended by two tasks of one run:
  both must be stored (no schedule loses a write);
* ``compaction-under-faults`` — two items written through the installed openai-agents'
  ``OpenAIResponsesCompactionSession`` (its ``responses.compact`` scripted, offline), then a
  forced compaction: with an error or a cancellation injected at each await (``race --faults``),
  every acknowledged item is stored or named by the summary, and the history is never empty
  once it held something (:class:`~sim.race.faults.Acknowledged`). The compaction is the SDK's
  own, at the release installed; the store is what is judged.

Invariant: a store case passes only when the bounded search (``schedules`` schedules, then the
fault search with the same budget) finds no failing run; what it did not explore is said by the
caller, never read as proven.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from turncheck.models.cases import STORE_PREFIX, Case, StoreInput
from turncheck.models.errors import BadParameter
from turncheck.models.user_code import load_object
from turncheck.sim.race.explore import AsyncTest, explore, failure_report
from turncheck.sim.race.fault_search import fault_kinds, search_faults
from turncheck.sim.race.faults import Acknowledged

SESSION_METHODS = ("get_items", "add_items", "pop_item", "clear_session")
SUMMARY = "summary of: "
StoreFactory = Callable[[str], Any]


def load_store(spec: str) -> StoreFactory:
    """The factory ``store:package.module:Factory`` (or ``store:path/file.py:Factory``) names;
    one :class:`~models.errors.UnknownName` line when it cannot be loaded. The store it makes is
    checked against the protocol by :func:`check_store`."""
    if not spec.startswith(STORE_PREFIX):
        raise BadParameter(f"a store is written {STORE_PREFIX}package.module:Factory, got {spec!r}")
    return load_object(spec[len(STORE_PREFIX) :], "store", noun="factory")  # type: ignore[no-any-return]


async def open_session(factory: StoreFactory, session_id: str) -> Any:
    """``factory(session_id)`` (awaited when it is a coroutine), refused in one line unless it
    has the four coroutine methods of the ``Session`` protocol."""
    takes_id(factory)
    made = factory(session_id)
    store = await made if inspect.isawaitable(made) else made
    missing = [m for m in SESSION_METHODS if not inspect.iscoroutinefunction(getattr(store, m, None))]
    if missing:
        raise BadParameter(
            f"store {type(store).__name__} is not an openai-agents Session: no async def {', '.join(missing)}"
        )
    return store


def takes_id(factory: StoreFactory) -> None:
    """Refuse, in one line, a factory that cannot be called with one session id (a class whose
    ``__init__`` takes no argument, or two): the store cases make each session as
    ``Factory(session_id)``, as openai-agents' ``SQLiteSession("s")`` is made."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin without a signature: calling it says what it refuses
    try:
        signature.bind("turncheck-probe")
    except TypeError as exc:
        name = getattr(factory, "__qualname__", type(factory).__name__)
        raise BadParameter(
            f"store factory {name}{signature} cannot be called with one session id ({exc}): the store "
            "cases make each session as Factory(session_id), as openai-agents' SQLiteSession('s')"
        ) from None


def check_store(factory: StoreFactory) -> None:
    """Make one session outside the scheduler and check it answers the protocol: a factory
    that fails, or a store that is not a ``Session``, is one line before any race runs."""
    asyncio.run(open_session(factory, "turncheck-probe"))


def message(text: str) -> dict[str, Any]:
    """A Responses input item, as openai-agents stores them."""
    return {"type": "message", "role": "user", "content": text}


def covered(stored: list[Any]) -> list[Any]:
    """The items a stored history stands for: each item itself, a summary (``summary of: a | b``,
    what the scripted compaction writes) the items it replaced."""
    out: list[Any] = []
    for item in stored:
        text = item.get("content") if isinstance(item, dict) else None
        if isinstance(text, str) and text.startswith(SUMMARY):
            out.extend(message(part) for part in text[len(SUMMARY) :].split(" | "))
        else:
            out.append(item)
    return out


class ScriptedCompaction:
    """``client.responses.compact``, offline: one round trip, then one message summarising the
    ``input`` items it was sent (openai-agents' input compaction mode)."""

    @property
    def responses(self) -> ScriptedCompaction:
        return self

    async def compact(self, **request: Any) -> Any:
        texts = [item.get("content") for item in request.get("input") or [] if isinstance(item, dict)]
        await asyncio.sleep(0)
        summary = message(SUMMARY + " | ".join(str(t) for t in texts))
        return type("Compacted", (), {"output": [summary], "id": "cmp_1", "usage": None})()


def concurrent_appends(factory: StoreFactory, ids: Callable[[], str]) -> AsyncTest:
    async def test() -> None:
        session = await open_session(factory, ids())
        user, tool = message("user: weather in Paris?"), message("tool: 21°C")

        async def tool_result() -> None:
            await asyncio.sleep(0)  # the tool's own round trip
            await session.add_items([tool])

        await asyncio.gather(session.add_items([user]), tool_result())
        kept = await session.get_items()
        lost = [item["content"] for item in (user, tool) if item not in kept]
        assert not lost, f"an append was lost: {lost} (the session holds {len(kept)} of the 2)"

    return test


def compaction_under_faults(factory: StoreFactory, ids: Callable[[], str]) -> AsyncTest:
    from agents import set_tracing_disabled
    from agents.memory.openai_responses_compaction_session import OpenAIResponsesCompactionSession

    set_tracing_disabled(True)  # offline: no trace export

    async def test() -> None:
        store = await open_session(factory, ids())
        session = OpenAIResponsesCompactionSession(
            session_id=getattr(store, "session_id", "s"), underlying_session=store,
            client=ScriptedCompaction(), should_trigger_compaction=lambda context: False,  # type: ignore[arg-type]
        )  # fmt: skip
        history = Acknowledged(store.get_items, covered)
        for text in ("user: weather in Paris?", "assistant: 21°C"):
            await session.add_items([message(text)])  # type: ignore[list-item]
            history.ack(message(text))
        try:
            await session.run_compaction({"force": True, "compaction_mode": "input"})
        except OSError:
            pass  # the compaction failed: the agent goes on with the session it has
        await history.check()

    return test


SCENARIOS: dict[str, Callable[[StoreFactory, Callable[[], str]], AsyncTest]] = {
    "concurrent-appends": concurrent_appends,
    "compaction-under-faults": compaction_under_faults,
}


@dataclass(frozen=True)
class StoreRun:
    """A store case raced against one store: the failing run's report (empty when every run
    passed), its schedule token, and what was explored; ``skipped`` says why it could not run."""

    case: Case
    store: str
    report: tuple[str, ...] = ()
    token: str | None = None
    explored: str = ""
    skipped: str | None = None

    @property
    def reproduced(self) -> bool:
        return bool(self.report)


def library_versions(pins: tuple[str, ...]) -> tuple[str | None, str]:
    """Why a scenario cannot run here (a pinned library absent), and a note on each pinned
    library installed at another version than the one the case was recorded on."""
    from importlib.metadata import PackageNotFoundError, version

    notes = []
    for pin in pins:
        dist, _, wanted = pin.partition("==")
        try:
            found = version(dist)
        except PackageNotFoundError:
            return f"{dist} is not installed (the scenario runs it; recorded on {pin})", ""
        if found != wanted:
            notes.append(f"{dist} {found} installed; the case was recorded on {pin}")
    return None, "; ".join(notes)


SDK_LOGGERS = ("openai.agents", "openai-agents")
"""openai-agents' loggers (its compaction logs under ``openai-agents.openai.compaction``)."""


@contextmanager
def _quiet() -> Iterator[None]:
    """The SDK's warnings ("Restored previous session history…") kept off stderr while racing:
    the verdict says what happened."""
    logs = [logging.getLogger(name) for name in SDK_LOGGERS]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)


def race_store(case: Case, store: str, factory: StoreFactory | None = None) -> StoreRun:
    """Race ``case``'s scenario against ``store`` (``store:…``; ``factory`` when already loaded):
    ``schedules`` schedules, then, for a fault case, the fault search with the same budget."""
    spec = case.input
    assert isinstance(spec, StoreInput)
    why, note = library_versions(spec.pinned)
    if why is not None:
        return StoreRun(case, store, skipped=why)
    counter = itertools.count()
    test = SCENARIOS[spec.scenario](
        factory or load_store(store), lambda: f"turncheck-{case.name}-{next(counter)}"
    )
    with _quiet():
        result = explore(test, schedules=spec.schedules, seed=0, max_seconds=60.0)
        run, explored = result.failing, f"{result.schedules} schedules"
        if run is None and spec.fault_kinds is not None:
            kinds = fault_kinds(spec.fault_kinds)
            faults = search_faults(test, budget=spec.schedules, bounds=(100_000, 60.0), kinds=kinds)
            run, explored = faults.failing, f"{explored}, {faults.runs} fault runs ({spec.fault_kinds})"
    explored += f" ({note})" if note else ""
    if run is None or run.failure is None:
        return StoreRun(case, store, explored=explored)
    replay = f"turncheck cases run --against {store} (seed 0: the same run every time)"
    return StoreRun(case, store, tuple(failure_report(run, replay, case.name)), run.schedule.token, explored)
