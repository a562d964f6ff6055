"""A ``turncheck stress`` history as a trace-viewer page: the store's commits, step by step.

A stress run is not a model run: there is nothing to replay, but the store's journal is the
committed history in commit order, and replaying it (:func:`turncheck.sim.stress.history.replay`)
gives the live turns after every commit exactly, and which appends landed in a gap. This module
turns a stretch of that journal into the same :class:`TraceView` the model traces use, so one
viewer pages through both: one lane per process (writers, the compactor), the live turns after
each commit with the new ones marked, the checked bound holding or broken at every commit, and
the window the agent would send — the live turns, each appended while a compaction was in flight
marked *uncounted* (the count the compactor read does not include it).

Invariant: the page shows at most :data:`SPAN` commits — from the last calm commit (live ≤
maxTurns) before the first commit that breaks the checked bound, on to the peak and the
compaction that ends it; or, when nothing breaks, the stretch ending at the peak — plus the
state before them as step 0, and the newest :data:`SHOWN_TURNS` live turns at each (the count
says how many more); the page says which commits of how many it shows, so a long run stays a
small page.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from turncheck.reports.trace_view import (
    PropertyView,
    StepView,
    TraceView,
    WindowItem,
    WindowPanel,
    diff_fields,
)
from turncheck.sim.stress.history import StressReport, replay
from turncheck.sim.stress.runner import COMPACTOR, RawRun
from turncheck.sim.stress.strategies import APPEND, COMPACT

SPAN = 60
SHOWN_TURNS = 40
BOUND = "bounded-peak-turns"


def lane_of(op: str) -> str:
    """``w3.1-17`` (writer 3, incarnation 1, operation 17) → ``writer 3``; the compactor's own."""
    who = op.split("-", 1)[0].split(".", 1)[0]
    if who == COMPACTOR:
        return "compactor"
    return f"writer {who[1:]}" if who.startswith("w") and who[1:].isdigit() else who


def _text(e: Any, live: int) -> str:
    if e.kind == APPEND:
        what = f"appends turn {', '.join(map(str, e.added))}" if e.added else "appends"
        if e.removed:
            what += f" and trims {len(e.removed)}"
    elif e.kind == COMPACT:
        what = f"compacts on count_read={e.count_read}: deletes {len(e.removed)}"
    else:
        what = f"{e.kind}s (nothing committed to the turns)"
    return f"seq {e.seq}: {what} (live → {live})"


def _live_after(run: RawRun, uncounted_step: Sequence[bool]) -> list[tuple[tuple[int, bool], ...]]:
    """The live turns after each commit, each with whether it arrived while a compaction was in
    flight (appended inside the gap, not in the count the compactor read)."""
    live: deque[tuple[int, bool]] = deque()
    after: list[tuple[tuple[int, bool], ...]] = [()]
    for e, uncounted in zip(run.journal, uncounted_step[1:], strict=True):
        removed = set(e.removed)
        if removed:
            live = deque(t for t in live if t[0] not in removed)
        live.extend((t, uncounted) for t in e.added)
        if e.kind == COMPACT:
            live = deque((t, False) for t, _ in live)
        after.append(tuple(live))
    return after


def _span(run: RawRun, counts: list[int], first_over: int | None, max_turns: int) -> tuple[int, int]:
    """The commits shown: up to the peak when the bound held; else from the last commit at or
    below maxTurns before the break, on towards the peak and the compaction that ends it."""
    peak_at = max(range(len(counts)), key=lambda i: (counts[i], -i))
    if first_over is None:
        return max(0, peak_at - SPAN), peak_at
    calm = [i for i in range(max(0, first_over - SPAN), first_over) if counts[i] <= max_turns]
    start = calm[-1] if calm else max(0, first_over - SPAN // 2)
    end = max(first_over, min(start + SPAN, peak_at if peak_at > first_over else first_over))
    act = next((i for i in range(end + 1, len(counts)) if run.journal[i - 1].kind == COMPACT), None)
    if act is not None and act - start <= SPAN:
        end = act
    return start, end


def _panel(turns: tuple[tuple[int, bool], ...], added: set[int], max_turns: int, checked: int) -> WindowPanel:
    """The store's newest turns after one commit, the ones just added and the uncounted marked."""
    items = tuple(
        WindowItem(f"turn {t}", (("uncounted",) if unc else ()) + (("new",) if t in added else ()))
        for t, unc in turns[-SHOWN_TURNS:]
    )
    if len(turns) > SHOWN_TURNS:
        items = (WindowItem(f"… {len(turns) - SHOWN_TURNS} older turn(s)"), *items)
    n_unc = sum(1 for _, u in turns if u)
    summary = f"{len(turns)} live turn(s), maxTurns {max_turns}, bound checked {checked}"
    if n_unc:
        summary += f"; {n_unc} arrived inside the gap, not in the count read"
    return WindowPanel("turns in the store (what the agent would send), by turn id", items, summary)


def stress_view(run: RawRun, report: StressReport) -> TraceView:
    """The viewer's data for one stress run (see the module docstring for the span shown)."""
    p = run.params
    checked = report.checked_bound
    uncounted_step = replay(run).uncounted
    after = _live_after(run, uncounted_step)
    counts = [len(x) for x in after]
    first_over = next((i for i, c in enumerate(counts) if c > checked), None)
    start, end = _span(run, counts, first_over, p.max_turns)
    steps: list[StepView] = []
    lanes: list[str] = []
    prev_fields: list[tuple[str, Any]] | None = None
    peak = max(counts[: start + 1])
    for k, i in enumerate(range(start, end + 1)):
        turns = after[i]
        peak = max(peak, counts[i])
        fields = [
            ("live turns", str(counts[i])),
            ("uncounted in the store", str(sum(1 for _, u in turns if u))),
            ("peak so far", str(peak)),
            ("commit seq", str(run.journal[i - 1].seq) if i else "0"),
        ]
        panel = _panel(turns, set(run.journal[i - 1].added) if i else set(), p.max_turns, checked)
        if k == 0:
            text = f"(state before commit {i + 1}: {counts[i]} live turns)" if i else "(empty store)"
            lane = None
        else:
            e = run.journal[i - 1]
            lane = lane_of(e.op)
            text = _text(e, counts[i])
            if lane not in lanes:
                lanes.append(lane)
        steps.append(
            StepView(
                k,
                lane,
                text,
                tuple(diff_fields(prev_fields, fields)),
                {BOUND: counts[i] <= checked},
                {"live_turns": counts[i], "peak_turns": peak},
                panel,
                ("uncounted gap turn",) if k and uncounted_step[i] else (),
            )
        )
        prev_fields = fields
    broken = first_over - start if first_over is not None else None
    shown = f"commits {start + 1}–{end} of {len(run.journal)}" if end > start else "no commit"
    message = (
        f"stress history of a real {report.store} store, {p.writers} writer process(es), {p.locking}: "
        f"{shown}; peak {report.peak}, checked bound {checked}"
    )
    doc = f"live turns never exceed {checked}: {p.locking}'s checked bound at the measured turns per gap"
    return TraceView(
        "stress",
        {"store": report.store, "locking": p.locking, "writers": p.writers, "gap_ms": p.gap_ms,
         "max_turns": p.max_turns, "seed": p.seed},
        BOUND,
        "stress",
        "ok" if report.ok else "violated",
        message,
        tuple(sorted(lanes, key=lambda s: (s == "compactor", int(s.split()[1]) if s[-1].isdigit() else 0))),
        (PropertyView(BOUND, "always", doc),),
        tuple(steps),
        broken,
        replayed=False,
    )  # fmt: skip
