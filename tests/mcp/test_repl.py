"""`/mcp` and the MCP servers' prompts as slash commands in the REPL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.mcp.setup import mcp_run
from sagent.providers.scripted import ScriptedModel
from sagent.repl.app import Repl
from sagent.repl.commands import mcp_prompt, run_command
from sagent.repl.render import Settings
from tests.mcp.conftest import stdio


def test_mcp_shows_each_server_and_a_prompt_becomes_the_users_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = mcp_run([stdio("basic", "basic"), stdio("broken", "no-such-kind")], tmp_path)
    assert run is not None
    for connection in run.servers.connections.values():
        connection.connect_timeout = 60
    agent = Agent(ScriptedModel([]), tools=run.tools, hooks=(run.hook,), cwd=tmp_path)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=200, color=False))
    sent: list[str] = []
    repl.submit = lambda text, defer=False: sent.append(text)  # type: ignore[method-assign]

    async def session() -> None:
        try:
            await run_command(repl, "/mcp")  # starts the servers
            await run.servers.settle(60)
            await run_command(repl, "/mcp")
            await mcp_prompt(repl, "mcp__basic__review", "the-parser tone=terse")
            await mcp_prompt(repl, "mcp__basic__review", "topic=x tone=y")
            await mcp_prompt(repl, "mcp__basic__nothing", "")
        finally:
            await agent.aclose()
            await run.servers.aclose()

    asyncio.run(session())
    out = capsys.readouterr().out
    assert "  basic            connected  6 tools, 1 prompt" in out
    assert "  broken           failed" in out and "KeyError" in out
    assert "prompts: /mcp__basic__review" in out
    assert sent == ["Please review the-parser in a terse tone.", "Please review x in a y tone."]
    assert "no MCP prompt /mcp__basic__nothing" in out
