"""A LangSmith run evaluator: each llm run scored for what it sent."""

from langsmith.evaluation import run_evaluator

import turncheck


@run_evaluator
def context_structure(run, example=None):
    """1 when the run's request is clean, 0 with the findings as the comment."""
    findings = turncheck.lint_request(run, format="langsmith")
    return {
        "key": "context_structure",
        "score": 0 if findings else 1,
        "comment": "\n".join(map(str, findings)) or "clean",
    }
