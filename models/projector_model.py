"""The projector as a protocol model: every small history, projected under one strategy.

A writer appends events of any kind to one session's history, up to ``events`` events: a USER
message that opens a turn; a CALL whose id is any of a pool of ``call_ids`` not open in this turn
(fresh, or reused — ``reuse=False`` gives every call a fresh id); a RESULT for a call of the
current turn that is still open; a TERM that closes the turn. A call still open when the next USER
arrives is dangling: its result never comes. After every append the reader projects the history
under ``strategy`` and ``budget`` with the projector core (:func:`models.projector.project`), and
the properties read the window's structural report:

* ``no-orphan-results`` — ``orphanRes`` is 0;
* ``within-budget`` — ``overBudget`` is 0;
* ``non-empty`` — the window is not empty while a pair-safe suffix fits the budget;
* ``sends-something`` (a goal, for a user's trimmer only) — some window sends an event: a
  trimmer that sizes a message its own way may keep nothing at all at a small budget, and then
  every invariant above holds vacuously; the goal never reached makes the check INCONCLUSIVE;
* ``no-orphan-calls`` (only with ``pairing=True``) — the window sends no CALL whose RESULT is in
  the history but not in the window (a dangling call, or one whose result has not come yet, is
  the log's state, not the trimmer's fault). It is what a peer library's shortest
  reproductions are searched for (:mod:`scenarios.peer_trace`); off by default, so the model's
  properties, parameters and every saved trace stay what they were.

With ``late=True`` a call still open when the next USER arrives is not dangling yet: its RESULT
may still come in any later turn (a human approving the call after chatting on), the case
``lint`` reports as ``result-in-later-turn``. Off by default, listed among the parameters only
when on, for the same reason as ``pairing``.

USER, CALL and TERM cost one token; a RESULT costs one of ``result_sizes`` tokens (four ASCII
characters per token under the ``estimate`` cost model). With the defaults (budget 4, results of
1 or 3 tokens, six events, two call ids) every strategy's known failure is reachable: M0 orphans,
M1 and M2 overrun, M3 goes empty, M4's fallback to M0 orphans a RESULT, and M5 keeps all three
properties. Reused ids add one more: a RESULT pairs with the oldest open CALL of its id (the
history's pairing rule), so reusing a dangling call's id orphans the new RESULT even under M1–M3;
``reuse=False`` removes it and reproduces the seed's picture exactly. Call ids are
interchangeable: :meth:`ProjectorModel.canonical` renames them in order of first appearance.

Which ids a check draws depends on whose projector it judges (``reuse`` left unset): our
strategies and the peer libraries' trimmers (``peer:NAME``) get reused ids, the picture the docs
and saved traces show; a user's trimmer (``pkg.mod:fn``, ``messages:…``, ``exec:…``, a function)
gets a fresh id per call, as :func:`turncheck.testing.check_projector` draws — so the command and
the pytest fixture judge a user's trimmer on the same histories and agree. ``reuse=true`` asks for
reused ids explicitly; a counterexample that rests on one then says which earlier CALL the
RESULT answers (:meth:`ProjectorModel.describe_window`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from turncheck.models.catalog import register_model
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.invariants import NO_ORPHAN_RESULTS, NON_EMPTY, WITHIN_BUDGET, non_empty
from turncheck.models.parameters import parse_value
from turncheck.models.projector import STRATEGIES, Window, check_strategy, project, resolve_strategy
from turncheck.models.protocol import FieldValue, Limit, Property, ProtocolModel, WindowPanel, field_text
from turncheck.models.selection import PeerWindow
from turncheck.models.window_panel import covered, window_panel

USER, CALL, RESULT, TERM = int(Kind.USER), int(Kind.CALL), int(Kind.RESULT), int(Kind.TERM)
NO_CALL = -1

# one event: (kind, call id or NO_CALL, tokens, turn)
Ev = tuple[int, int, int, int]
# state: (events, open call ids sorted, a turn is open)
State = tuple[tuple[Ev, ...], tuple[int, ...], bool]
Action = tuple[Any, ...]
NO_ORPHAN_CALLS = "no-orphan-calls"
SENDS = "sends-something"  # a user trimmer's goal: a budget at which it keeps nothing proves nothing


def unanswered_calls(w: Window) -> int:
    """CALLs the window sends whose RESULT the history holds but the window leaves out."""
    answered = {e.call_id for e in w.history.events if e.kind is Kind.RESULT}
    sent = w.events
    results = {e.call_id for e in sent if e.kind is Kind.RESULT}
    return sum(1 for e in sent if e.kind is Kind.CALL and e.call_id in answered and e.call_id not in results)


def reused_ids(reuse: bool | str | None, strategy: Any) -> bool:
    """Whether calls draw reused ids: ``reuse`` when given (a bool, or ``true``/``false`` from
    the command line), else yes for our strategies and the peers' (the histories every figure
    and saved trace was made on) and no for a user's trimmer, whose pytest fixture draws a
    fresh id per call (:func:`turncheck.testing.histories`)."""
    if isinstance(reuse, str):
        return bool(parse_value(reuse, bool, "reuse"))
    if reuse is not None:
        return bool(reuse)
    return isinstance(strategy, str) and (
        STRATEGIES.lookup(strategy) is not None or strategy.startswith("peer:")
    )


def reused_id_orphans(w: Window) -> list[str]:
    """Why each RESULT the window sends counts as orphaned when the window also sends a CALL of
    its id: the history pairs a RESULT with the oldest unanswered CALL of its id, so a RESULT
    after a reused id answers the earlier CALL, which the window left out."""
    h = w.history
    sent = {e.seq for e in w.events}
    out = []
    for e in w.events:
        if e.kind is not Kind.RESULT or not 0 <= e.seq < len(h.events) or h.partner[e.seq] < 0:
            continue
        call = h.events[h.partner[e.seq]]
        if call.seq in sent:
            continue
        reusing = [
            c.seq for c in w.events if c.kind is Kind.CALL and c.call_id == e.call_id and c.seq < e.seq
        ]
        if reusing:
            out.append(
                f"RESULT {e.call_id} (seq {e.seq}) answers the CALL {call.call_id} at seq {call.seq}, "
                f"turn {call.turn}, which the window leaves out, not the CALL at seq {reusing[-1]} that "
                f"reuses its id: a RESULT pairs with the oldest unanswered CALL of its id"
            )
    return out


_COST = EstimateCost()
_CHARS_PER_TOKEN = 4


class ProjectorModel(ProtocolModel[State, Action]):
    """Histories of up to ``events`` events, each projected by ``strategy`` within ``budget``."""

    name = "projector"

    def __init__(
        self,
        strategy: str = "M1",
        budget: int = 4,
        events: int = 6,
        call_ids: int = 2,
        result_sizes: tuple[int, ...] = (1, 3),
        reuse: bool | str | None = None,
        pairing: bool = False,
        late: bool = False,
    ) -> None:
        self._strategy = resolve_strategy(check_strategy(strategy))  # M0..M5 or the user's own
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise BadParameter(f"parameter budget: must be a positive integer, got {budget!r}")
        if not 1 <= events <= 12:
            raise BadParameter(f"parameter events: must be between 1 and 12, got {events}")
        if not 1 <= call_ids <= 6:
            raise BadParameter(f"parameter call_ids: must be between 1 and 6, got {call_ids}")
        sizes = tuple(result_sizes)
        if not sizes or any(s < 0 for s in sizes) or len(set(sizes)) != len(sizes):
            raise BadParameter(f"parameter result_sizes: needs distinct non-negative sizes, got {sizes}")
        self.strategy = strategy
        self.budget = budget
        self.max_events = events
        self.call_ids = call_ids
        self.result_sizes = sizes
        reuse = reused_ids(reuse, strategy)
        self.params: Mapping[str, Any] = {
            "strategy": strategy,
            "budget": budget,
            "events": events,
            "call_ids": call_ids,
            "result_sizes": list(sizes),
            "reuse": reuse,
        }
        self.reuse = reuse
        self.pairing = pairing
        if pairing:  # listed only when on: the default model's parameters are unchanged
            self.params = {**self.params, "pairing": True}
        self.late = late
        if late:
            self.params = {**self.params, "late": True}
        # a user's trimmer sizes messages its own way: at a budget below one message by its count
        # it sends nothing in every history, and "holds" would be vacuous (the goal SENDS says so)
        self.user_code = not (isinstance(strategy, str) and (
            STRATEGIES.lookup(strategy) is not None or strategy.startswith("peer:")))  # fmt: skip
        self._window = lru_cache(maxsize=1 << 16)(self._project)

    # -- the protocol -------------------------------------------------------------------------

    def init_states(self) -> Iterator[State]:
        yield ((), (), False)

    def actions(self, state: State) -> list[Action]:
        events, open_ids, in_turn = state
        if len(events) >= self.max_events:
            return []
        out: list[Action] = [("user",)]
        if in_turn:
            if self.reuse:
                out.extend(("call", c) for c in range(self.call_ids) if c not in open_ids)
            else:  # every call gets a fresh id: the number of calls so far
                out.append(("call", sum(1 for e in events if e[0] == CALL)))
            out.extend(("result", c, size) for c in open_ids for size in self.result_sizes)
            out.append(("term",))
        return out

    def step(self, state: State, action: Action) -> State:
        events, open_ids, in_turn = state
        turn = events[-1][3] if events else 0
        verb = action[0]
        if verb == "user":
            # calls still open are dangling from now on (their results never come), unless late
            return (*events, (USER, NO_CALL, 1, turn + 1)), open_ids if self.late else (), True
        if verb == "call":
            cid = action[1]
            return (*events, (CALL, cid, 1, turn)), tuple(sorted((*open_ids, cid))), True
        if verb == "result":
            cid, size = action[1], action[2]
            return (
                (*events, (RESULT, cid, size, turn)),
                tuple(c for c in open_ids if c != cid),
                True,
            )
        if verb == "term":
            return (*events, (TERM, NO_CALL, 1, turn)), open_ids, False
        raise BadParameter(f"model projector has no action {action!r}")

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                NO_ORPHAN_RESULTS,
                "always",
                lambda s: self.window(s).report.orphanRes == 0,
                "the window sent holds no RESULT whose CALL was cut away",
            ),
            Property(
                WITHIN_BUDGET,
                "always",
                lambda s: self.window(s).report.overBudget == 0,
                "the window's cost is within the budget",
            ),
            Property(
                NON_EMPTY,
                "always",
                lambda s: non_empty(self.window(s), _COST.frame, self.window(s).history.prefix(_COST)),
                "the window is not empty while a pair-safe suffix fits the budget",
            ),
        ) + (
            (Property(SENDS, "sometimes", lambda s: bool(self.window(s).events),
                      "some window sends an event (else every invariant holds only because nothing is sent)"),)
            if self.user_code
            else ()
        ) + (
            (
                Property(
                    NO_ORPHAN_CALLS,
                    "always",
                    lambda s: unanswered_calls(self.window(s)) == 0,
                    "the window sends no CALL without its RESULT when the history holds that RESULT",
                ),
            )
            if self.pairing
            else ()
        )

    def metrics(self, state: State) -> Mapping[str, int]:
        w = self.window(state)
        return {
            "kept_cost": w.cost,
            "over_budget_by": max(0, w.cost - self.budget),
            "orphan_results": w.report.orphanRes,
        }

    def canonical(self, state: State) -> State:
        events, open_ids, in_turn = state
        rename: dict[int, int] = {}
        out: list[Ev] = []
        for kind, cid, size, turn in events:
            if cid != NO_CALL:
                cid = rename.setdefault(cid, len(rename))
            out.append((kind, cid, size, turn))
        return tuple(out), tuple(sorted(rename[c] for c in open_ids)), in_turn

    def format_action(self, state: State, action: Action) -> str:
        events, _open, _in_turn = state
        turn = events[-1][3] if events else 0
        verb = action[0]
        if verb == "user":
            return f"writer appends USER (turn {turn + 1})"
        if verb == "call":
            reused = any(e[1] == action[1] for e in events)
            return f"writer appends CALL c{action[1]}{' (reused id)' if reused else ''}"
        if verb == "result":
            return f"writer appends RESULT c{action[1]} ({action[2]} tok)"
        return f"writer appends TERM (turn {turn})"

    # -- how a run reads (transcript, viewer, timeline) ---------------------------------------

    def actor(self, state: State, action: Action) -> str:
        return "writer"

    def lane_order(self) -> tuple[str, ...]:
        return ("writer",)

    def state_fields(self, state: State) -> list[tuple[str, FieldValue]]:
        events, open_ids, in_turn = state
        return [
            ("history", [f"seq {i}: {_event_label(*e)}" for i, e in enumerate(events)]),
            ("open calls", [f"c{c}" for c in open_ids]),
            ("turn open", field_text(in_turn)),
        ]

    def window_panels(self, states: Sequence[State], actions: Sequence[Action]) -> list[WindowPanel | None]:
        return [window_panel(self.window(s)) for s in states]

    def window_steps(self, states: Sequence[State], actions: Sequence[Action]) -> tuple[set[int], str]:
        """The events of the window sent at the end of the run (event ``seq`` is step ``seq + 1``)."""
        w = self.window(states[-1])
        if w.end <= w.start:
            return set(), "window sent: empty"
        return set(range(w.start + 1, w.end + 1)), f"window sent: seq {w.start}..{w.end - 1}"

    def limit(self) -> Limit:
        return Limit("kept_cost", "budget", float(self.budget))

    def columns(self, state: State) -> Mapping[str, Any]:
        events = state[0]
        return {"seq": len(events) - 1 if events else "-", "turn": events[-1][3] if events else "-"}

    def describe_window(self, state: State) -> str:
        """The window sent after this state's last append, in domain words."""
        w = self.window(state)
        events = state[0]
        if w.empty:
            return f"{self.strategy} sends an empty window ({len(events)} events, budget {self.budget})"
        kept = [covered(e) for e in getattr(w, "made", ())]
        if isinstance(w, PeerWindow):  # a user's trimmer that sent something other than a suffix
            for e in w.events:
                label = e.kind.name + (f" {e.call_id}" if e.call_id is not None else "")
                kept.append(f"{label}[{e.chars // _CHARS_PER_TOKEN}]" if e.kind is Kind.RESULT else label)
        for pos in range(w.start, w.end) if not isinstance(w, PeerWindow) else ():
            kind, cid, size, _turn = events[pos]
            label = Kind(kind).name + (f" c{cid}" if cid != NO_CALL else "")
            kept.append(f"{label}[{size}]" if kind == RESULT else label)
        r = w.report
        notes = [f"cost {w.cost}/{self.budget}"]
        if r.orphanRes:
            notes.append(f"{r.orphanRes} orphan RESULT")
        if r.fallback:
            notes.append("fallback to M0")
        if r.overBudget:
            notes.append("over budget")
        span = f"{self.strategy} sends seq {w.start}..{w.end - 1}: "
        why = "".join(f"; {line}" for line in reused_id_orphans(w)) if r.orphanRes else ""
        return span + " ".join(kept) + "  (" + ", ".join(notes) + ")" + why

    # -- projection ---------------------------------------------------------------------------

    def window(self, state: State) -> Window:
        """The window the reader sends for this state's history (cached per state)."""
        return self._window(state[0])

    def _project(self, events: tuple[Ev, ...]) -> Window:
        h = History(costs=(_COST,))
        for seq, (kind, cid, size, turn) in enumerate(events):
            h.append(
                Event(
                    seq=seq,
                    session="s",
                    turn=turn,
                    kind=Kind(kind),
                    call_id=f"c{cid}" if cid != NO_CALL else None,
                    ts=float(seq),
                    chars=size * _CHARS_PER_TOKEN,
                )
            )
        return project(h, self.budget, self._strategy, _COST)


def _event_label(kind: int, cid: int, size: int, turn: int) -> str:
    call = f" c{cid}" if cid >= 0 else ""
    return f"{Kind(kind).name}{call} [{size} tok] turn {turn}"


register_model("projector", ProjectorModel, description="every small history projected by one strategy")
