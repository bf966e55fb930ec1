"""A program written for the Claude Agent SDK for Python (`pip install claude-agent-sdk`), run with sagent as
its CLI: only `cli_path` is sagent's. It holds a conversation of two queries with `ClaudeSDKClient`, and
its `can_use_tool` callback answers every permission question sagent's policy asks (here: any write).

With an API key set, sagent uses that provider; without one it runs on the embedded local model (needs
`uv sync --extra local`). `SAGENT_ARGS` adds flags for sagent (`--provider openai`, say).
"""

import asyncio
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
)

HERE = Path(__file__).parent


def sagent_command(folder: Path) -> str:
    """The CLI the SDK starts: sagent of this Python, with any flags from SAGENT_ARGS before the SDK's."""
    script = folder / "sagent-cli"
    extra = " ".join(shlex.quote(a) for a in shlex.split(os.environ.get("SAGENT_ARGS", "")))
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sagent {extra} "$@"\n')
    script.chmod(0o755)
    return str(script)


async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
    """sagent asks before a write; this program allows writing notes.txt and nothing else."""
    print(f"asked: {name} {tool_input.get('path', '')}")
    if name == "Write" and Path(str(tool_input.get("path", ""))).name == "notes.txt":
        return PermissionResultAllow()
    return PermissionResultDeny(message="only notes.txt may be written")


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        options = ClaudeAgentOptions(
            cli_path=sagent_command(Path(scratch)),
            cwd=str(HERE),
            can_use_tool=can_use_tool,
            allowed_tools=["List", "Read"],
        )
        async with ClaudeSDKClient(options=options) as client:
            for prompt in ("List the files in this folder with the List tool.", "Name one of them."):
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, SystemMessage) and message.subtype == "init":
                        print(f"sagent {message.data['sagent_version']} on {message.data['model']}")
                    elif isinstance(message, AssistantMessage):
                        for block in message.content:
                            if isinstance(block, TextBlock) and block.text.strip():
                                print(f"{message.model}: {block.text.strip()[:200]}")
                    elif isinstance(message, ResultMessage):
                        print(f"result: {message.subtype}, {message.num_turns} turn(s), session {message.session_id}")


if __name__ == "__main__":
    asyncio.run(main())
