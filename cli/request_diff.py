"""``turncheck project --per-request --strategy NEW --diff OLD``: what did my change of trimmer break?

Prints each check's count of offending requests under OLD and NEW, then the requests whose
windows differ (the first few), and exits 1 when a request breaks a check under NEW that its
window held under OLD (:class:`models.request_diff.RequestDiff`); a trimmer diffed against itself
exits 0.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from turncheck.cli.stdout_json import print_json

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.events import Event
    from turncheck.models.request_diff import RequestDiff

SHOWN = 10
"""Differing requests listed in the table (all of them in JSON)."""
WORDS = {"orphanRes": "a tool result sent without its call", "orphanCall": "a call sent without its result",
         "overBudget": "a window over the budget", "empty": "an empty window: nothing of the history sent"}  # fmt: skip
"""What a regression of each usual check means, for the verdict line."""


def print_diff(
    groups: dict[str, list[Event]],
    budget: int,
    old: str,
    new: str,
    cost: CostModel,
    checks: Sequence[str],
    fmt: str,
) -> None:
    from turncheck.models.request_diff import DEFAULT_CHECKS, diff_requests
    from turncheck.reports.tables import markdown_rows

    d = diff_requests(groups, budget, old, new, cost, checks or DEFAULT_CHECKS)
    broken = d.broken_checks()
    if fmt == "json":
        changed = [{"session": c.session, "request": c.index, "after_events": c.end, "old": list(c.old),
                    "new": list(c.new), "regressed": list(c.regressed)} for c in d.changed]  # fmt: skip
        print_json({"old": old, "new": new, "budget": budget, "requests": d.requests, "differ": len(d.changed),
                    "old_counts": dict(d.old_counts), "new_counts": dict(d.new_counts), "broken": list(broken),
                    "changed": changed}, separators=(",", ":"))  # fmt: skip
    else:
        rows = [[c, str(d.old_counts[c]), str(d.new_counts[c]), str(sum(c in r.regressed for r in d.changed))]
                for c in d.checks]  # fmt: skip
        sys.stdout.write("\n".join(markdown_rows(["check", "old", "new", "regressed requests"], rows)) + "\n")
        print(f"old = {old}, new = {new}: {len(d.changed)} of {d.requests} requests differ "
              "(cells count requests whose window breaks the check)")  # fmt: skip
        for c in d.changed[:SHOWN]:
            print(f"  session {c.session}, request {c.index} (after {c.end} events): {c.old_size} → {c.new_size} "
                  f"events, breaks {', '.join(c.old) or 'nothing'} → {', '.join(c.new) or 'nothing'}")  # fmt: skip
        if len(d.changed) > SHOWN:
            print(f"  … {len(d.changed) - SHOWN} more (--format json lists them all)")
        if broken:
            first = d.regressions[0]
            named = "; ".join(f"{c} ({WORDS[c]})" if c in WORDS else c for c in broken)
            print(f"FAIL: {new} breaks {named} in {len(d.regressions)} request{'s' * (len(d.regressions) != 1)} where {old} held it, "
                  f"first at session {first.session}, request {first.index}")  # fmt: skip
        else:
            print(ok_line(d, groups, old, new))
    if broken:
        raise typer.Exit(1)


def ok_line(d: RequestDiff, groups: dict[str, list[Event]], old: str, new: str) -> str:
    """The diff's pass, and what it covered: how many requests, what NEW still breaks as OLD did
    (a diff judges the change, not the trimmer), the shapes the log holds and the command that
    tries every other."""
    import shlex

    from turncheck.models.per_request import Shapes, log_shapes

    shapes = sum((log_shapes(events) for events in groups.values()), Shapes())
    still = [f"{c} in {n} request{'s' * (n != 1)}" for c in d.checks if (n := d.new_counts[c])]
    kept = (f"; it still breaks {', '.join(still)}, as the old one did (a diff judges the change, "
            "not the trimmer: --fail-on judges it)" if still else "; it breaks none of them in any request")  # fmt: skip
    every = f"turncheck check projector -p {shlex.quote('strategy=' + new)}"
    return (
        f"OK: no request breaks, under {new}, a check ({', '.join(d.checks)}) its window held under {old}, "
        f"in {d.requests} request{'s' * (d.requests != 1)} of {len(groups)} session{'s' * (len(groups) != 1)}{kept}. "
        f"A replay covers the shapes this log holds ({shapes.words()}) and no others: `{every}` tries every small history."
    )
