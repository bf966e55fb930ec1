// A tool defined in the application's own process, as the Agent SDK's custom-tools guide writes it:
// `tool()` and `createSdkMcpServer()`, passed in `mcpServers`. sagent offers it to the model and calls it
// through the SDK. `mcpServerStatus()` tells the program the server is connected, with its tool.
import assert from "node:assert/strict";
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const calls = [];
const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
  calls.push({ a, b });
  return { content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] };
});
const calculator = createSdkMcpServer({ name: "calculator", version: "1.0.0", tools: [add] });

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  mcpServers: { calculator },
  allowedTools: ["mcp__calculator__add"],
};

const messages = [];
const q = query({ prompt: "What is 2 + 3?", options });
let status;
for await (const message of q) {
  messages.push(message);
  if (message.type === "system" && message.subtype === "init") status = await q.mcpServerStatus();
}
assert.deepEqual(
  status.filter((s) => s.name === "calculator").map((s) => [s.status, s.tools.map((t) => t.name)]),
  [["connected", ["add"]]],
);

const [init] = messages;
assert.equal(init.subtype, "init");
assert.ok(init.tools.includes("mcp__calculator__add"), `offered: ${init.tools}`);
assert.deepEqual(
  init.mcp_servers.filter((s) => s.name === "calculator").map((s) => s.status),
  ["connected"],
);
assert.deepEqual(calls, [{ a: 2, b: 3 }]);
const results = messages
  .filter((m) => m.type === "user")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_result");
assert.match(JSON.stringify(results), /2 \+ 3 = 5/);
const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.equal(result.result, "The sum is 5.");
console.log(JSON.stringify({ calls }));
