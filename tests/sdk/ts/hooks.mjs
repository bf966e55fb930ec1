// Hook callbacks, as the Agent SDK's hooks guide writes them: a PreToolUse hook that blocks shell
// commands which remove files, and a PostToolUse hook that sees every call's result.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";

const seen = [];
const blockRemovals = async (input, toolUseID, { signal }) => {
  assert.ok(signal instanceof AbortSignal);
  seen.push({ event: input.hook_event_name, tool: input.tool_name, toolUseID });
  if (input.tool_input.command?.startsWith("rm ")) {
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "This project keeps its files.",
      },
    };
  }
  return {};
};
const afterCall = async (input, toolUseID) => {
  seen.push({ event: input.hook_event_name, tool: input.tool_name, toolUseID });
  return {};
};

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  permissionMode: "bypassPermissions",
  allowDangerouslySkipPermissions: true,
  hooks: {
    // onFailure "block": a failing check must deny, so the SDK holds the prompt until sagent confirms it.
    PreToolUse: [{ matcher: "Bash", hooks: [blockRemovals], onFailure: "block" }],
    PostToolUse: [{ hooks: [afterCall] }],
  },
};

const messages = [];
for await (const message of query({ prompt: "Clean up the project.", options })) {
  messages.push(message);
}

const calls = messages
  .filter((m) => m.type === "assistant")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_use");
assert.deepEqual(
  calls.map((c) => [c.name, c.input]),
  [
    ["Read", { path: "VERSION" }],
    ["Bash", { command: "rm VERSION" }],
  ],
);
assert.deepEqual(seen, [
  { event: "PostToolUse", tool: "Read", toolUseID: calls[0].id },
  { event: "PreToolUse", tool: "Bash", toolUseID: calls[1].id },
]);
assert.ok(existsSync(join(options.cwd, "VERSION")), "the blocked command did not run");
const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.equal(result.result, "I left the files alone.");
console.log(JSON.stringify({ seen: seen.map((s) => `${s.event} ${s.tool}`) }));
