// An editor on the npm `@agentclientprotocol/sdk` client: starts the agent command given as JSON in argv[2],
// opens a session in argv[3], sends the prompt argv[4], answers each permission question with the option
// kinds listed in argv[5] (comma-separated, in order), and prints one JSON object: what initialize and
// session/new answered, every update, every question, and the stop reason.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

// The SDK as .ci/run installs it (its path in ACP_SDK: this file lives outside that node_modules).
const acp = await import(process.env.ACP_SDK);

const [command, cwd, prompt, answersText] = [JSON.parse(process.argv[2]), process.argv[3], process.argv[4], process.argv[5] || ""];
const answers = answersText ? answersText.split(",") : [];
const updates = [];
const questions = [];

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const app = acp
  .client({ name: "node-test-editor" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    questions.push(params);
    const kind = answers.shift() || "reject_once";
    const option = params.options.find((o) => o.kind === kind);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "node-test-editor", version: "1.0.0" },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const response = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: prompt }],
  });
  return { init, session, stopReason: response.stopReason };
});

child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
process.stdout.write(JSON.stringify({ ...result, updates, questions }) + "\n");
