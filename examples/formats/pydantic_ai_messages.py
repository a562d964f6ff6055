"""Write a Pydantic AI message history as ``ModelMessagesTypeAdapter.dump_json`` writes it, for
``turncheck lint --from pydantic-ai``.

A real ``pydantic_ai.Agent`` runs against a ``FunctionModel`` (no network)::

    python examples/formats/pydantic_ai_messages.py clean > pydantic-ai-clean.json
    python examples/formats/pydantic_ai_messages.py poisoned > pydantic-ai-poisoned.json

``clean``: a thinking part and two parallel calls, a call whose arguments fail validation (the
library answers it with the error) and a tool that asks for a retry (``ModelRetry``), then the
answer. ``poisoned``: the run stops after the model's tool call — a timeout, a crash — and the
stored history gets the next user request with the call never answered
(pydantic/pydantic-ai#4728; pydantic-ai itself now refuses a new prompt on such a history, an
application that stores messages does not). The files beside this script were written by it
with pydantic-ai-slim 2.68.0.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pydantic_ai import Agent, ModelMessagesTypeAdapter, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

WEATHER = {"Oslo": "rain", "Rome": "sun"}


def call(city: Any, n: int) -> ToolCallPart:
    return ToolCallPart("weather", {"city": city}, tool_call_id=f"call_{n}")


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The model's replies, by how many it has given in this history."""
    del info
    replies: list[list[Any]] = [
        [ThinkingPart(content="Two cities: ask for both at once."), call("Oslo", 1), call("Rome", 2)],
        [call(3, 3)],  # not a string: the library answers with the validation error
        [call("Paris", 4)],  # the tool raises ModelRetry
        [TextPart("Oslo: rain. Rome: sun.")],
    ]
    return ModelResponse(parts=replies[sum(m.kind == "response" for m in messages) % len(replies)])


def agent() -> Agent[None, str]:
    made: Agent[None, str] = Agent(FunctionModel(scripted), system_prompt="Answer briefly.")

    @made.tool_plain(retries=3)
    def weather(city: str) -> str:
        """The weather in a city."""
        if city not in WEATHER:
            raise ModelRetry(f"no station in {city}; try Oslo or Rome")
        return WEATHER[city]

    return made


async def poisoned() -> list[ModelMessage]:
    """A run stopped after the model's tool call, and the next request stored after it."""
    async with agent().iter("What is the weather in Oslo and Rome?") as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                break  # the process dies here: the calls are stored, their returns never come
        history = run.all_messages()
    return [*history, ModelRequest(parts=[UserPromptPart("Are you still there?")])]


def messages(which: str) -> list[ModelMessage]:
    if which == "poisoned":
        return asyncio.run(poisoned())
    return agent().run_sync("What is the weather in Oslo and Rome?").all_messages()


if __name__ == "__main__":
    print(ModelMessagesTypeAdapter.dump_json(messages(sys.argv[1]), indent=1).decode())
