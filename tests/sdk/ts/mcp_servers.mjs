// An MCP server the program names in `mcpServers` (a stdio command), as the Agent SDK's MCP guide shows:
// sagent starts it, offers its tools from the first request, and the init message reports it connected.
// MCP_COMMAND holds the server's command line as JSON. With MCP_DELIVERY=initialize the SDK sends the servers
// in its initialize request instead of on the command line (where other users could read their env): its
// warning for programs that start their own executable recommends it, and a future SDK will do it anyway.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const [command, ...args] = JSON.parse(process.env.MCP_COMMAND);
const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
  mcpServers: { helper: { type: "stdio", command, args } },
  allowedTools: ["mcp__helper__echo"],
};
if (process.env.MCP_DELIVERY) options.mcpServersDelivery = process.env.MCP_DELIVERY;

const messages = [];
for await (const message of query({ prompt: "Echo 'hello' with the helper.", options })) {
  messages.push(message);
  if (message.type === "system" && message.subtype === "init") {
    const failed = message.mcp_servers.filter((s) => s.status !== "connected");
    assert.deepEqual(failed, [], "every server connected");
  }
}
const [init] = messages;
assert.deepEqual(init.mcp_servers.map((s) => s.name), ["helper"]);
assert.ok(init.tools.includes("mcp__helper__echo"), `${init.tools}`);
const results = messages
  .filter((m) => m.type === "user")
  .flatMap((m) => m.message.content)
  .filter((b) => b.type === "tool_result");
assert.match(JSON.stringify(results), /hello/);
const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.equal(result.result, "It said hello.");
console.log(JSON.stringify({ servers: init.mcp_servers }));
