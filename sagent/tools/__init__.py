"""The built-in tools."""

from __future__ import annotations

from collections.abc import Iterable

from sagent.tools.agents import AgentSelf, AgentSend, AgentSpawn, Jobs
from sagent.tools.base import Tool
from sagent.tools.files import Edit, Read, Write
from sagent.tools.search import Glob, Grep, List
from sagent.tools.shell import Bash

BUILTIN = (Read, Write, Edit, Glob, Grep, List, Bash, AgentSpawn, AgentSend, AgentSelf, Jobs)

__all__ = [
    "BUILTIN",
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


def builtin_tools() -> list[Tool]:
    """New instances of every built-in tool."""
    return [cls() for cls in BUILTIN]


def tools_by_name(names: Iterable[str]) -> list[Tool]:
    """Built-in tools by name; ValueError naming the valid ones for an unknown name."""
    by_name = {cls.name: cls for cls in BUILTIN}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown tool(s): {', '.join(unknown)}; the tools are: {', '.join(by_name)}")
    return [by_name[n]() for n in names]
