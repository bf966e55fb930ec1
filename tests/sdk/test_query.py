"""`query()` of the official Claude Agent SDK for Python, with sagent as its CLI, on three providers: the
program is written as the SDK's documentation shows, only `cli_path` points at sagent."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, SystemMessage, TextBlock, query

from sagent.tools import ON_DEMAND
from tests.sdk.harness import PROVIDERS, Provider, cli, sent_text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "VERSION").write_text("4.2.0\n")
    return root


@pytest.mark.parametrize("provider", PROVIDERS, ids=str)
async def test_a_one_shot_query_runs_a_tool_and_answers(provider: Provider, project: Path, tmp_path: Path) -> None:
    steps = [provider.tools([("Read", {"path": "VERSION"})]), provider.text("Version 4.2.0.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(cli_path=cli(fake, provider, tmp_path), cwd=str(project))
        messages = [m async for m in query(prompt="Which version is this?", options=options)]
        bodies = fake.bodies()
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["model"] == provider.model and init.data["cwd"] == str(project)
    assert "Read" in init.data["tools"]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert assistants and all(m.model == provider.model for m in assistants)
    texts = [b.text for m in assistants for b in m.content if isinstance(b, TextBlock)]
    assert texts[-1] == "Version 4.2.0."
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error and result.subtype == "success"
    assert result.result == "Version 4.2.0." and result.num_turns == 2
    assert result.session_id == init.data["session_id"]
    assert list(result.model_usage or {}) == [provider.model]
    assert "Which version is this?" in sent_text(bodies) and "4.2.0" in sent_text(bodies[1:])


async def test_the_system_prompt_the_sdk_gives_replaces_sagents(project: Path, tmp_path: Path) -> None:
    from tests.sdk.harness import ANTHROPIC as provider

    with provider.fake([provider.text("Ahoy.")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), system_prompt="You are a pirate."
        )
        messages = [m async for m in query(prompt="hello", options=options)]
        body = fake.bodies()[0]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Ahoy."
    system = body["system"] if isinstance(body["system"], str) else "".join(b["text"] for b in body["system"])
    assert system.startswith("You are a pirate.")


async def test_a_query_that_answers_permission_questions_ends_when_sagent_is_idle(
    project: Path, tmp_path: Path
) -> None:
    """With a `can_use_tool` callback the SDK keeps stdin open until sagent says it is idle: the states
    come in order (running, requires_action while the program is asked, idle after the result)."""
    from claude_agent_sdk import PermissionResultAllow

    from tests.sdk.harness import ANTHROPIC as provider

    async def prompts():  # can_use_tool needs the streaming form of the prompt
        yield {"type": "user", "message": {"role": "user", "content": "Write a.txt."}}

    async def allow(name, tool_input, context):
        return PermissionResultAllow()

    steps = [provider.tools([("Write", {"path": "a.txt", "content": "A"})]), provider.text("Done.")]
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path),
            cwd=str(project),
            can_use_tool=allow,
            env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"},  # shown to the program, not only to the SDK
        )
        messages = [m async for m in query(prompt=prompts(), options=options)]
    states = [
        m.data["state"] for m in messages if isinstance(m, SystemMessage) and m.subtype == "session_state_changed"
    ]
    assert states == ["running", "requires_action", "running", "idle"]
    kinds = [type(m).__name__ for m in messages]
    assert kinds.index("ResultMessage") < len(kinds) - 1  # idle comes after the result
    assert (project / "a.txt").read_text() == "A"


async def test_a_tool_the_program_disallows_is_not_offered(project: Path, tmp_path: Path) -> None:
    from tests.sdk.harness import ANTHROPIC as provider

    with provider.fake([provider.text("ok")]) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), disallowed_tools=["Grep", "Bash(rm:*)"]
        )
        messages = [m async for m in query(prompt="hi", options=options)]
        body = fake.bodies()[0]
    offered = [t["name"] for t in body["tools"] if "name" in t]
    assert "Grep" not in offered and "Bash" in offered and "Read" in offered  # a rule for some calls keeps Bash
    init = messages[0]
    assert isinstance(init, SystemMessage) and "Grep" not in init.data["tools"] and "Bash" in init.data["tools"]
    # What the init lists is what the model is offered, and the tools it loads on demand (sagent.tools.ON_DEMAND)
    assert sorted(init.data["tools"]) == sorted([*offered, *(cls.name for cls in ON_DEMAND)])
