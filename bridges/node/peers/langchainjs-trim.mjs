// peer:langchainjs-trim — LangChain.js trimMessages(strategy "last"), trimming by turncheck's costs.
import { AIMessage, HumanMessage, ToolMessage, trimMessages } from "@langchain/core/messages";
import { parseArguments, serve } from "../protocol.mjs";

function langchain(m, i) {
  const id = String(i);
  if (m.role === "user") return new HumanMessage({ content: m.content ?? "", id });
  if (m.role === "tool") return new ToolMessage({ content: m.content ?? "", tool_call_id: m.tool_call_id ?? "", id });
  if (m.tool_calls?.length) {
    const calls = m.tool_calls.map((c) => ({
      name: c.function.name, args: parseArguments(c.function.arguments), id: c.id, type: "tool_call",
    }));
    return new AIMessage({ content: "", tool_calls: calls, id });
  }
  return new AIMessage({ content: m.content ?? "", id });
}

serve(async ({ budget, messages, costs }) => {
  const kept = await trimMessages(messages.map(langchain), {
    maxTokens: budget,
    strategy: "last",
    allowPartial: false,
    tokenCounter: (msgs) => msgs.reduce((sum, m) => sum + costs[Number(m.id)], 0),
  });
  return kept.map((m) => messages[Number(m.id)]);
});
