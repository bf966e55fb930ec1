"""The records sagent writes, as the Claude Agent SDK for Python reads them: the shapes of Claude Code's
(`system`/`init` with its fields, thinking blocks, `stream_event`s), with the provider and model sagent used."""

from __future__ import annotations

from pathlib import Path

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    ThinkingBlock,
    query,
)

from tests.fakes import anthropic_server as anth
from tests.sdk.harness import ANTHROPIC, cli


async def test_partial_messages_and_thinking_reach_the_program(tmp_path: Path) -> None:
    steps = [anth.thinking_response("Let me think.", "sig-1", "Forty-two.")]
    with ANTHROPIC.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, ANTHROPIC, tmp_path),
            cwd=str(tmp_path),
            include_partial_messages=True,
            permission_mode="acceptEdits",
        )
        messages = [m async for m in query(prompt="What is the answer?", options=options)]
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    data = init.data
    assert data["permissionMode"] == "acceptEdits" and data["provider"] == "anthropic"
    assert "init" in data["slash_commands"] and data["output_style"] == "default"
    assert data["mcp_servers"] == [] and data["apiKeySource"] and data["sagent_version"]
    assert data["claude_code_version"] == data["sagent_version"] and data["uuid"]
    events = [m for m in messages if isinstance(m, StreamEvent)]
    assert events and all(e.session_id == data["session_id"] and e.uuid for e in events)
    deltas = "".join(e.event.get("delta", {}).get("text", "") for e in events)
    assert deltas == "Forty-two."
    assistant = next(m for m in messages if isinstance(m, AssistantMessage))
    thinking = [b for b in assistant.content if isinstance(b, ThinkingBlock)]
    assert thinking and thinking[0].thinking == "Let me think." and assistant.model == ANTHROPIC.model
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Forty-two." and result.uuid


async def test_an_error_result_says_what_went_wrong(tmp_path: Path) -> None:
    with ANTHROPIC.fake([anth.Fault(404, "not_found_error", "model: no-such-model")]) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(tmp_path))
        messages = []
        try:
            async for message in query(prompt="hello", options=options):
                messages.append(message)
        except Exception:  # the SDK raises once the CLI exits non-zero after an error result
            pass
    result = next(m for m in messages if isinstance(m, ResultMessage))
    assert result.is_error and result.subtype == "error_during_execution"
    assert result.errors and "no-such-model" in result.errors[0]


async def test_the_sdk_does_not_take_sagent_for_an_old_claude_code(tmp_path: Path, caplog) -> None:
    import logging

    with ANTHROPIC.fake([ANTHROPIC.text("hi")]) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, ANTHROPIC, tmp_path), cwd=str(tmp_path))
        with caplog.at_level(logging.WARNING, logger="claude_agent_sdk"):
            messages = [m async for m in query(prompt="hello", options=options)]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "hi"
    assert "too old" not in caplog.text
