// Streaming the answer as it is written, as the Agent SDK's streaming-output guide shows: with
// `includePartialMessages`, the program prints each text delta of the stream events, and what it printed
// is the answer the assistant message and the result then give whole.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  includePartialMessages: true,
};

let streamed = "";
const kinds = new Set();
const messages = [];
for await (const message of query({ prompt: "Write a short poem.", options })) {
  messages.push(message);
  if (message.type === "stream_event") {
    kinds.add(message.event.type);
    if (message.event.type === "content_block_delta" && message.event.delta.type === "text_delta") {
      streamed += message.event.delta.text;
    }
  }
}

const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.ok(streamed.length > 0);
assert.equal(streamed, result.result);
const texts = messages
  .filter((m) => m.type === "assistant")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "text");
assert.deepEqual(
  texts.map((b) => b.text),
  [result.result],
);
for (const kind of ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_stop"]) {
  assert.ok(kinds.has(kind), `a ${kind} event came (${[...kinds]})`);
}
console.log(JSON.stringify({ streamed, kinds: [...kinds] }));
