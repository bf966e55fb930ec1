// A run that reaches its `maxTurns`: the program sees a result of subtype error_max_turns with its
// `errors`, as the SDK's reference describes it. The SDK may then throw, since the executable exits with an
// error; it must be the SDK's "returned an error result" error carrying sagent's reason, not a crash.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  maxTurns: 1,
};

const messages = [];
let thrown;
try {
  for await (const message of query({ prompt: "Read every file, one at a time.", options })) {
    messages.push(message);
  }
} catch (error) {
  thrown = error;
}

const result = messages.at(-1);
assert.equal(result.type, "result");
assert.equal(result.subtype, "error_max_turns");
assert.equal(result.is_error, true);
assert.ok(Array.isArray(result.errors) && result.errors.length > 0, JSON.stringify(result));
if (thrown !== undefined) {
  assert.match(thrown.message, /returned an error result/, thrown.stack);
}
console.log(JSON.stringify({ errors: result.errors, thrown: thrown?.message ?? null }));
