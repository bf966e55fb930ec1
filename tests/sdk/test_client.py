"""`ClaudeSDKClient` of the official Claude Agent SDK for Python with sagent as its CLI: a conversation of
several queries, an interrupt, the program's `can_use_tool` answering sagent's permission questions, and
the permission mode and model changed from the program, written as the SDK's documentation shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    ToolPermissionContext,
)

from tests.fakes import anthropic_server as anth
from tests.sdk.harness import ANTHROPIC, PROVIDERS, Provider, cli, sent_text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def _turn(client: ClaudeSDKClient, prompt: str) -> list[Any]:
    await client.query(prompt)
    return [m async for m in client.receive_response()]


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_a_conversation_of_two_queries_keeps_its_history(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    with provider.fake([provider.text("Hello, Ada."), provider.text("Your name is Ada.")]) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, provider, tmp_path), cwd=str(project))
        async with ClaudeSDKClient(options=options) as client:
            first = await _turn(client, "My name is Ada.")
            second = await _turn(client, "What is my name?")
        bodies = fake.bodies()
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "Hello, Ada."
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "Your name is Ada."
    assert first[-1].session_id == second[-1].session_id
    assert len(bodies) == 2
    later = sent_text(bodies[1:])
    assert "My name is Ada." in later and "Hello, Ada." in later and "What is my name?" in later


async def test_an_interrupt_stops_the_turn_and_the_next_query_is_answered(project: Path, tmp_path: Path) -> None:
    slow = anth.Reply([{"type": "text", "text": "one two three four five six seven eight nine ten " * 8}], delay=0.25)
    with ANTHROPIC.fake([slow, anth.text_response("Stopped counting.")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project), include_partial_messages=True
        )
        async with ClaudeSDKClient(options=options) as client:
            await client.query("Count slowly.")
            seen: list[Any] = []
            async for message in client.receive_response():
                seen.append(message)
                if isinstance(message, StreamEvent) and sum(isinstance(m, StreamEvent) for m in seen) == 1:
                    await client.interrupt()
            second = await _turn(client, "Why did you stop?")
        bodies = fake.bodies()
    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.is_error  # as Claude Code's: an error that says why
    assert result.subtype == "error_during_execution" and result.terminal_reason == "aborted_streaming"
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "Stopped counting."
    assert not second[-1].is_error and len(bodies) == 2 and "Why did you stop?" in sent_text(bodies[1:])


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_can_use_tool_allows_one_call_and_denies_another(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    asked: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((name, tool_input, context))
        if tool_input.get("path") == "b.txt":
            return PermissionResultDeny(message="b.txt is not yours to write")
        return PermissionResultAllow()

    calls = [("Write", {"path": "a.txt", "content": "A\n"}), ("Write", {"path": "b.txt", "content": "B\n"})]
    with provider.fake([provider.tools(calls), provider.text("Wrote a.txt only.")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), can_use_tool=can_use_tool
        )
        async with ClaudeSDKClient(options=options) as client:
            messages = await _turn(client, "Write a.txt and b.txt.")
        bodies = fake.bodies()
    assert sorted(i["path"] for _, i, _ in asked) == ["a.txt", "b.txt"] and {n for n, _, _ in asked} == {"Write"}
    context = asked[0][2]
    assert context.tool_use_id and context.blocked_path and context.blocked_path.endswith(".txt")
    assert context.suggestions and context.suggestions[0].type == "addRules"
    assert (project / "a.txt").read_text() == "A\n" and not (project / "b.txt").exists()
    assert "b.txt is not yours to write" in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Wrote a.txt only."
    denials = messages[-1].permission_denials or []
    assert [(d["tool_name"], d["tool_input"]["path"]) for d in denials] == [("Write", "b.txt")]
    assert denials[0]["tool_use_id"]


async def test_an_allow_with_changed_input_runs_the_changed_call(project: Path, tmp_path: Path) -> None:
    async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        return PermissionResultAllow(updated_input={**tool_input, "content": "reviewed\n"})

    steps = [anth.tool_use_response([("Write", {"path": "a.txt", "content": "draft\n"})]), anth.text_response("ok")]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project), can_use_tool=can_use_tool
        )
        async with ClaudeSDKClient(options=options) as client:
            await _turn(client, "Write a.txt.")
    assert (project / "a.txt").read_text() == "reviewed\n"


async def test_dont_ask_refuses_what_would_ask_without_asking(project: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    steps = [anth.tool_use_response([("Write", {"path": "a.txt", "content": "x"})]), anth.text_response("refused")]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path),
            cwd=str(project),
            can_use_tool=can_use_tool,
            permission_mode="dontAsk",
        )
        async with ClaudeSDKClient(options=options) as client:
            messages = await _turn(client, "Write a.txt.")
        bodies = fake.bodies()
    assert asked == [] and not (project / "a.txt").exists() and "denied" in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].permission_denials


async def test_a_deny_that_interrupts_ends_the_turn(project: Path, tmp_path: Path) -> None:
    async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        return PermissionResultDeny(message="stop everything", interrupt=True)

    steps = [anth.tool_use_response([("Write", {"path": "a.txt", "content": "x"})]), anth.text_response("after")]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project), can_use_tool=can_use_tool
        )
        async with ClaudeSDKClient(options=options) as client:
            messages = await _turn(client, "Write a.txt.")
        bodies = fake.bodies()
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "error_during_execution"
    assert messages[-1].terminal_reason == "aborted_streaming"
    assert len(bodies) == 1 and not (project / "a.txt").exists()


async def test_the_program_changes_the_permission_mode_and_the_model(project: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append(tool_input["path"])
        return PermissionResultDeny(message="no")

    steps = [
        anth.tool_use_response([("Write", {"path": "a.txt", "content": "A"})]),
        anth.text_response("first"),
        anth.tool_use_response([("Write", {"path": "b.txt", "content": "B"})]),
        anth.text_response("second"),
    ]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project), can_use_tool=can_use_tool
        )
        async with ClaudeSDKClient(options=options) as client:
            await _turn(client, "Write a.txt.")
            await client.set_permission_mode("acceptEdits")
            await client.set_model("claude-haiku-4-5")
            messages = await _turn(client, "Write b.txt.")
        bodies = fake.bodies()
    assert asked == ["a.txt"]  # in acceptEdits the edit inside the project runs unasked
    assert not (project / "a.txt").exists() and (project / "b.txt").read_text() == "B"
    assert [b["model"] for b in bodies] == [ANTHROPIC.model] * 2 + ["claude-haiku-4-5"] * 2
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "second" and result.terminal_reason == "completed"
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert assistants and all(m.model == "claude-haiku-4-5" for m in assistants)


async def test_bypass_permissions_is_refused_unless_the_program_allowed_it(project: Path, tmp_path: Path) -> None:
    with ANTHROPIC.fake([]) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project))
        async with ClaudeSDKClient(options=options) as client:
            with pytest.raises(Exception, match="allow-dangerously-skip-permissions"):
                await client.set_permission_mode("bypassPermissions")
            usage = await client.get_context_usage()
            status = await client.get_mcp_status()
            info = await client.get_server_info()
            with pytest.raises(Exception, match="rewind_files is not supported"):
                await client.rewind_files("some-message-id")
    assert usage["model"] == ANTHROPIC.model and usage["totalTokens"] > 0 and status == {"mcpServers": []}
    assert info is not None and info["models"][0]["value"] == ANTHROPIC.model
    assert "init" in [c["name"] for c in info["commands"]] and info["output_style"] == "default"


async def test_set_model_moves_the_conversation_to_another_provider(project: Path, tmp_path: Path) -> None:
    from tests.sdk.harness import OPENAI

    with ANTHROPIC.fake([ANTHROPIC.text("From Claude.")]) as fa, OPENAI.fake([OPENAI.text("From GPT.")]) as fo:
        options = ClaudeAgentOptions(
            cli_path=cli(fa, ANTHROPIC, tmp_path),
            cwd=str(project),
            env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fo.url},
        )
        async with ClaudeSDKClient(options=options) as client:
            await _turn(client, "Who are you?")
            await client.set_model("openai:gpt-5.4")
            messages = await _turn(client, "And now?")
        openai_bodies = fo.bodies()
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [m.model for m in assistants] == ["gpt-5.4"]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "From GPT."
    assert set(result.model_usage or {}) == {ANTHROPIC.model, "gpt-5.4"}
    assert "From Claude." in sent_text(openai_bodies)  # the conversation went with it


async def test_dont_ask_set_by_a_program_without_a_callback_refuses_what_would_ask(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        anth.tool_use_response([("Write", {"path": "a.txt", "content": "A"})]),
        anth.text_response("one"),
        anth.tool_use_response([("Write", {"path": "b.txt", "content": "B"})]),
        anth.text_response("two"),
    ]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(project))
        async with ClaudeSDKClient(options=options) as client:
            await client.set_permission_mode("dontAsk")
            first = await _turn(client, "Write a.txt.")
            await client.set_permission_mode("default")
            await _turn(client, "Write b.txt.")
    assert not (project / "a.txt").exists() and (project / "b.txt").read_text() == "B"  # headless: what asks runs
    assert isinstance(first[-1], ResultMessage) and first[-1].permission_denials
