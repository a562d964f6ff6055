"""Write ``agent.messages`` as Strands Agents keeps them, for ``turncheck lint --from bedrock``.

A real ``strands.Agent`` runs a tool-heavy question against a scripted model (no network, no AWS
account: the model streams the Converse events a Bedrock reply streams), with the
``SlidingWindowConversationManager`` Strands uses by default::

    python examples/formats/strands_messages.py 100 > strands-clean.json   # nothing trimmed
    python examples/formats/strands_messages.py 4 > strands-window.json    # trimmed to 4 messages

With a window of 4 the manager finds no plain user message to cut at and falls back to an
``assistant(toolUse) + user(toolResult)`` boundary: the history it keeps starts with an assistant
``toolUse``, which Bedrock refuses ("A conversation must start with a user message") —
strands-agents harness-sdk#1749. The files beside this script were written by it with
strands-agents 1.62.0.

With ``--session FOLDER`` the agent keeps its session with Strands' ``FileSessionManager`` in
FOLDER instead (``session_s1/agents/agent_a1/``: ``agent.json`` with the conversation manager's
``removed_message_count``, and every message the session stored as ``messages/message_N.json``)::

    python examples/formats/strands_messages.py 4 --session examples/formats/strands-session
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.models.model import Model

WEATHER = {"Oslo": "rain", "Rome": "sun", "Paris": "fog"}


class ScriptedModel(Model):
    """Streams one scripted reply per request, as the Converse stream events Strands reads."""

    def __init__(self, replies: list[list[dict[str, Any]]]) -> None:
        self.replies = list(replies)

    def update_config(self, **model_config: Any) -> None:
        del model_config

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("not used here")

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        reply = self.replies.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        for block in reply:
            if "toolUse" in block:
                use = block["toolUse"]
                yield {
                    "contentBlockStart": {
                        "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                    }
                }
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
            else:
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            yield {"contentBlockStop": {}}
        stop = "tool_use" if any("toolUse" in b for b in reply) else "end_turn"
        yield {"messageStop": {"stopReason": stop}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1},
            }
        }


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return WEATHER.get(city, "unknown")


def use(n: int, city: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": f"tooluse_{n}", "name": "weather", "input": {"city": city}}}


def agent_messages(window: int, session: str | None = None) -> list[dict[str, Any]]:
    """The agent's messages after one question answered with five calls (two in parallel); with
    ``session``, kept by a ``FileSessionManager`` in that folder as well."""
    replies = [[use(1, "Oslo")], [use(2, "Rome"), use(3, "Paris")], [use(4, "Oslo")], [use(5, "Rome")],
               [{"text": "Rain, sun, fog, rain, sun."}]]  # fmt: skip
    kept: dict[str, Any] = {}
    if session is not None:
        from strands.session.file_session_manager import FileSessionManager

        kept = {"agent_id": "a1", "session_manager": FileSessionManager(session_id="s1", storage_dir=session)}
    agent = Agent(model=ScriptedModel(replies), tools=[weather], callback_handler=None,
                  conversation_manager=SlidingWindowConversationManager(window_size=window), **kept)  # fmt: skip
    agent("What is the weather in Oslo, Rome and Paris, and again in Oslo and Rome?")
    return [dict(m) for m in agent.messages]


if __name__ == "__main__":
    if sys.argv[2:3] == ["--session"]:
        agent_messages(int(sys.argv[1]), sys.argv[3])
    else:
        json.dump(agent_messages(int(sys.argv[1])), sys.stdout, indent=1)
        print()
