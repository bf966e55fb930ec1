"""The in-process MCP servers of a Claude Agent SDK application, as MCP servers of sagent's run.

An application passes `create_sdk_mcp_server(...)` in its options; the SDK names it on the command line as
`--mcp-config '{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}'` and serves it in its own process.
sagent's MCP client reaches it like any server (its tools are `mcp__calc__add`, permission rules and the
deferred ToolSearch apply, a headless run offers them from its first request), over a transport that
sends each JSON-RPC message as a control request and reads the server's reply from the answer:

    {"subtype": "mcp_message", "server_name": "calc", "message": {"jsonrpc": "2.0", ...}}
    -> {"mcp_response": {"jsonrpc": "2.0", "id": ..., "result": ...}}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import TYPE_CHECKING, Any

from sagent.lib.json import json_kind
from sagent.mcp.config import ServerConfig, valid_name

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.requester import Requester
    from sagent.mcp.client import McpServers

SOURCE = "--mcp-config"


def sdk_server_configs(servers: Mapping[str, Any], requester: Requester) -> list[ServerConfig]:
    """The `"type": "sdk"` entries of an `mcpServers` value as servers that `requester` reaches (entries of
    other types are left to the ordinary configuration). Nothing is sent until a server starts.
    ValueError naming the key for an SDK entry of the wrong shape."""
    found = []
    for name, entry in servers.items():
        key = f"mcpServers.{name}"
        if not isinstance(entry, Mapping):
            raise ValueError(f'{SOURCE}: key "{key}": must be an object, not {json_kind(entry)}')
        if entry.get("type") != "sdk":
            continue
        if not valid_name(name):
            raise ValueError(f'{SOURCE}: key "{key}": a server name is 1 to 48 letters, digits, "_" or "-"')
        label = entry.get("name", name)
        if not isinstance(label, str):
            raise ValueError(f'{SOURCE}: key "{key}.name": must be a string, not {json_kind(label)}')
        found.append(ServerConfig(name, "sdk", source=SOURCE, connect=partial(_connect, name, requester)))
    return found


def attach_sdk_servers(
    agent: Agent, names: object, requester: Requester, report: Callable[[str], None] | None = None
) -> McpServers | None:
    """The servers an `initialize` request names (`sdkMcpServers`, as the TypeScript SDK sends them rather
    than in `--mcp-config`) added to `agent`'s MCP servers, or given to it as its own: returned then (None
    when they joined servers the run closes). Closing those is tidy, not needed: the servers run in the
    program, and what sagent holds of them ends with its event loop. A name the agent has already is left
    alone. ValueError for a value that is not a list of server names."""
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise ValueError(f'"sdkMcpServers": must be a list of server names, not {json_kind(names)}')
    listed = list(names)
    for name in listed:
        if not isinstance(name, str) or not valid_name(name):
            raise ValueError(
                f'"sdkMcpServers": {json_kind(name)} is not a server name (1 to 48 letters, digits, "_" or "-")'
            )
    from sagent.mcp.setup import add_servers

    configs = sdk_server_configs({name: {"type": "sdk", "name": name} for name in listed}, requester)
    return add_servers(agent, configs, report) if configs else None


def _connect(name: str, requester: Requester) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    from sagent.mcp.relay import relay_transport

    async def exchange(message: dict[str, Any]) -> Any:
        answer = await requester.request({"subtype": "mcp_message", "server_name": name, "message": message})
        return answer.get("mcp_response")

    return relay_transport(name, exchange)
