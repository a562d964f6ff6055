"""Google ADK's sliding-window event compaction: adk-python #4740 and adk-go #1231.

ADK compacts a session by appending a compaction event that carries a summary and the
``[start_timestamp, end_timestamp]`` of the events it summarised; when the prompt is rebuilt,
every raw event whose timestamp falls inside a kept range is left out in favour of the summary.
The sliding window (``EventsCompactionConfig(compaction_interval, overlap_size)``, here an
interval of one invocation and no overlap) summarises the invocations completed since the last
compaction, as a contiguous slice of the session. ``variant=buggy`` shows the two holes reported
against it:

* adk-python #4740 — an invocation that ends on an ``adk_request_confirmation`` call is complete
  to the runner, so the window summarises the pending call; when the user finally answers, the
  runner finds no call for the ``FunctionResponse`` and raises ``ValueError``;
* adk-go #1231 — coverage is a timestamp range, so an event whose writer's clock lags (stamped
  inside a range, written after the window was cut) is hidden from every later prompt "having
  been summarized by nothing".

``variant=seq-cut`` (a design of ours) summarises the longest self-contained prefix of the
events not yet covered — cut by ``seq``, stopping before a call still waiting for its response —
and hides exactly the ``seq`` range it covers. Neither upstream fix is modelled: adk-python now
cuts at ``_longest_self_contained_prefix`` (the helper of #7236), and adk-go PR #1231 (merged)
keeps the timestamp range but lists the events inside it a summary does not stand for.

Invariants: ``no-pending-call-summarised`` (a summary that covers a confirmation call covers its
response too) and ``hidden-only-if-summarised`` (every event left out of the prompt is one a
summary stands for). The goal ``summary-written``. Bounded by ``invocations`` user invocations,
``compactions`` summaries, one confirmation call and one lagging event; timestamps are even for punctual writers and one
less than the latest for the lagging one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import FieldValue, Property

NONE = -1
Event = tuple[str, int, int]  # (kind, invocation, timestamp); its seq is its place in the session
Summary = tuple[int, int, tuple[int, ...]]  # (start, end) by ts (buggy) or seq (seq-cut), seqs covered


class State(NamedTuple):
    """``events``: the raw events in ``seq`` order; ``summaries``: each compaction event's range
    and the seqs it summarised; ``open``: the invocation running (0: none); ``invocations``: the
    last invocation id; ``pending``: seq of the confirmation call awaiting its response (-1:
    none); ``confirmed``: a confirmation was requested; ``lagged``: the lagging event was
    written."""

    events: tuple[Event, ...]
    summaries: tuple[Summary, ...]
    open: int
    invocations: int
    pending: int
    confirmed: bool
    lagged: bool


def summarised_unanswered(state: State, covered: tuple[int, ...]) -> bool:
    """The summary covering ``covered`` holds the confirmation call but not its response (the
    response not written yet, or left outside)."""
    kinds = [state.events[seq][0] for seq in covered]
    return "confirm" in kinds and "approve" not in kinds


class SlidingWindow(VendorModel[State]):
    """A user, an agent that may ask for a confirmation, a lagging writer and the compactor."""

    name = "adk-sliding-window"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "adk-python #4740 (a pending confirmation call summarised) and the "
            "timestamp-range coverage adk-go PR #1231 describes (an event hidden, summarised by nothing)",
        ),
        Variant("seq-cut", "proposed", "ours: the longest self-contained prefix, cut and hidden by seq"),
    )
    renamed = {"fixed": "seq-cut"}
    lanes = ("user", "agent", "writer", "compactor")
    update_writes = (
        "one: the compaction is one appended event carrying the summary and its timestamp range; "
        "the raw events stay"
    )

    def __init__(self, variant: str = "buggy", invocations: int = 3, compactions: int = 2) -> None:
        super().__init__(variant)
        self.invocations = invocations
        self.compactions = compactions
        self.params = {"variant": variant, "invocations": invocations, "compactions": compactions}

    def init_states(self) -> Iterator[State]:
        yield State((), (), 0, 0, NONE, False, False)

    # -- what the prompt leaves out, and what the compactor would summarise -------------------

    def hidden(self, state: State) -> set[int]:
        """Seqs of the raw events the rebuilt prompt leaves out: inside a summary's range, by
        timestamp (buggy) or by seq (seq-cut)."""
        key = (lambda seq, e: e[2]) if self.variant == "buggy" else (lambda seq, e: seq)
        return {
            seq
            for seq, e in enumerate(state.events)
            if any(lo <= key(seq, e) <= hi for lo, hi, _ in state.summaries)
        }

    def window(self, state: State) -> tuple[int, ...]:
        """The seqs the compactor would summarise now (empty: nothing to compact)."""
        events = state.events
        if self.variant == "buggy":
            last_end = state.summaries[-1][1] if state.summaries else NONE
            latest: dict[int, int] = {}
            for e in events:
                latest[e[1]] = max(latest.get(e[1], NONE), e[2])
            new = [inv for inv, ts in latest.items() if ts > last_end]
            if not new:
                return ()
            first = next(seq for seq, e in enumerate(events) if e[1] == new[0])
            last = max(seq for seq, e in enumerate(events) if e[1] == new[-1])
            return tuple(range(first, last + 1))
        start = state.summaries[-1][1] + 1 if state.summaries else 0
        end = len(events) if state.pending == NONE else state.pending
        return tuple(range(start, end))

    # -- the protocol ---------------------------------------------------------------------------

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.open:
            out.append(("reply",))
            if not state.confirmed:
                out.append(("confirm",))
        elif state.pending != NONE:
            out.append(("approve",))
        if not state.open and state.invocations < self.invocations:
            out.append(("user",))
        if state.events and not state.lagged:
            out.append(("lagging",))
        if not state.open and len(state.summaries) < self.compactions and self.window(state):
            out.append(("compact",))
        return out

    def step(self, state: State, action: Action) -> State:
        verb = action[0]
        events = state.events
        now = 2 * len(events)
        if verb == "compact":
            seqs = self.window(state)
            lo, hi = (
                (events[seqs[0]][2], events[seqs[-1]][2]) if self.variant == "buggy" else (seqs[0], seqs[-1])
            )
            return state._replace(summaries=(*state.summaries, (lo, hi, seqs)))
        if verb == "lagging":
            late = ("late", events[-1][1], max(e[2] for e in events) - 1)
            return state._replace(events=(*events, late), lagged=True)
        if verb in ("user", "approve"):
            inv = state.invocations + 1
            pending = NONE if verb == "approve" else state.pending
            return state._replace(
                events=(*events, (verb, inv, now)), open=inv, invocations=inv, pending=pending
            )
        if verb == "confirm":
            return state._replace(events=(*events, ("confirm", state.open, now)), open=0,
                                  pending=len(events), confirmed=True)  # fmt: skip
        return state._replace(events=(*events, ("reply", state.open, now)), open=0)

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "no-pending-call-summarised",
                "always",
                lambda s: not any(summarised_unanswered(s, c) for _lo, _hi, c in s.summaries),
                "a summary that covers a confirmation call covers its response too",
            ),
            Property(
                "hidden-only-if-summarised",
                "always",
                lambda s: self.hidden(s) <= {seq for _lo, _hi, c in s.summaries for seq in c},
                "every event left out of the prompt is one a summary stands for",
            ),
            Property("summary-written", "sometimes", lambda s: bool(s.summaries), "a summary is written"),
        )

    # -- how a run reads ------------------------------------------------------------------------

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        now = 2 * len(state.events)
        if verb == "compact":
            seqs = self.window(state)
            if self.variant == "buggy":
                lo, hi = state.events[seqs[0]][2], state.events[seqs[-1]][2]
                return f"compactor summarises seq {seqs[0]}..{seqs[-1]}, range ts {lo}..{hi}"
            return f"compactor summarises seq {seqs[0]}..{seqs[-1]}"
        if verb == "lagging":
            ts = max(e[2] for e in state.events) - 1
            return (
                f"writer with a lagging clock appends an event of invocation {state.events[-1][1]}, ts {ts}"
            )
        if verb == "user":
            return f"user starts invocation {state.invocations + 1} (ts {now})"
        if verb == "approve":
            return f"user answers the confirmation: FunctionResponse (ts {now})"
        if verb == "confirm":
            return f"agent calls adk_request_confirmation, awaits the user (ts {now})"
        return f"agent replies, invocation {state.open} ends (ts {now})"

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        hidden = self.hidden(state)
        return [
            ("events", [f"seq {seq}: {k} inv {inv} ts {ts}" + (" (hidden)" if seq in hidden else "")
                        for seq, (k, inv, ts) in enumerate(state.events)]),
            ("summaries", [f"[{lo}, {hi}] covers seq {', '.join(map(str, c))}" for lo, hi, c in state.summaries]),
            ("pending call", f"seq {state.pending}" if state.pending != NONE else "none"),
        ]  # fmt: skip

    def columns(self, state: State) -> dict[str, object]:
        return {"events": len(state.events), "summaries": len(state.summaries)}

    def describe_window(self, state: State) -> str:
        hidden = self.hidden(state)
        sent = [f"summary {i}" for i in range(len(state.summaries))]
        sent += [f"{e[0]} seq {seq}" for seq, e in enumerate(state.events) if seq not in hidden]
        return "prompt: " + " · ".join(sent)

    panel_title = "the prompt rebuilt from the session"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        hidden = self.hidden(state)
        covered = {seq for _lo, _hi, c in state.summaries for seq in c}
        items: list[tuple[str, tuple[str, ...]]] = []
        for k, (lo, hi, c) in enumerate(state.summaries):
            marks = ("pending call summarised",) if summarised_unanswered(state, c) else ()
            items.append((f"summary {k} of seq {', '.join(map(str, c))} (range {lo}..{hi})", marks))
        for seq, (kind, inv, ts) in enumerate(state.events):
            if seq in hidden and seq not in covered:
                items.append((f"seq {seq}: {kind} inv {inv} ts {ts}", ("hidden, summarised by nothing",)))
            elif seq not in hidden:
                items.append((f"seq {seq}: {kind} inv {inv} ts {ts}", ()))
        return items


register_model(
    SlidingWindow.name,
    SlidingWindow,
    description="ADK sliding window summarising a pending confirmation, hiding by ts (#4740, adk-go #1231) vs by seq (proposed)",
)
