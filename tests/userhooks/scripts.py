"""Helpers for user-hook tests: real shell scripts written into a temporary folder, and an agent to run them."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from sagent.agent.agent import Agent
from sagent.events import Event, HookNotice
from sagent.tools.base import tool
from sagent.userhooks import CommandHooks


def script(folder: Path, name: str, body: str) -> str:
    """Write an executable `/bin/sh` script `name` in `folder`; its path, quoted for a command line."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def recorder(folder: Path, name: str, then: str = "exit 0") -> str:
    """A hook that appends its stdin (one JSON object) to `<name>.jsonl` in `folder`, then runs `then`."""
    log = folder / f"{name}.jsonl"
    return script(folder, name, f'cat >> "{log}"\necho >> "{log}"\n{then}\n')


def recorded(folder: Path, name: str) -> list[dict[str, Any]]:
    """The inputs a `recorder` hook got, in order."""
    log = folder / f"{name}.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def hooks(project: Path, **events: list[dict[str, Any]]) -> CommandHooks:
    """Command hooks from a `hooks` settings value, event by event, run in `project`."""
    return CommandHooks.from_settings(events, project_dir=project)


def entry(command: str, matcher: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """One matcher entry with one command, as a settings file writes it."""
    command_entry: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        command_entry["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [command_entry]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def bash_tool(ran: list[str]) -> Any:
    @tool
    async def Bash(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return f"ran {command}"

    return Bash


async def run(agent: Agent, prompt: str) -> list[Event]:
    return [e async for e in agent.run(prompt)]


def notices(events: list[Event]) -> list[HookNotice]:
    return [e for e in events if isinstance(e, HookNotice)]
