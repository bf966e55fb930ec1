// Interrupting a turn, as the Agent SDK's streaming-input guide shows: while the model's first answer is
// still streaming, the program calls `interrupt()`; the turn ends, and the next message is answered.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  includePartialMessages: true,
};

let interrupted;
const afterInterrupt = new Promise((resolve) => (interrupted = resolve));

async function* conversation() {
  yield { type: "user", message: { role: "user", content: "Tell me a very long story." }, parent_tool_use_id: null };
  await afterInterrupt;
  yield { type: "user", message: { role: "user", content: "Never mind. Just say done." }, parent_tool_use_id: null };
}

const q = query({ prompt: conversation(), options });
const messages = [];
let sent = false;
for await (const message of q) {
  messages.push(message);
  if (message.type === "stream_event" && !sent) {
    sent = true;
    await q.interrupt();
    interrupted();
  }
}

assert.ok(sent, "the model's answer streamed, and was interrupted");
const results = messages.filter((m) => m.type === "result");
assert.equal(results.length, 2, JSON.stringify(results));
assert.notEqual(results[0].result, "never finished ".repeat(20).trim());
assert.equal(results[1].subtype, "success");
assert.equal(results[1].result, "Done.");
const texts = messages
  .filter((m) => m.type === "assistant")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "text")
  .map((b) => b.text);
assert.ok(!texts.includes("never finished ".repeat(20)), "the interrupted answer did not complete");
console.log(JSON.stringify({ first: results[0].subtype, second: results[1].result }));
