"""The ranks' judgements of the parallel explorer combined into the one-process explorer's.

Each rank judges the properties and reads the metrics over its own share of the ids; the whole
search's answer is the lowest id per property and, per metric, the largest value reached at
the lowest id — what one scan in id order finds — with depths read from the level starts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from turncheck.models.protocol import Property
from turncheck.sim.explorer import PropertyOutcome, Status, Worst


def depth_of_ids(levels: list[int]) -> Callable[[int], int]:
    frozen = tuple(levels)

    def depth_of(i: int) -> int:
        return bisect_right(frozen, i) - 1

    return depth_of


def combined_outcomes(
    props: Sequence[Property[Any]], parts: Sequence[list[int | None] | None], depth_of: Callable[[int], int]
) -> tuple[PropertyOutcome, ...]:
    """Each property's lowest id over the ranks' shares (what one scan in id order finds)."""
    out = []
    for k, p in enumerate(props):
        ids = [part[k] for part in parts if part is not None and part[k] is not None]
        sid = min(ids) if ids else None  # type: ignore[type-var]
        if p.expectation == "always":
            status: Status = "holds" if sid is None else "violated"
        else:
            status = "unreached" if sid is None else "reached"
        depth = None if sid is None else depth_of(sid)
        out.append(PropertyOutcome(p.name, p.expectation, status, sid, depth, p.doc))
    return tuple(out)


def combined_worst(
    parts: Sequence[dict[str, tuple[int, int]]], depth_of: Callable[[int], int]
) -> tuple[Worst, ...]:
    """Per metric: the largest value over the ranks, and the lowest id reaching it."""
    best: dict[str, tuple[int, int]] = {}
    for part in parts:
        for name, (value, at) in part.items():
            old = best.get(name)
            if old is None or value > old[0] or (value == old[0] and at < old[1]):
                best[name] = (value, at)
    return tuple(
        Worst(name, int(best[name][0]), best[name][1], depth_of(best[name][1])) for name in sorted(best)
    )


__all__ = ["combined_outcomes", "combined_worst", "depth_of_ids"]
