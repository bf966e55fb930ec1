// Resuming a session, as the Agent SDK's sessions guide shows: the first query's session id comes with
// its init message; a second query with `resume` set to it goes on with the same conversation, a third
// with `continue` goes on with the latest one, and a fourth forks it (`forkSession`) into a new session.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};

let sessionId;
let first;
for await (const message of query({ prompt: "Remember the word 'teal'.", options })) {
  if (message.type === "system" && message.subtype === "init") sessionId = message.session_id;
  if (message.type === "result") first = message;
}
assert.ok(sessionId);
assert.equal(first.result, "Noted.");

let resumedId;
let second;
for await (const message of query({ prompt: "Which word was it?", options: { ...options, resume: sessionId } })) {
  if (message.type === "system" && message.subtype === "init") resumedId = message.session_id;
  if (message.type === "result") second = message;
}
assert.equal(second.subtype, "success");
assert.equal(second.result, "It was teal.");
assert.equal(resumedId, sessionId);
assert.equal(second.session_id, sessionId);
async function ask(prompt, more) {
  const seen = {};
  for await (const message of query({ prompt, options: { ...options, ...more } })) {
    if (message.type === "system" && message.subtype === "init") seen.init = message.session_id;
    if (message.type === "result") seen.result = message;
  }
  assert.equal(seen.result.subtype, "success");
  assert.equal(seen.result.session_id, seen.init);
  return seen;
}

const continued = await ask("And the colour after it?", { continue: true });
assert.equal(continued.init, sessionId);
assert.equal(continued.result.result, "Cyan, say.");
const forked = await ask("Start over from there.", { resume: sessionId, forkSession: true });
assert.notEqual(forked.init, sessionId);
assert.equal(forked.result.result, "Forked.");
console.log(JSON.stringify({ session_id: sessionId, forked: forked.init }));
