"""The Claude Agent SDK's control protocol, spoken on stdin/stdout when sagent is an SDK's CLI.

A program built on the Claude Agent SDK (Python `claude-agent-sdk`, TypeScript `@anthropic-ai/claude-agent-sdk`)
starts its CLI with `--input-format stream-json --output-format stream-json` and, beside user messages, writes
and reads `control_request` / `control_response` lines: the SDK asks sagent (initialize, interrupt, set_model,
…) and sagent asks the SDK (can_use_tool, hook_callback, mcp_message). `requester` is the one seam both
directions share.
"""
