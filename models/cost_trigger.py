"""The cost a compaction trigger measures against the cost the provider counts, as a protocol model.

A conversation grows; before every model request a trigger compares its *count* with a
``threshold`` and, over it, has the history summarised first. The count is an *estimate*: a
ratio ``estimate`` of the history's real cost (``0.75``: three tokens counted of four;
elpapi42/pi-observational-memory PR #40 measured a "19-46%" undercount, a ratio of 0.54–0.81;
cline/cline PR #14195: a "~3 chars/token" estimate that dense content outruns; CherryHQ/cherry-studio
#18351 first reported tokenx "~4x" under MiniMax's count, then corrected it: that total included
prompt-cache reads, and against the fresh input tokenx is "only ~+17% off", an overcount near 1.17),
and it leaves out
a ``frame`` the provider does count — the system prompt and the tool schemas
(langchain-ai/langchain #34664: the summarisation middleware "only accounts for chat history").
Read ``stale``, the count is the one recorded at the last request that went through, so it lags
one append and a compaction does not lower it (hydro-project/infinity PR #74: the tracked count
"still held the stale pre-compaction usage", so the check "re-fired on the stale count ... in a
loop"; openclaw/openclaw #119824). The summariser's own request — its prompt ``summarizer`` plus
the history it reads — goes to a model with the same ``window`` (letta-ai/letta #3279: the global
cap "caps the summarizer's request", so "compaction fails").

Actions: ``("append", k)`` the conversation grows by ``k`` cost units, ``1 ≤ k ≤ turn`` (a short
user message or a long tool result: every size is a branch); ``("compact",)`` the trigger's count
is over the threshold, so the summariser is sent the history — it fits, and the history becomes a
summary of ``summary`` units (never more than it was), or it is refused and the history stays;
``("request",)`` the count is not over the threshold, so the agent's request is sent: its real
cost is ``frame`` + history, refused by the provider over the window — the agent retries the same
request, the history cannot grow. All costs are integers (one unit = one token, or a percent of
the window in the ``cost-trigger`` scenario); the estimate is ``⌊estimate × history⌋``, exact in
decimal.

The state space is bounded for every parameter: a request goes through only when it fits, and
only then may the history grow, so the history never exceeds ``max(summary, window − frame) +
turn`` (no :meth:`~ProtocolModel.saturation` is needed); a fresh count is recomputed, not stored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any, NamedTuple

from turncheck.models.catalog import register_model
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Limit, Property, ProtocolModel

APPEND = "append"
COMPACT = "compact"
REQUEST = "request"
Action = tuple[Any, ...]

REQUEST_FITS = "request-fits-window"
SUMMARIZER_FITS = "summarizer-request-fits"
OVER_THRESHOLD_COMPACTED = "over-threshold-compacted"
NO_COMPACTION_LOOP = "no-compaction-loop"
TRIGGER_FIRES = "trigger-fires"


class CostState(NamedTuple):
    """``history``: the real cost of the messages (no frame); ``recorded``: the count recorded at the
    last request that went through (kept only when the trigger reads it ``stale``, else 0);
    ``due``: a request is due (something was appended, or a refused request waits for its retry);
    ``compacted``: a compaction ran since the last request went through; ``refused``: the provider
    refused a request over the window; ``summarizer_refused``: the summariser's request was over it;
    ``fired``: the trigger fired at least once."""

    history: int
    recorded: int
    due: bool
    compacted: bool
    refused: bool
    summarizer_refused: bool
    fired: bool


class CostTriggerModel(ProtocolModel[CostState, Action]):
    """A token-count compaction trigger that reads an estimate, against a fixed window.

    Properties (the first violated one is the counterexample shown): ``request-fits-window`` and
    ``summarizer-request-fits`` (always), ``over-threshold-compacted`` and ``no-compaction-loop``
    (eventually, under weak fairness of every action), and the goal ``trigger-fires``. All hold
    with an exact estimator, no frame and a fresh count at the defaults; see :meth:`properties`.
    """

    name = "cost-trigger"

    def __init__(
        self,
        estimate: float = 1.0,
        frame: int = 0,
        stale: bool = False,
        window: int = 10,
        threshold: int = 8,
        turn: int = 2,
        summary: int = 2,
        summarizer: int = 0,
    ) -> None:
        if not 0 < estimate <= 100:
            raise BadParameter(f"model cost-trigger: parameter estimate must be in (0, 100], got {estimate}")
        for pname, value, low in (
            ("frame", frame, 0), ("window", window, 1), ("threshold", threshold, 0), ("turn", turn, 1),
            ("summary", summary, 0), ("summarizer", summarizer, 0),
        ):  # fmt: skip
            if value < low:
                raise BadParameter(f"model cost-trigger: parameter {pname} must be >= {low}, got {value}")
        self.ratio = Fraction(str(estimate))  # the decimal the user wrote, exactly: 0.29 × 100 = 29
        self.frame, self.stale, self.window, self.threshold = frame, stale, window, threshold
        self.turn, self.summary, self.summarizer = turn, summary, summarizer
        self.params: Mapping[str, Any] = {
            "estimate": estimate,
            "frame": frame,
            "stale": stale,
            "window": window,
            "threshold": threshold,
            "turn": turn,
            "summary": summary,
            "summarizer": summarizer,
        }

    # -- the protocol -------------------------------------------------------------------------

    def estimated(self, history: int) -> int:
        """What the estimator makes of a history of real cost ``history``: ``⌊estimate × history⌋``
        (the frame is not in it)."""
        return int(self.ratio * history)

    def reads(self, state: CostState) -> int:
        """The count the trigger compares with the threshold before a request: recomputed from
        the history (fresh) or the one recorded at the last request that went through (stale)."""
        return state.recorded if self.stale else self.estimated(state.history)

    def real_cost(self, state: CostState) -> int:
        """The real cost of the agent's next request, as the provider counts it: frame + history."""
        return self.frame + state.history

    def init_states(self) -> Iterator[CostState]:
        yield CostState(0, 0, False, False, False, False, False)

    def actions(self, state: CostState) -> list[Action]:
        if not state.due:
            return [(APPEND, k) for k in range(self.turn, 0, -1)]
        return [(COMPACT,)] if self.reads(state) > self.threshold else [(REQUEST,)]

    def step(self, state: CostState, action: Action) -> CostState:
        if action not in self.actions(state):
            raise BadParameter(f"model cost-trigger: action {action!r} is not enabled in this state")
        if action[0] == APPEND:
            return state._replace(history=state.history + action[1], due=True)
        if action[0] == COMPACT:
            refused = self.summarizer + state.history > self.window
            history = state.history if refused else min(state.history, self.summary)
            return state._replace(history=history, compacted=True, summarizer_refused=refused, fired=True)
        if self.real_cost(state) > self.window:  # the provider refuses; the same request is retried
            return state._replace(refused=True, compacted=False)
        count = self.estimated(state.history) if self.stale else 0
        return state._replace(recorded=count, due=False, compacted=False)

    def duration(self, state: CostState, action: Action) -> float:
        """Simulated time, for the SimPy engine: the conversation's messages arrive on a clock, one
        unit apart; a request — the agent's, or the summarizer's — takes one unit plus its real
        cost over the window (a request the size of the window takes twice as long as an empty
        one), so a stale count is one read before the last compaction finished."""
        if action[0] == APPEND:
            return 1.0
        cost = self.summarizer + state.history if action[0] == COMPACT else self.real_cost(state)
        return 1.0 + cost / self.window

    def fair_actions(self) -> tuple[str, ...]:
        """Appends, compactions and requests: none is enabled for ever without being taken."""
        return (APPEND, COMPACT, REQUEST)

    def properties(self) -> tuple[Property[CostState], ...]:
        """What the threads reported broken, each as a property of the model.

        ``request-fits-window``: no request the agent sends is over the window — the provider's
        refusal ("prompt is too long", crewAIInc/crewAI #4381). ``summarizer-request-fits``: the
        summariser's request (its prompt + the history it reads) fits too (letta #3279).
        ``over-threshold-compacted``: whenever the real cost of the next request is over the
        threshold, it eventually is not — the trigger fires and the compaction brings it back
        under (a lasso when it never fires: cline PR #14195, pi-observational-memory PR #40).
        ``no-compaction-loop``: after a compaction a request eventually goes through — the trigger
        does not fire again and again, on a count from before the compaction (infinity PR #74,
        openclaw #119824) or on a frame no compaction can remove (openclaw PR #115309).
        """
        w, t, f = self.window, self.threshold, self.frame
        return (
            Property(
                REQUEST_FITS,
                "always",
                lambda s: not s.refused,
                f"every request the agent sends fits the window: frame {f} + history ≤ {w}",
            ),
            Property(
                SUMMARIZER_FITS,
                "always",
                lambda s: not s.summarizer_refused,
                f"the summarizer's request fits the window: its prompt {self.summarizer} + the history ≤ {w}",
            ),
            Property.leads_to(
                OVER_THRESHOLD_COMPACTED,
                lambda s: f + s.history > t,
                lambda s: f + s.history <= t,
                f"a next request over the threshold (frame + history > {t}) is eventually compacted under it",
            ),
            Property.leads_to(
                NO_COMPACTION_LOOP,
                lambda s: s.compacted,
                lambda s: not s.compacted,
                "after a compaction a request eventually goes through: the trigger does not fire again and again",
            ),
            Property(TRIGGER_FIRES, "sometimes", lambda s: s.fired, "the trigger fires at least once"),
        )

    def metrics(self, state: CostState) -> Mapping[str, int]:
        """``request_cost``: the real cost of the request the agent is about to send (0 when none
        is due or the trigger compacts first) — its maximum over a run is the peak real cost sent;
        ``summarizer_cost``: the same for the summariser's request; ``history``."""
        due = state.due
        compacts = due and self.reads(state) > self.threshold
        return {
            "request_cost": self.real_cost(state) if due and not compacts else 0,
            "summarizer_cost": self.summarizer + state.history if compacts else 0,
            "history": state.history,
        }

    def limit(self) -> Limit:
        return Limit("request_cost", "window", float(self.window))

    # -- how a run reads ------------------------------------------------------------------------

    def lane_order(self) -> tuple[str, ...]:
        return ("agent", "compactor")

    def format_action(self, state: CostState, action: Action) -> str:
        h, f, t, w = state.history, self.frame, self.threshold, self.window
        read = ("the stale count " if self.stale else "the count ") + str(self.reads(state))
        if action[0] == APPEND:
            return f"agent appends {action[1]} (history {h} → {h + action[1]})"
        if action[0] == COMPACT:
            cost = self.summarizer + h
            text = f"compactor compacts: {read} > {t}; the summarizer's request is {cost} (prompt {self.summarizer} + history {h})"
            if cost > w:
                return text + f" — refused, over the window {w}; the history stays {h}"
            return text + f"; history {h} → {min(h, self.summary)}"
        text = f"agent sends a request of {f + h} (frame {f} + history {h}); {read} ≤ {t}"
        return text + (f" — refused, over the window {w}" if f + h > w else "")

    def columns(self, state: CostState) -> Mapping[str, Any]:
        return {"history": state.history, "real": self.real_cost(state), "count": self.reads(state)}

    def describe_window(self, state: CostState) -> str:
        return (
            f"next request: frame {self.frame} + history {state.history} = {self.real_cost(state)} "
            f"of a window of {self.window}; the trigger reads {self.reads(state)} (threshold {self.threshold})"
        )


register_model(
    "cost-trigger",
    CostTriggerModel,
    description="a token trigger reading an estimate (undercount, frame, stale count) against a fixed window",
)
