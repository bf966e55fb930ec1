"""What enabled plugins add to a run beyond their files: their hook commands (beside the settings files'
hooks) and their MCP servers (beside `.mcp.json`'s and the settings files'). A plugin's folder is named by
`${CLAUDE_PLUGIN_ROOT}` (and `${SAGENT_PLUGIN_ROOT}`) in both, and set in their environment, as Claude Code
does, so a plugin's scripts are found wherever it was installed.

    from sagent.resources.plugins import read_plugin
    from sagent.resources.plugin_parts import plugin_hooks, plugin_servers

    plugin = read_plugin(Path("my-plugin"))
    agent = Agent(model, tools=builtin_tools(), hooks=list(plugin_hooks([plugin], Path.cwd())))
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.resources.plugins import Plugin, PluginError, command_hooks_only

if TYPE_CHECKING:
    from sagent.agent.hooks import Hook
    from sagent.mcp.config import ServerConfig


def plugin_hooks(plugins: Iterable[Plugin], project_dir: Path) -> tuple[Hook, ...]:
    """One `CommandHooks` per plugin that has hooks, its commands run in `project_dir` with the plugin's
    folder in `${CLAUDE_PLUGIN_ROOT}`; PluginError naming the file for a hooks value of the wrong shape."""
    from sagent.userhooks.command_hooks import CommandHooks
    from sagent.userhooks.config import HookConfigError, HookTable, parse_hooks

    hooks: list[Hook] = []
    for plugin in plugins:
        table: HookTable = {}
        for source, value in plugin.hook_tables():
            try:
                value = command_hooks_only(_substituted(plugin, value), source, [])
                parsed = parse_hooks(value, where=f"{source}: ")[0]
            except HookConfigError as error:
                raise PluginError(str(error)) from None
            for event, groups in parsed.items():
                table[event] = (*table.get(event, ()), *groups)
        if table:
            _make(plugin.data_folder())
            env = {**os.environ, **plugin.environment()}
            hooks.append(CommandHooks(table, project_dir=project_dir, env=env))
    return tuple(hooks)


def server_name(plugin: Plugin, server: str) -> str:
    """The name a plugin's MCP server runs under, as Claude Code names it: `plugin_PLUGIN_SERVER` (its tools
    are `mcp__plugin_PLUGIN_SERVER__TOOL`)."""
    return f"plugin_{plugin.name}_{server}"


def plugin_servers(plugins: Iterable[Plugin], warnings: list[str] | None = None) -> list[ServerConfig]:
    """The MCP servers of these plugins, named by `server_name`, `${CLAUDE_PLUGIN_ROOT}` replaced and set
    in a stdio server's environment; McpConfigError naming the file and key for a bad entry."""
    from dataclasses import replace

    from sagent.mcp.config import McpConfigError, parse_server, valid_name

    found: list[ServerConfig] = []
    for plugin in plugins:
        for source, value in plugin.server_tables() if plugin.servers else ():
            if not isinstance(value, dict):
                raise McpConfigError(f'{source}: key "mcpServers": must be an object')
            for name, entry in value.items():
                full = server_name(plugin, str(name))
                if not valid_name(full):
                    if warnings is not None:
                        warnings.append(f"{source}: the server name {full!r} is too long or not plain; left out")
                    continue
                config = parse_server(full, _substituted(plugin, entry), source, warnings)
                if config.transport == "stdio":
                    _make(plugin.data_folder())
                    config = replace(config, env={**plugin.environment(), **config.env})
                found.append(config)
    return found


def _substituted(plugin: Plugin, value: Any) -> Any:
    """`value` with the plugin's folder put in for its variables, in every string it holds."""
    if isinstance(value, str):
        return plugin.substitute(value)
    if isinstance(value, list):
        return [_substituted(plugin, v) for v in value]
    if isinstance(value, dict):
        return {k: _substituted(plugin, v) for k, v in value.items()}
    return value


def _make(folder: Path) -> None:
    """Create a plugin's data folder; one that cannot be made is the plugin's to report when it writes."""
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
