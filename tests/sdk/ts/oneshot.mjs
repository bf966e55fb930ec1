// A one-shot query, written as the Agent SDK's quick start shows, with sagent as the Claude Code
// executable. The test that runs it sets SAGENT (the executable), PROJECT (the working directory),
// MODEL, and SAGENT_ARGS: sagent's own flags (provider, endpoint) as the SDK's `extraArgs`.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};

const messages = [];
for await (const message of query({ prompt: "Which version is this?", options })) {
  messages.push(message);
}

const [init] = messages;
assert.equal(init.type, "system");
assert.equal(init.subtype, "init");
assert.equal(init.model, options.model);
assert.equal(init.cwd, options.cwd);
assert.ok(init.tools.includes("Read"), `Read is offered: ${init.tools}`);
assert.ok(init.session_id);
// Fields the SDK's SDKSystemMessage type declares, which programs read (its MCP guide checks each server's
// status in mcp_servers).
assert.deepEqual(init.mcp_servers, []);
assert.equal(init.permissionMode, "default");
assert.ok(Array.isArray(init.slash_commands), "slash_commands is a list");

const assistants = messages.filter((m) => m.type === "assistant");
const calls = assistants.flatMap((m) => m.message.content).filter((b) => b.type === "tool_use");
assert.deepEqual(calls.map((c) => [c.name, c.input]), [["Read", { path: "VERSION" }]]);
const toolResults = messages
  .filter((m) => m.type === "user")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_result");
assert.equal(toolResults.length, 1);
assert.equal(toolResults[0].tool_use_id, calls[0].id);
assert.match(JSON.stringify(toolResults[0].content), /4\.2\.0/);

const result = messages.at(-1);
assert.equal(result.type, "result");
assert.equal(result.subtype, "success");
assert.equal(result.is_error, false);
assert.equal(result.result, "Version 4.2.0.");
assert.equal(result.num_turns, 2);
assert.equal(result.session_id, init.session_id);
assert.ok(result.usage.input_tokens > 0 && result.usage.output_tokens > 0, JSON.stringify(result.usage));
assert.deepEqual(Object.keys(result.modelUsage), [options.model]);
assert.equal(typeof result.total_cost_usd, "number");
assert.equal(typeof result.duration_ms, "number");

console.log(JSON.stringify({ types: messages.map((m) => m.type), session_id: init.session_id }));
