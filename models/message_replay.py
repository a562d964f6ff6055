"""A message-level trimmer replayed request by request, in time linear in the log.

A per-request replay (:func:`models.per_request.replay_requests`) grows one :class:`History`
and asks the trimmer before every model request. Rebuilding the chat messages, deep-copying
them for the trimmer and scanning them to map its answer back costs O(n) per request, so a
session of thousands of messages costs O(n²). :class:`MessageState` keeps, per history, what a
request needs and grows it with the events appended since the last request:

* ``spans`` and ``messages`` — exactly :func:`models.messages.history_messages` of the history
  (the last span is rebuilt when a new CALL joins its batch);
* ``handed`` — the list the trimmer is given (:class:`HandedMessages`): a copy of every message,
  made once, so the trimmer can never reach ``messages``. Whatever the trimmer could keep or
  change is replaced before the next request: every copy it was handed through Python (indexing,
  iteration, slices, ``pop``, ``copy``…) by a fresh copy, and the list's order when it mutated
  it in place. Each request therefore sees what a deep copy of the whole history gave it;
* an index of ``messages`` by value (:func:`sketch`), so mapping a returned message to the
  first equal unused message (``answer_window``'s rule) looks at its candidates, not at every
  message before it.

Invariant kept: the trimmer's answer, and so every window, is the one the former O(n) path
gave — ``tests/test_message_replay.py`` pins them to each other on generated histories.
C code that reads the list's items directly (``in``, ``index``, ``==``) only compares them;
``json.dumps``, ``list(messages)`` and ``sorted`` iterate the list, so they count as handed
out. Not covered: C code that reads a list subclass's items directly and hands them to Python
code that changes them (``list.__iter__(messages)`` called by name, say) could leak that
change to the next request.
"""

from __future__ import annotations

import copy
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from heapq import merge
from typing import Any, SupportsIndex, overload

from turncheck.models.history import History
from turncheck.models.message_spans import Span, extend_spans, openai_message

_SCALARS = (str, int, float, bool, type(None))
_TEXT = (str, type(None))


class Unindexable(Exception):
    """A message :func:`sketch` does not key (not an exact ``dict`` of ``str``/``None`` fields,
    whose ``==`` could be redefined): its answer is mapped by a scan."""


def _text(value: Any) -> Any:
    if type(value) not in _TEXT:
        raise Unindexable
    return value


def sketch(message: Any) -> tuple[Any, Any, Any]:
    """A cheap key of a chat message: its ``role``, ``content`` and ``tool_call_id`` (a missing
    one counts as ``None``). Two equal messages have equal sketches, and so do a message and
    one carrying some of its tool calls; unequal ones may too (a candidate is then checked)."""
    if type(message) is not dict:
        raise Unindexable
    return _text(message.get("role")), _text(message.get("content")), _text(message.get("tool_call_id"))


def _calls(message: dict[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    if calls is None:
        return []
    if type(calls) is not list or any(type(c) is not dict for c in calls[:1]):
        raise Unindexable
    return calls


def plain_copy(value: Any) -> Any:
    """``copy.deepcopy`` of a message built by :func:`openai_message` (dicts, lists and immutable
    scalars, nothing shared), made without deepcopy's memo; anything else goes to ``deepcopy``."""
    t = type(value)
    if t is dict:
        return {k: plain_copy(v) for k, v in value.items()}
    if t is list:
        return [plain_copy(v) for v in value]
    if t in _SCALARS:
        return value
    return copy.deepcopy(value)


class MessageIndex:
    """Positions of the messages by :func:`sketch`, for :func:`models.messages.answer_window`'s
    rule "the first unused message equal to it, or carrying some of its tool calls": ``equal``
    maps (sketch, first call's id) to positions; ``calls`` maps (sketch, a call's id) to the
    positions of messages carrying that call. Every position that matches a message is among
    its candidates (equal messages have equal keys), so the first match is the scan's.
    Positions are appended in increasing order, and only the last may be removed."""

    def __init__(self) -> None:
        self.equal: dict[Any, list[int]] = {}
        self.calls: dict[Any, list[int]] = {}
        self.keys: list[list[tuple[dict[Any, list[int]], Any]]] = []
        self.scan = False  # a message of ours is not indexable: every lookup scans

    def add(self, message: Any) -> None:
        pos, keys = len(self.keys), []
        try:
            key, calls = sketch(message), _calls(message)
            keys.append((self.equal, (key, _text(calls[0].get("id")) if calls else ())))
            keys.extend((self.calls, (key, _text(c.get("id")))) for c in calls if type(c) is dict)
        except Unindexable:
            self.scan, keys = True, []
        for table, k in keys:
            table.setdefault(k, []).append(pos)
        self.keys.append(keys)

    def pop(self) -> None:
        for table, key in self.keys.pop():
            positions = table[key]
            positions.pop()
            if not positions:
                del table[key]

    def candidates(self, message: Any, start: int) -> Iterable[int] | None:
        """Ascending positions ``≥ start`` that may equal ``message`` or carry its calls (every
        position that does is among them), or ``None`` when ``message`` is not indexable."""
        if self.scan:
            return None
        try:
            key, calls = sketch(message), _calls(message)
            first = _text(calls[0].get("id")) if calls else ()
        except Unindexable:
            return None
        runs = [self.equal.get((key, first), [])]
        if calls:
            runs.append(self.calls.get((key, first), []))
        tails = [
            map(r.__getitem__, range(bisect_left(r, start), len(r))) for r in runs if r and r[-1] >= start
        ]
        return tails[0] if len(tails) == 1 else merge(*tails)  # lazily: the first match is near


class HandedMessages(list):  # type: ignore[type-arg]
    """The list a trimmer is handed: a plain ``list`` of copies that notes which of them it
    handed out to Python code (``exposed``, by identity) and whether it was changed in place
    (``mutated``), so :meth:`MessageState.restore` can undo both before the next request."""

    __slots__ = ("exposed", "mutated")

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self.exposed: list[Any] = []
        self.mutated = False

    def _out(self, item: Any) -> Any:
        self.exposed.append(item)
        return item

    def _all(self) -> list[Any]:
        items = list.copy(self)
        self.exposed.extend(items)
        return items

    def __getitem__(self, index: Any) -> Any:
        got = list.__getitem__(self, index)
        if isinstance(index, slice):
            self.exposed.extend(got)
            return got
        return self._out(got)

    def __iter__(self) -> Iterator[Any]:
        i = 0
        while i < list.__len__(self):  # as list's iterator: it sees changes made meanwhile
            yield self._out(list.__getitem__(self, i))
            i += 1

    def __reversed__(self) -> Iterator[Any]:
        i = list.__len__(self) - 1
        while 0 <= i < list.__len__(self):
            yield self._out(list.__getitem__(self, i))
            i -= 1

    def copy(self) -> list[Any]:
        return self._all()

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(self._all(), memo)

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return list, (self._all(),)

    def __add__(self, other: Any) -> Any:
        return self._all() + other

    def __radd__(self, other: Any) -> Any:
        return other + self._all()

    def __mul__(self, n: SupportsIndex) -> list[Any]:
        return self._all() * n

    __rmul__ = __mul__

    def pop(self, index: SupportsIndex = -1) -> Any:
        self.mutated = True
        return self._out(list.pop(self, index))

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self.mutated = True
        self._all()  # a key function sees every item
        list.sort(self, *args, **kwargs)


def _mutator(name: str) -> Callable[..., Any]:
    base = getattr(list, name)

    def method(self: HandedMessages, *args: Any) -> Any:
        self.mutated = True
        return base(self, *args)

    method.__name__ = name
    return method


for _name in ("append", "extend", "insert", "remove", "clear", "reverse",
              "__setitem__", "__delitem__", "__iadd__", "__imul__"):  # fmt: skip
    setattr(HandedMessages, _name, _mutator(_name))


class MessageState:
    """The messages of one growing history (see the module doc). ``sync`` brings it up to the
    history's length; ``restore`` undoes what a trimmer did to ``handed``."""

    def __init__(
        self,
        history: History,
        flavour: str,
        make: Callable[[History, list[Span]], list[Any]],
        hand: bool = True,
    ) -> None:
        self.history, self.flavour, self.make, self.hand = history, flavour, make, hand
        self.spans: list[Span] = []
        self.messages: list[Any] = []
        self.copies: list[Any] = []
        self.index = MessageIndex()
        self.handed = HandedMessages()
        self.where: dict[int, int] = {}  # id of a copy in ``copies`` -> its position
        self.requests = 0
        self.seen = 0

    def _copy(self, message: Any) -> Any:
        return plain_copy(message) if self.flavour == "openai" else copy.deepcopy(message)

    def _drop_last(self) -> None:
        self.spans.pop()
        self.messages.pop()
        if len(self.index.keys) > len(self.messages):
            self.index.pop()
        if self.hand:
            del self.where[id(self.copies.pop())]
            list.pop(self.handed)

    def sync(self) -> None:
        """Grow to the history: drop the last message (a batch of calls may have grown) and
        build the messages of every span from its start; O(new events)."""
        h = self.history
        if len(h) == self.seen:
            return
        start = self.spans[-1].start if self.spans else 0
        kept = len(self.spans) - 1 if self.spans else 0
        if self.spans:
            self._drop_last()
        extend_spans(h, self.spans, start)
        new = self.spans[kept:]
        if self.flavour == "openai":
            built = [openai_message(h, s) for s in new]
        else:  # a flavour's messages may depend on their index (LangChain's ids): built whole
            built = self.make(h, self.spans)[kept:]
        for message in built:
            self.messages.append(message)
            if not self.hand:  # an exec command is sent JSON: nothing of ours to hand out
                continue
            c = self._copy(message)
            self.copies.append(c)
            self.where[id(c)] = len(self.copies) - 1
            list.append(self.handed, c)
        self.seen = len(h)

    def indexed(self) -> MessageIndex | None:
        """The index of ``messages`` from the second request of a state on (a replay), brought
        up to date (O(new messages)); ``None`` at its first, where one scan costs less than
        indexing every message for a history projected once."""
        self.requests += 1
        if self.requests == 1:
            return None
        for message in self.messages[len(self.index.keys) :]:
            self.index.add(message)
        return self.index

    def restore(self) -> None:
        """Before a request, after the last: the list back in order if the trimmer changed it,
        and each copy it was handed replaced by a fresh one (it may keep or change those).
        O(handed out); done when the state is used again, so a history projected once skips it."""
        handed = self.handed
        for item in handed.exposed:
            pos = self.where.pop(id(item), None)  # None: handed out twice, or not ours
            if pos is not None:
                c = self._copy(self.messages[pos])
                self.copies[pos] = c
                self.where[id(c)] = pos
                if not handed.mutated:
                    list.__setitem__(handed, pos, c)
        if handed.mutated:
            list.__setitem__(handed, slice(None), self.copies)
        handed.exposed.clear()
        handed.mutated = False


class SpanCosts(Sequence[int]):
    """Each message's cost (:func:`models.message_spans.span_costs`), computed for the messages
    asked for: an incremental exec request sends the costs of what changed only."""

    def __init__(self, prefix: list[int], spans: list[Span]) -> None:
        self.prefix, self.spans = prefix, spans

    def __len__(self) -> int:
        return len(self.spans)

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        p = self.prefix
        if isinstance(i, slice):
            return [p[s.end] - p[s.start] for s in self.spans[i]]
        s = self.spans[i]
        return p[s.end] - p[s.start]


class StateCache:
    """One :class:`MessageState`, for the history last asked about: a replay asks about one
    history over and over as it grows. ``take`` hands it out (or a fresh one) and ``give``
    returns it, so two threads never share a state."""

    def __init__(
        self, flavour: str, make: Callable[[History, list[Span]], list[Any]], hand: bool = True
    ) -> None:
        self.flavour, self.make, self.hand = flavour, make, hand
        self._state: MessageState | None = None
        self._lock = threading.Lock()

    def take(self, history: History) -> MessageState:
        with self._lock:
            state, self._state = self._state, None
        if state is None or state.history is not history or len(history) < state.seen:
            state = MessageState(history, self.flavour, self.make, self.hand)
        state.restore()
        state.sync()
        return state

    def give(self, state: MessageState) -> None:
        with self._lock:
            self._state = state
