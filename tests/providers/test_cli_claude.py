"""AnthropicCLI end to end: the real Claude Code CLI (installed by .ci/run into .ci/node) against sagent's
fake Anthropic server, with sagent's tools bridged over MCP so sagent's loop runs every tool."""

from __future__ import annotations

import asyncio
import json
import os
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
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.providers.processes import group_ends

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


@needs_cli
def test_a_tool_denied_by_a_hook_never_runs_and_the_cli_hears_why(cli_env: Path) -> None:
    from sagent.agent.hooks import ALLOW, Deny, Hook, ToolDecision
    from sagent.types import ToolCall

    class NoWrites(Hook):
        async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
            return Deny("writing is not allowed here") if call.name == "Write" else ALLOW

    steps = [
        tool_use_response([("mcp__sagent__Write", {"path": "x.txt", "content": "no"})]),
        text_response("understood"),
    ]
    with FakeAnthropic(steps) as fake:

        async def go() -> list[Event]:
            agent = Agent(model(fake, cli_env), tools=builtin_tools(fleet=False), cwd=cli_env, hooks=[NoWrites()])
            try:
                return await run(agent, "write x.txt")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        assert not (cli_env / "x.txt").exists()
        denied = tool_results(fake, 1)[0]
        assert denied.get("is_error") and "not allowed" in result_text(denied)
        assert next(e for e in events if isinstance(e, Result)).text == "understood"


@needs_cli
def test_a_switch_to_the_api_and_back_carries_the_history(cli_env: Path) -> None:
    from sagent.providers.anthropic import AnthropicModel

    with (
        FakeAnthropic([text_response("first, on the CLI"), text_response("third, on the CLI again")]) as cli_fake,
        FakeAnthropic([text_response("second, on the API")]) as api_fake,
    ):

        async def go() -> None:
            cli_model = model(cli_fake, cli_env)
            agent = Agent(cli_model, tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                await run(agent, "remember the word PELICAN")
                agent.switch_model(AnthropicModel("claude-sonnet-4-6", api_key="test", base_url=api_fake.url))
                await run(agent, "what was the word?")
                agent.switch_model(cli_model)
                await run(agent, "and once more?")
            finally:
                await agent.aclose()

        asyncio.run(go())
        api_sent = json.dumps(api_fake.requests[0]["body"]["messages"])
        assert "PELICAN" in api_sent and "first, on the CLI" in api_sent
        # Switched back in, the CLI starts a session on the whole conversation, the API's answer included.
        replayed = json.dumps(cli_fake.requests[-1]["body"]["messages"])
        assert "PELICAN" in replayed and "second, on the API" in replayed and "once more" in replayed


@needs_cli
def test_a_cli_killed_mid_turn_is_a_connection_error_and_the_retry_replays(cli_env: Path) -> None:
    slow = Reply([{"type": "text", "text": "never finished " * 20}], delay=0.5)
    with FakeAnthropic([slow, text_response("recovered")]) as fake:

        async def go() -> tuple[list[Event], int]:
            m = model(fake, cli_env)
            agent = Agent(m, tools=builtin_tools(fleet=False), cwd=cli_env)

            async def kill_when_streaming() -> int:
                while not fake.requests:
                    await asyncio.sleep(0.05)
                assert m.cli is not None
                pid = m.cli.process.pid
                os.killpg(pid, 9)
                return pid

            killer = asyncio.create_task(kill_when_streaming())
            try:
                events = await run(agent, "say something long")
            finally:
                await agent.aclose()
            return events, await killer

        events, pid = asyncio.run(go())
        from sagent.events import Retrying

        retries = [e for e in events if isinstance(e, Retrying)]
        assert retries and "connection" in retries[0].error
        assert next(e for e in events if isinstance(e, Result)).text == "recovered"
        assert group_ends(pid)  # the killed CLI's group is gone


@needs_cli
def test_a_sub_agent_on_the_cli_under_a_parent_on_the_api(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.providers.anthropic import AnthropicModel

    assert CLAUDE is not None
    with (
        FakeAnthropic([text_response("the child's answer")]) as cli_fake,
        FakeAnthropic(
            [
                tool_use_response([("AgentSpawn", {"prompt": "look around", "provider": "AnthropicCLI"})]),
                text_response("parent done"),
            ]
        ) as api_fake,
    ):
        monkeypatch.setenv("SAGENT_CLAUDE_BIN", CLAUDE)
        monkeypatch.setenv("SAGENT_CLAUDE_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", cli_fake.url)

        async def go() -> list[Event]:
            parent = AnthropicModel("claude-sonnet-4-6", api_key="test", base_url=api_fake.url)
            agent = Agent(parent, tools=builtin_tools(), cwd=cli_env)
            try:
                return await run(agent, "delegate")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        spawned = next(e for e in events if isinstance(e, ToolFinished) and e.result.name == "AgentSpawn")
        assert not spawned.result.is_error, spawned.result.text
        assert len(cli_fake.requests) == 1
        assert next(e for e in events if isinstance(e, Result)).text == "parent done"


@needs_cli
def test_signed_out_is_an_authentication_error_that_says_how_to_sign_in(cli_env: Path) -> None:
    from sagent.providers.base import AuthenticationError

    with FakeAnthropic([text_response("unreachable")]) as fake:
        # No key given: the CLI's own login would pay, and in this private HOME there is none.
        m = ClaudeCLIModel("sonnet", base_url=fake.url, binary=CLAUDE, cwd=cli_env)

        async def go() -> None:
            try:
                async for _ in m.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
                    pass
            finally:
                await m.aclose()

        with pytest.raises(AuthenticationError, match="claude auth login"):
            asyncio.run(go())
        assert fake.requests == []


def test_subscription_use_is_marked_and_never_priced_per_token() -> None:
    from sagent.agent.cost import CostTracker
    from sagent.types import Usage

    on_login = ClaudeCLIModel("claude-sonnet-4-6")._message([], ["hi"], (), Usage(1000, 100), "end_turn")
    assert on_login.model == "claude-sonnet-4-6 (subscription)" and on_login.provider == "anthropic-cli"
    tracker = CostTracker()
    cost = tracker.add(on_login.model, on_login.usage)
    assert not cost.priced and tracker.unpriced_models == ["claude-sonnet-4-6 (subscription)"]
    on_key = ClaudeCLIModel("claude-sonnet-4-6", api_key="k")._message([], ["hi"], (), Usage(1000, 100), "end_turn")
    assert CostTracker().add(on_key.model, on_key.usage).priced  # an API key given on purpose is billed


@needs_cli
def test_parallel_tool_calls_in_one_response_each_get_their_own_result(cli_env: Path) -> None:
    (cli_env / "a.txt").write_text("alpha\n")
    (cli_env / "b.txt").write_text("beta\n")
    steps = [
        tool_use_response([("mcp__sagent__Read", {"path": "a.txt"}), ("mcp__sagent__Read", {"path": "b.txt"})]),
        text_response("both read"),
    ]
    with FakeAnthropic(steps) as fake:

        async def go() -> list[Event]:
            agent = Agent(model(fake, cli_env), tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                return await run(agent, "read both")
            finally:
                await agent.aclose()

        events = asyncio.run(go())
        assert len([e for e in events if isinstance(e, ToolFinished)]) == 2
        sent = sorted(result_text(b) for b in tool_results(fake, 1))
        assert "alpha" in sent[0] and "beta" in sent[1]
        assert next(e for e in events if isinstance(e, Result)).text == "both read"


@needs_cli
def test_a_system_prompt_too_long_for_one_argument_reaches_the_model_whole(cli_env: Path) -> None:
    system = "Follow the house rules. " + "rule " * 40_000 + "THE-LAST-RULE"
    with FakeAnthropic([text_response("ok")]) as fake:

        async def go() -> None:
            agent = Agent(model(fake, cli_env), system=system, tools=builtin_tools(fleet=False), cwd=cli_env)
            try:
                await run(agent, "hello")
            finally:
                await agent.aclose()

        asyncio.run(go())
        assert "THE-LAST-RULE" in json.dumps(fake.requests[0]["body"]["system"])
