"""Shortest reproductions: the smallest clean history that makes a peer break pairing.

A user filing a bug upstream needs the few messages that make a library send a tool result
without its call (``orphanRes``) or a call without its result (``orphanCall``) — on *clean*
data, where every call is answered, so the fault is the library's, not the log's. This module
finds them by exhaustive search, shortest first: every well-formed history of up to
``max_events`` events — USER, then rounds of one or two parallel CALLs each answered by its
RESULT (oldest or newest open call first), then TERM, and so on — with each event small or
large, ending where an agent calls its model (a request is pending at the end), at a few
budgets under the estimate cost model. The first hit per property is a shortest one; the order
is fixed, so the answer is deterministic.

``python -m turncheck.integrations.scenarios.peer_repro DIR [MAX_EVENTS] [PEER …]`` saves each reproduction
as a JSONL log (``DIR/<peer>-<property>.jsonl``); ``turncheck project -H FILE -b BUDGET -s PEER
--cost estimate`` replays it, and its window is the request the library would send. Beside each
it saves the same finding as a projector trace (``DIR/<peer>-<property>.trace.json``,
:mod:`integrations.scenarios.peer_trace`) that ``turncheck replay FILE --html`` steps through.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, Kind, dumps_event
from turncheck.models.history import History
from turncheck.models.projector import project
from turncheck.models.requests import request_points

PROPERTIES = ("orphanRes", "orphanCall")
BUDGETS = (8, 20, 40)
COST = EstimateCost()
REPRO_COLUMNS = ("strategy", "property", "events", "budget", "history", "sent", "file")
SMALL, LARGE = 0, 1


def text_of(kind: Kind, seq: int, size: int, call_id: str | None) -> str:
    """Distinct text for each event (peers that match messages by content see no duplicates):
    about 2 tokens small, about 15 large, under the estimate (4 characters a token)."""
    if kind is Kind.CALL:
        return (
            f'{{"q": "{call_id}{seq}"}}'
            if size == SMALL
            else f'{{"q": "{call_id}{seq}", "detail": "{"x" * 34}"}}'
        )
    if kind is Kind.RESULT:
        return f'{{"r": {seq}}}' if size == SMALL else f'{{"r": {seq}, "rows": "{"y" * 44}"}}'
    word = "Ask" if kind is Kind.USER else "Say"
    return f"{word} {seq}." if size == SMALL else f"{word} {seq}: " + "words " * 9


@dataclass(frozen=True)
class Shape:
    """A history being built: events so far, open call ids (oldest first), calls made."""

    events: tuple[Event, ...] = ()
    open_calls: tuple[str, ...] = ()
    calls: int = 0
    turn: int = -1


def _event(shape: Shape, kind: Kind, size: int, call_id: str | None, turn: int) -> Event:
    seq = len(shape.events)
    text = text_of(kind, seq, size, call_id)
    return Event(seq, "repro", turn, kind, call_id=call_id, ts=float(seq), text=text, chars=len(text))


def successors(shape: Shape) -> Iterator[Shape]:
    """Every one-event extension that keeps the history well formed and clean."""
    last = shape.events[-1].kind if shape.events else None
    for size in (SMALL, LARGE):
        if last in (None, Kind.TERM):
            turn = shape.turn + 1
            yield Shape((*shape.events, _event(shape, Kind.USER, size, None, turn)), (), shape.calls, turn)
        if (
            last in (Kind.USER, Kind.RESULT)
            and not shape.open_calls
            or (last is Kind.CALL and len(shape.open_calls) == 1)
        ):
            cid = f"c{shape.calls}"
            e = _event(shape, Kind.CALL, size, cid, shape.turn)
            yield Shape((*shape.events, e), (*shape.open_calls, cid), shape.calls + 1, shape.turn)
        if shape.open_calls:
            for cid in dict.fromkeys((shape.open_calls[0], shape.open_calls[-1])):
                e = _event(shape, Kind.RESULT, size, cid, shape.turn)
                rest = tuple(c for c in shape.open_calls if c != cid)
                yield Shape((*shape.events, e), rest, shape.calls, shape.turn)
        if last in (Kind.USER, Kind.RESULT) and not shape.open_calls:
            yield Shape(
                (*shape.events, _event(shape, Kind.TERM, size, None, shape.turn)), (), shape.calls, shape.turn
            )


def histories(max_events: int) -> Iterator[tuple[Event, ...]]:
    """Clean histories ending at a model call (their end is a request point of
    :func:`models.requests.request_points`), by length, in a fixed order."""
    level = [Shape()]
    for _ in range(max_events):
        level = [nxt for shape in level for nxt in successors(shape)]
        for shape in level:
            if request_points(shape.events)[-1:] == [len(shape.events)]:
                yield shape.events


@dataclass(frozen=True)
class Reproduction:
    """A shortest history on which ``strategy`` breaks ``broken`` (a report counter) at ``budget``."""

    strategy: str
    broken: str
    events: tuple[Event, ...]
    budget: int
    sent: tuple[int, ...]

    @property
    def file(self) -> str:
        return f"{self.strategy.replace(':', '-')}-{self.broken}.jsonl"

    def transcript(self) -> str:
        """``U C(c0) R(c0) …`` with each event's cost under the estimate."""
        letters = {Kind.USER: "U", Kind.CALL: "C", Kind.RESULT: "R", Kind.TERM: "T"}
        return " ".join(
            f"{letters[e.kind]}{f'({e.call_id})' if e.call_id else ''}{COST.event_cost(e)}"
            for e in self.events
        )

    def row(self) -> tuple[str | int, ...]:
        sent = " ".join(str(s) for s in self.sent)
        return (
            self.strategy,
            self.broken,
            len(self.events),
            self.budget,
            self.transcript(),
            sent,
            self.file,
        )

    def jsonl(self) -> str:
        return "".join(dumps_event(e) + "\n" for e in self.events)


def reproductions(strategy: str, max_events: int) -> list[Reproduction]:
    """The shortest reproduction of each property ``strategy`` breaks within ``max_events``."""
    found: dict[str, Reproduction] = {}
    for events in histories(max_events):
        h = History(events, costs=(COST,))
        for budget in BUDGETS:
            w = project(h, budget, strategy, COST)
            for prop in PROPERTIES:
                if prop not in found and getattr(w.report, prop) > 0:
                    found[prop] = Reproduction(strategy, prop, events, budget, tuple(e.seq for e in w.events))
        if len(found) == len(PROPERTIES):
            break
    return [found[p] for p in PROPERTIES if p in found]


def main(argv: list[str]) -> int:
    """Save the reproductions of the named peers (default: every peer) under ``argv[0]``."""
    from turncheck.models.peer import PEERS

    if not argv:
        print(
            "usage: python -m turncheck.integrations.scenarios.peer_repro DIR [MAX_EVENTS] [PEER ...]",
            file=sys.stderr,
        )
        return 2
    out = Path(argv[0])
    max_events = int(argv[1]) if len(argv) > 1 else 6
    peers = argv[2:] or list(PEERS)
    from turncheck.integrations.scenarios.peer_trace import TRACE_DIR, trace_rows
    from turncheck.models.output_files import write_outputs

    for peer in peers:
        found = reproductions(peer, max_events)
        for r in found:
            write_outputs({out / r.file: r.jsonl()}, folder=out)
            print(f"{r.file}: {r.transcript()}  →  turncheck project -H {out / r.file} -b {r.budget} -s {peer} "
                  f"--cost estimate")  # fmt: skip
        traces: dict[str, str] = {}
        trace_rows(peer, [r.broken for r in found], traces)
        for name, text in traces.items():  # the same finding as a viewer trace (scenarios.peer_trace)
            path = out / name.removeprefix(f"{TRACE_DIR}/")
            write_outputs({path: text}, folder=out)
            print(f"{path.name}: turncheck replay {path} --html {path.with_suffix('.html').name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
