"""Langfuse and LangSmith exports of one agent, made by the real libraries, offline: the examples
under ``examples/traces/`` that docs/your-agent.md lints, and the inputs of
``tests/test_import_traces.py``.

The agent is the Chat Completions tool loop as OpenAI's docs write it, run by the ``openai``
client against a local transport serving a scripted conversation (a call, then two parallel
calls); each reply carries the ``usage`` a provider reports (:func:`with_usage`: OpenAI's chat counting
rule in ``o200k_base``, tool schemas included), so the traces hold a provider's count that is
more than the messages alone. LangSmith's own tracing records it (``wrap_openai`` under ``tracing_context(enabled=
"local")`` with a client pointed nowhere: runs are kept, never posted); for Langfuse each call
becomes a GENERATION ``ObservationsView`` holding what Langfuse's OpenAI integration records
(``langfuse/openai.py``: ``input`` ``{"tools", "messages"}`` for a call with tools, ``output``
the message's ``role`` / ``tool_calls`` / ``content``, ``usage_details`` the reply's usage), serialised by the SDK's own API models
(importing ``langfuse.openai`` itself would patch ``openai`` for the whole process). ``keep=3``
trims the third call to its newest three messages — a window sent starting on a tool result
whose call was cut. ``python -m docs.tools.trace_exports`` rewrites the examples (run ids and
times differ at each run).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import openai

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "traces"
TOOL = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}
TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
QUESTIONS = ["weather in Oslo?", "and Rome and Paris?"]


def completion(*cities: str, text: str | None = None) -> dict[str, Any]:
    calls = [{"id": f"call_{c}", "type": "function", "function": {"name": "weather", "arguments": json.dumps({"city": c})}}
             for c in cities]  # fmt: skip
    message = {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}
    return {"id": "chatcmpl", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}]}  # fmt: skip


SCRIPT = (
    completion("Oslo"),
    completion(text="rain in Oslo"),
    completion("Rome", "Paris"),
    completion(text="sun, fog"),
)


def with_usage(request: Any, reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` with the usage the server reports for ``request``: its input counted by OpenAI's
    chat rule (the cookbook's ``num_tokens_from_messages``: 3 tokens a message, its role, its
    content and call arguments, 3 to prime the reply) in ``o200k_base``, plus the tool schemas as
    compact JSON; its output the reply message's content and arguments."""
    from turncheck.models.tokenizer import count_tokens

    def tokens(message: dict[str, Any]) -> int:
        texts = [message.get("content") or ""] + [
            c["function"]["arguments"] for c in message.get("tool_calls") or []
        ]
        return sum(count_tokens("o200k_base", t) for t in texts)

    body = json.loads(request.content)
    prompt = 3 + sum(3 + count_tokens("o200k_base", m["role"]) + tokens(m) for m in body["messages"])
    prompt += count_tokens("o200k_base", json.dumps(body.get("tools") or [], separators=(",", ":")))
    completion_ = tokens(reply["choices"][0]["message"])
    return {**reply, "usage": {"prompt_tokens": prompt, "completion_tokens": completion_,
                               "total_tokens": prompt + completion_}}  # fmt: skip


def openai_client() -> Any:
    """An ``openai`` client whose transport serves :data:`SCRIPT`, reply after reply."""
    served = list(SCRIPT)
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, json=with_usage(request, served.pop(0)))
    )
    return openai.OpenAI(api_key="offline", base_url="http://model.invalid/v1", max_retries=0,
                         http_client=httpx2.Client(transport=transport))  # fmt: skip


def chat_agent(create: Any, keep: int | None = None) -> None:
    """Send, run each tool call, send the results back, until the model answers."""
    messages: list[Any] = [{"role": "system", "content": "be brief"}]
    calls = 0
    for question in QUESTIONS:
        messages.append({"role": "user", "content": question})
        while True:
            calls += 1
            sent = messages[-keep:] if keep and calls == 3 else list(messages)
            message = create(model="gpt-test", messages=sent, tools=TOOLS).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                city = json.loads(call.function.arguments)["city"]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": TOOL[city]})


def langfuse_export(keep: int | None = None) -> list[dict[str, Any]]:
    """The session's traces, one per question, as ``GET /api/public/traces/{id}`` returns them."""
    from langfuse.api import ObservationsView, TraceWithFullDetails, Usage

    create = openai_client().chat.completions.create
    calls: list[tuple[dict[str, Any], Any]] = []

    def recorded(**kwargs: Any) -> Any:
        calls.append((kwargs, create(**kwargs)))
        return calls[-1][1]

    chat_agent(recorded, keep)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    common: dict[str, Any] = {"model_parameters": {}, "metadata": {}, "level": "DEFAULT", "environment": "default",
                              "cost_details": {}}  # fmt: skip
    observations: list[list[Any]] = [[], []]
    for i, (kwargs, reply) in enumerate(calls):
        at, trace = t0 + dt.timedelta(seconds=i), 0 if i < 2 else 1
        used = reply.usage
        counts = {"input": used.prompt_tokens, "output": used.completion_tokens, "total": used.total_tokens}
        observations[trace] += [
            ObservationsView(id=f"gen-{i + 1}", trace_id=f"trace-{trace + 1}", type="GENERATION", start_time=at,
                             model="gpt-test", input={"tools": kwargs["tools"], "messages": kwargs["messages"]},
                             output=reply.choices[0].message.model_dump(include={"role", "tool_calls", "content"}),
                             usage=Usage(**counts, unit="TOKENS"), usage_details=counts, **common),
            ObservationsView(id=f"tool-{i + 1}", trace_id=f"trace-{trace + 1}", type="TOOL", start_time=at,
                             input={"city": "Oslo"}, output="rain", usage=Usage(input=0, output=0, total=0),
                             usage_details={}, **common),
        ]  # fmt: skip
    return [
        json.loads(
            TraceWithFullDetails(
                id=f"trace-{n + 1}",
                timestamp=t0,
                session_id="chat-1",
                tags=[],
                public=False,
                environment="default",
                html_path=f"/trace/trace-{n + 1}",
                observations=obs,
                scores=[],
            ).json()
        )  # fmt: skip
        for n, obs in enumerate(observations)
    ]


def langsmith_runs(keep: int | None = None) -> list[str]:
    """Every run of the agent traced by ``wrap_openai`` (its chain run, then each llm run), as
    ``Run.model_dump_json()`` lines."""
    import langsmith as ls
    from langsmith.run_helpers import get_current_run_tree
    from langsmith.wrappers import wrap_openai

    client = wrap_openai(openai_client())

    @ls.traceable(name="agent")
    def agent() -> Any:
        chat_agent(client.chat.completions.create, keep)
        return get_current_run_tree()

    return offline_runs(agent)


def offline_runs(agent: Callable[[], Any]) -> list[str]:
    """Run ``agent`` (a ``@traceable`` function returning its run tree) with LangSmith tracing
    kept local (a client that never sends), in thread ``chat-1``; its root run and each child run
    as ``Run.model_dump_json()`` lines, the export ``lint --from langsmith`` reads."""
    import langsmith as ls
    from langsmith import schemas

    nowhere = ls.Client(
        api_url="http://langsmith.invalid", api_key="offline", info={}, auto_batch_tracing=False
    )
    with ls.tracing_context(enabled="local", client=nowhere, metadata={"thread_id": "chat-1"}):
        root = agent()
    fields = set(schemas.Run.model_fields) - {"child_runs"}
    return [
        schemas.Run(**{k: v for k, v in vars(r).items() if k in fields}).model_dump_json()
        for r in (root, *root.child_runs)
    ]


def main() -> None:
    EXAMPLES.mkdir(exist_ok=True)
    (EXAMPLES / "langfuse-session.json").write_text(json.dumps(langfuse_export(), indent=1) + "\n")
    (EXAMPLES / "langfuse-trimmed.json").write_text(json.dumps(langfuse_export(keep=3), indent=1) + "\n")
    (EXAMPLES / "langsmith-runs.jsonl").write_text("".join(r + "\n" for r in langsmith_runs()))
    (EXAMPLES / "langsmith-trimmed.jsonl").write_text("".join(r + "\n" for r in langsmith_runs(keep=3)))


if __name__ == "__main__":
    main()
