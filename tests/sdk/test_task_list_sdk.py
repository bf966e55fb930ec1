"""The task list as a Claude Agent SDK program reads it: a `SystemMessage` of subtype `task_list` carrying
the todos, beside the TodoWrite call in the assistant message, as Claude Code writes that call."""

from __future__ import annotations

from pathlib import Path

from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, SystemMessage, ToolUseBlock, query

from tests.fakes import anthropic_server as anth
from tests.sdk.harness import ANTHROPIC, cli

TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
]


async def test_the_program_gets_the_list_as_a_system_message(tmp_path: Path) -> None:
    steps = [anth.tool_use_response([("TodoWrite", {"todos": TODOS})]), anth.text_response("fixed")]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(tmp_path))
        messages = [m async for m in query(prompt="fix the bug", options=options)]
    lists = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "task_list"]
    assert [m.data["todos"] for m in lists] == [TODOS]
    calls = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolUseBlock)]
    assert [(c.name, c.input) for c in calls] == [("TodoWrite", {"todos": TODOS})]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "fixed"
