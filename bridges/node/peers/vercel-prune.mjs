// peer:vercel-prune — the Vercel AI SDK's pruneMessages, configured as its documentation shows:
// tool calls and results before the last two messages pruned, emptied messages removed. It takes
// no budget: what it keeps is what it sends.
import { pruneMessages } from "ai";
import { parseArguments, serve } from "../protocol.mjs";

const INDEX = Symbol("turncheck message"); // copied by the SDK's object spread, read by nothing else

function modelMessage(m, i, names) {
  let out;
  if (m.role === "tool") {
    const part = { type: "tool-result", toolCallId: m.tool_call_id, toolName: names.get(m.tool_call_id) ?? "tool",
                   output: { type: "text", value: m.content ?? "" } };
    out = { role: "tool", content: [part] };
  } else if (m.tool_calls?.length) {
    out = { role: "assistant", content: m.tool_calls.map((c) => ({
      type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: parseArguments(c.function.arguments),
    })) };
  } else {
    out = { role: m.role, content: m.content ?? "" };
  }
  out[INDEX] = i;
  return out;
}

serve(async ({ messages }) => {
  const names = new Map(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => [c.id, c.function.name])));
  const pruned = pruneMessages({
    messages: messages.map((m, i) => modelMessage(m, i, names)),
    reasoning: "before-last-message",
    toolCalls: "before-last-2-messages",
    emptyMessages: "remove",
  });
  return pruned.map((p) => {
    const m = messages[p[INDEX]];
    if (!m.tool_calls?.length || typeof p.content === "string") return m;
    const kept = new Set(p.content.filter((part) => part.type === "tool-call").map((part) => part.toolCallId));
    return kept.size === m.tool_calls.length ? m : { ...m, tool_calls: m.tool_calls.filter((c) => kept.has(c.id)) };
  });
});
