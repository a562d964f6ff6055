"""When an agent calls its model: the one definition of a request.

Every engine, command, scenario and provider rule that asks "which requests did this log
imply?" reads :func:`request_points` — ``project --per-request``, the pytest fixture, the peers
scenario, the incremental peer replayers and the Responses rule ``output-missing`` — so two
commands never count different requests on the same log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from turncheck.models.events import Event, Kind


def request_points(events: Sequence[Event] | Sequence[int]) -> list[int]:
    """Every ``p`` such that the agent calls its model with ``events[:p]``, in order: the one
    definition of a request, used by every engine, command and scenario.

    A default agent loop (openai-agents-python's ``AgentRunner.run``: the run's input is saved
    to the session, then each pass of ``while True`` calls the model once, and after the tools
    run ``NextStepRunAgain`` saves the calls and their outputs and loops to call it again)
    calls the model whenever it holds input the model has not answered:

    * after each USER — also the first of two in a row, and a USER right after a RESULT: a call
      that raised (a refused request) leaves the session ending on its input, and the user
      writes again, so the request before the second USER was made;
    * after the last RESULT of a batch whose every call is answered (not mid-batch: the loop
      waits for the rest);
    * before every model output (a TERM, or the first CALL of a run) — the output proves the
      request, even after a dangling call or a RESULT that came a turn late.

    A SUMMARY is written by compaction before the request it shrinks, so a request point never
    falls just before one: it moves past it (and a log that opens on summaries makes its first
    request with them). ``events`` may also be their kinds alone (``Kind`` or its int code, as
    :attr:`History.kind <turncheck.History>` holds): without ids, a batch is answered once it has
    as many RESULTs as CALLs. Invariant: ``0 < p ≤ len(events)``, strictly increasing; an empty
    log has none; ``len(events)`` is included exactly when a request is pending at the end.
    """
    marks = [
        (i, e.kind, e.call_id) if isinstance(e, Event) else (i, Kind(e), None) for i, e in enumerate(events)
    ]
    skeleton = [mark for mark in marks if mark[1] is not Kind.SUMMARY]
    m, out = len(skeleton), []
    for k in range(m + 1):
        prev, nxt = (skeleton[k - 1][1] if k else None), (skeleton[k][1] if k < m else None)
        output_next = nxt is Kind.TERM or (nxt is Kind.CALL and prev is not Kind.CALL)
        input_waits = prev is Kind.USER or (
            prev is Kind.RESULT and nxt is not Kind.RESULT and batch_answered(skeleton, k)
        )
        p = skeleton[k][0] if k < m else len(events)  # past the summaries written before the request
        if (output_next or input_waits) and p > 0:
            out.append(p)
    return out


def batch_answered(skeleton: Sequence[tuple[int, Kind, str | None]], k: int) -> bool:
    """Whether every call of the newest run of CALLs before ``skeleton[k]`` has a RESULT after it
    (the agent has all the tool results it waits for, so its next step is a model call). Calls
    and results pair by id, counted, so a batch that reuses an id needs a RESULT for each."""
    answered: Counter[str | None] = Counter()
    while k and skeleton[k - 1][1] is Kind.RESULT:
        k -= 1
        answered[skeleton[k][2]] += 1
    calls: Counter[str | None] = Counter()
    while k and skeleton[k - 1][1] is Kind.CALL:
        k -= 1
        calls[skeleton[k][2]] += 1
    return not calls - answered
