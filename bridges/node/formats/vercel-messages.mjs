// The test input of `--from vercel` (tests/test_import_vercel.py), made by the AI SDK itself:
// generateText runs two user turns against the SDK's own mock model (ai/test) — a reasoning part
// and a parallel tool call, then a single call — and the ModelMessage[] it builds is printed as
// {"messages": […]}. Offline: the model is the mock, the tools run here.
import { generateText, isStepCount, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const step = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] });
const call = (toolCallId, city) => ({ type: "tool-call", toolCallId, toolName: "weather", input: JSON.stringify({ city }) });
const steps = [
    step([{ type: "reasoning", text: "Both cities, in parallel." }, call("call_1", "Paris"), call("call_2", "Oslo")], "tool-calls"),
    step([{ type: "text", text: "Paris 21°C, Oslo 9°C." }], "stop"),
    step([call("call_3", "Rome")], "tool-calls"),
    step([{ type: "text", text: "Rome 25°C." }], "stop"),
];
const model = new MockLanguageModelV4({ doGenerate: async () => steps.shift() });
const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    execute: async ({ city }) => ({ city, celsius: { Paris: 21, Oslo: 9, Rome: 25 }[city] }),
  }),
};

const messages = [];
for (const question of ["Weather in Paris and Oslo?", "And Rome?"]) {
  messages.push({ role: "user", content: question });
  const result = await generateText({ model, tools, messages, instructions: "You answer weather questions.", stopWhen: isStepCount(2) });
  messages.push(...result.responseMessages);
}
process.stdout.write(JSON.stringify({ messages }, null, 1) + "\n");
