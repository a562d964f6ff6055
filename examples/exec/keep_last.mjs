// A trimmer over the exec protocol (docs/exec-protocol.md): keep the newest `budget` messages.
// Run by turncheck: turncheck project --example -b 6 --strategy "exec:node examples/exec/keep_last.mjs"
import { createInterface } from "node:readline";

function keepLast(messages, budget) {
  return budget > 0 ? messages.slice(-budget) : [];
}

for await (const line of createInterface({ input: process.stdin })) {
  const { budget, messages } = JSON.parse(line);
  process.stdout.write(JSON.stringify({ messages: keepLast(messages, budget) }) + "\n");
}
