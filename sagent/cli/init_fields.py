"""The fields of Claude Code's `system`/`init` record that sagent's own init record lacks, so a program
written for Claude Code's records (the Claude Agent SDKs' among them) finds them: the permission mode, the
slash commands, the MCP servers and their state, the output style. sagent's version is `sagent_version`:
`claude_code_version` is left out, as sagent is not that program."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent import __version__

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def init_fields(agent: Agent) -> dict[str, Any]:
    from sagent.cli.control.answers import OUTPUT_STYLE, slash_commands
    from sagent.mcp.setup import servers_of
    from sagent.permissions.policy import mode_of

    servers = servers_of(agent)
    connections = servers.connections.values() if servers is not None else ()
    return {
        "permissionMode": mode_of(agent) or "default",
        "apiKeySource": "user",  # read from the user's environment (or the provider's own login)
        "slash_commands": [c["name"] for c in slash_commands(agent)],
        "mcp_servers": [{"name": c.name, "status": c.state} for c in connections],
        "output_style": OUTPUT_STYLE,
        "agents": [],
        "skills": [],
        "plugins": [],
        "sagent_version": __version__,
    }
