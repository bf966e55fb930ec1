// Many of the SDK's options at once, as a program sets them: each becomes a flag on sagent's command line
// (or a field of the initialize request), and the run goes on with what they ask. OTHER_MODEL is a second
// model of the provider (the fallback), EXTRA_DIR a folder to add.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { query } from "@anthropic-ai/claude-agent-sdk";

const sessionId = randomUUID();
const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  fallbackModel: process.env.OTHER_MODEL,
  maxTurns: 5,
  maxBudgetUsd: 2.5,
  thinking: { type: "enabled", budgetTokens: 2048 },
  effort: "high",
  tools: ["Read", "Glob", "Grep"],
  allowedTools: ["Read"],
  disallowedTools: ["Grep"],
  additionalDirectories: [process.env.EXTRA_DIR],
  permissionMode: "acceptEdits",
  settingSources: ["project"],
  settings: { permissions: { deny: ["Glob"] } },
  sessionId,
  betas: ["context-1m-2025-08-07"],
  includeHookEvents: true,
  strictMcpConfig: true,
  systemPrompt: { type: "preset", preset: "claude_code", append: "Answer in one line." },
};

const messages = [];
for await (const message of query({ prompt: "Which version is this?", options })) {
  messages.push(message);
}
const [init] = messages;
assert.equal(init.subtype, "init");
assert.equal(init.session_id, sessionId);
assert.equal(init.permissionMode, "acceptEdits");
// Of the tools the program allowed, the ones it disallowed (Grep) or its settings deny (Glob) are not offered.
assert.deepEqual(init.tools, ["Read"]);
// A call of Glob all the same is refused, and the run goes on.
const results = messages
  .filter((m) => m.type === "user")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_result");
assert.equal(results.length, 2);
assert.equal(results[0].is_error, true, JSON.stringify(results[0]));
assert.match(JSON.stringify(results[1].content), /4\.2\.0/);
const result = messages.at(-1);
assert.equal(result.subtype, "success", JSON.stringify(result));
assert.equal(result.result, "Version 4.2.0.");
assert.equal(result.session_id, sessionId);
console.log(JSON.stringify({ tools: init.tools, session_id: sessionId }));
