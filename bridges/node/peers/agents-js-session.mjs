// peer:agents-js-session — openai-agents-js MemorySession.getItems(limit): the newest `limit`
// items, limit = the items of the newest messages that fit the budget under turncheck's costs.
import { MemorySession } from "@openai/agents-core";
import { fittingMessages, serve } from "../protocol.mjs";

function items(m) {
  if (m.role === "tool") {
    return [{ type: "function_call_result", callId: m.tool_call_id, name: "tool", status: "completed",
              output: { type: "text", text: m.content ?? "" } }];
  }
  if (m.tool_calls?.length) {
    return m.tool_calls.map((c) => ({ type: "function_call", callId: c.id, name: c.function.name,
                                      arguments: c.function.arguments, status: "completed" }));
  }
  if (m.role === "assistant") {
    return [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content ?? "" }] }];
  }
  return [{ type: "message", role: m.role, content: m.content ?? "" }];
}

serve(async ({ budget, messages, costs }) => {
  const owner = []; // item index -> [message index, call index]
  const all = messages.flatMap((m, i) => items(m).map((item, j) => (owner.push([i, j]), item)));
  const fit = fittingMessages(costs, budget);
  const limit = messages.slice(messages.length - fit).reduce((n, m) => n + items(m).length, 0);
  const session = new MemorySession();
  await session.addItems(all);
  const got = await session.getItems(limit);
  const keys = all.map((item) => JSON.stringify(item));
  let next = all.length - got.length; // getItems returns copies: find each in order
  const out = [];
  for (const item of got) {
    const key = JSON.stringify(item);
    while (next < all.length && keys[next] !== key) next++;
    if (next === all.length) throw new Error(`MemorySession returned an item it was not given: ${key.slice(0, 80)}`);
    const [i, j] = owner[next++];
    const last = out.at(-1);
    if (last && last.index === i) last.calls.push(j);
    else out.push({ index: i, calls: [j] });
  }
  return out.map(({ index, calls }) => {
    const m = messages[index];
    if (!m.tool_calls || calls.length === m.tool_calls.length) return m;
    return { ...m, tool_calls: calls.map((j) => m.tool_calls[j]) };
  });
});
