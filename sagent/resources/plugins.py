"""Plugins in Claude Code's layout: a folder with `.claude-plugin/plugin.json` and, beside it, `commands/`,
`agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`. This module reads and checks a plugin folder, and
says which installed plugins are enabled for a working directory.

    my-plugin/
      .claude-plugin/plugin.json    {"name": "my-plugin", "version": "1.0.0", "description": "..."}
      commands/review.md            /my-plugin:review
      agents/, skills/              the plugin's agent files and skills, named my-plugin:NAME
      hooks/hooks.json              {"hooks": {"PostToolUse": [...]}}, as in a settings file
      .mcp.json                     {"mcpServers": {...}}, its servers named plugin_my-plugin_SERVER

plugin.json may name more places (`commands`, `agents`, `skills`: a path or a list of paths, files or
folders; `hooks`, `mcpServers`: a path, a list of paths, or the value itself); they add to the default ones.
Every path is relative to the plugin's folder and must stay inside it, symbolic links resolved: a
plugin that names a path outside its folder is refused whole. `${CLAUDE_PLUGIN_ROOT}` (and
`${SAGENT_PLUGIN_ROOT}`) in hook commands and MCP server entries stand for the plugin's folder.

Installed plugins live in sagent's config folder (`$XDG_CONFIG_HOME/sagent/plugins/NAME`, put there by
`sagent plugin install`); one is used when the `enabledPlugins` settings key turns it on: in the user's
settings (every project) or in a project's (`.sagent/settings*.json`, or Claude Code's `.claude/settings*.json`),
which count only when the user trusted the project, like everything else a project's files say.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagent.resources import Kind

MANIFEST = Path(".claude-plugin") / "plugin.json"
"""Where a plugin's manifest is, inside its folder."""
MAX_MANIFEST_BYTES = 256_000
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
"""A plugin's name: letters, digits, `-` and `_` (kebab-case, as Claude Code asks), at most 64."""
ROOT_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "SAGENT_PLUGIN_ROOT")
"""The variables that name a plugin's folder in its hook commands and MCP server entries."""
DATA_VARIABLES = ("CLAUDE_PLUGIN_DATA", "SAGENT_PLUGIN_DATA")
"""The variables that name the folder a plugin keeps its data in between runs (created when it first runs)."""
FOLDER_KINDS = ("commands", "agents", "skills")
SETTINGS_KEY = "enabledPlugins"


class PluginError(ValueError):
    """A plugin folder that cannot be used; the message names the file (or folder) and what is wrong."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """One plugin folder, its manifest read and checked (see `read_plugin`)."""

    name: str
    root: Path
    """The plugin's folder (the one holding `.claude-plugin/`), by its real path."""
    manifest: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """plugin.json as read."""
    servers: bool = True
    """Whether its MCP servers start (False: loaded with `--plugin-dir-no-mcp`)."""

    @property
    def version(self) -> str:
        return _text(self.manifest.get("version"))

    @property
    def description(self) -> str:
        return _text(self.manifest.get("description"))

    def folders(self, kind: Kind) -> list[Path]:
        """The plugin's places holding `kind`, those that exist: the default folder (`commands/`, ...) and
        the paths plugin.json names for it (a folder, or for commands and agents one Markdown file). A
        place whose real path leaves the plugin's folder (a symbolic link out) is left out."""
        found: list[Path] = []
        for path in [self.root / kind, *(self.root / p for p in _paths(self.manifest.get(kind)))]:
            if path.exists() and inside(self.root, path) and path not in found:
                found.append(path)
        return found

    def hook_tables(self) -> list[tuple[str, Any]]:
        """The plugin's `hooks` values (as a settings file's `hooks` key holds them), each with the file it
        came from: `hooks/hooks.json`, then what plugin.json names or holds. Not yet checked."""
        return _component(self, "hooks", Path("hooks") / "hooks.json")

    def server_tables(self) -> list[tuple[str, Any]]:
        """The plugin's `mcpServers` values, each with the file it came from: `.mcp.json`, then what
        plugin.json names or holds. Not yet checked."""
        return _component(self, "mcpServers", Path(".mcp.json"))

    def data_folder(self) -> Path:
        """A folder for what the plugin keeps between runs (`${CLAUDE_PLUGIN_DATA}`), outside its own folder
        so a reinstall keeps it: `$XDG_DATA_HOME/sagent/plugin-data/NAME`."""
        from sagent.lib.xdg import base_dir

        return base_dir("XDG_DATA_HOME") / "sagent" / "plugin-data" / self.name

    def environment(self) -> dict[str, str]:
        """The variables a hook command or an MCP server of the plugin gets: its folder under both names,
        and its data folder (`CLAUDE_PLUGIN_DATA`, `SAGENT_PLUGIN_DATA`)."""
        data = str(self.data_folder())
        return {**{name: str(self.root) for name in ROOT_VARIABLES}, **{name: data for name in DATA_VARIABLES}}

    def substitute(self, text: str) -> str:
        """`text` with `${CLAUDE_PLUGIN_ROOT}` (`${SAGENT_PLUGIN_ROOT}`) replaced by the plugin's folder and
        `${CLAUDE_PLUGIN_DATA}` (`${SAGENT_PLUGIN_DATA}`) by its data folder."""
        for name, value in self.environment().items():
            text = text.replace("${" + name + "}", value)
        return text


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _paths(value: Any) -> list[str]:
    """A component field as its list of paths (an inline object has none)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def inside(root: Path, path: Path) -> bool:
    """Whether `path`, symbolic links resolved, is `root` or within it (`root` itself resolved)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _component(plugin: Plugin, key: str, default: Path) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    files = [plugin.root / default, *(plugin.root / p for p in _paths(plugin.manifest.get(key)))]
    seen: set[str] = set()
    for path in files:
        real = os.path.realpath(path)
        if real in seen or not path.is_file() or not inside(plugin.root, path):
            continue
        seen.add(real)
        data = read_json_object(path)
        found.append((str(path), data.get(key, data) if isinstance(data.get(key), dict) else data))
    inline = plugin.manifest.get(key)
    if isinstance(inline, dict):
        found.append(
            (str(plugin.root / MANIFEST), inline.get(key, inline) if isinstance(inline.get(key), dict) else inline)
        )
    return found


def read_json_object(path: Path, limit: int = MAX_MANIFEST_BYTES) -> dict[str, Any]:
    """The JSON object in the regular file `path`; PluginError naming it when it is not one."""
    from sagent.resources.front_matter import read_resource

    raw = read_resource(path, limit, PluginError)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise PluginError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise PluginError(f"{path}: must hold a JSON object ({{...}})")
    return data


def read_plugin(root: Path) -> Plugin:
    """The plugin in the folder `root`, checked: plugin.json is a JSON object with a valid `name`, its
    fields have their shapes, every path it names stays inside the folder, and its hooks and MCP servers
    read as a settings file's would. PluginError naming the file and the field otherwise."""
    root = Path(os.path.realpath(root))
    manifest_path = root / MANIFEST
    if not root.is_dir():
        raise PluginError(f"{root}: not a folder")
    if not manifest_path.is_file():
        raise PluginError(f"{root}: no {MANIFEST} (a plugin's folder holds its manifest there)")
    manifest = read_json_object(manifest_path)
    where = f"{manifest_path}: "
    name = manifest.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise PluginError(
            f'{where}"name" must be 1 to 64 letters, digits, "-" or "_" (like "my-plugin"), not {json.dumps(name)}'
        )
    for key in ("version", "description"):
        if key in manifest and not isinstance(manifest[key], str):
            raise PluginError(f'{where}"{key}" must be a string')
    for key in (*FOLDER_KINDS, "hooks", "mcpServers"):
        value = manifest.get(key)
        if value is None:
            continue
        inline_ok = key in ("hooks", "mcpServers")
        if not (isinstance(value, str) or _string_list(value) or (inline_ok and isinstance(value, dict))):
            shape = "a path, a list of paths or an object" if inline_ok else "a path or a list of paths"
            raise PluginError(f'{where}"{key}" must be {shape}')
        for path in _paths(value):
            _check_path(root, path, f'{where}"{key}"')
    plugin = Plugin(name, root, manifest)
    check_parts(plugin)
    return plugin


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_path(root: Path, path: str, where: str) -> None:
    if not path.strip() or "\0" in path or os.path.isabs(path) or path.startswith("~"):
        raise PluginError(f"{where}: {path!r} must be a path relative to the plugin's folder, like ./extra")
    if not inside(root, root / path):
        raise PluginError(f"{where}: {path!r} leads outside the plugin's folder")


def check_parts(plugin: Plugin) -> list[str]:
    """Check the plugin's hooks and MCP server entries as a run reads them; their warnings, or
    PluginError naming the file and key."""
    from sagent.mcp.config import McpConfigError, parse_servers
    from sagent.userhooks.config import HookConfigError, parse_hooks

    warnings: list[str] = []
    try:
        for source, value in plugin.hook_tables():
            warnings += parse_hooks(command_hooks_only(value, source, warnings), where=f"{source}: ")[1]
        for source, value in plugin.server_tables():
            parse_servers(value, source, warnings, expand_vars=False)
    except (HookConfigError, McpConfigError) as error:
        raise PluginError(str(error)) from None
    return warnings


def command_hooks_only(value: Any, source: str, warnings: list[str]) -> Any:
    """A plugin's `hooks` value without the entries sagent does not run (Claude Code's `prompt`, `agent`
    and `http` hooks), each said in `warnings`, so a plugin that has some is still usable; a matcher left
    with none is dropped. A value of another shape is returned as it is, for `parse_hooks` to refuse."""
    if not isinstance(value, dict):
        return value
    kept: dict[str, Any] = {}
    for event, groups in value.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        out = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                out.append(group)
                continue
            commands = [e for e in entries if not _other_kind(e)]
            for entry in entries:
                if _other_kind(entry):
                    warnings.append(f'{source}: a "{entry["type"]}" hook of {event} is not run by sagent; left out')
            if commands:
                out.append({**group, "hooks": commands})
        kept[event] = out
    return kept


def _other_kind(entry: Any) -> bool:
    return (
        isinstance(entry, dict) and isinstance(entry.get("type"), str) and entry["type"] in ("prompt", "agent", "http")
    )


# ---------------------------------------------------------------------------------------------- enabled


def plugins_dir() -> Path:
    """Where installed plugins are: `plugins/` in sagent's config folder."""
    from sagent.cli.trust import config_dir

    return config_dir() / "plugins"


def enabling_files(cwd: Path) -> list[tuple[str, Path]]:
    """The settings files whose `enabledPlugins` count for a run in `cwd`, later ones winning: the user's,
    then (when the project is trusted) Claude Code's `.claude/settings.json` and `.claude/settings.local.json`
    and sagent's project and local files."""
    from sagent.cli.settings_files import project_root, settings_files
    from sagent.cli.trust import is_trusted

    files = settings_files(cwd)
    found = [files[0]]
    root = project_root(cwd)
    if is_trusted(root):
        found += [("project", root / ".claude" / "settings.json"), ("local", root / ".claude" / "settings.local.json")]
        found += files[1:]
    return found


def enabled_names(cwd: Path) -> dict[str, tuple[bool, Path]]:
    """Each plugin name an `enabledPlugins` key of the counted settings files names (`name` or Claude
    Code's `name@marketplace`), with whether it is on and the file that said so last. A file that cannot
    be read is left out here (a run says why)."""
    from sagent.cli.settings_files import SettingsError, read_file

    names: dict[str, tuple[bool, Path]] = {}
    for _, path in enabling_files(cwd):
        try:
            data = read_file(path) or {}
        except SettingsError:
            continue
        for key, on in enabled_value(data.get(SETTINGS_KEY)).items():
            names.pop(key, None)
            names[key] = (on, path)
    return names


def enabled_value(value: Any) -> dict[str, bool]:
    """An `enabledPlugins` value as plugin names and whether each is on: an object of `name` (or
    `name@marketplace`) to true or false, or a list of names (all on). Anything else counts as nothing."""
    if isinstance(value, list):
        value = {v: True for v in value if isinstance(v, str)}
    if not isinstance(value, dict):
        return {}
    return {str(key).partition("@")[0]: on for key, on in value.items() if isinstance(on, bool)}


def find_enabled(cwd: Path) -> tuple[list[Plugin], list[str]]:
    """The enabled plugins for `cwd` that are installed and sound, in the order their names were enabled,
    and a line for each enabled one that is not installed or cannot be used."""
    plugins: list[Plugin] = []
    problems: list[str] = []
    for name, (on, path) in enabled_names(cwd).items():
        if not on:
            continue
        folder = plugins_dir() / name
        if not NAME.match(name) or not folder.is_dir():
            problems.append(f"{path}: plugin {name!r} is enabled but not installed (`sagent plugin install`)")
            continue
        try:
            plugin = read_plugin(folder)
        except PluginError as error:
            problems.append(f"plugin {name}: {error}")
            continue
        if plugin.name != name:
            problems.append(f"plugin {name}: {folder / MANIFEST} names it {plugin.name!r}; reinstall it")
            continue
        plugins.append(plugin)
    named = {p.name for p in _RUN_PLUGINS}
    return [p for p in plugins if p.name not in named] + run_plugins(), problems


def enabled_plugins(cwd: Path) -> list[Plugin]:
    """The plugins enabled for `cwd`, in the order their resources are read: the installed ones the
    settings enable, then those of this run's `--plugin-dir` (one of the same name replaces the other)."""
    return find_enabled(cwd)[0]


_RUN_PLUGINS: list[Plugin] = []
"""The plugins the command line named for this run (`--plugin-dir`): the user's word, in every folder."""


def use_for_run(folders: list[str], *, servers: bool = True) -> None:
    """Use the plugin folders `folders` in this run as if installed and enabled (`--plugin-dir`; with
    `servers` False, `--plugin-dir-no-mcp`: without their MCP servers). PluginError naming the first
    folder that is not a sound plugin, before any is used."""
    from dataclasses import replace

    read = [replace(read_plugin(Path(folder).expanduser()), servers=servers) for folder in folders]
    for plugin in read:
        _RUN_PLUGINS[:] = [p for p in _RUN_PLUGINS if p.root != plugin.root and p.name != plugin.name]
        _RUN_PLUGINS.append(plugin)


def run_plugins() -> list[Plugin]:
    """The plugins `use_for_run` added, in order."""
    return list(_RUN_PLUGINS)
