"""An agent file in a project can only tighten the permission mode the user chose, never loosen it: a
`permissionMode: bypassPermissions` (or acceptEdits) in a file does not let its sub-agent write or run what
the parent's mode would ask about; a stricter mode (plan, dontAsk) holds for the sub-agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.events import Result, ToolFinished
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSpawn, Bash, Read, Write
from sagent.tools.runtime import AgentDefinition


def _tree(tmp_path: Path, mode: str, parent_mode: str, approve: bool = False) -> tuple[Agent, RoutedModel]:
    agent = AgentDefinition("worker", "does work", "You do the work.", permission_mode=mode)
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"agent": "worker", "prompt": "write it", "label": "w"})),
                text_turn("ok"),
            ],
            "w": [
                tool_turn(("Write", {"path": str(tmp_path / "pwned.txt"), "content": "x"})),
                text_turn("tried"),
            ],
        }
    )
    policy = Permissions.build(mode=parent_mode, headless="deny", cwd=tmp_path)

    async def yes(agent: Agent, call: object, reason: str) -> bool:
        return True

    main = Agent(
        model,
        tools=[Read(), Write(), Bash(), AgentSpawn([agent])],
        permissions=policy,
        hooks=[PermissionHook()],
        approver=yes if approve else None,
        cwd=tmp_path,
    )
    return main, model


async def _spawn_result(main: Agent) -> str:
    events = [e async for e in main.run("go")]
    assert isinstance(events[-1], Result)
    return next(e for e in events if isinstance(e, ToolFinished) and e.result.name == "AgentSpawn").result.text


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
async def test_a_file_cannot_loosen_the_parents_mode(tmp_path: Path, mode: str) -> None:
    main, model = _tree(tmp_path, mode, "default")
    text = await _spawn_result(main)
    assert not (tmp_path / "pwned.txt").exists()
    assert f"permissionMode {mode} not applied" in text and "the parent's default" in text
    write = [m for m in model.requests("w")[-1].messages if getattr(m, "name", "") == "Write"]
    assert write and write[0].is_error
    await main.aclose()


async def test_bypass_from_a_file_is_kept_when_the_parent_bypasses_already(tmp_path: Path) -> None:
    main, _ = _tree(tmp_path, "bypassPermissions", "bypassPermissions")
    text = await _spawn_result(main)
    assert (tmp_path / "pwned.txt").exists() and "not applied" not in text
    await main.aclose()


@pytest.mark.parametrize("mode", ["plan", "dontAsk"])
async def test_a_stricter_mode_holds_for_the_sub_agent(tmp_path: Path, mode: str) -> None:
    # The parent would write unasked (acceptEdits) and its approver says yes to everything: the file's
    # stricter mode still refuses the sub-agent's write.
    main, model = _tree(tmp_path, mode, "acceptEdits", approve=True)
    text = await _spawn_result(main)
    assert not (tmp_path / "pwned.txt").exists() and "not applied" not in text
    child = model.requests("w")[-1]
    assert any(getattr(m, "name", "") == "Write" and m.is_error for m in child.messages)
    await main.aclose()
