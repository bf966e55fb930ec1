"""A small world for the path-rule attacks: a fake home with a key and a shell profile, a project beside it,
and a helper that runs one tool call through a real Agent with the PermissionHook, as a model would."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sagent.agent.agent import Agent
from sagent.agent.hooks import Hook
from sagent.agent.session import SessionLog
from sagent.permissions.policy import PermissionHook, Permissions
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import builtin_tools
from sagent.tools.base import Tool
from sagent.types import ToolResult

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- sekrit-key-material"
PROFILE = "# the user's own profile\nexport PATH=$HOME/bin:$PATH\n"
DENY = ("Read(~/.ssh/**)", "Edit(~/.bashrc)")


@dataclass
class World:
    root: Path  # the temporary folder holding everything
    home: Path
    project: Path
    outside: Path  # a folder outside the project and the home, no rule about it

    @property
    def key(self) -> Path:
        return self.home / ".ssh" / "id_rsa"

    @property
    def profile(self) -> Path:
        return self.home / ".bashrc"


def build_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world in `tmp_path`, with HOME pointing at its home (each test file's `world` fixture)."""
    root = Path(os.path.realpath(tmp_path))
    home, project, outside = root / "home", root / "project", root / "outside"
    for folder in (home / ".ssh" / "deeper", home / "sub", project / "src", outside / "dir"):
        folder.mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (home / ".ssh" / "deeper" / "notes").write_text(KEY + " (a copy)\n")
    (home / ".bashrc").write_text(PROFILE)
    (project / "src" / "app.py").write_text("print('hello')\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return World(root, home, project, outside)


async def run_call(
    world: World,
    tool: str,
    arguments: dict[str, Any],
    *,
    deny: tuple[str, ...] = DENY,
    allow: tuple[str, ...] = (),
    mode: str = "bypassPermissions",
    headless: str = "deny",
    cwd: Path | None = None,
    tools: list[Tool] | None = None,
    hooks: tuple[Hook, ...] = (),
    read_first: str | None = None,
) -> str:
    """The result text of one call of `tool`, made by a scripted model through an Agent whose policy has
    `deny` (and `allow`) rules in `mode`, with no approver (a headless run: `headless` decides a question).
    `read_first`: a path Read before the call (Write and Edit want a file read first)."""
    where = cwd or world.project
    policy = Permissions.build(mode=mode, deny=deny, allow=allow, cwd=where, headless=headless)  # type: ignore[arg-type]
    calls = [("Read", {"path": read_first})] if read_first else []
    turns = [tool_turn(c) for c in calls] + [tool_turn((tool, arguments)), text_turn("done")]
    # A session with a log (Memory saves nothing in an ephemeral one), kept beside the world, not in it: a
    # search of the whole world must not find the calls' own arguments.
    sessions = world.root.parent / f"{world.root.name}-sessions"
    agent = Agent(
        ScriptedModel(turns),
        session=SessionLog.create(where, {"model": "scripted"}, directory=sessions),
        cwd=where,
        tools=tools if tools is not None else builtin_tools(),
        permissions=policy,
        hooks=[PermissionHook(), *hooks],
    )
    try:
        await agent.run("go")
    finally:
        await agent.aclose()
    results = [m for m in agent.history if isinstance(m, ToolResult)]
    return results[-1].text
