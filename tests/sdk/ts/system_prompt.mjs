// The system prompt option, in the forms the Agent SDK's "modifying system prompts" guide shows: a string
// of the program's own, or Claude Code's preset with an append. The TypeScript SDK sends it in its
// `initialize` request rather than on the command line. SYSTEM_PROMPT holds the option as JSON (null:
// not set).
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};
const systemPrompt = JSON.parse(process.env.SYSTEM_PROMPT ?? "null");
if (systemPrompt !== null) options.systemPrompt = systemPrompt;

const messages = [];
for await (const message of query({ prompt: "Hello there.", options })) {
  messages.push(message);
}
const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.equal(result.result, "Ahoy.");
console.log(JSON.stringify({ result: result.result }));
