// canUseTool, as the Agent SDK's permissions guide writes it: sagent asks the program before each call
// its policy would ask about. The program allows one write with a changed input, allows another without
// giving an input back (the TypeScript SDK may leave `updatedInput` out), and denies a shell command that
// would leave the OS sandbox (one inside it runs unasked).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};

const asked = [];
options.canUseTool = async (toolName, input, { signal, toolUseID }) => {
  assert.ok(signal instanceof AbortSignal);
  asked.push({ toolName, input, toolUseID });
  if (toolName === "Bash") {
    return { behavior: "deny", message: "Removing files is not allowed here." };
  }
  if (input.path === "draft.txt") {
    return { behavior: "allow", updatedInput: { ...input, content: "reviewed\n" } };
  }
  return { behavior: "allow" };
};

const messages = [];
for await (const message of query({ prompt: "Tidy up the project.", options })) {
  messages.push(message);
}

assert.deepEqual(
  asked.map((a) => [a.toolName, a.input]),
  [
    ["Write", { path: "draft.txt", content: "first\n" }],
    ["Write", { path: "notes.txt", content: "hello\n" }],
    ["Bash", { command: "rm VERSION", dangerouslyDisableSandbox: true }],
  ],
);
const calls = messages
  .filter((m) => m.type === "assistant")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_use");
assert.deepEqual(
  asked.map((a) => a.toolUseID),
  calls.map((c) => c.id),
);
const project = options.cwd;
assert.equal(readFileSync(join(project, "draft.txt"), "utf8"), "reviewed\n");
assert.equal(readFileSync(join(project, "notes.txt"), "utf8"), "hello\n");
assert.ok(existsSync(join(project, "VERSION")), "the denied command did not run");

const results = messages
  .filter((m) => m.type === "user")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_result");
const denied = results.find((r) => r.tool_use_id === calls[2].id);
assert.equal(denied.is_error, true);
assert.match(JSON.stringify(denied.content), /Removing files is not allowed here\./);

const result = messages.at(-1);
assert.equal(result.type, "result");
assert.equal(result.subtype, "success");
assert.equal(result.result, "Done.");
console.log(JSON.stringify({ asked: asked.map((a) => a.toolName) }));
