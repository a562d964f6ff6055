// peer:mastra-token-limiter[-contiguous] — Mastra's TokenLimiterProcessor at the prompt stage
// (processLLMRequest, what the model receives), limit = the budget, Mastra's own token estimate.
// Usage: node peers/mastra-token-limiter.mjs best-fit|contiguous
import { TokenLimiterProcessor } from "@mastra/core/processors";
import { TripWire } from "@mastra/core/agent";
import { parseArguments, Refusal, serve } from "../protocol.mjs";

const trimMode = process.argv[2] ?? "best-fit";

function promptMessage(m, names) {
  if (m.role === "tool") {
    return { role: "tool", content: [{ type: "tool-result", toolCallId: m.tool_call_id,
      toolName: names.get(m.tool_call_id) ?? "tool", output: { type: "text", value: m.content ?? "" } }] };
  }
  if (m.tool_calls?.length) {
    return { role: "assistant", content: m.tool_calls.map((c) => ({
      type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: parseArguments(c.function.arguments),
    })) };
  }
  return { role: m.role, content: [{ type: "text", text: m.content ?? "" }] };
}

serve(async ({ budget, messages }) => {
  const names = new Map(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => [c.id, c.function.name])));
  const prompt = messages.map((m) => promptMessage(m, names));
  const limiter = new TokenLimiterProcessor({ limit: budget, trimMode });
  let result;
  try {
    result = await limiter.processLLMRequest({ prompt });
  } catch (err) {
    if (err instanceof TripWire) throw new Refusal(err.message);
    throw err;
  }
  const kept = result?.prompt ?? prompt;
  return kept.map((p) => messages[prompt.indexOf(p)]);
});
