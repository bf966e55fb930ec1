// The Query object's controls, as the Agent SDK's reference lists them: before its first message the
// program reads what sagent offers (supportedCommands, supportedModels), switches the model (setModel) and
// the permission mode (setPermissionMode); the message is then answered by the model it chose.
// OTHER_MODEL is the model to switch to.
import assert from "node:assert/strict";
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  model: process.env.MODEL,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS ?? "{}"),
};
const other = process.env.OTHER_MODEL;

let release;
const ready = new Promise((resolve) => (release = resolve));
async function* conversation() {
  await ready;
  yield { type: "user", message: { role: "user", content: "Which model are you?" }, parent_tool_use_id: null };
}

const q = query({ prompt: conversation(), options });
const commands = await q.supportedCommands();
assert.ok(commands.length > 0 && commands.every((c) => typeof c.name === "string" && typeof c.description === "string"));
const models = await q.supportedModels();
assert.ok(models.some((m) => m.value === options.model), JSON.stringify(models));
await q.setModel(other);
await q.setPermissionMode("acceptEdits");
release();

const messages = [];
for await (const message of q) {
  messages.push(message);
}
const assistants = messages.filter((m) => m.type === "assistant");
assert.ok(assistants.length > 0 && assistants.every((m) => m.message.model === other), JSON.stringify(assistants));
const result = messages.at(-1);
assert.equal(result.subtype, "success");
assert.equal(result.result, "I am the other one.");
assert.deepEqual(Object.keys(result.modelUsage), [other]);
console.log(JSON.stringify({ commands: commands.length, models: models.map((m) => m.value) }));
