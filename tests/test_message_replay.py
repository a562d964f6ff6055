"""A message trimmer replayed request by request (issue 58 item 6): linear in the log, the same
windows as projecting each request's prefix afresh, and the true history at every request
whatever the trimmer did to the list (and the messages) it was handed."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turncheck.models import message_replay
from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.message_replay import HandedMessages, MessageIndex, Unindexable, plain_copy, sketch
from turncheck.models.message_spans import spans
from turncheck.models.messages import answer_window, history_messages, message_trimmer
from turncheck.models.per_request import replay_requests
from turncheck.models.projector import Window
from turncheck.models.selection import not_kept
from turncheck.models.summaries import prompt_events
from turncheck.models.user_code import load_object
from turncheck.testing import event_soups, histories

COST = EstimateCost()
Trimmer = Callable[[list[Any], int], list[Any]]
TRIM = Path(__file__).resolve().parent.parent / "examples" / "your-agent" / "trim.py"
size = load_object(f"{TRIM}:approx_tokens", "function")
keep_recent: Trimmer = load_object(f"{TRIM}:keep_recent", "trimmer")  # docs/your-agent.md's trimmer


def pop_front(messages: list[Any], budget: int) -> list[Any]:
    while messages and sum(size(m) for m in messages) > budget:
        messages.pop(0)
    return messages


def edit_in_place(messages: list[Any], budget: int) -> list[Any]:
    for m in messages[-4:]:
        if isinstance(m.get("content"), str):
            m["content"] = m["content"][:3]
    return keep_recent(messages, budget)


def partial_calls(messages: list[Any], budget: int) -> list[Any]:
    out = []
    for m in keep_recent(messages, budget):
        if m.get("tool_calls") and len(m["tool_calls"]) > 1:
            m = dict(m, tool_calls=m["tool_calls"][1:])
        out.append(m)
    return out


def round_trip(messages: list[Any], budget: int) -> list[Any]:
    return json.loads(json.dumps(keep_recent(messages, budget)))  # equal, not the same objects


def twice_and_invented(messages: list[Any], budget: int) -> list[Any]:
    kept = keep_recent(messages, budget)
    return [{"role": "user", "content": "summary"}, *kept, *kept[-1:]]


def reversed_order(messages: list[Any], budget: int) -> list[Any]:
    return keep_recent(messages, budget)[::-1]


def whole(messages: list[Any], budget: int) -> list[Any]:
    return messages


PURE: tuple[Trimmer, ...] = (keep_recent, pop_front, edit_in_place, partial_calls, round_trip,
                             twice_and_invented, reversed_order, whole)  # fmt: skip


def row(w: Window) -> tuple[Any, ...]:
    """What a window says, without its (shared, growing) history's length."""
    return (type(w).__name__, w.strategy, w.start, w.end, w.cost, tuple(w.report),
            [(e.seq, e.kind, e.call_id, e.text, e.chars) for e in w.events],
            getattr(w, "dropped_inside", ()), getattr(w, "invented_positions", ()))  # fmt: skip


def fresh_windows(events: list[Event], budget: int, fn: Trimmer, label: str) -> Iterator[Window]:
    """The former path: each request's prefix projected afresh, a deep copy of every message
    handed to ``fn``, the answer mapped by a scan (no index)."""
    for req in replay_requests("s", events, budget, "M0", COST):
        h = History(prompt_events(events[: req.end]), costs=(COST,))
        message_spans, messages = history_messages(h)
        answer = fn(copy.deepcopy(messages), budget - COST.frame)
        yield answer_window(h, budget, COST, message_spans, messages, answer, label)


logs = st.one_of(histories(max_turns=5, dangling=True, text=True), event_soups(max_len=24, with_text=True))


@settings(max_examples=60, deadline=None)
@given(events=logs, budget=st.integers(1, 120), which=st.integers(0, len(PURE) - 1))
def test_the_replay_gives_the_windows_of_each_prefix_projected_afresh(
    events: list[Event], budget: int, which: int
) -> None:
    fn = PURE[which]
    strategy = message_trimmer(fn)
    label = strategy.strategy_id  # type: ignore[attr-defined]
    replayed = [row(r.window) for r in replay_requests("s", events, budget, strategy, COST)]
    assert replayed == [row(w) for w in fresh_windows(events, budget, fn, label)]


def mutators() -> list[Trimmer]:
    """Trimmers that change the list or its messages in place, or keep them for later."""
    kept: list[Any] = []

    def keeper(m: list[Any], b: int) -> list[Any]:
        for old in kept:
            old["content"] = "changed after its request"
            old.pop("role", None)
        kept[:] = [m[0], m[-1]] if m else []
        return keep_recent(m, b)

    def shuffle(m: list[Any], b: int) -> list[Any]:
        random.Random(len(m)).shuffle(m)
        return keep_recent(m, b)

    def everything(m: list[Any], b: int) -> list[Any]:
        out = keep_recent(m, b)
        m.append({"role": "user", "content": "x"})
        m.insert(0, {"role": "user", "content": "y"})
        m.extend([{"role": "tool"}])
        m += [{"role": "assistant"}]
        m *= 2
        del m[1]
        m[0] = {"role": "system"}
        m.reverse()
        m.sort(key=lambda x: str(x.get("role")))
        m.remove(m[0])
        return out

    def cleared(m: list[Any], b: int) -> list[Any]:
        out = [dict(x) for x in m[-2:]]
        m[:] = []
        m.clear()
        return out

    def nested(m: list[Any], b: int) -> list[Any]:
        for x in m:
            for call in x.get("tool_calls") or []:
                call["function"]["arguments"] = "{}"
            x["content"] = None
        return m

    def via_copies(m: list[Any], b: int) -> list[Any]:
        for x in [*m.copy(), *copy.copy(m), *(m + []), *(m * 1), *m[:]]:
            x["content"] = "edited through a copy of the list"
        return keep_recent(m, b)

    return [keeper, pop_front, shuffle, everything, cleared, nested, via_copies, edit_in_place]


@pytest.mark.parametrize("index", range(8))
def test_each_request_sees_the_true_history_whatever_the_trimmer_did(index: int) -> None:
    """Every request is handed exactly the messages of its prefix, however the trimmer changed
    the list (pop, insert, sort, slice assignment…) or the messages it was handed (in place,
    nested, later through references it kept, through copies of the list)."""
    fn = mutators()[index]
    events = list(draw_session())
    handed: list[str] = []

    def recording(messages: list[Any], budget: int) -> list[Any]:
        handed.append(json.dumps(messages))
        return fn(messages, budget)

    ends = [r.end for r in replay_requests("s", events, 60, message_trimmer(recording), COST)]
    truth = [json.dumps(history_messages(History(events[:end]))[1]) for end in ends]
    assert len(ends) > 20 and handed == truth


def draw_session() -> Iterator[Event]:
    """A session with parallel calls (a batch grows message by message) and texts."""
    seq = 0
    for t in range(12):
        kinds = [(Kind.USER, None), (Kind.CALL, f"a{t}"), (Kind.CALL, f"b{t}"), (Kind.RESULT, f"b{t}"),
                 (Kind.RESULT, f"a{t}"), (Kind.TERM, None)]  # fmt: skip
        for kind, cid in kinds:
            seq += 1
            text = f"{kind.name.lower()} {t} " + "x" * (seq % 7)
            yield Event(seq, "s", t, kind, cid, text=text, chars=len(text))


class Counts:
    def __init__(self) -> None:
        self.built = self.copied = self.looked_at = self.appended = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    """Counters wrapped around our own functions: message dicts built, messages copied,
    positions ``answer_window`` compares, events appended to any History."""
    c = Counts()
    build, copy_one, candidates, append = (message_replay.openai_message, message_replay.plain_copy,
                                           MessageIndex.candidates, History.append)  # fmt: skip

    def built(*a: Any) -> Any:
        c.built += 1
        return build(*a)

    def copied(value: Any) -> Any:
        c.copied += 1
        return copy_one(value)

    def looked(self: MessageIndex, message: Any, start: int) -> Any:
        found = candidates(self, message, start)
        if found is None:
            return None

        def counted() -> Iterator[int]:
            for i in found:
                c.looked_at += 1
                yield i

        return counted()

    def appended(self: History, event: Event) -> int:
        c.appended += 1
        return append(self, event)

    monkeypatch.setattr(message_replay, "openai_message", built)
    monkeypatch.setattr(message_replay, "plain_copy", copied)
    monkeypatch.setattr(MessageIndex, "candidates", looked)
    monkeypatch.setattr(History, "append", appended)
    return c


def turns(n: int) -> list[Event]:
    """``n`` USER/TERM turns of equal size: every user message equals every other, the worst
    case for "the first unused equal message"."""
    return [Event(2 * t + k + 1, "s", t, kind, chars=c) for t in range(n)
            for k, (kind, c) in enumerate(((Kind.USER, 200), (Kind.TERM, 600)))]  # fmt: skip


@pytest.mark.parametrize("fn", [keep_recent, partial_calls])
def test_the_work_per_request_does_not_grow_with_the_log(counts: Counts, fn: Trimmer) -> None:
    """4× the turns, about 4× the messages built, copied and compared and the events indexed:
    the former path built and deep-copied every message of the prefix per request (16×)."""
    strategy = message_trimmer(fn)
    seen = []
    for n in (150, 600):
        before = dict(vars(counts))
        requests = sum(1 for _ in replay_requests("s", turns(n), 2_000, strategy, COST))
        seen.append({k: v - before[k] for k, v in vars(counts).items()})
        assert requests == n
    small, large = seen
    for k in small:
        assert 0 < small[k] and large[k] <= 4.5 * small[k], (k, small[k], large[k])
    assert small["built"] <= 3 * 150 and small["copied"] <= 100 * 150  # per request: O(new + window)


@settings(max_examples=200, deadline=None)
@given(kept=st.lists(st.integers(0, 40), max_size=20), start=st.integers(0, 40), end=st.integers(0, 45))
def test_not_kept_is_the_gaps_of_the_kept_positions(kept: list[int], start: int, end: int) -> None:
    inside = [p for p in kept if start <= p < end]
    assert not_kept(inside, start, end) == tuple(p for p in range(start, end) if p not in set(inside))


plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from([0.0, 1.0, 2.5])
    | st.text("ab", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3),
    max_leaves=8,
)
fields = st.sampled_from(["user", "a", None]) | plain
messages = st.fixed_dictionaries(
    {},
    optional={"role": fields, "content": fields, "tool_call_id": fields,
              "tool_calls": st.lists(st.fixed_dictionaries({}, optional={"id": fields, "x": plain}), max_size=3)},
)  # fmt: skip


def keys(index: MessageIndex, message: Any) -> set[int]:
    found = index.candidates(message, 0)
    return set(range(len(index.keys))) if found is None else set(found)


@settings(max_examples=300, deadline=None)
@given(given_messages=st.lists(messages, max_size=6), m=messages)
def test_every_position_that_matches_is_a_candidate(given_messages: list[Any], m: Any) -> None:
    """Equal messages, and a message carrying some of another's calls, share a key (the index may
    offer more candidates, never fewer)."""
    from turncheck.models.messages import calls_of

    index = MessageIndex()
    for g in given_messages:
        index.add(g)
    matches = {i for i, g in enumerate(given_messages) if g == m or calls_of(m, g) is not None}
    assert matches <= keys(index, m)
    for g in given_messages:
        assert keys(index, g) >= {i for i, h in enumerate(given_messages) if h == g}
    try:
        assert sketch(m) == sketch(copy.deepcopy(m))
    except Unindexable:
        pass


@settings(max_examples=200, deadline=None)
@given(a=plain)
def test_plain_copy_is_a_deep_copy(a: Any) -> None:
    twin = plain_copy(a)
    assert twin == copy.deepcopy(a) and (not isinstance(a, (list, dict)) or twin is not a)


def test_a_message_that_is_not_plain_data_is_mapped_by_a_scan() -> None:
    """A dict subclass may redefine ``==``: no index lookup for it, the scan decides."""

    class Loose(dict):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> bool:
            return isinstance(other, dict) and other.get("role") == self.get("role")

        __hash__ = None  # type: ignore[assignment]

    index = MessageIndex()
    for m in ({"role": "user", "content": "a"}, {"role": "user", "content": "b"}):
        index.add(m)
    assert index.candidates(Loose(role="user", content="zzz"), 0) is None
    assert index.candidates({"role": "user", "content": ["a"]}, 0) is None
    assert list(index.candidates({"role": "user", "content": "b"}, 0) or []) == [1]
    h = History(turns(2))
    message_spans, messages = history_messages(h)
    w = answer_window(h, 500, COST, message_spans, messages, [Loose(role="assistant")], "t", index)
    assert [e.seq for e in w.events] == [2]  # the first assistant message, found by the scan


def test_the_handed_list_notes_what_it_handed_out_and_any_change() -> None:
    handed = HandedMessages([{"a": 1}, {"b": 2}, {"c": 3}])
    assert not handed.exposed and not handed.mutated
    assert {"b": 2} in handed and handed.index({"c": 3}) == 2 and len(handed) == 3
    assert not handed.exposed  # comparisons in C hand no item to Python code
    assert json.dumps(handed) == '[{"a": 1}, {"b": 2}, {"c": 3}]' and len(handed.exposed) == 3  # iterates
    handed.exposed.clear()
    first = handed[0]
    assert handed.exposed == [first] and not handed.mutated
    handed.exposed.clear()
    assert [x for x in reversed(handed)][0] is handed.exposed[0] and len(handed.exposed) == 3
    handed.append({"d": 4})
    assert handed.mutated and isinstance(handed, list)
    assert spans(History()) == []
