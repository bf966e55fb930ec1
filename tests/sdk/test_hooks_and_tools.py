"""Hook functions and in-process MCP tools of a program on the official Claude Agent SDK for Python, with
sagent as its CLI, on three providers. The programs are written as the SDK's documentation shows (`@tool`
and `create_sdk_mcp_server` in `mcp_servers`, `HookMatcher`s in `hooks`); only `cli_path` points at sagent.
What the model was sent is read from the fake provider's requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    ResultMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tests.sdk.harness import PROVIDERS, Provider, cli, sent_text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "VERSION").write_text("4.2.0\n")
    return root


async def run_query(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_a_tool_of_an_sdk_mcp_server_runs_in_the_programs_process(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    added: list[tuple[float, float]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        added.append((args["a"], args["b"]))
        return {"content": [{"type": "text", "text": f"The sum is {args['a'] + args['b']:g}"}]}

    calculator = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    steps = [provider.tools([("mcp__calc__add", {"a": 2, "b": 40})]), provider.text("It is 42.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            mcp_servers={"calc": calculator},
            allowed_tools=["mcp__calc__add"],
        )
        messages = await run_query("What is 2 + 40?", options)
        bodies = fake.bodies()
    assert added == [(2, 40)]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "It is 42."
    assert "mcp__calc__add" in sent_text(bodies[:1])  # offered from the first request
    assert "The sum is 42" in sent_text(bodies[1:])  # the tool's result reached the model


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_a_pre_tool_use_hook_denies_a_command_and_the_model_hears_why(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    heard: list[dict[str, Any]] = []

    async def no_deletes(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        heard.append({**hook_input, "tool_use_id_argument": tool_use_id})
        if "rm " in hook_input["tool_input"].get("command", ""):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Deleting files is not allowed in this project",
                }
            }
        return {}

    steps = [provider.tools([("Bash", {"command": "rm VERSION"})]), provider.text("I may not delete it.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            allowed_tools=["Bash"],
            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_deletes])]},
        )
        messages = await run_query("Delete VERSION", options)
        bodies = fake.bodies()
    assert (project / "VERSION").exists()
    [seen] = heard
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "rm VERSION"} and seen["cwd"] == str(project)
    assert seen["tool_use_id_argument"] == seen["tool_use_id"] and seen["session_id"]
    assert "Deleting files is not allowed in this project" in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "I may not delete it."


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_a_post_tool_use_hook_sees_the_result_and_adds_context(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    async def after_read(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(hook_input)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "VERSION is generated"}}

    steps = [provider.tools([("Read", {"path": "VERSION"})]), provider.text("Version 4.2.0.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            hooks={"PostToolUse": [HookMatcher(matcher="Read", hooks=[after_read])]},
        )
        await run_query("Which version is this?", options)
        bodies = fake.bodies()
    [hook_input] = seen
    assert hook_input["hook_event_name"] == "PostToolUse" and hook_input["tool_name"] == "Read"
    assert "4.2.0" in str(hook_input["tool_response"])
    assert "VERSION is generated" in sent_text(bodies[1:])


@pytest.mark.parametrize("provider", PROVIDERS[:2], ids=str)
async def test_a_client_session_with_a_user_prompt_hook_and_a_failing_guard(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    async def tag_prompt(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-7"}}

    async def broken_guard(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raise RuntimeError("the policy service is down")

    steps = [
        provider.text("Hello."),
        provider.tools([("Bash", {"command": "touch made-by-bash"})]),
        provider.text("It was refused."),
    ]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            allowed_tools=["Bash"],
            hooks={
                "UserPromptSubmit": [HookMatcher(hooks=[tag_prompt])],
                "PreToolUse": [HookMatcher(matcher="Bash", hooks=[broken_guard], on_failure="block")],
            },
        )
        async with ClaudeSDKClient(options=options) as client:
            await client.query("Hi")
            first = [m async for m in client.receive_response()]
            await client.query("Make a file")
            second = [m async for m in client.receive_response()]
        bodies = fake.bodies()
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)
    assert "ticket ABC-7" in sent_text(bodies[:1])
    assert not (project / "made-by-bash").exists()
    assert "the policy service is down" in sent_text(bodies[2:])


@pytest.mark.parametrize("provider", PROVIDERS[1:], ids=str)
async def test_a_hook_that_asks_puts_the_question_to_the_programs_can_use_tool(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

    asked: list[tuple[str, dict[str, Any]]] = []

    async def ask_for_writes(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        decision = {"permissionDecision": "ask", "permissionDecisionReason": "writes need a human"}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        if name == "Write":
            return PermissionResultDeny(message="The reviewer said no to NOTES.md")
        return PermissionResultAllow()

    notified: list[dict[str, Any]] = []

    async def note(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        notified.append(hook_input)
        return {}

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "Write some notes"}}

    steps = [provider.tools([("Write", {"path": "NOTES.md", "content": "hi"})]), provider.text("Not written.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            permission_mode="acceptEdits",
            can_use_tool=can_use_tool,
            hooks={
                "PreToolUse": [HookMatcher(matcher="Write|Edit", hooks=[ask_for_writes])],
                "Notification": [HookMatcher(matcher="permission_prompt", hooks=[note])],
            },
        )
        messages = [m async for m in query(prompt=prompt(), options=options)]
        bodies = fake.bodies()
    assert [name for name, _ in asked] == ["Write"]
    assert [(n["hook_event_name"], n["notification_type"]) for n in notified] == [("Notification", "permission_prompt")]
    assert notified[0]["message"] == "sagent needs your permission to use Write"
    assert not (project / "NOTES.md").exists()
    assert "The reviewer said no to NOTES.md" in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Not written."


@pytest.mark.parametrize("provider", PROVIDERS[:2], ids=str)
async def test_the_init_record_lists_the_in_process_tools_and_their_server_connected(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    with provider.fake([provider.text("Ready.")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            mcp_servers={"calc": create_sdk_mcp_server(name="calc", tools=[add])},
        )
        messages = await run_query("Are you ready?", options)
    init = messages[0]
    assert init.subtype == "init"
    assert "mcp__calc__add" in init.data["tools"]
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]


@pytest.mark.parametrize("provider", [PROVIDERS[0], PROVIDERS[2]], ids=str)
async def test_a_stop_hook_keeps_the_agent_going_until_it_is_satisfied(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    stops: list[dict[str, Any]] = []

    async def check(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        stops.append(hook_input)
        if hook_input["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "Say which version it is first."}

    steps = [provider.text("Done."), provider.text("Version 4.2.0.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), hooks={"Stop": [HookMatcher(hooks=[check])]}
        )
        messages = await run_query("Check the version", options)
        bodies = fake.bodies()
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert stops[0]["hook_event_name"] == "Stop" and stops[0]["last_assistant_message"] == "Done."
    assert "Say which version it is first." in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Version 4.2.0."


@pytest.mark.parametrize("provider", [PROVIDERS[1], PROVIDERS[2]], ids=str)
async def test_a_user_prompt_hook_blocks_a_prompt_before_the_model_sees_it(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    async def no_secrets(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if "password" in hook_input["prompt"]:
            return {"decision": "block", "reason": "Prompts may not carry passwords"}
        return {}

    with provider.fake([provider.text("Hello.")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            hooks={"UserPromptSubmit": [HookMatcher(hooks=[no_secrets])]},
        )
        async with ClaudeSDKClient(options=options) as client:
            await client.query("my password is hunter2")
            first = [m async for m in client.receive_response()]
            await client.query("Hi")
            second = [m async for m in client.receive_response()]
        bodies = fake.bodies()
    assert "hunter2" not in sent_text(bodies)
    assert len(bodies) == 1 and "Hi" in sent_text(bodies)
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)
    assert second[-1].result == "Hello."


@pytest.mark.parametrize("provider", [PROVIDERS[0], PROVIDERS[2]], ids=str)
async def test_a_permission_request_hook_answers_before_can_use_tool_is_asked(
    provider: Provider, project: Path, tmp_path: Path
) -> None:
    from claude_agent_sdk import PermissionResultAllow

    asked: list[str] = []
    requests: list[dict[str, Any]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    async def no_notes(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        requests.append(hook_input)
        decision = {"behavior": "deny", "message": "Notes are written by hand here"}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    notified: list[dict[str, Any]] = []

    async def note(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        notified.append(hook_input)
        return {}

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "Write some notes"}}

    steps = [provider.tools([("Write", {"path": "NOTES.md", "content": "hi"})]), provider.text("Not written.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            can_use_tool=can_use_tool,
            hooks={"PermissionRequest": [HookMatcher(matcher="Write", hooks=[no_notes])]},
        )
        messages = [m async for m in query(prompt=prompt(), options=options)]
        bodies = fake.bodies()
    assert asked == [] and not (project / "NOTES.md").exists()
    assert [r["hook_event_name"] for r in requests] == ["PermissionRequest"]
    assert requests[0]["tool_name"] == "Write" and requests[0]["tool_input"]["path"] == "NOTES.md"
    assert "Notes are written by hand here" in sent_text(bodies[1:])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Not written."
