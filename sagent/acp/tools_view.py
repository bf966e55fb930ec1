"""How a sagent tool call looks to the editor: its kind (the icon), a title, the files it touches (so the
editor can follow along), and for Edit and Write the diff of the whole file, before and after."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sagent.lib.realpaths import real_path
from sagent.permissions.modes import PLAN_TOOL

if TYPE_CHECKING:
    from acp.schema import PlanEntry, ToolCallLocation

    from sagent.tasks import TaskList
    from sagent.types import ToolCall

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]

KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "List": "read",
    "ReadMcpResource": "read",
    "ListMcpResources": "read",
    "Glob": "search",
    "Grep": "search",
    "Recall": "search",
    "ToolSearch": "search",
    "PaperSearch": "search",
    "Edit": "edit",
    "Write": "edit",
    "Bash": "execute",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "PaperFetch": "fetch",
    "PaperDetails": "fetch",
    "AgentSpawn": "think",
    "Advisor": "think",
    "TodoWrite": "think",
    PLAN_TOOL: "switch_mode",
}
"""The kind of each built-in tool; any other (an MCP server's, AgentSend, Jobs) is `other`."""

PATH_TOOLS = frozenset({"Read", "Edit", "Write", "List", "Grep", "Glob"})
ReadText = Callable[[Path], Awaitable[str | None]]
"""Reads a file's text as the tools will see it (the editor's buffer, else the disk); None when missing."""


def kind_of(name: str) -> ToolKind:
    return KINDS.get(name, "other")


def title_of(call: ToolCall, cwd: str) -> str:
    """A short title: what the call does, to what."""
    args = call.arguments
    shown = _shown_path(args.get("path"), cwd)
    if call.name == "Bash":
        text = str(args.get("description") or "").strip() or f"`{_one_line(str(args.get('command', '')))}`"
        return text
    if call.name in ("Read", "Edit", "Write", "List") and shown:
        return f"{call.name} {shown}"
    if call.name in ("Grep", "Glob"):
        pattern = str(args.get("pattern", ""))
        return f"{call.name} {pattern}" + (f" in {shown}" if shown else "")
    if call.name == "WebFetch":
        return f"Fetch {args.get('url', '')}"
    if call.name == "WebSearch":
        return f"Search the web: {args.get('query', '')}"
    if call.name == PLAN_TOOL:
        return "Ready to code? (the plan)"
    if call.name == "TodoWrite":
        return "Update the task list"
    if call.name.startswith("mcp__"):
        _, server, tool = [*call.name.split("__", 2), "", ""][:3]
        return f"{tool} ({server})"
    return call.name


def locations_of(call: ToolCall, cwd: str) -> list[ToolCallLocation]:
    """The files the call reads or writes, absolute, with the line a Read starts at."""
    from acp.schema import ToolCallLocation

    path = call.arguments.get("path")
    if call.name not in PATH_TOOLS or not isinstance(path, str) or not path:
        return []
    offset = call.arguments.get("offset")
    line = offset if call.name == "Read" and isinstance(offset, int) and offset > 0 else None
    return [ToolCallLocation(path=_absolute(path, cwd), line=line)]


async def diff_of(call: ToolCall, cwd: str, read: ReadText) -> list[Any]:
    """For Edit and Write, the whole file before and after the change (None before: a new file); for an
    Edit whose text is not in the file (it will fail), the edit's own two strings."""
    from acp.schema import FileEditToolCallContent

    args = call.arguments
    path = args.get("path")
    if call.name not in ("Edit", "Write") or not isinstance(path, str) or not path:
        return []
    where = _absolute(path, cwd)
    try:
        before = await read(Path(real_path(path, cwd)))
    except OSError:
        before = None
    if call.name == "Write":
        after = str(args.get("content", ""))
    else:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        if before is None or not old or old not in before:
            before, after = old, new
        else:
            after = before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1)
    return [FileEditToolCallContent(type="diff", path=where, old_text=before, new_text=after)]


_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.+?)\s*$")


def plan_entries(call: ToolCall) -> list[PlanEntry]:
    """The steps of the plan an ExitPlanMode call presents (its list items; each line when it has none)."""
    from acp.schema import PlanEntry

    plan = str(call.arguments.get("plan", ""))
    lines = plan.splitlines()
    items = [m.group(1) for line in lines if (m := _ITEM.match(line))]
    steps = items or [line.strip().lstrip("#").strip() for line in lines if line.strip()]
    return [PlanEntry(content=step, priority="medium", status="pending") for step in steps]


def task_entries(tasks: TaskList) -> list[PlanEntry]:
    """The agent's task list as the entries of the session's plan (a priority the model did not give is
    `medium`)."""
    from acp.schema import PlanEntry

    return [PlanEntry(content=i.content, priority=i.priority or "medium", status=i.status) for i in tasks.items]


def raw_input_of(call: ToolCall) -> dict[str, Any]:
    return dict(call.arguments)


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _shown_path(path: object, cwd: str) -> str:
    if not isinstance(path, str) or not path:
        return ""
    full = _absolute(path, cwd)
    relative = os.path.relpath(full, cwd)
    return full if relative.startswith("..") else relative


def _one_line(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
