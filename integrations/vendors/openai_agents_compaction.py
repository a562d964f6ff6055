"""openai-agents-python's ``OpenAIResponsesCompactionSession`` in a streamed run: issue #2317, PR #2322.

Under ``Runner.run_streamed`` the runner saves each turn — the model's response and the outputs
of the tools it ran locally — to the session, and the session may then compact by calling
``responses.compact(previous_response_id=…)`` on the response it was handed (issue #2317,
"Compaction unusable in Runner.run_streamed: responses.compact runs before tool outputs are in
chain"). A turn whose response holds a ``function_call`` has its ``function_call_output`` only
locally: the output reaches the server chain with the *next* model request. Compacting at that
save (``variant=buggy``) names a chain with a call and no output, and the API refuses it — ``400
No tool output found for function call`` — failing the whole run. PR #2322 (``variant=fixed``)
skips compaction when the saved turn holds local tool outputs and leaves it to the next eligible
turn, whose response was requested with those outputs, so every chain compacted is complete.

The invariant ``compaction-accepted``: no compaction request is refused. The goal
``compaction-ran``: some run compacts. The trigger may fire at any eligible save (what the real
threshold decides is abstracted away); bounded by ``inputs`` user inputs and ``calls`` function
calls, one open call at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from turncheck.integrations.vendors._vendor import Action, VendorModel
from turncheck.models.catalog import Variant, register_model
from turncheck.models.protocol import Property

IDLE, MODEL, TOOL, SAVE = "awaiting input", "awaiting the model", "tool to run", "turn to save"


class State(NamedTuple):
    """``chain``: the server's response chain, oldest first (what ``previous_response_id``
    names); ``local``: tool outputs produced but not yet sent with a request; ``turn``: the
    current turn's items not yet saved; ``phase``: where the runner is; ``may_compact``: the
    last save may be followed by a compaction; ``compaction``: ``none``, ``ran`` or
    ``refused``; ``inputs``/``calls``: handed out so far."""

    chain: tuple[str, ...]
    local: tuple[str, ...]
    turn: tuple[str, ...]
    phase: str
    may_compact: bool
    compaction: str
    inputs: int
    calls: int


def unanswered(chain: tuple[str, ...]) -> list[str]:
    """The ``function_call``s of the chain with no ``function_call_output`` in it."""
    outputs = {item.split()[-1] for item in chain if item.startswith("function_call_output")}
    return [item for item in chain if item.startswith("function_call ") and item.split()[-1] not in outputs]


class StreamedCompaction(VendorModel[State]):
    """A streamed run: user inputs, model responses, local tools, saves and compactions."""

    name = "openai-agents-compaction"
    variants = (
        Variant(
            "buggy",
            "buggy",
            "openai-agents-python before PR #2322: compaction at the save of a turn "
            "with local tool outputs (issue #2317)",
        ),
        Variant(
            "fixed",
            "upstream",
            "openai-agents-python PR #2322 (merged): compaction deferred while "
            "the saved turn holds local tool outputs",
        ),
    )
    lanes = ("user", "model", "tool", "runner", "session")
    update_writes = (
        "two, in openai-agents-compaction-replace: run_compaction writes clear_session, then "
        "add_items, the window that model declares; this one abstracts the stored items away (it "
        "checks which chain responses.compact names) and declares no crash point"
    )

    def __init__(self, variant: str = "buggy", inputs: int = 2, calls: int = 2) -> None:
        super().__init__(variant)
        self.inputs = inputs
        self.calls = calls
        self.params = {"variant": variant, "inputs": inputs, "calls": calls}

    def init_states(self) -> Iterator[State]:
        yield State((), (), (), IDLE, False, "none", 0, 0)

    def actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.phase == IDLE and state.inputs < self.inputs:
            out.append(("input",))
        elif state.phase == MODEL:
            if state.calls < self.calls:
                out.append(("function_call",))
            out.append(("message",))
        elif state.phase == TOOL:
            out.append(("tool",))
        elif state.phase == SAVE:
            out.append(("save",))
        if state.may_compact and state.compaction != "refused":
            out.append(("compact",))
        return out

    def step(self, state: State, action: Action) -> State:
        verb = action[0]
        s = state._replace(may_compact=False)
        if verb == "input":
            return s._replace(chain=(*s.chain, f"user {s.inputs}"), phase=MODEL, inputs=s.inputs + 1)
        if verb in ("function_call", "message"):
            # the request carries the local tool outputs: only now are they in the chain
            item = f"function_call c{s.calls}" if verb == "function_call" else "message"
            calls = s.calls + (verb == "function_call")
            phase = TOOL if verb == "function_call" else SAVE
            return s._replace(chain=(*s.chain, *s.local, item), local=(), turn=(*s.turn, item), phase=phase,
                              calls=calls)  # fmt: skip
        if verb == "tool":
            output = f"function_call_output c{s.calls - 1}"
            return s._replace(local=(output,), turn=(*s.turn, output), phase=SAVE)
        if verb == "save":
            had_outputs = any(i.startswith("function_call_output") for i in s.turn)
            eligible = self.variant == "buggy" or not had_outputs
            return s._replace(turn=(), phase=MODEL if had_outputs else IDLE, may_compact=eligible)
        return s._replace(compaction="refused" if unanswered(s.chain) else "ran")

    def properties(self) -> tuple[Property[State], ...]:
        return (
            Property(
                "compaction-accepted",
                "always",
                lambda s: s.compaction != "refused",
                "no responses.compact names a chain with a function_call and no output",
            ),
            Property("compaction-ran", "sometimes", lambda s: s.compaction == "ran", "a compaction runs"),
        )

    def format_action(self, state: State, action: Action) -> str:
        verb = action[0]
        if verb == "input":
            return "user sends an input"
        if verb in ("function_call", "message"):
            item = f"function_call c{state.calls}" if verb == "function_call" else "a message"
            sent = f" (sent: {', '.join(state.local)})" if state.local else ""
            return f"model responds with {item}{sent}"
        if verb == "tool":
            return f"tool returns function_call_output c{state.calls - 1}, locally"
        if verb == "save":
            return f"runner saves {' + '.join(state.turn)}"
        pending = unanswered(state.chain)
        named = f": 400, no tool output for {pending[0].split()[-1]}" if pending else ""
        return f"session compacts the latest response{named}"

    def columns(self, state: State) -> dict[str, object]:
        return {"chain": len(state.chain), "unanswered": len(unanswered(state.chain))}

    def describe_window(self, state: State) -> str:
        return "server chain: " + " · ".join(state.chain)

    panel_title = "the server chain previous_response_id names"

    def panel(self, state: State) -> Sequence[tuple[str, tuple[str, ...]]]:
        pending = set(unanswered(state.chain))
        return [(i, ("no output",) if i in pending else ()) for i in state.chain]


register_model(
    StreamedCompaction.name,
    StreamedCompaction,
    description="openai-agents compaction between a function_call and its output (#2317) vs deferred (PR #2322)",
)
