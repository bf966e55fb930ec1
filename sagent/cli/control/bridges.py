"""The two places sagent's control protocol calls into the bridges to the SDK's program: its hook callbacks
(`sagent.cli.control.hooks`) and its in-process MCP servers (`sagent.cli.control.sdk_mcp`). They are loaded
by name, so a build without them says so instead of failing to start."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.requester import Requester
    from sagent.mcp.config import ServerConfig


class BridgeMissing(Exception):
    """This build of sagent has no bridge for what the SDK's program asked."""


def _load(module: str, name: str, what: str) -> Any:
    try:
        return getattr(importlib.import_module(f"sagent.cli.control.{module}"), name)
    except (ImportError, AttributeError):
        raise BridgeMissing(f"{what} are not supported by this build of sagent") from None


def install_hook_callbacks(agent: Agent, hooks: dict[str, Any], requester: Requester) -> list[str]:
    """The SDK program's hook callbacks (initialize's `hooks`), run through `hook_callback` requests; the
    warnings to tell the user (hooks sagent does not run)."""
    install = _load("hooks", "install_hook_callbacks", "the SDK program's hook callbacks")
    warnings = install(agent, hooks, requester)
    return [str(w) for w in warnings or ()]


def sdk_server_configs(servers: dict[str, Any], requester: Requester) -> list[ServerConfig]:
    """The SDK program's in-process MCP servers (`"type": "sdk"` in --mcp-config) as MCP server configs
    whose messages go through `mcp_message` requests."""
    configs = _load("sdk_mcp", "sdk_server_configs", "in-process MCP servers of the SDK's program")
    return list(configs(servers, requester))


def attach_sdk_servers(agent: Agent, names: Any, requester: Requester, report: Callable[[str], None]) -> None:
    """The in-process MCP servers the SDK's program names in initialize (`sdkMcpServers`, the TypeScript
    SDK's way) joined to the agent's MCP servers, their tools offered from the next request."""
    attach = _load("sdk_mcp", "attach_sdk_servers", "in-process MCP servers of the SDK's program")
    attach(agent, names, requester, report)  # servers of their own need no closing: they run in the program
