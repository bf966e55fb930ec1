"""A call the approver allows with changed arguments (a Claude Agent SDK program's `updatedInput`, an ACP
editor, a `PermissionRequest` hook's rewrite) is still the policy's to refuse: its deny rules and protected
paths hold for the call as it will run, not only for the call the model wrote. Walking around `deny` by
answering a question about something harmless with something else must not work."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import Approver, Rewrite
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.sandbox import OFF
from sagent.tools import builtin_tools
from sagent.types import ToolCall, ToolResult


def rewriting_to(arguments: dict[str, object]) -> Approver:
    async def approve(agent: Agent, call: ToolCall, reason: str) -> Rewrite:
        return Rewrite(arguments)

    return approve


async def run(tmp_path: Path, call: tuple[str, dict[str, object]], answer: dict[str, object], **policy: object) -> str:
    model = ScriptedModel([tool_turn(call), text_turn("done")])
    agent = Agent(
        model,
        cwd=tmp_path,
        tools=builtin_tools(),
        permissions=Permissions.build(cwd=tmp_path, **policy),  # type: ignore[arg-type]
        hooks=[PermissionHook()],
        approver=rewriting_to(answer),
        sandbox=OFF,
    )
    try:
        await agent.run("go")
    finally:
        await agent.aclose()
    return next(m.text for m in agent.history if isinstance(m, ToolResult))


async def test_a_command_rewritten_into_a_denied_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    text = await run(tmp_path, ("Bash", {"command": "ls"}), {"command": "rm keep.txt"}, deny=["Bash(rm:*)"])
    assert text.startswith("denied:") and (tmp_path / "keep.txt").exists()


async def test_a_write_rewritten_to_a_denied_path_is_refused(tmp_path: Path) -> None:
    text = await run(
        tmp_path,
        ("Write", {"path": "notes.txt", "content": "x"}),
        {"path": "secret/key.txt", "content": "x"},
        deny=["Write(secret/**)"],
    )
    assert text.startswith("denied:") and not (tmp_path / "secret" / "key.txt").exists()


async def test_a_rewrite_the_rules_allow_runs_as_rewritten(tmp_path: Path) -> None:
    """The approver answered the question: a changed call that the rules would only ask about again runs,
    on the path it names (not refused as another file than the one checked)."""
    text = await run(tmp_path, ("Write", {"path": "a.txt", "content": "x"}), {"path": "b.txt", "content": "rewritten"})
    assert not text.startswith("denied:"), text
    assert (tmp_path / "b.txt").read_text() == "rewritten" and not (tmp_path / "a.txt").exists()
