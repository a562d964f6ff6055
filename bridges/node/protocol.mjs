// The exec protocol's Node side (docs/exec-protocol.md): serve(trim) answers each request line.
//
// trim({budget, messages, costs}) returns the messages to send (some of those given, in order),
// or throws Refusal when the library will not make the request; any other throw is an error line,
// and turncheck stops the run. Whatever a library prints with console.* goes to stderr, so
// stdout carries protocol lines only.
import { createInterface } from "node:readline";

export class Refusal extends Error {}

/** A tool call's argument object, as turncheck's Python peers read it: the JSON object, or {input}. */
export function parseArguments(text) {
  try {
    const value = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // not JSON: the text itself is the input
  }
  return { input: text };
}

/** How many of the newest messages fit the budget under turncheck's costs (the best a count can do). */
export function fittingMessages(costs, budget) {
  let room = budget;
  let k = 0;
  for (let i = costs.length - 1; i >= 0 && costs[i] <= room; i--) {
    room -= costs[i];
    k++;
  }
  return k;
}

export async function serve(trim) {
  const out = process.stdout;
  for (const name of ["log", "info", "debug"]) console[name] = console.error;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let answer;
    try {
      answer = { messages: await trim(JSON.parse(line)) };
    } catch (err) {
      const text = `${err?.name ?? "Error"}: ${err?.message ?? err}`;
      answer = err instanceof Refusal ? { refused: err.message } : { error: text.split("\n")[0] };
    }
    out.write(JSON.stringify(answer) + "\n");
  }
}
