"""`sagent plugin install|list|remove|enable|disable`: plugins in Claude Code's layout (docs/plugins.md).

Exit codes: 0 done, 1 a named plugin is not installed, 2 bad input (a source that is not a sound plugin,
an unknown scope, a settings file that cannot be written); nothing is left half-done on 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.cli.settings_files import SettingsError
from sagent.resources.plugins import (
    NAME,
    SETTINGS_KEY,
    Plugin,
    PluginError,
    check_parts,
    enabled_names,
    plugins_dir,
    read_plugin,
)

if TYPE_CHECKING:
    from sagent.resources import Kind

USAGE = """\
usage: sagent plugin install PATH|GIT_URL [--plugin NAME] [--scope user|project|local] [--force] [--cwd DIR]
       sagent plugin list [--json] [--cwd DIR]
       sagent plugin remove NAME [--scope user|project|local] [--cwd DIR]
       sagent plugin enable NAME [--scope user|project|local] [--cwd DIR]
       sagent plugin disable NAME [--scope user|project|local] [--cwd DIR]
       sagent plugin validate PATH

Plugins in Claude Code's layout: a folder with .claude-plugin/plugin.json and its commands/, agents/,
skills/, hooks/hooks.json and .mcp.json. install copies a folder (or clones a git URL, depth 1) into
$XDG_CONFIG_HOME/sagent/plugins/NAME once plugin.json and every file are checked, and turns it on in
the user's settings (--scope user, the default: every project) or the project's (.sagent/settings.json,
or .sagent/settings.local.json with local) through the enabledPlugins key. A project's settings count
only in a folder you trusted (`sagent trust`). Commands are /NAME:command; see docs/plugins.md.
"""

VERB_USAGE = {
    "install": (
        "sagent plugin install PATH|GIT_URL [--plugin NAME] [--scope user|project|local] [--force] [--cwd DIR]",
        "Copy the plugin folder PATH (or clone GIT_URL: https://..., git@host:repo, file:///...) into sagent's\n"
        "config folder, checked first (plugin.json, paths, hooks, MCP servers; no link out of the folder),\n"
        "and enable it in the scope's settings file. Nothing of the plugin runs while it is installed.\n"
        "A Claude Code marketplace (.claude-plugin/marketplace.json) at the source: --plugin NAME picks one.",
    ),
    "list": (
        "sagent plugin list [--json] [--cwd DIR]",
        "The installed plugins, whether each is enabled here and by which settings file, what it holds; and\n"
        "plugins enabled but not installed or not usable.",
    ),
    "remove": (
        "sagent plugin remove NAME [--scope user|project|local] [--cwd DIR]",
        "Drop NAME from the scope's enabledPlugins (the user's by default) and delete its installed copy,\n"
        "unless the user's or this project's settings still enable it (then say which).",
    ),
    "enable": (
        "sagent plugin enable NAME [--scope user|project|local] [--cwd DIR]",
        "Turn the installed plugin NAME on in the scope's settings file.",
    ),
    "validate": (
        "sagent plugin validate PATH",
        "Check the plugin folder PATH as install does, without installing it: exit 0 and what it holds (with\n"
        "warnings for parts sagent leaves out), or exit 2 and the first problem.",
    ),
    "disable": (
        "sagent plugin disable NAME [--scope user|project|local] [--cwd DIR]",
        "Turn NAME off in the scope's settings file (false there wins over an earlier file's true).",
    ),
}
SCOPES = ("user", "project", "local")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        sys.stderr.write(f"sagent plugin: {message}\n")
        raise SystemExit(2)


def _parser(verb: str) -> argparse.ArgumentParser:
    usage, description = VERB_USAGE[verb]
    parser = _Parser(
        prog=f"sagent plugin {verb}",
        usage=usage,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if verb == "validate":
        parser.add_argument("path", metavar="PATH", help="the plugin's folder")
        return parser
    if verb == "install":
        parser.add_argument("source", metavar="PATH|GIT_URL", help="the plugin's folder, or a git URL")
        parser.add_argument("--force", action="store_true", help="replace an installed plugin of the same name")
        parser.add_argument(
            "--plugin", metavar="NAME", help="the plugin NAME of a Claude Code marketplace at the source"
        )
    elif verb != "list":
        parser.add_argument("name", metavar="NAME", help="the plugin's name (as plugin.json gives it)")
    if verb == "list":
        parser.add_argument("--json", action="store_true", help="one JSON object")
    else:
        parser.add_argument("--scope", choices=SCOPES, default="user", help="which settings file (default user)")
    parser.add_argument("--cwd", default=".", help="the project (for --scope project and list)")
    return parser


def plugin_command(argv: list[str]) -> int:
    """`sagent plugin ...`: 0 done, 1 a named plugin is not installed, 2 bad usage or a bad plugin."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    verb, rest = argv[0], argv[1:]
    handlers = {
        "install": _install,
        "list": _list,
        "remove": _remove,
        "enable": _enable,
        "disable": _disable,
        "validate": _validate,
    }
    if verb not in handlers:
        sys.stderr.write(f"sagent plugin: unknown command {verb!r}; one of: {', '.join(handlers)}\n")
        return 2
    args = _parser(verb).parse_args(rest)
    if getattr(args, "name", None) is not None and not NAME.match(args.name):
        sys.stderr.write(f"sagent plugin: {args.name!r} is not a plugin name (letters, digits, - and _)\n")
        return 2
    try:
        return handlers[verb](args)
    except (PluginError, SettingsError) as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return 2
    except OSError as error:
        sys.stderr.write(f"sagent: error: {getattr(error, 'filename', None) or ''}: {error.strerror or error}\n")
        return 2


def _set(args: argparse.Namespace, name: str, on: bool | None) -> Path:
    """Write `enabledPlugins.NAME` (None: remove every key naming NAME, `NAME@...` too) in the scope's file."""
    from sagent.cli.config_set import scope_path, set_key, unset_key
    from sagent.cli.settings_files import read_file

    cwd = Path(args.cwd)
    if on is not None:
        return set_key(cwd, args.scope, f"{SETTINGS_KEY}.{name}", json.dumps(on)).path
    path = scope_path(cwd, args.scope)
    keys = (read_file(path) or {}).get(SETTINGS_KEY)
    for key in list(keys) if isinstance(keys, dict) else []:
        if str(key).partition("@")[0] == name:
            unset_key(cwd, args.scope, f"{SETTINGS_KEY}.{key}")
    return path


def _install(args: argparse.Namespace) -> int:
    from sagent.cli.plugin_install import install

    enabled: list[tuple[str, Path]] = []

    def enable(plugin: Plugin) -> None:
        enabled.append((plugin.name, _set(args, plugin.name, True)))

    try:  # enabled first, then put in place: a settings file that cannot be written leaves no copy
        plugin, replaced = install(args.source, force=args.force, pick=args.plugin, before=enable)
    except PluginError:
        if enabled:  # enabled, then not put in place: not enabled either
            _set(args, enabled[0][0], None)
        raise
    path = enabled[0][1]
    for warning in check_parts(plugin):
        sys.stderr.write(f"sagent: warning: {warning}\n")
    version = f" {plugin.version}" if plugin.version else ""
    print(f"{'replaced' if replaced else 'installed'} plugin {plugin.name}{version} in {plugin.root}")
    print(f"enabled in {path} ({args.scope}); it holds {holdings(plugin)}")
    note = _untrusted_note(args)
    if note:
        print(note)
    return 0


def _untrusted_note(args: argparse.Namespace) -> str | None:
    if args.scope == "user":
        return None
    from sagent.cli.settings_files import project_root
    from sagent.cli.trust import is_trusted

    root = project_root(Path(args.cwd))
    return None if is_trusted(root) else f"this folder is not trusted: `sagent trust {root}` for its settings to apply"


def holdings(plugin: Plugin) -> str:
    """What the plugin holds, in words: `2 commands, 1 agent file, hooks, 1 MCP server`."""
    from sagent.lib.words import quantity

    counts = []
    kinds: tuple[tuple[Kind, str], ...] = (("commands", "command file"), ("agents", "agent file"), ("skills", "skill"))
    for kind, word in kinds:
        n = sum(_count(folder, kind) for folder in plugin.folders(kind))
        if n:
            counts.append(quantity(n, word))
    if plugin.hook_tables():
        counts.append("hooks")
    servers = sum(len(value) for _, value in plugin.server_tables() if isinstance(value, dict))
    if servers:
        counts.append(quantity(servers, "MCP server"))
    return ", ".join(counts) or "nothing sagent uses"


def _count(folder: Path, kind: str) -> int:
    if folder.is_file():
        return 1
    pattern = "SKILL.md" if kind == "skills" else "*.md"
    return sum(1 for _ in folder.rglob(pattern))


def _list(args: argparse.Namespace) -> int:
    from sagent.resources.plugins import find_enabled

    cwd = Path(args.cwd)
    names = enabled_names(cwd)
    _, problems = find_enabled(cwd)
    rows = []
    folder = plugins_dir()
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith("."):
            continue
        on, where = names.get(path.name, (False, None))
        row: dict[str, Any] = {"name": path.name, "path": str(path), "enabled": on, "enabled_by": str(where or "")}
        try:
            plugin = read_plugin(path)
            row.update(version=plugin.version, description=plugin.description, holds=holdings(plugin))
        except PluginError as error:
            row.update(enabled=False, error=str(error))
        rows.append(row)
    if args.json:
        print(json.dumps({"plugins": rows, "problems": problems}, indent=2))
        return 0
    if not rows:
        print(f"no plugins installed ({folder}); `sagent plugin install PATH|GIT_URL` adds one")
    for row in rows:
        state = f"enabled by {row['enabled_by']}" if row["enabled"] else "not enabled here"
        version = f" {row['version']}" if row.get("version") else ""
        print(f"{row['name']}{version}  {state}")
        print(f"  {row.get('description') or row.get('error') or ''}".rstrip())
        if "holds" in row:
            print(f"  holds {row['holds']}")
    for line in problems:
        print(f"warning: {line}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from sagent.cli.plugin_install import uninstall

    installed = (plugins_dir() / args.name).is_dir()
    path = _set(args, args.name, None)
    still = {n: w for n, (on, w) in enabled_names(Path(args.cwd)).items() if on}
    if args.name in still:
        print(f"{args.name}: dropped from {path}; still enabled by {still[args.name]}, so its files stay")
        return 0
    if not uninstall(args.name):
        sys.stderr.write(f"sagent plugin: no plugin named {args.name!r} is installed ({plugins_dir()})\n")
        return 1 if not installed else 0
    print(f"removed plugin {args.name} ({plugins_dir() / args.name}); dropped from {path}")
    return 0


def _enable(args: argparse.Namespace) -> int:
    if not (plugins_dir() / args.name).is_dir():
        sys.stderr.write(f"sagent plugin: no plugin named {args.name!r} is installed; `sagent plugin list`\n")
        return 1
    read_plugin(plugins_dir() / args.name)  # a plugin that cannot be used is not turned on
    print(f"enabled {args.name} in {_set(args, args.name, True)} ({args.scope})")
    note = _untrusted_note(args)
    if note:
        print(note)
    return 0


def _disable(args: argparse.Namespace) -> int:
    print(f"disabled {args.name} in {_set(args, args.name, False)} ({args.scope})")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from sagent.cli.plugin_install import check_tree

    folder = Path(args.path).expanduser()
    plugin = read_plugin(folder)
    check_tree(plugin.root)
    for warning in check_parts(plugin):
        sys.stderr.write(f"sagent: warning: {warning}\n")
    version = f" {plugin.version}" if plugin.version else ""
    print(f"{plugin.name}{version}: a sound plugin; it holds {holdings(plugin)}")
    return 0
