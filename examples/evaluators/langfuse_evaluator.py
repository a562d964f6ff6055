"""A Langfuse custom evaluator: each model call of a trace scored for what it sent."""

import turncheck


def score_trace(langfuse, trace_id, budget=None):
    """Score every GENERATION of the trace: 1 when its request is clean, 0 with the findings."""
    trace = langfuse.api.trace.get(trace_id)
    state = turncheck.Conversations()  # across the trace's calls: estimate-drift named once
    scores = {}
    for observation in sorted(trace.observations, key=lambda o: o.start_time):
        if observation.type != "GENERATION":
            continue
        findings = turncheck.lint_request(observation, format="langfuse", budget=budget, state=state)
        langfuse.create_score(
            name="context-structure",
            value=0 if findings else 1,
            data_type="BOOLEAN",
            trace_id=trace_id,
            observation_id=observation.id,
            comment="\n".join(map(str, findings)) or "clean",
        )
        scores[observation.id] = [f.problem for f in findings]
    return scores
