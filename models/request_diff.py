"""Two trimmers compared request by request: what did my fix break?

:func:`diff_requests` projects every request of every session (the one definition of a request,
:func:`models.requests.request_points`, through :func:`models.per_request.replay_requests`) under
an ``old`` and a ``new`` strategy, and keeps the requests whose windows differ, each check's count
of offending requests under both, and the *regressions*: requests whose window held a check under
``old`` and breaks it under ``new``. A fix that stops orphaning results by leaving some windows
empty (spring-projects/spring-ai PR #6312: keep-last-N, then snap forward to the next USER) shows
as ``empty`` 0 → N, every one of them a regression.

Invariant: a strategy diffed against itself has no differing window and no regression; both
sides see exactly the same requests, so request ``k`` of a session is compared with request ``k``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turncheck.models.cost import CostModel
from turncheck.models.events import Event
from turncheck.models.per_request import check_value, replay_requests
from turncheck.models.projector import Window

DEFAULT_CHECKS = ("orphanRes", "orphanCall", "overBudget", "empty")
"""The checks compared when none are named (``project --per-request``'s usual four)."""


@dataclass(frozen=True)
class ChangedRequest:
    """Request ``index`` of ``session`` (after ``end`` events), whose window differs; the checks
    each side's window breaks, and ``regressed``: those only ``new`` breaks."""

    session: str
    index: int
    end: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    old_size: int
    new_size: int

    @property
    def regressed(self) -> tuple[str, ...]:
        return tuple(c for c in self.new if c not in self.old)


@dataclass(frozen=True)
class RequestDiff:
    """The comparison of ``old`` and ``new`` over ``requests`` requests: the ones whose windows
    differ (``changed``), and per check the number of requests breaking it under each side."""

    old: str
    new: str
    checks: tuple[str, ...]
    requests: int
    changed: tuple[ChangedRequest, ...]
    old_counts: Mapping[str, int]
    new_counts: Mapping[str, int]

    @property
    def regressions(self) -> tuple[ChangedRequest, ...]:
        """The requests whose window breaks, under ``new``, a check it held under ``old``."""
        return tuple(c for c in self.changed if c.regressed)

    def broken_checks(self) -> tuple[str, ...]:
        """The checks some request regressed on, in check order."""
        seen = {check for c in self.regressions for check in c.regressed}
        return tuple(c for c in self.checks if c in seen)


def _signature(window: Window) -> tuple[tuple[int, str, str | None, str | None], ...]:
    """What a window sends, as comparable values (a trimmer's invented events have seq too)."""
    return tuple((e.seq, e.kind.name, e.call_id, e.text) for e in window.events)


def diff_requests(
    sessions: Mapping[str, Sequence[Event]],
    budget: int,
    old: str,
    new: str,
    cost: CostModel,
    checks: Sequence[str] = DEFAULT_CHECKS,
) -> RequestDiff:
    """Every request of every session projected under ``old`` and ``new`` (strategies as
    ``--strategy`` takes them), compared window by window and check by check."""
    checks = tuple(checks)
    old_counts = dict.fromkeys(checks, 0)
    new_counts = dict.fromkeys(checks, 0)
    changed: list[ChangedRequest] = []
    requests = 0
    for name, events in sessions.items():
        pairs = zip(
            replay_requests(name, events, budget, old, cost),
            replay_requests(name, events, budget, new, cost),
            strict=True,
        )
        for a, b in pairs:
            requests += 1
            bad_a = tuple(c for c in checks if check_value(a.window, c))
            bad_b = tuple(c for c in checks if check_value(b.window, c))
            for c in bad_a:
                old_counts[c] += 1
            for c in bad_b:
                new_counts[c] += 1
            if _signature(a.window) != _signature(b.window) or bad_a != bad_b:
                changed.append(
                    ChangedRequest(
                        name, a.index, a.end, bad_a, bad_b, len(a.window.events), len(b.window.events)
                    )
                )
    return RequestDiff(old, new, checks, requests, tuple(changed), old_counts, new_counts)
