"""AnthropicCLI end to end: the real Claude Code CLI (installed by .ci/run into .ci/node) against sagent's
fake Anthropic server, with sagent's tools bridged over MCP so sagent's loop runs every tool."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.events import Event, Result, ToolFinished
from sagent.providers.base import BadRequestError
from sagent.providers.cli_backends.claude import ClaudeCLIModel
from sagent.tools import builtin_tools
from sagent.types import ModelRequest, UserMessage
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"
CLAUDE = str(LOCAL) if LOCAL.exists() else shutil.which("claude")
needs_cli = pytest.mark.skipif(
    CLAUDE is None,
    reason="the Claude Code CLI is not installed (.ci/run installs it into .ci/node when npm is present)",
)


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME (the CLI writes its config there, never the user's) and no traffic beyond the fake."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    return work


def model(fake: FakeAnthropic, cwd: Path) -> ClaudeCLIModel:
    assert CLAUDE is not None
    return ClaudeCLIModel("claude-sonnet-4-6", api_key="test", base_url=fake.url, binary=CLAUDE, cwd=cwd)


async def run(agent: Agent, prompt: str) -> list[Event]:
    events = [e async for e in agent.run(prompt)]
    return events


def tool_results(fake: FakeAnthropic, index: int) -> list[dict[str, Any]]:
    """The tool_result blocks the CLI sent in request `index`."""
    last = fake.requests[index]["body"]["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [])


@needs_cli
def test_multi_round_tool_task_runs_the_tools_in_sagent(cli_env: Path) -> None:
    (cli_env / "a.txt").write_text("alpha contents\n")
    steps = [
        tool_use_response([("mcp__sagent__Read", {"path": "a.txt"})]),
        tool_use_response([("mcp__sagent__Write", {"path": "b.txt", "content": "beta"})]),
        text_response("all done"),
    ]
    with FakeAnthropic(steps) as fake:

        async def go() -> list[Event]:
            m = model(fake, cli_env)
            agent = Agent(m, tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                return await run(agent, "read a.txt then write b.txt")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        finished = [e for e in events if isinstance(e, ToolFinished)]
        assert [f.result.name for f in finished] == ["Read", "Write"]
        assert "alpha contents" in finished[0].result.text
        assert (cli_env / "b.txt").read_text() == "beta"
        result = next(e for e in events if isinstance(e, Result))
        assert result.text == "all done" and not result.is_error
        # The CLI sent sagent's results back to the model, and offered only sagent's tools.
        assert "alpha contents" in result_text(tool_results(fake, 1)[0])
        names = {t["name"] for t in fake.requests[0]["body"]["tools"]}
        assert "mcp__sagent__Read" in names and not any(not n.startswith("mcp__sagent__") for n in names)


def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    m = ClaudeCLIModel("sonnet", binary=str(tmp_path / "no-such-claude"))
    request = ModelRequest("sys", (UserMessage.of("hi"),))

    async def go() -> None:
        try:
            async for _ in m.stream(request):
                pass
        finally:
            await m.aclose()

    with pytest.raises(BadRequestError, match="not installed"):
        asyncio.run(go())
