"""The agent files' part of `/agents`: each sub-agent defined in a file (name, where it comes from, its model
and tools, what it is for), the files that cannot be used and why, and the project folders not read because
the project is not trusted."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost


def agent_file_rows(repl: ReplHost) -> list[str]:
    """The lines `/agents` shows about agent files (read again, so a file saved a moment ago shows)."""
    from sagent.resources.agent_files import load_agent_files

    c = repl.renderer.c
    found = load_agent_files(repl.agent.context.cwd)
    if not found.agents and not found.broken and not found.untrusted_note:
        return ["no agent files (.claude/agents/*.md, .sagent/agents/*.md); docs/agents.md says how to write one"]
    offered = next((t for t in repl.agent.tools.values() if t.name == "AgentSpawn"), None)
    known = getattr(offered, "agents", {})
    head = "agent files (AgentSpawn starts them by name):"
    if offered is None:
        head = "agent files (not offered: AgentSpawn is not among this session's tools):"
    lines = [head] if found.agents else []
    for agent in found.agents:
        tools = "all tools" if agent.tools is None else (", ".join(agent.tools) or "no tools")
        extras = [f"model {agent.model or 'inherit'}", tools]
        if agent.permission_mode:
            extras.append(f"permissionMode {agent.permission_mode}")
        if agent.isolation:
            extras.append(f"isolation {agent.isolation}")
        later = "" if offered is None or agent.name in known else c("yellow", " (new: offered from the next session)")
        lines.append(f"  {agent.name} ({agent.origin}){later}: {' '.join(agent.description.split())}")
        lines.append(c("dim", f"    {'; '.join(extras)}"))
    for path, problem in found.broken:
        lines.append(c("yellow", f"  cannot be used: {path}: {problem}"))
    if found.untrusted_note:
        lines.append(c("yellow", f"  not read: {found.untrusted_note}"))
    return lines
