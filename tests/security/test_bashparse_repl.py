"""The REPL's "don't ask again" never answers for a line a deny rule could not check: such a line is put
to the user each time, whatever rules the session remembers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import Allow
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.permissions.rules import parse_rule
from sagent.providers.scripted import ScriptedModel
from sagent.repl.approval import Approvals
from sagent.repl.host import ReplState
from sagent.repl.render import Renderer, Settings
from sagent.types import ToolCall


class Host:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.renderer = Renderer(Settings(color=False))
        self.state = ReplState()
        self.lines: list[str] = []

    def commit(self, blocks: list[str]) -> None:
        self.lines += blocks

    def refresh(self) -> None:
        pass


def bash(command: str) -> ToolCall:
    return ToolCall(id="c", name="Bash", arguments={"command": command})


async def test_a_remembered_rule_does_not_answer_for_a_line_a_deny_rule_cannot_check(tmp_path: Path) -> None:
    policy = Permissions.build(deny=["Bash(git push:*)"], cwd=tmp_path)
    main = Agent(ScriptedModel([]), cwd=tmp_path, permissions=policy, hooks=[PermissionHook()])
    approvals = Approvals(Host(main))  # type: ignore[arg-type]
    approvals.session.append(parse_rule("Bash(git:*)", "session", str(tmp_path)))
    # An ordinary git line is answered from the session's memory, with no question ...
    assert isinstance(await approvals(main, bash("git status"), ""), Allow)
    assert approvals.current is None
    # ... but `git $SUBCOMMAND` could be the denied push: it is asked, every time.
    asked = asyncio.ensure_future(approvals(main, bash("git $SUBCOMMAND origin"), "unseen"))
    for _ in range(100):
        if approvals.current is not None:
            break
        await asyncio.sleep(0)
    assert approvals.current is not None and not asked.done()
    approvals.press("1")
    assert isinstance(await asked, Allow)
    await main.aclose()
