"""A ``turncheck race`` schedule as a trace-viewer page: one lane per task, one step per step.

A schedule is not a model run: nothing is replayed here, the steps are what the controlled loop
recorded. Each becomes a :class:`~turncheck.reports.trace_view.StepView` in the lane of its task
(a thread offload in the lane of the task that awaited it), with where the task was suspended
before and after as its fields, the steps the chooser took from asyncio's order marked
*reordered*, and the test's verdict as the one property — broken at the last step when the
schedule failed.
"""

from __future__ import annotations

from turncheck.reports.trace_view import PropertyView, StepView, TraceView, diff_fields
from turncheck.sim.race.explore import RaceRun

PASSES = "test-passes"


def lane_of(actor: str) -> str:
    """``one_run → SQLiteSession.add_items…`` (a thread offload) is in ``one_run``'s lane."""
    return actor.split(" → ", 1)[0]


def race_view(test: str, run: RaceRun) -> TraceView:
    """The page of one schedule of ``test``."""
    failed = run.failure is not None
    lanes: list[str] = []
    steps = [StepView(0, None, "(the test starts)", (), {PASSES: True}, {"step": 0})]
    prev: tuple[tuple[str, str], ...] | None = None
    for k, s in enumerate(run.steps, 1):
        lane = lane_of(s.actor)
        if lane not in lanes:
            lanes.append(lane)
        fields = (
            ("task", s.actor),
            ("from", s.start),
            ("to", s.end),
            ("runnable", ", ".join(s.runnable) or "—"),
        )
        last = k == len(run.steps)
        marks = (f"reordered: asyncio would run {s.runnable[0]}",) if s.reordered else ()
        steps.append(StepView(k, lane, f"{s.start.split(' `', 1)[0]} → {s.end}", diff_fields(prev, fields),
                              {PASSES: not (failed and last)}, {"step": k}, None, marks))  # fmt: skip
        prev = fields
    doc = "the test's own assertions hold and every task finishes (no deadlock, no livelock)"
    message = f"schedule {run.schedule.token}: " + (run.failure.text if run.failure else "the test passes")
    return TraceView("race", {"test": test, "schedule": run.schedule.token}, PASSES, "race",
                     "violated" if failed else "ok", message, tuple(lanes), (PropertyView(PASSES, "always", doc),),
                     tuple(steps), len(run.steps) if failed else None, replayed=False)  # fmt: skip
