"""The MCP servers a Claude Agent SDK program sends in its `initialize` request rather than on the command
line: the TypeScript SDK does so with `mcpServersDelivery: "initialize"` (so that the servers' env and
headers are not in a command line other users can read), which its warning recommends to programs that
start their own Claude Code, and which a later SDK makes the default. They are the entries of an
`mcpServers` object, as in `--mcp-config` and `.mcp.json`, and join the run as the servers of those do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.mcp.client import McpServers

SOURCE = "the SDK's initialize request"


def attach_initialize_servers(
    agent: Agent, servers: object, report: Callable[[str], None] | None = None
) -> McpServers | None:
    """Give `agent` the servers of initialize's `mcpServers` (beside the ones it has, as
    `sagent.mcp.setup.add_servers` does; the McpServers of a run of their own are returned when it had
    none). In-process servers (`"type": "sdk"`) are left to `sdkMcpServers`, which names them. ValueError,
    naming the key, for an entry sagent cannot start."""
    from sagent.mcp.config import McpConfigError, parse_servers
    from sagent.mcp.setup import add_servers

    if not isinstance(servers, dict):
        raise ValueError(f'{SOURCE}: key "mcpServers": must be an object of servers')
    outside = {name: entry for name, entry in servers.items() if not _in_process(entry)}
    warnings: list[str] = []
    try:
        configs = parse_servers(outside, SOURCE, warnings)
    except McpConfigError as error:
        raise ValueError(str(error)) from None
    for warning in warnings:
        if report is not None:
            report(warning)
    return add_servers(agent, configs, report) if configs else None


def _in_process(entry: object) -> bool:
    return isinstance(entry, dict) and entry.get("type") == "sdk"
