"""MCP in a run: the tools and the hook an agent gets for its servers, the status `/mcp` shows, and the
servers' prompts as slash commands (`/mcp__server__prompt ARGS`)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.lib.words import quantity
from sagent.mcp.client import McpServers
from sagent.mcp.config import ServerConfig
from sagent.mcp.search import McpCatalog, McpHook, ToolSearch
from sagent.mcp.tools import ListMcpResources, McpTool, ReadMcpResource, block_content, tool_name
from sagent.tools.base import Tool, ToolError
from sagent.types import TextPart

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


@dataclass(frozen=True)
class McpRun:
    """What a run with MCP servers adds to its agent: `tools` (the search and resource tools, the same
    from the first request on) and `hook` (the servers' own tools, request by request)."""

    servers: McpServers
    tools: tuple[Tool, ...]
    hook: McpHook


def mcp_run(
    configs: Sequence[ServerConfig],
    cwd: Path,
    report: Callable[[str], None] | None = None,
    wait_first: bool = False,
) -> McpRun | None:
    """The MCP part of a run for these servers; None when there are none (nothing is imported then).
    `wait_first`: the first request waits for the servers, so their tools are in it (a headless run)."""
    if not configs:
        return None
    servers = McpServers(configs, cwd, report)
    catalog = McpCatalog(servers)
    tools: tuple[Tool, ...] = (ToolSearch(catalog), ListMcpResources(servers), ReadMcpResource(servers))
    return McpRun(servers, tools, McpHook(catalog, wait_first=wait_first))


def add_servers(
    agent: Agent, configs: Sequence[ServerConfig], report: Callable[[str], None] | None = None, wait_first: bool = True
) -> McpServers | None:
    """Give an agent already built these servers too (those whose names it has are left out): they join its
    MCP servers when it has some, and are closed with them (None is returned); else the agent gets the
    MCP tools and hook of a run of its own, whose servers are returned for the caller to close. The
    servers' tools are offered from the next request (`wait_first`: it waits for them)."""
    hook = _hook_of(agent)
    servers = hook.servers if hook is not None else None
    cwd = agent.context.cwd
    if hook is not None and servers is not None:
        # The agent's hook (the one offering tools on demand, with or without servers so far) takes them, and
        # waits for them before the first request when asked, as the hook of a run of their own would.
        hook.wait_first = hook.wait_first or wait_first
        for config in configs:
            if config.name not in servers.connections:
                servers.add(config, cwd)
        for tool in agent.settings.tools:
            if isinstance(tool, ToolSearch) and tool.catalog.servers is servers:
                tool.name_servers()
        if not any(isinstance(t, ListMcpResources) for t in agent.settings.tools):  # its first servers
            added = (ListMcpResources(servers), ReadMcpResource(servers))
            agent.configure(tools=(*agent.settings.tools, *added))
            for tool in added:
                agent.tools.setdefault(tool.name, tool)
        return None
    run = mcp_run(configs, cwd, report, wait_first=wait_first)
    if run is None:
        return None
    agent.configure(tools=(*agent.settings.tools, *run.tools), hooks=(*agent.settings.hooks, run.hook))
    for tool in run.tools:
        agent.tools.setdefault(tool.name, tool)
    return run.servers


async def ready(agent: Agent) -> None:
    """Before an agent's first run in a headless run: its MCP servers connected (each at most its
    MCP_TIMEOUT) and their tools given to it, so the run's opening lists them. Nothing without servers."""
    for hook in agent.settings.hooks:
        if isinstance(hook, McpHook):
            await hook.ready(agent)


def servers_of(agent: Agent) -> McpServers | None:
    """The MCP servers an agent was given (through its hook), or None."""
    hook = _hook_of(agent)
    return hook.servers if hook is not None else None


def _hook_of(agent: Agent) -> McpHook | None:
    return next((h for h in agent.settings.hooks if isinstance(h, McpHook)), None)


def status_lines(servers: McpServers | None, agent: Agent | None = None) -> list[str]:
    """One line per server (state, tools, prompts, the error), then the MCP tools the agent has now."""
    if servers is None or not servers.connections:
        return ["no MCP servers configured (.mcp.json, or `sagent mcp add`; see docs/mcp.md)"]
    lines = []
    for c in servers.connections.values():
        counts = (
            f"{quantity(len(c.tools), 'tool')}, {quantity(len(c.prompts), 'prompt')}" if c.state == "connected" else ""
        )
        error = f" — {c.error}" if c.error else ""
        lines.append(f"  {c.name:<16} {c.state:<10} {counts}{error}  [{c.config.describe()[:60]}]")
    prompts = prompt_names(servers)
    if prompts:
        lines.append(f"  prompts: {', '.join('/' + p for p in prompts)}")
    if agent is not None:
        offered = [name for name, tool in agent.tools.items() if isinstance(tool, McpTool)]
        lines.append(f"  tools offered to the model: {', '.join(offered) or 'none yet (ToolSearch loads them)'}")
    return lines


def prompt_names(servers: McpServers | None) -> list[str]:
    """The slash commands of the servers' prompts: `mcp__server__prompt`."""
    if servers is None:
        return []
    return [tool_name(c.name, p.name) for c in servers.connections.values() for p in c.prompts]


async def prompt_text(servers: McpServers, command: str, arg: str) -> str:
    """The text of the prompt `command` names, its arguments filled from `arg`: `key=value` words, or
    words in the order the prompt declares its arguments (the last one takes the rest)."""
    for connection in servers.connections.values():
        for prompt in connection.prompts:
            if tool_name(connection.name, prompt.name) == command:
                arguments = _prompt_arguments([a.name for a in prompt.arguments or ()], arg)
                missing = [a.name for a in prompt.arguments or () if a.required and a.name not in arguments]
                if missing:
                    raise ToolError(f"/{command} needs: {', '.join(missing)}")
                result = await connection.request(f"prompt {prompt.name}", _getter(prompt.name, arguments))
                texts = [p.text for m in result.messages for p in block_content(m.content) if isinstance(p, TextPart)]
                return "\n\n".join(texts)
    raise ToolError(f"no MCP prompt /{command}")


def _getter(name: str, arguments: dict[str, str]) -> Callable[[Any], Any]:
    return lambda session: session.get_prompt(name, arguments)


def _prompt_arguments(names: list[str], arg: str) -> dict[str, str]:
    """`name=value` words by name; the other words fill the remaining arguments in order, the last one
    taking the rest of the line."""
    try:
        words = shlex.split(arg)
    except ValueError:
        words = arg.split()
    given: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        name, found, value = word.partition("=")
        if found and name in names and name not in given:
            given[name] = value
        else:
            loose.append(word)
    open_names = [n for n in names if n not in given]
    for i, name in enumerate(open_names):
        if i >= len(loose):
            break
        given[name] = " ".join(loose[i:]) if i == len(open_names) - 1 else loose[i]
    return given
