"""The built-in tools."""

from __future__ import annotations

from collections.abc import Iterable

from sagent.tools.agents import AgentSelf, AgentSend, AgentSpawn, Jobs
from sagent.tools.base import Tool
from sagent.tools.files import Edit, Read, Write
from sagent.tools.search import Glob, Grep, List
from sagent.tools.shell import Bash

CORE = (Read, Write, Edit, Glob, Grep, List, Bash)
FLEET = (AgentSpawn, AgentSend, AgentSelf, Jobs)  # sub-agents, messages, self-tuning, background jobs
BUILTIN = CORE + FLEET

__all__ = [
    "BUILTIN",
    "CORE",
    "FLEET",
    "AgentSelf",
    "AgentSend",
    "AgentSpawn",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "Jobs",
    "List",
    "Read",
    "Write",
    "builtin_tools",
    "tools_by_name",
]


def builtin_tools(fleet: bool = True) -> list[Tool]:
    """New instances of every built-in tool; without the fleet tools when `fleet` is False."""
    return [cls() for cls in (BUILTIN if fleet else CORE)]


def tools_by_name(names: Iterable[str]) -> list[Tool]:
    """Built-in tools by name; ValueError naming the valid ones for an unknown name."""
    by_name = {cls.name: cls for cls in BUILTIN}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown tool(s): {', '.join(unknown)}; the tools are: {', '.join(by_name)}")
    return [by_name[n]() for n in names]
