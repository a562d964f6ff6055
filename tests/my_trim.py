"""User projectors as a user writes them, for the tests of user code everywhere (not collected).

``cut`` keeps the longest suffix that fits, cutting anywhere (mid-turn: it orphans results);
``pair_safe`` moves that cut forward past any split CALL/RESULT pair; ``last_three`` and
``summarize`` are message-level trimmers over OpenAI-style chat messages.
"""

from __future__ import annotations

from typing import Any

from turncheck import window_from_start
from turncheck.models.projector import fit_start


def cut(history, budget, cost):
    return window_from_start(history, budget, cost, fit_start(history, budget, cost), "my_trim:cut")


def pair_safe(history, budget, cost):
    start = fit_start(history, budget, cost)
    cuts = [c for c in history.safe_cuts if c >= start]
    return window_from_start(history, budget, cost, cuts[0] if cuts else len(history), "my_trim:pair_safe")


def last_three(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    return messages[-3:]


def summarize(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "summary of earlier turns"}, *messages[-1:]]


def not_a_list(messages: list[dict[str, Any]], budget: int) -> str:
    return "oops"
