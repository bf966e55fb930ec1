"""The fields of Claude Code's `system`/`init` record that sagent's own init record lacks, so a program
written for Claude Code's records (the Claude Agent SDKs' among them) finds them: the permission mode, the
slash commands, the MCP servers and their state, the output style. sagent's version is `sagent_version`,
and `claude_code_version` holds it too: the SDKs read that field only to warn of a CLI too old to report a
version, and sagent reports its own (it claims no Claude Code version, so a feature the SDK ties to one,
such as the Python SDK's `verbatim_prompts`, is rightly warned about)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from sagent import __version__

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def init_fields(agent: Agent, tools: list[str]) -> dict[str, Any]:
    """The fields to add to (or, for `tools`, replace in) the init record of `agent` listing `tools`: a tool
    a deny rule refuses outright is not listed, as it is not offered."""
    from sagent.cli.control.answers import OUTPUT_STYLE, slash_commands
    from sagent.mcp.setup import servers_of
    from sagent.permissions.modes import PLAN_TOOL
    from sagent.permissions.policy import denied_tools, mode_of, policies

    servers = servers_of(agent)
    connections = servers.connections.values() if servers is not None else ()
    denied = denied_tools(agent, tools)
    if all(p.mode != "plan" for p in policies(agent)):
        denied.add(PLAN_TOOL)  # offered only in plan mode
    return {
        "tools": [t for t in tools if t not in denied],
        "permissionMode": mode_of(agent) or "default",
        "apiKeySource": "user",  # read from the user's environment (or the provider's own login)
        "slash_commands": [c["name"] for c in slash_commands(agent)],
        "mcp_servers": [{"name": c.name, "status": c.state} for c in connections],
        "output_style": OUTPUT_STYLE,
        "agents": sorted(getattr(agent.tools.get("AgentSpawn"), "agents", None) or ()),  # agent files by name
        "skills": [s.name for s in getattr(agent.tools.get("Skill"), "offered", ())],  # sagent.tools.skill
        "plugins": plugin_list(agent),
        "sagent_version": __version__,
        "claude_code_version": __version__,
        "uuid": str(uuid.uuid4()),
    }


def plugin_list(agent: Agent) -> list[dict[str, str]]:
    """The plugins of the run, as Claude Code's init record lists them: name and folder."""
    from pathlib import Path

    from sagent.resources.plugins import enabled_plugins

    return [{"name": p.name, "path": str(p.root)} for p in enabled_plugins(Path(agent.settings.cwd or "."))]
