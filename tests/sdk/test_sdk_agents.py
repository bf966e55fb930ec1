"""A Claude Agent SDK program's `agents` (ClaudeAgentOptions.agents), with sagent as its CLI: the main request
offers them by name, and the sub-agent the model starts gets the program's prompt, tools and model."""

from __future__ import annotations

from pathlib import Path

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, ResultMessage, query

from tests.sdk.harness import ANTHROPIC, cli


async def test_the_programs_agents_are_started_by_name(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    provider = ANTHROPIC
    steps = [
        provider.tools([("AgentSpawn", {"agent": "reviewer", "prompt": "review app.py", "label": "rev"})]),
        provider.text("no bugs"),
        provider.text("The reviewer found no bugs."),
    ]
    reviewer = AgentDefinition(
        description="Reviews code for bugs.", prompt="You review code. One line.", tools=["Read", "LS"], model="haiku"
    )
    with provider.fake(steps) as fake:
        options = ClaudeAgentOptions(
            cli_path=cli(fake, provider, tmp_path), cwd=str(project), agents={"reviewer": reviewer}
        )
        messages = [m async for m in query(prompt="review my change", options=options)]
        bodies = fake.bodies()
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "The reviewer found no bugs."
    spawn = next(t for t in bodies[0]["tools"] if t["name"] == "AgentSpawn")
    assert "- reviewer: Reviews code for bugs." in spawn["description"]
    child = bodies[1]
    system = child["system"] if isinstance(child["system"], str) else "".join(b["text"] for b in child["system"])
    assert system.startswith("You review code. One line.")
    assert [t["name"] for t in child["tools"]] == ["Read", "List"]
    assert child["model"] == "claude-haiku-4-5"
