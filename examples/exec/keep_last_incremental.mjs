// keep_last.mjs's rule, taking each request as what changed since the last one: its answers say
// "incremental": true, so later requests carry "keep": K (the first K messages of the previous
// request stay) and only the messages after them (docs/exec-protocol.md).
import { createInterface } from "node:readline";

function keepLast(messages, budget) {
  return budget > 0 ? messages.slice(-budget) : [];
}

const held = [];
for await (const line of createInterface({ input: process.stdin })) {
  const { budget, keep = 0, messages } = JSON.parse(line);
  held.splice(keep, held.length - keep, ...messages);
  process.stdout.write(JSON.stringify({ messages: keepLast(held, budget), incremental: true }) + "\n");
}
