"""Two concurrent OpenAI Agents SDK runs with a compacting session, fully offline.

Each run has its own ``OpenAIResponsesCompactionSession`` over a real ``SQLiteSession``, set
to compact after every turn (the decision hook of the SDK's session docs, at its most eager).
The model is scripted (a custom ``Model``: a tool call, then the answer) and so is the
Responses API's ``responses.compact``, which refuses — as the real API does — a response chain
holding a ``function_call`` without its output: the 400 of openai-agents-python #2317. Up to
0.6.6 the runner compacts right after a turn whose tool output is still local, and every
schedule fails; from 0.6.7 (PR #2322) it defers that compaction, and every schedule passes::

    turncheck race examples/races/agents_compaction.py:test_runs_compact_safely

Two runs through *one* compacting session are another matter: a compaction clears the session
and writes back the summary of its own run's chain, so a turn the other run saved in between is
neither kept nor summarised (the shape of openai-agents-js PR #1842). 0.6.7 loses it under some
schedules; later releases skip a compaction when the history changed under it::

    turncheck race examples/races/agents_compaction.py:test_one_session_two_runs
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.memory.openai_responses_compaction_session import OpenAIResponsesCompactionSession
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from turncheck.integrations.formats.openai_responses import add_response_item
from turncheck.models.chat_log import SessionBuilder
from turncheck.sim.race.recorder import window_problems

set_tracing_disabled(True)  # offline: no trace export


SUMMARY = "(summary of calls: "


def covered(items: list[Any]) -> set[str]:
    """The tool calls these items hold, or that a summary among them stands for."""
    ids = set()
    for item in items:
        content = item.get("content")
        if isinstance(content, str) and content.startswith(SUMMARY):
            ids |= set(content[len(SUMMARY) : -1].split(", ")) - {""}
        elif item.get("call_id"):
            ids.add(item["call_id"])
    return ids


class NoToolOutput(Exception):
    """What the Responses API answers a chain with a pending function call (HTTP 400)."""


def as_events(items: list[Any]) -> list[Any]:
    builder = SessionBuilder("s")
    for k, item in enumerate(items):
        add_response_item(builder, item, f"item {k}")
    return builder.events


@dataclass
class ScriptedAPI:
    """The server side, offline: the responses the model gave, and ``responses.compact``."""

    chains: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def responses(self) -> "ScriptedAPI":
        return self

    async def compact(self, *, model: str, previous_response_id: str | None = None,
                      input: list[Any] | None = None, **_: Any) -> Any:  # fmt: skip
        items = list(input) if input is not None else self.chains[previous_response_id or ""]
        await asyncio.sleep(0)  # the round trip
        if window_problems(as_events(items), ("orphanCall",)):
            pending = {i["call_id"] for i in items if i.get("type") == "function_call"}
            pending -= {i["call_id"] for i in items if i.get("type") == "function_call_output"}
            raise NoToolOutput(f"400 No tool output found for function call {min(pending)}.")
        summary = {
            "type": "message",
            "role": "user",
            "content": f"{SUMMARY}{', '.join(sorted(covered(items)))})",
        }
        return type("Compacted", (), {"output": [summary]})()


class ScriptedModel(Model):
    """A tool call to ``get_weather`` for a new question, the answer once its output is in."""

    def __init__(self, api: ScriptedAPI, name: str) -> None:
        self.api, self.name, self.calls = api, name, 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = (
            [{"type": "message", "role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        await asyncio.sleep(0)  # the round trip
        self.calls += 1
        rid = f"resp_{self.name}_{self.calls}"
        output: list[Any]
        if items and items[-1].get("type") == "function_call_output":
            text = ResponseOutputText(type="output_text", text="It is 21°C.", annotations=[])
            output = [ResponseOutputMessage(id=f"msg_{rid}", type="message", role="assistant", status="completed",
                                            content=[text])]  # fmt: skip
        else:
            output = [ResponseFunctionToolCall(id=f"fc_{rid}", call_id=f"call_{rid}", type="function_call",
                                               name="get_weather", arguments='{"city": "Paris"}', status="completed")]  # fmt: skip
        self.api.chains[rid] = items + [o.model_dump(exclude_unset=True) for o in output]
        return ModelResponse(output=output, usage=Usage(), response_id=rid)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this example runs Runner.run")


@function_tool
async def get_weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(0)
    return "21°C"


def compacting_session(api: ScriptedAPI, session_id: str) -> OpenAIResponsesCompactionSession:
    return OpenAIResponsesCompactionSession(
        session_id=session_id,
        underlying_session=SQLiteSession(session_id),
        client=api,  # type: ignore[arg-type]
        should_trigger_compaction=lambda context: True,
    )


async def ask(api: ScriptedAPI, session: OpenAIResponsesCompactionSession, user: str) -> str:
    agent = Agent(name="assistant", model=ScriptedModel(api, user), tools=[get_weather])
    result = await Runner.run(agent, f"{user}: what is the weather in Paris?", session=session)
    return str(result.final_output)


async def test_runs_compact_safely() -> None:
    api = ScriptedAPI()
    answers = await asyncio.gather(
        *(ask(api, compacting_session(api, user), user) for user in ("alice", "bob"))
    )
    assert answers == ["It is 21°C.", "It is 21°C."], answers


async def test_one_session_two_runs() -> None:
    """Every run's tool call is still in the shared session, or covered by a summary in it."""
    api = ScriptedAPI()
    session = compacting_session(api, "shared")
    await asyncio.gather(ask(api, session, "alice"), ask(api, session, "bob"))
    kept = covered(await session.get_items())
    assert {"call_resp_alice_1", "call_resp_bob_1"} <= kept, (
        f"a run's turn is gone: the session covers {sorted(kept)}"
    )


if __name__ == "__main__":
    asyncio.run(test_runs_compact_safely())
    asyncio.run(test_one_session_two_runs())
    print("both runs answered, both kept")
