"""A brute-force reference projector: every definition evaluated from scratch, O(n²).

The real projector must agree with this on every history; nothing here shares code with the
index except the cost models and the placeholder event.
"""

from __future__ import annotations

from turncheck.models.cost import CostModel, Utf8JsonCost, message_of, placeholder_event
from turncheck.models.events import Event, Kind


def pairs_of(events: list[Event]) -> dict[int, int]:
    """FIFO pairing by call id in read order, both directions (CALL-first or RESULT-first)."""
    partner: dict[int, int] = {}
    open_: dict[tuple[Kind, str], list[int]] = {}
    for i, e in enumerate(events):
        if e.kind not in (Kind.CALL, Kind.RESULT):
            continue
        other = Kind.RESULT if e.kind is Kind.CALL else Kind.CALL
        waiting = open_.get((other, e.call_id or ""), [])
        if waiting:
            a = waiting.pop(0)
            partner[a] = i
            partner[i] = a
        else:
            open_.setdefault((e.kind, e.call_id or ""), []).append(i)
    return partner


def window_cost(events: list[Event], s: int, cost: CostModel, placeholders: list[int] = ()) -> int:
    kept = []
    for i in range(s, len(events)):
        kept.append(events[i])
        if i in placeholders:
            kept.append(placeholder_event(events[i]))
    if isinstance(cost, Utf8JsonCost):
        return len(cost.request([message_of(e) for e in kept]).encode("utf-8"))
    return cost.frame + sum(cost.event_cost(e) for e in kept)


def fit_start(events: list[Event], budget: int, cost: CostModel) -> int:
    for s in range(len(events) + 1):
        if window_cost(events, s, cost) <= budget:
            return s
    return len(events)


def segment_starts(events: list[Event]) -> list[int]:
    return [i for i in range(len(events)) if i == 0 or events[i].turn != events[i - 1].turn]


def safe(events: list[Event], p: int, partner: dict[int, int]) -> bool:
    return not any(a < p <= b for a, b in partner.items() if a < b)


def reference_start(events: list[Event], budget: int, cost: CostModel, strategy: str):
    """Returns (start, placeholders, fallback)."""
    n = len(events)
    i0 = fit_start(events, budget, cost)
    starts = segment_starts(events)
    partner = pairs_of(events)
    back = max([t for t in starts if t <= i0], default=0) if i0 < n else n
    fwd = min([t for t in starts if t >= i0], default=n)
    if strategy == "M0":
        return i0, [], 0
    if strategy == "M1":
        return back, [], 0
    if strategy == "M2":
        s = back
        while s < n and events[s].kind is Kind.RESULT and not (s <= partner.get(s, -1) < n):
            s += 1
        ph = []
        if s < n:
            end = min([t for t in starts if t > s], default=n)
            ph = [
                i for i in range(s, end) if events[i].kind is Kind.CALL and not (s <= partner.get(i, -1) < n)
            ]
        return s, ph, 0
    if strategy in ("M3", "REQ"):
        return fwd, [], 0
    if strategy == "M4":
        if fwd >= n and n > 0:
            return i0, [], 1
        return fwd, [], 0
    if strategy == "M5":
        return next(p for p in range(i0, n + 1) if safe(events, p, partner)), [], 0
    raise ValueError(strategy)


def reference_report(events: list[Event], budget: int, cost: CostModel, strategy: str) -> dict[str, int]:
    n = len(events)
    i0 = fit_start(events, budget, cost)
    s, ph, fallback = reference_start(events, budget, cost, strategy)
    partner = pairs_of(events)
    win = range(s, n)
    inside = lambda j: s <= j < n  # noqa: E731
    value = window_cost(events, s, cost, ph)
    seg_of = {}
    seg = -1
    for i, e in enumerate(events):
        if i == 0 or e.turn != events[i - 1].turn:
            seg += 1
        seg_of[i] = seg
    groups: dict[int, set[str]] = {}
    for i in win:
        groups.setdefault(seg_of[i], set()).add(events[i].true_session)
    calls = [events[i].call_id for i in win if events[i].kind is Kind.CALL]
    return {
        "start": s,
        "orphanRes": sum(1 for i in win if events[i].kind is Kind.RESULT and not inside(partner.get(i, -1))),
        "orphanCall": sum(1 for i in win if events[i].kind is Kind.CALL and not inside(partner.get(i, -1)))
        - len(ph),
        "pairSplit": int(s > 0 and events[s - 1].kind is Kind.CALL and partner.get(s - 1, -1) >= s),
        "overBudget": int(value > budget),
        "keptCost": value,
        "empty": int(n > 0 and s >= n and not ph),
        "droppedPartial": int(strategy in ("M3", "M4", "REQ") and not fallback and s > i0),
        "fallback": fallback,
        "repairs": len(ph),
        "tieInversions": sum(
            1
            for j in range(s + 1, n)
            if events[j].seq < events[j - 1].seq and events[j].ts == events[j - 1].ts
        ),
        "seqInversions": sum(1 for j in range(s + 1, n) if events[j].seq < events[j - 1].seq),
        "mispair": sum(
            1 for i in win if events[i].kind is Kind.RESULT and inside(partner.get(i, -1)) and partner[i] > i
        ),
        "mixedSources": int(len({events[i].true_session for i in win}) > 1),
        "turnSrcMix": sum(1 for srcs in groups.values() if len(srcs) > 1),
        "dupCallId": len(calls) - len(set(calls)),
    }
