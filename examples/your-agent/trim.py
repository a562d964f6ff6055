"""The trimmer of docs/your-agent.md: how many agents cut their chat history to a budget."""

import json


def approx_tokens(message):
    """About four characters of the serialized message per token."""
    return len(json.dumps(message, ensure_ascii=False)) // 4


def keep_recent(messages, budget):
    """Keep the newest messages whose estimated size fits the budget."""
    kept, used = [], 0
    for message in reversed(messages):
        used += approx_tokens(message)
        if used > budget:
            break
        kept.append(message)
    return kept[::-1]


def keep_recent_whole_exchanges(messages, budget):
    """keep_recent, then drop tool results whose call was trimmed away."""
    kept = keep_recent(messages, budget)
    calls = {call["id"] for message in kept for call in message.get("tool_calls") or ()}
    return [m for m in kept if m["role"] != "tool" or m["tool_call_id"] in calls]


def anthropic_role(message):
    """The role a message has in Anthropic's Messages API: tool results travel as "user"."""
    return "user" if message["role"] == "tool" else message["role"]


def keep_recent_from_user(messages, budget):
    """keep_recent, then start on a user message (OpenAI roles: a tool result is not one)."""
    kept = keep_recent(messages, budget)
    while kept and kept[0]["role"] != "user":
        kept.pop(0)
    return kept


def keep_recent_from_user_anthropic_roles(messages, budget):
    """The same rule over Anthropic roles, where a tool result's message is a user message."""
    kept = keep_recent(messages, budget)
    while kept and anthropic_role(kept[0]) != "user":
        kept.pop(0)
    return kept
