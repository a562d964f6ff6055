"""Google ADK's ``DatabaseSessionService`` under two runs of one session: adk-python #4751 and #1733.

Each ``run_async`` loads the session, then appends its invocation's events one
``append_event`` at a time; the storage row's update time tells a handle that is stale. In ADK
1.24–1.26 a stale append reloads the session and carries on writing (``variant=buggy``): issue
#4751 ("reload-and-continue in 1.24+ corrupts session under concurrent run_async") shows two
servers resuming one session and interleaving their events, a trajectory the model reads back as
duplicate and contradictory tool calls on every later turn. Up to 1.23, and again since 1.27 —
the current behaviour — a stale append raises (``variant=raise-on-stale``): up to 1.23
``ValueError("… Please check if it is a stale session")`` (issue #1733), since 1.27
``ValueError("The session has been modified in storage since it was loaded. Please reload the
session before appending more events.")`` (adk-python ``sessions/database_session_service.py``;
the 1.27 change as ag-ui-protocol/ag-ui #1732 reports it). The session stays clean, but the run
that lost the race never answers — safe, and no progress. ``variant=occ-rerun`` is a design of
ours, optimistic concurrency with retry: a run writes its invocation as one append conditional on
the version it loaded; refused, it reloads and runs again on what it now sees.

The invariant ``runs-not-interleaved``: each run's events are one block of the session. The goals
``both-runs-answered`` and ``stale-run-answered`` (a run whose handle went stale still writes its
whole invocation) — the second is what raise-on-stale never reaches: its check ends inconclusive
(exit 3), not with a counterexample. Two runs of ``events`` events each.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import Property

NONE = -1
RUNS = ("A", "B")


class State(NamedTuple):
    """``session``: the stored events, oldest first (``A1`` is run A's first event);
    ``handles``: the version each run's handle loaded (-1: not loaded); ``written``: events
    each run has produced (appended, or staged under ``occ-rerun``); ``stale``: a run found its
    handle stale; ``failed``: a run raised on a stale handle."""

    session: tuple[str, ...]
    handles: tuple[int, int]
    written: tuple[int, int]
    stale: tuple[bool, bool]
    failed: tuple[bool, bool]


def _set(pair: tuple, r: int, value: object) -> tuple:  # type: ignore[type-arg]
    return tuple(value if k == r else v for k, v in enumerate(pair))


def interleaved(session: tuple[str, ...]) -> bool:
    """Some run's events are split by another's."""
    owners = [e[0] for e in session]
    blocks = [o for k, o in enumerate(owners) if k == 0 or owners[k - 1] != o]
    return len(blocks) != len(set(blocks))


class SessionStore(VendorModel[State]):
    """Two runs (servers A and B) loading and appending to one stored session."""

    name = "adk-session-store"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "google-adk 1.24-1.26: a stale append reloads and carries on writing (adk-python #4751)",
        ),
        Variant(
            "raise-on-stale",
            "upstream",
            "current since google-adk 1.27 (and up to 1.23): a stale append "
            "raises ValueError 'The session has been modified in storage since it was loaded' "
            "(ag-ui-protocol/ag-ui #1732, #1754; up to 1.23 as adk-python #4751 reports)",
        ),
        Variant(
            "occ-rerun",
            "proposed",
            "ours: one append per invocation, conditional on the version loaded; "
            "refused, the run reloads and runs again",
        ),
    )
    renamed = {"fixed": "occ-rerun"}
    lanes = ("server",)
    update_writes = (
        "one per step: each append_event commits its event and the session's update time in one "
        "database transaction; an invocation is several appends by design, so a crash between two "
        "leaves a shorter invocation, not a lost write"
    )

    def __init__(self, variant: str = "buggy", events: int = 2) -> None:
        super().__init__(variant)
        self.events = events
        self.params = {"variant": variant, "events": events}

    def init_states(self) -> Iterator[State]:
        yield State((), (NONE, NONE), (0, 0), (False, False), (False, False))

    def done(self, state: State, r: int) -> bool:
        return sum(e[0] == RUNS[r] for e in state.session) == self.events

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        for r in (0, 1):
            if state.failed[r] or self.done(state, r):
                continue
            if state.handles[r] == NONE:
                out.append(("load", r))
            elif state.written[r] < self.events:
                out.append(("append", r))
            else:  # occ-rerun: the whole invocation is staged, written by one conditional append
                out.append(("commit", r))
        return out

    def step(self, state: State, action: Action) -> State:
        verb, r = action
        version = len(state.session)
        if verb == "load":
            return state._replace(handles=_set(state.handles, r, version))
        current = state.handles[r] == version
        if verb == "commit":
            if not current:  # refused: reload and run the invocation again on the new history
                return state._replace(handles=_set(state.handles, r, NONE), written=_set(state.written, r, 0),
                                      stale=_set(state.stale, r, True))  # fmt: skip
            block = tuple(f"{RUNS[r]}{k + 1}" for k in range(self.events))
            return state._replace(
                session=(*state.session, *block), handles=_set(state.handles, r, version + self.events)
            )
        if self.variant == "occ-rerun":
            return state._replace(written=_set(state.written, r, state.written[r] + 1))
        if not current and self.variant == "raise-on-stale":
            return state._replace(failed=_set(state.failed, r, True), stale=_set(state.stale, r, True))
        event = f"{RUNS[r]}{state.written[r] + 1}"
        return state._replace(session=(*state.session, event), handles=_set(state.handles, r, version + 1),
                              written=_set(state.written, r, state.written[r] + 1),
                              stale=_set(state.stale, r, state.stale[r] or not current))  # fmt: skip

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "runs-not-interleaved",
                "always",
                lambda s: not interleaved(s.session),
                "each run's events are one block of the session",
            ),
            Property(
                "both-runs-answered",
                "sometimes",
                lambda s: self.done(s, 0) and self.done(s, 1),
                "both runs write their whole invocation",
            ),
            Property(
                "stale-run-answered",
                "sometimes",
                lambda s: any(s.stale[r] and self.done(s, r) for r in (0, 1)),
                "a run whose handle went stale still writes its whole invocation",
            ),
        )

    def format_action(self, state: State, action: Action) -> str:
        verb, r = action
        who = f"server {RUNS[r]}"
        version = len(state.session)
        if verb == "load":
            return f"{who} loads the session (version {version})"
        current = state.handles[r] == version
        if verb == "commit":
            if not current:
                return f"{who} commits its invocation: refused, stale (version {version}); reloads"
            return f"{who} commits its {self.events} events at version {version}"
        event = f"{RUNS[r]}{state.written[r] + 1}"
        if self.variant == "occ-rerun":
            return f"{who} produces {event} (staged)"
        if current:
            return f"{who} appends {event}"
        if self.variant == "raise-on-stale":
            return f"{who} appends {event}: ValueError, stale session; the run stops"
        return f"{who} appends {event}: stale, reloads and continues"

    def actor(self, state: State, action: Action) -> str:
        return f"server {RUNS[action[1]]}"

    def columns(self, state: State) -> dict[str, object]:
        return {"version": len(state.session)}

    def describe_window(self, state: State) -> str:
        return "session: " + (" · ".join(state.session) or "(empty)")

    panel_title = "the stored session, read back as the history"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        owners = [e[0] for e in state.session]
        return [
            (
                e,
                ("splits a run",)
                if 0 < k < len(owners) - 1 and owners[k - 1] == owners[k + 1] != e[0]
                else (),
            )
            for k, e in enumerate(state.session)
        ]


register_model(
    SessionStore.name,
    SessionStore,
    description="ADK DatabaseSessionService: reload-and-continue interleaves runs (#4751); raising on a stale handle "
    "(current since 1.27) answers no stale run",
)
