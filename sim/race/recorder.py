"""A recorder a race test wraps around its own store, and the turncheck checks run on what it saw.

The test awaits its store's calls through the recorder — ``await history.append(turn,
store.append(...))``, ``await history.compact(store.compact(...), count_read=n)``, ``await
history.read(store.window())`` — and at the end hands it the turns the store really holds. Under
the controlled loop a coroutine's return is one atomic point, so the order in which the awaited
writes return **is** the commit order: the recorder keeps it as the stress checker's journal
(:class:`~turncheck.models.session_store.JournalEntry`, one per write, with the client's
acknowledgement) and :func:`check` runs the stress anomalies of
:data:`turncheck.sim.stress.history.ANOMALIES` on it — lost, duplicated, over-deletion, peak over
the locking's bound. Every read window runs through the projector's structural report
(:func:`turncheck.models.projector.structural_report`): an orphaned RESULT, a CALL without its
RESULT, a RESULT read before its CALL, a call id twice. No rule is written here a second time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from turncheck.models.events import Event
from turncheck.models.history import History
from turncheck.models.projector import structural_report
from turncheck.models.session_store import JournalEntry
from turncheck.sim.stress.history import ANOMALIES, Violation, no_progress, replay
from turncheck.sim.stress.runner import RawRun, StressParams
from turncheck.sim.stress.stores import StoreSpec
from turncheck.sim.stress.strategies import APPEND, COMPACT

T = TypeVar("T")
UNBOUNDED = 10**9
WINDOW_CHECKS = ("orphanRes", "orphanCall", "mispair", "dupCallId")


def window_problems(events: Sequence[Event], checks: Sequence[str] = WINDOW_CHECKS) -> list[str]:
    """The structural-report counters among ``checks`` that are not zero in this window, as
    ``name count`` (``orphanCall 1``: a CALL sent without its RESULT, which the OpenAI API
    refuses with "No tool output found for function call")."""
    report = structural_report(History(events), 0, 0, UNBOUNDED)
    return [f"{name} {getattr(report, name)}" for name in checks if getattr(report, name)]


@dataclass
class RaceHistory:
    """What one schedule's store did, in the order its writes returned.

    ``max_turns`` and ``locking`` are what the store's compaction promises (the stress checker's
    bound and delete rule); without compactions neither matters. ``window_checks`` names the
    structural-report counters a read window must keep at zero.
    """

    max_turns: int = UNBOUNDED
    locking: str = "none"
    window_checks: Sequence[str] = WINDOW_CHECKS
    journal: list[JournalEntry] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    windows: list[tuple[str, int, tuple[Event, ...]]] = field(default_factory=list)

    def _commit(
        self, op: str, kind: str, added: tuple[int, ...], removed: tuple[int, ...], count: int
    ) -> int:
        seq = len(self.journal) + 1
        self.journal.append(JournalEntry(seq, op, kind, added, removed, count))
        return seq

    async def append(self, turn: int, write: Awaitable[T], who: str = "writer") -> T:
        """Await the store's append of ``turn``; its return commits it and acknowledges it."""
        result = await write
        op = f"{who}-{len(self.records)}"
        seq = self._commit(op, APPEND, (turn,), (), 0)
        self.records.append(
            {"op": "append", "p": who, "type": "ok", "id": op, "seq": seq, "turn": turn, "t0": 0.0, "t1": 0.0}
        )
        return result

    async def compact(
        self, write: Awaitable[Iterable[int]], count_read: int, who: str = "compactor"
    ) -> list[int]:
        """Await the store's compaction, which returns the turns it deleted; ``count_read`` is the
        live count it acted on."""
        removed = list(await write)
        self._commit(f"{who}-{len(self.records)}", COMPACT, (), tuple(removed), count_read)
        self.records.append({"op": "compact", "removed": removed})
        return removed

    async def read(self, window: Awaitable[Sequence[Event]], who: str = "reader") -> Sequence[Event]:
        """Await a read of the window the agent would send; it is checked by :func:`check`."""
        events = await window
        self.windows.append((who, len(self.journal), tuple(events)))
        return events

    def check(self, live: Iterable[int]) -> list[Violation]:
        """Every broken invariant, given the turns the store holds at the end."""
        params = StressParams(StoreSpec("race", ""), self.locking, max_turns=self.max_turns, gap_ms=1.0)
        run = RawRun(params, tuple(self.records), tuple(self.journal), tuple(live), 0.0, 0.0)
        rp = replay(run)
        found = [v for anomaly in ANOMALIES if anomaly is not no_progress for v in anomaly(run, rp)]
        for who, version, events in self.windows:
            bad = window_problems(events, self.window_checks)
            if bad:
                kinds = " ".join(f"{e.kind.name}{'(' + e.call_id + ')' if e.call_id else ''}" for e in events)
                found.append(
                    Violation("read-window", f"{who} read after commit {version}: {', '.join(bad)}", (kinds,))
                )
        return found

    def assert_holds(self, live: Iterable[int]) -> None:
        """Raise an AssertionError naming every broken invariant (what a race test asserts)."""
        broken = self.check(live)
        if broken:
            raise AssertionError("; ".join(f"{v.invariant}: {v.reason}" for v in broken))
