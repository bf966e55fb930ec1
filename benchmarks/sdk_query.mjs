// One one-shot query() of the TypeScript Claude Agent SDK with sagent as its Claude Code executable, timed
// from the call to the result message: node's own start and the SDK's import are not counted, as they are
// not in an application that runs many queries. benchmarks/sdk.py runs it; it prints one JSON line.
import { query } from "@anthropic-ai/claude-agent-sdk";

const options = {
  pathToClaudeCodeExecutable: process.env.SAGENT,
  cwd: process.env.PROJECT,
  extraArgs: JSON.parse(process.env.SAGENT_ARGS),
};
const start = performance.now();
let result;
let resultAt;
for await (const message of query({ prompt: process.env.PROMPT, options })) {
  if (message.type === "result") [result, resultAt] = [message, performance.now()];
}
console.log(JSON.stringify({ seconds: (resultAt - start) / 1000, result: result?.result, is_error: result?.is_error }));
