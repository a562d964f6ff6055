"""Peer projectors on a fixed history with parallel and dangling tool calls.

The exact window each library returns is asserted (under the pinned versions of the ``peers``
extra), so an upgrade that changes a library's behaviour fails here and is noticed. The pure
parts — message grouping, mapping a non-suffix selection to its report, litellm's shortening
and the Agents SDK's item keys — are tested without the libraries.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from turncheck.integrations.peers.agents_session import agent_items, item_key
from turncheck.integrations.peers.litellm_trim import _shortened, map_back, model_for
from turncheck.integrations.peers.llamaindex_memory import SuffixCounter
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import UnknownName
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.message_spans import openai_message, spans
from turncheck.models.peer import PEERS
from turncheck.models.projector import project, resolve_strategy
from turncheck.models.selection import PeerWindow, Selection, window_of
from turncheck.models.tokenizer import MissingExtra


def ev(seq: int, turn: int, kind: Kind, text: str, cid: str | None = None) -> Event:
    return Event(seq, "s1", turn, kind, call_id=cid, ts=float(seq), text=text, chars=len(text))


# Turn 0: parallel calls a, b answered in reverse order. Turn 1 (Chinese): parallel calls c, d;
# c never gets a result (a dangling call). Turn 2: a plain exchange.
EVENTS = [
    ev(0, 0, Kind.USER, "What is the weather in Paris and Berlin right now?"),
    ev(1, 0, Kind.CALL, '{"city": "Paris"}', "a"),
    ev(2, 0, Kind.CALL, '{"city": "Berlin"}', "b"),
    ev(3, 0, Kind.RESULT, '{"city": "Berlin", "temp_c": 12, "sky": "cloudy", "wind_kmh": 20}', "b"),
    ev(4, 0, Kind.RESULT, '{"city": "Paris", "temp_c": 15, "sky": "sunny", "wind_kmh": 5}', "a"),
    ev(5, 0, Kind.TERM, "Paris is warmer and sunny; Berlin is cloudy and windy."),
    ev(6, 1, Kind.USER, "明天呢？"),
    ev(7, 1, Kind.CALL, '{"city": "Paris", "day": 1}', "c"),
    ev(8, 1, Kind.CALL, '{"city": "Berlin", "day": 1}', "d"),
    ev(
        9,
        1,
        Kind.RESULT,
        '{"city": "Berlin", "day": 1, "temp_c": 14, "sky": "rain", "note": "' + "showers " * 12 + '"}',
        "d",
    ),  # fmt: skip
    ev(10, 1, Kind.TERM, "明天巴黎的预报没有返回；柏林有雨。"),
    ev(11, 2, Kind.USER, "Thanks. Summarise both days in one line."),
    ev(
        12,
        2,
        Kind.TERM,
        "Today: Paris sunny 15C, Berlin cloudy 12C; tomorrow: Berlin rain 14C, Paris unknown.",
    ),
]
COST = EstimateCost()  # per-event costs 13 4 5 16 16 14 1 7 7 41 4 10 21 (159 in all)
BUDGETS = (10, 25, 40, 90, 200)
ALL = list(range(13))

# budget -> (sent seqs, dropped inside the span, shortened, orphanRes, orphanCall, overBudget)
Expected = dict[int, tuple[list[int], tuple[int, ...], tuple[int, ...], int, int, int]]
EXPECTED: dict[str, Expected] = {
    "peer:langchain": {
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),  # never between the parallel calls 7 and 8
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:langchain-human": {  # start_on="human": drop everything before the first user message
        10: ([], (), (), 0, 0, 0),
        25: ([], (), (), 0, 0, 0),
        40: ([11, 12], (), (), 0, 0, 0),
        90: ([11, 12], (), (), 0, 0, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:llamaindex": {
        10: ([11, 12], (), (), 0, 0, 1),  # Memory keeps the newest whole turn, over the limit
        25: ([11, 12], (), (), 0, 0, 1),
        40: ([11, 12], (), (), 0, 0, 0),
        90: ([11, 12], (), (), 0, 0, 0),
        200: ([6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),  # trims to 0.7 × limit by its own tokenizer
    },
    "peer:litellm": {  # counts o200k tokens + 3 per message itself (gpt-4o)
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (12,), 0, 0, 0),  # the newest message, its middle cut to ".."
        40: ([6, 12], (7, 8, 9, 10, 11), (), 0, 0, 0),  # skips what does not fit, keeps older
        90: ([9, 10, 11, 12], (), (9,), 1, 0, 0),  # a shortened tool result without its call
        200: ([4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 1, 1, 0),  # the parallel-call message skipped
    },
    "peer:openai-agents": {  # limit = items that fit; unmatched calls and outputs pruned
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([8, 9, 10, 11, 12], (), (), 0, 0, 0),  # the dangling call 7 pruned at the head
        200: ([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12], (7,), (), 0, 0, 0),  # ... and inside
    },
    "peer:semantic-kernel": {
        10: ([12], (), (), 0, 0, 1),  # at least one message (target_count >= 1)
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),  # cut moved back to the call message
        200: ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
    "peer:semantic-kernel-summary": {
        10: ([-1, 12], (), (), 0, 0, 1),  # the stub's summary (-1) first
        25: ([-1, 12], (), (), 0, 0, 1),
        40: ([-1, 10, 11, 12], (), (), 0, 0, 1),
        90: ([-1, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 1),
        200: ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),  # nothing to reduce
    },
    "peer:autogen-buffered": {
        10: ([12], (), (), 0, 0, 1),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
    "peer:autogen-token-limited": {
        10: ([], (), (), 0, 0, 0),
        25: (
            [0],
            (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
            (),
            0,
            0,
            0,
        ),  # pops the middle message until it fits: keeps the oldest
        40: ([0, 12], (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), (), 0, 0, 0),
        90: ([0, 1, 2, 3, 4, 10, 11, 12], (5, 6, 7, 8, 9), (), 0, 0, 0),
        200: ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
    "peer:autogen-head-tail": {
        10: (
            [0, -1, 12],
            (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
            (),
            0,
            0,
            1,
        ),  # head, "Skipped 11 messages." (-1), tail
        25: ([0, -1, 12], (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), (), 0, 0, 1),
        40: ([0, -1, 12], (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), (), 0, 0, 0),
        90: ([0, -1, 10, 11, 12], (1, 2, 3, 4, 5, 6, 7, 8, 9), (), 0, 0, 0),
        200: ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
    "peer:langgraph": {
        10: (
            [],
            (),
            (),
            0,
            0,
            0,
        ),  # empty trim -> falls back to the whole history -> refused (dangling call 7)
        25: ([11], (12,), (), 0, 0, 0),  # end_on=("human", "tool") drops the newest TERM
        40: ([11], (12,), (), 0, 0, 0),
        90: ([11], (12,), (), 0, 0, 0),
        200: ([], (), (), 0, 0, 0),  # the dangling call 7 in the window: refused
    },
    "peer:pydantic-ai": {
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, -1, 9, 10, 11, 12], (), (), 0, 0, 1),  # a synthesized result (-1) for the dangling call 7
        200: (
            [0, 1, 2, 4, 3, 5, 6, 7, 8, -1, 9, 10, 11, 12],
            (),
            (),
            0,
            0,
            0,
        ),  # results put in call order (4 before 3)
    },
    "peer:adk-compaction": {  # token threshold = budget: the older events become one SUMMARY (seq 13)
        10: ([13, 8, 9, 10, 11, 12], (), (), 0, 0, 1),  # the unanswered call 7 dropped by ADK
        25: ([13, 8, 9, 10, 11, 12], (), (), 0, 0, 1),
        40: ([13, 8, 9, 10, 11, 12], (), (), 0, 0, 1),
        90: ([13, 8, 9, 10, 11, 12], (), (), 0, 0, 1),
        200: ([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12], (7,), (), 0, 0, 0),  # no request reached 200
    },
    # the TypeScript peers, run by Node over the exec protocol (bridges/node, npm ci)
    "peer:langchainjs-trim": {  # as peer:langchain: trimMessages by our costs
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:vercel-prune": {  # no budget: every tool call and result before the last two messages pruned
        10: ([0, 5, 6, 10, 11, 12], (1, 2, 3, 4, 7, 8, 9), (), 0, 0, 1),
        25: ([0, 5, 6, 10, 11, 12], (1, 2, 3, 4, 7, 8, 9), (), 0, 0, 1),
        40: ([0, 5, 6, 10, 11, 12], (1, 2, 3, 4, 7, 8, 9), (), 0, 0, 1),
        90: ([0, 5, 6, 10, 11, 12], (1, 2, 3, 4, 7, 8, 9), (), 0, 0, 0),
        200: ([0, 5, 6, 10, 11, 12], (1, 2, 3, 4, 7, 8, 9), (), 0, 0, 0),
    },
    "peer:mastra-token-limiter": {  # best-fit by its own estimate; a call kept with its results
        10: ([], (), (), 0, 0, 0),  # TripWire: nothing fits -> refused
        25: ([], (), (), 0, 0, 0),
        40: ([11], (12,), (), 0, 0, 0),  # the newest answer skipped, the question before it kept
        90: ([6, 11, 12], (7, 8, 9, 10), (), 0, 0, 0),
        200: ([0, 5, 6, 7, 8, 9, 10, 11, 12], (1, 2, 3, 4), (), 0, 1, 0),
    },
    "peer:mastra-token-limiter-contiguous": {
        10: ([], (), (), 0, 0, 0),
        25: ([], (), (), 0, 0, 0),
        40: ([], (), (), 0, 0, 0),  # the newest message alone does not fit -> refused
        90: ([11, 12], (), (), 0, 0, 0),
        200: ([5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
    "peer:agents-js-session": {  # getItems(limit) alone: no pruning of the dangling call 7
        10: ([], (), (), 0, 0, 0),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    # the JVM peers (bridges/java): maxMessages = the newest messages that fit, at least one
    "peer:spring-ai-window-1.0": {  # a count cut: at 10 the newest message alone, over budget
        10: ([12], (), (), 0, 0, 1),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:spring-ai-window": {  # the 1.1 line: the same rule, the same windows
        10: ([12], (), (), 0, 0, 1),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:spring-ai-window-2.0": {  # turn snapping: the cut moves to a user message, or past all
        10: ([], (), (), 0, 0, 0),
        25: ([], (), (), 0, 0, 0),
        40: ([11, 12], (), (), 0, 0, 0),
        90: ([11, 12], (), (), 0, 0, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:langchain4j-window": {  # a count cut that takes a call's results with it
        10: ([12], (), (), 0, 0, 1),
        25: ([12], (), (), 0, 0, 0),
        40: ([10, 11, 12], (), (), 0, 0, 0),
        90: ([7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
        200: (ALL, (), (), 0, 1, 0),
    },
    "peer:langchain4j-token-window": {  # its own counting (jtokkit o200k) of the budget in tokens
        10: ([], (), (), 0, 0, 0),
        25: ([], (), (), 0, 0, 0),
        40: ([12], (), (), 0, 0, 0),
        90: ([10, 11, 12], (), (), 0, 0, 0),
        200: ([5, 6, 7, 8, 9, 10, 11, 12], (), (), 0, 1, 0),
    },
}
# budget -> what else the window says: refused, invented messages, reordered
FLAGS: dict[str, dict[int, dict[str, object]]] = {
    "peer:semantic-kernel-summary": {
        10: {"invented": 1},
        25: {"invented": 1},
        40: {"invented": 1},
        90: {"invented": 1},
    },
    "peer:autogen-head-tail": {
        10: {"invented": 1},
        25: {"invented": 1},
        40: {"invented": 1},
        90: {"invented": 1},
    },
    "peer:langgraph": {10: {"refused": True}, 200: {"refused": True}},
    "peer:pydantic-ai": {90: {"invented": 1}, 200: {"invented": 1, "reordered": True}},
    "peer:adk-compaction": {
        10: {"invented": 1},
        25: {"invented": 1},
        40: {"invented": 1},
        90: {"invented": 1},
    },
    "peer:mastra-token-limiter": {10: {"refused": True}, 25: {"refused": True}},
    "peer:mastra-token-limiter-contiguous": {
        10: {"refused": True},
        25: {"refused": True},
        40: {"refused": True},
    },
}
LIBRARY = {
    "peer:langchain": "langchain_core",
    "peer:langchain-human": "langchain_core",
    "peer:llamaindex": "llama_index.core",
    "peer:litellm": "litellm",
    "peer:openai-agents": "agents",
    "peer:semantic-kernel": "semantic_kernel",
    "peer:semantic-kernel-summary": "semantic_kernel",
    "peer:autogen-buffered": "autogen_core",
    "peer:autogen-token-limited": "autogen_core",
    "peer:autogen-head-tail": "autogen_core",
    "peer:langgraph": "langgraph",
    "peer:pydantic-ai": "pydantic_ai",
    "peer:adk-compaction": "google.adk",
    "peer:langchainjs-trim": "@langchain/core",
    "peer:vercel-prune": "ai",
    "peer:mastra-token-limiter": "@mastra/core",
    "peer:mastra-token-limiter-contiguous": "@mastra/core",
    "peer:agents-js-session": "@openai/agents-core",
    "peer:spring-ai-window-1.0": "org.springframework.ai:spring-ai-model",
    "peer:spring-ai-window": "org.springframework.ai:spring-ai-model",
    "peer:spring-ai-window-2.0": "org.springframework.ai:spring-ai-model",
    "peer:langchain4j-window": "dev.langchain4j:langchain4j",
    "peer:langchain4j-token-window": "dev.langchain4j:langchain4j",
}


def need(module: str) -> None:
    """Skip without the library (a peer's: its module or bridge); never import it here (litellm
    must be imported offline)."""
    if module in PEERS:
        if (reason := PEERS[module].missing()) is not None:
            pytest.skip(reason)
    else:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a dotted name under an absent package
            found = False
        if not found:
            pytest.skip(f"{module} is not installed")


@pytest.fixture(scope="module")
def history() -> History:
    return History(EVENTS, costs=(COST,))


def test_every_peer_is_pinned() -> None:
    assert sorted(EXPECTED) == sorted(PEERS) == sorted(LIBRARY)
    assert all(PEERS[p].library == LIBRARY[p] for p in PEERS if PEERS[p].bridge is not None)


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_exact_window_of_each_library(peer: str, history: History) -> None:
    need(peer)
    for budget in BUDGETS:
        sent, inside, shortened, orphan_res, orphan_call, over = EXPECTED[peer][budget]
        w = project(history, budget, peer, COST)
        got = ([e.seq for e in w.events], getattr(w, "dropped_inside", ()), getattr(w, "shortened", ()),
               w.report.orphanRes, w.report.orphanCall, w.report.overBudget)  # fmt: skip
        assert got == (sent, inside, shortened, orphan_res, orphan_call, over), f"{peer} at budget {budget}"
        assert w.strategy == peer and w.history is history
        assert w.cost == sum(COST.event_cost(e) for e in w.events)
        flags = FLAGS.get(peer, {}).get(budget, {})
        got_flags = {k: getattr(w, k) for k in ("refused", "untrimmed_on_error", "invented", "reordered")
                     if getattr(w, k, False)}  # fmt: skip
        assert got_flags == flags, f"{peer} at budget {budget}"
        assert w.report.empty == int(not sent and not flags.get("refused"))
        assert isinstance(w, PeerWindow) == bool(inside or shortened or flags)
        if not isinstance(w, PeerWindow):
            assert w.start == (sent[0] if sent else len(EVENTS))


def test_litellm_model_follows_the_cost_model() -> None:
    from turncheck.models.tokenizer import BpeCost

    assert model_for(COST) == "gpt-4o"
    pytest.importorskip("tiktoken")
    assert model_for(BpeCost("cl100k_base")) == "gpt-4" and model_for(BpeCost("o200k_base")) == "gpt-4o"


def test_parallel_calls_are_one_message(history: History) -> None:
    grouped = [(s.kind.name, s.start, s.end) for s in spans(history)]
    assert grouped[1] == ("CALL", 1, 3) and grouped[6] == ("CALL", 7, 9)
    assert len(grouped) == 11 and len(spans(history, group_calls=False)) == 13
    msg = openai_message(history, spans(history)[1])
    assert [c["id"] for c in msg["tool_calls"]] == ["a", "b"] and msg["content"] is None
    assert openai_message(history, spans(history)[3]) == {
        "role": "tool", "tool_call_id": "a", "content": EVENTS[4].text,
    }  # fmt: skip


def test_a_non_suffix_selection_is_reported_as_sent(history: History) -> None:
    # what the Agents SDK sends at budget 200: everything but the dangling call 7
    w = window_of(history, 200, COST, Selection(tuple(p for p in ALL if p != 7)), "x")
    assert isinstance(w, PeerWindow) and (w.start, w.end, w.dropped_inside) == (0, 13, (7,))
    assert (w.report.orphanCall, w.report.orphanRes, w.cost) == (0, 0, 159 - 7)
    # a selection that keeps a RESULT without its CALL, then a shortened newest message
    short = Event(12, "s1", 2, Kind.TERM, text="Today..unknown.", chars=15, ts=12.0)
    w = window_of(history, 50, COST, Selection((4, 12), {12: short}), "y")
    assert isinstance(w, PeerWindow)
    assert [e.text for e in w.events] == [EVENTS[4].text, "Today..unknown."]
    assert (w.report.orphanRes, w.report.pairSplit, w.shortened, w.cost) == (1, 0, (12,), 16 + 4)
    assert w.dropped_inside == tuple(range(5, 12))
    # a plain suffix stays a plain window
    assert type(window_of(history, 50, COST, Selection((11, 12)), "z")).__name__ == "Window"
    with pytest.raises(ValueError, match="outside the history"):
        window_of(history, 50, COST, Selection((13,)), "z")


def test_llamaindex_counter_prices_joined_suffixes_by_our_costs() -> None:
    counter = SuffixCounter(["hello", "None", "你好"], [7, 1, 5], fallback=lambda text: 999)
    assert len(counter("hello None 你好")) == 13
    assert len(counter("None 你好")) == 6 and len(counter("你好")) == 5
    assert len(counter("other text")) == 999


def test_litellm_shortening_and_mapping_back(history: History) -> None:
    text = EVENTS[9].text or ""
    assert _shortened(text, text[:10] + ".." + text[-10:])
    assert _shortened(text, ".." + text)  # h = 0: litellm keeps the whole content after ".."
    assert not _shortened(text, "something.." + text[-5:])
    message_spans = spans(history)
    originals = [openai_message(history, s) for s in message_spans]
    sent = [dict(originals[5]), dict(originals[-1], content="Today..unknown.")]
    sel = map_back(history, message_spans, originals, sent)
    assert sel.positions == (6, 12) and sel.replaced[12].text == "Today..unknown."


def test_agent_items_and_keys(history: History) -> None:
    items = agent_items(history)
    assert items[1] == {
        "type": "function_call",
        "call_id": "a",
        "name": "tool",
        "arguments": '{"city": "Paris"}',
    }
    assert items[3]["type"] == "function_call_output" and items[3]["call_id"] == "b"
    assert item_key(items[0]) == ("message", "user", EVENTS[0].text)
    assert len({item_key(i) for i in items}) == len(items)


def test_peer_ids_resolve_lazily_and_unknown_ones_are_refused() -> None:
    assert callable(resolve_strategy("peer:langchain"))
    with pytest.raises(UnknownName, match="peer:langchain-human"):
        resolve_strategy("peer:haystack")
    with pytest.raises(UnknownName, match=r"^unknown peer 'langchain' \(known: peer:langchain, "):
        PEERS["langchain"]


def test_a_missing_library_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, history: History
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)
    with pytest.raises(MissingExtra, match=r"peer:langchain needs langchain-core .*'langchain-core<2,>=1.8' .*\(turncheck's peers extra\)"):
        project(history, 40, "peer:langchain", COST)


def test_cli_projects_with_a_peer(capsys: pytest.CaptureFixture[str]) -> None:
    need("langchain_core")
    from turncheck.cli.app import main

    code = main(
        ["project", "--example", "--budget", "300", "--strategy", "peer:langchain", "--format", "json"]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and all(r["strategy"] == "peer:langchain" and r["cost"] <= 300 for r in rows)
