// A conversation in streaming-input mode: the prompt is an async generator of user messages, as the
// Agent SDK's "streaming input" guide writes it. With WAIT=result the generator yields its follow-up once
// the first answer has come; with WAIT=none it yields both at once, and the SDK closes the executable's
// stdin as soon as both are written: each must still be answered (by a turn of its own, or by the running
// turn it joined).
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};
const waitForAnswer = process.env.WAIT === "result";
// With ASK=allow the program answers permission questions: the SDK then keeps sagent's input open until
// sagent says the run is idle, instead of closing it once the last message is written.
const asked = [];
if (process.env.ASK === "allow") {
  options.canUseTool = async (toolName, input) => {
    asked.push(toolName);
    return { behavior: "allow", updatedInput: input };
  };
}

let answered;
const firstAnswer = new Promise((resolve) => (answered = resolve));

async function* conversation() {
  yield { type: "user", message: { role: "user", content: "Which version is this?" } };
  if (waitForAnswer) await firstAnswer;
  yield {
    type: "user",
    message: { role: "user", content: [{ type: "text", text: "And which file did you read?" }] },
    parent_tool_use_id: null,
  };
}

const messages = [];
for await (const message of query({ prompt: conversation(), options })) {
  messages.push(message);
  if (message.type === "result") answered();
}

const inits = messages.filter((m) => m.type === "system" && m.subtype === "init");
assert.ok(inits.length >= 1);
// One result for each message, whether it had a turn of its own or joined the running one.
const results = messages.filter((m) => m.type === "result");
assert.equal(results.length, 2, JSON.stringify(results));
for (const result of results) {
  assert.equal(result.subtype, "success", JSON.stringify(result));
  assert.equal(result.session_id, inits[0].session_id);
}
if (waitForAnswer) {
  assert.deepEqual(
    results.map((r) => r.result),
    ["Version 4.2.0.", "I read VERSION."],
  );
}
console.log(JSON.stringify({ results: results.map((r) => r.result), session_id: inits[0].session_id, asked }));
