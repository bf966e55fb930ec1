"""`sagent mcp list|get|add|remove|serve`: the MCP servers a run connects to, and sagent as an MCP server.

Also `configured_servers`, the servers of a run (the project's `.mcp.json`, then the settings files'),
which the headless run and the REPL use.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

from sagent.cli.git_exclude import exclude_from_git
from sagent.cli.settings_files import Loaded, SettingsError, Sources, load, project_root, read_file, user_settings_file
from sagent.lib.words import quantity
from sagent.mcp.config import (
    PROJECT_FILE,
    TRANSPORTS,
    McpConfigError,
    ServerConfig,
    all_servers,
    parse_servers,
    project_servers,
    write_entry,
)

USAGE = """\
usage: sagent mcp list                     the configured servers, each connected to and checked
       sagent mcp get NAME                 one server: where it is configured, its tools and prompts
       sagent mcp add [OPTIONS] NAME COMMAND [ARGS...]      a stdio server (put -- before ARGS with dashes)
       sagent mcp add --transport http|sse [OPTIONS] NAME URL
       sagent mcp remove [--scope SCOPE] NAME
       sagent mcp serve [--http PORT] [--max-budget-usd USD] [--cwd DIR] [PERMISSIONS] [--sandbox MODE]

add options:
  --scope local|project|user  where it is written: .sagent/settings.local.json (local, the default),
                              .mcp.json at the project root (project, shared with Claude Code), or the
                              user's settings file (user)
  --transport stdio|http|sse  how sagent reaches it (default stdio)
  -e, --env KEY=VALUE         a variable for a stdio server (repeatable)
  -H, --header "Name: value"  an HTTP header for an http or sse server (repeatable)
Values may use ${VAR} and ${VAR:-default}, expanded when a run starts.

In a folder you have not trusted (`sagent trust`), list and get show the servers its .mcp.json and
settings files name, marked "not started", and never start them.

serve: every tool call goes through the permission policy of the settings files and these flags
(nobody is asked: what would ask follows permissions.headlessDefault):
  --permission-mode MODE      default, acceptEdits, plan or bypassPermissions
  --allowedTools RULE ...     rules for calls that run      --disallowedTools RULE ...  calls that never run
  --add-dir DIR               another folder that counts as the project
  --sandbox MODE              the OS sandbox served Bash calls run in (default workspace-write, no network)
  --http PORT                 streamable HTTP on 127.0.0.1:PORT/mcp; every request needs
                              `Authorization: Bearer TOKEN`: $SAGENT_MCP_TOKEN, or a token made at start
                              and written to a file only you can read (its path is printed on stderr)
See docs/mcp.md.
"""
SCOPES = ("local", "project", "user")


def configured_servers(
    cwd: Path, settings_servers: dict[str, Any], origins: dict[str, Any], trusted: bool
) -> list[ServerConfig]:
    """The servers a run in `cwd` connects to (the project's `.mcp.json` only when its folder is
    `trusted`, then the enabled plugins'); McpConfigError naming the file and key of a bad entry."""
    from sagent.resources.plugin_parts import plugin_servers
    from sagent.resources.plugins import enabled_plugins

    files = {k.removeprefix("mcpServers."): str(v) for k, v in origins.items() if k.startswith("mcpServers.")}
    found = all_servers(project_root(cwd), settings_servers, files, project=trusted)
    names = {s.name for s in found}  # the enabled plugins' servers (plugin_NAME_SERVER) after them
    return found + [s for s in plugin_servers(enabled_plugins(cwd)) if s.name not in names]


def run_servers(args: argparse.Namespace, cwd: Path) -> list[ServerConfig]:
    """The servers of a run with these parsed arguments (no project server unless the settings loader
    found the folder trusted)."""
    if getattr(args, "strict_mcp_config", False):  # --strict-mcp-config: the --mcp-config servers alone
        return parse_servers(dict(args.mcp_servers or {}), "--mcp-config")
    sources = getattr(args, "settings_files", None)
    origins = dict(sources.loaded.origins) if sources is not None else {}
    trusted = sources.loaded.trusted if sources is not None else False
    return configured_servers(cwd, dict(args.mcp_servers or {}), origins, trusted)


def held_back(loaded: Loaded) -> list[ServerConfig]:
    """The servers an untrusted folder's files name (`.mcp.json`, and `mcpServers` in its settings
    files), read to be shown and never started; none in a trusted folder."""
    if loaded.trusted:
        return []
    found = {s.name: s for s in project_servers(loaded.root, expand_vars=False)}
    for file in loaded.files:
        if file.scope != "user" and file.exists:
            data = read_file(file.path) or {}
            if "mcpServers" in data:
                found.update((s.name, s) for s in parse_servers(data["mcpServers"], str(file.path), expand_vars=False))
    return list(found.values())


def scope_file(scope: str, cwd: Path) -> Path:
    """The file `sagent mcp add --scope SCOPE` writes."""
    root = project_root(cwd)
    return {
        "project": root / PROJECT_FILE,
        "local": root / ".sagent" / "settings.local.json",
        "user": user_settings_file(),
    }[scope]


def mcp_command(argv: list[str]) -> int:
    """`sagent mcp ...`: 0 on success, 1 when a named server is not found, 2 for bad usage or files."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    verb, rest = argv[0], argv[1:]
    handlers = {"list": _list, "get": _get, "add": _add, "remove": _remove, "serve": _serve}
    if verb not in handlers:
        sys.stderr.write(f"sagent mcp: unknown command {verb!r}; one of: {', '.join(handlers)}\n")
        return 2
    try:
        return handlers[verb](rest)
    except (McpConfigError, SettingsError) as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        sys.stderr.write(f"sagent mcp: {message}\n")
        raise SystemExit(2)


def _servers(cwd: Path) -> tuple[list[ServerConfig], list[ServerConfig], str | None]:
    """The servers a run would start; those an untrusted folder names, which are shown and not started
    (a user's server of the same name wins); and the line saying how to trust the folder."""
    loaded = load(cwd)
    for warning in loaded.warnings:
        sys.stderr.write(f"sagent: warning: {warning}\n")
    run = configured_servers(cwd, dict(loaded.values.get("mcpServers", {})), dict(loaded.origins), loaded.trusted)
    names = {s.name for s in run}
    held = [s for s in held_back(loaded) if s.name not in names]
    why = f"not started: this folder is not trusted (`sagent trust {loaded.root}` to use it)" if held else None
    return run, held, why


def _list(argv: list[str]) -> int:
    parser = _Parser(prog="sagent mcp list")
    parser.add_argument("--cwd", default=".")
    args = parser.parse_args(argv)
    servers, held, why = _servers(Path(args.cwd))
    if not servers and not held:
        print(f"no MCP servers configured (add one with `sagent mcp add`, or write {PROJECT_FILE})")
        return 0
    checked = asyncio.run(_check(servers, Path(args.cwd).resolve())) if servers else {}
    for server in servers:
        state, tools, _ = checked[server.name]
        mark = f"connected, {quantity(len(tools), 'tool')}" if state == "connected" else state
        print(f"{server.name}: {server.describe()} - {mark}")
    for server in held:
        print(f"{server.name}: {server.describe()} - {why}")
    return 0


def _get(argv: list[str]) -> int:
    parser = _Parser(prog="sagent mcp get")
    parser.add_argument("name")
    parser.add_argument("--cwd", default=".")
    args = parser.parse_args(argv)
    servers, held, why = _servers(Path(args.cwd))
    found = [s for s in servers + held if s.name == args.name]
    if not found:
        sys.stderr.write(f"sagent: no MCP server named {args.name!r}\n")
        return 1
    server = found[0]
    tools: list[str] = []
    prompts: list[str] = []
    if server in held:
        state = str(why)
    else:
        state, tools, prompts = asyncio.run(_check([server], Path(args.cwd).resolve()))[server.name]
    print(f"{server.name}\n  from:      {server.source}\n  transport: {server.transport}")
    print(f"  reached:   {server.describe()}")
    if server.env:
        print(f"  env:       {', '.join(server.env)}")
    if server.headers:
        print(f"  headers:   {', '.join(server.headers)}")
    print(f"  status:    {state}")
    for name in tools:
        print(f"  tool       {name}")
    for name in prompts:
        print(f"  prompt     /{name}")
    return 0


async def _check(servers: list[ServerConfig], cwd: Path) -> dict[str, tuple[str, list[str], list[str]]]:
    from sagent.mcp.client import McpServers
    from sagent.mcp.setup import prompt_names
    from sagent.mcp.tools import tool_name

    group = McpServers(servers, cwd)
    group.start()
    try:
        await group.settle(max(c.connect_timeout for c in group.connections.values()) + 1)
        found = {}
        for c in group.connections.values():
            state = c.state if c.state != "failed" else f"failed: {c.error}"
            tools = [tool_name(c.name, t.name) for t in c.tools]
            prompts = [p for p in prompt_names(group) if p.startswith(f"mcp__{c.name}__")]
            found[c.name] = (state, tools, prompts)
        return found
    finally:
        await group.aclose()


def _add(argv: list[str]) -> int:
    parser = _Parser(prog="sagent mcp add")
    parser.add_argument("--scope", choices=SCOPES, default="local")
    parser.add_argument("--transport", "-t", choices=TRANSPORTS, default="stdio")
    parser.add_argument("--env", "-e", action="append", default=[])
    parser.add_argument("--header", "-H", action="append", default=[])
    parser.add_argument("--cwd", default=".")
    parser.add_argument("name")
    parser.add_argument("target")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    entry: dict[str, Any]
    if args.transport == "stdio":
        if args.header:
            parser.error("--header is for http and sse servers")
        entry = {"command": args.target, "args": [a for a in args.args if a != "--"]}
        if args.env:
            entry["env"] = dict(_pair(v, "=", "--env", parser) for v in args.env)
    else:
        if args.env or args.args:
            parser.error("an http or sse server takes a URL and --header, not a command, arguments or --env")
        entry = {"type": args.transport, "url": args.target}
        if args.header:
            entry["headers"] = dict(_pair(v, ":", "--header", parser) for v in args.header)
    from sagent.mcp.config import parse_server

    parse_server(args.name, entry, "the command line", [])  # checked as a run would read it
    path = scope_file(args.scope, Path(args.cwd))
    write_entry(path, args.name, entry)
    if args.scope == "local":  # this machine's file: git is told not to offer it for a commit
        exclude_from_git(path)
    print(f"added MCP server {args.name} ({args.scope}) to {path}")
    return 0


def _pair(value: str, sep: str, flag: str, parser: _Parser) -> tuple[str, str]:
    key, found, rest = value.partition(sep)
    if not found or not key.strip():
        parser.error(f"{flag} takes KEY{sep}VALUE, not {value!r}")
    return key.strip(), rest.strip() if sep == ":" else rest


def _remove(argv: list[str]) -> int:
    parser = _Parser(prog="sagent mcp remove")
    parser.add_argument("--scope", choices=SCOPES)
    parser.add_argument("--cwd", default=".")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    for scope in [args.scope] if args.scope else list(SCOPES):
        path = scope_file(scope, Path(args.cwd))
        if write_entry(path, args.name, None):
            print(f"removed MCP server {args.name} ({scope}) from {path}")
            return 0
    where = args.scope or "local, project or user"
    sys.stderr.write(f"sagent: no MCP server named {args.name!r} in the {where} scope\n")
    return 1


def _serve(argv: list[str]) -> int:
    parser = _Parser(prog="sagent mcp serve")
    parser.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="streamable HTTP on 127.0.0.1:PORT/mcp; every request needs `Authorization: Bearer TOKEN` "
        "($SAGENT_MCP_TOKEN, or a token written at start to a file only you can read: its path is on stderr)",
    )
    parser.add_argument("--max-budget-usd", type=float, default=None, help="the most a sagent_task may cost")
    parser.add_argument("--cwd", default=".", help="the folder the tools work in")
    parser.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "bypassPermissions"),
        help="the mode every call is held to; nobody is asked: what would ask follows permissions.headlessDefault",
    )
    for flag, dest, what in (
        ("--allowedTools", "allowed_tools", "run"),
        ("--disallowedTools", "disallowed_tools", "never run"),
    ):
        dashed = "--" + dest.replace("_", "-")
        parser.add_argument(
            flag, dashed, dest=dest, action="append", nargs="+", metavar="RULE", help=f"calls that {what}"
        )
    parser.add_argument("--add-dir", action="append", metavar="DIR", help="another folder that counts as the project")
    parser.add_argument(
        "--sandbox",
        choices=("read-only", "workspace-write", "danger-full-access"),
        help="the OS sandbox served Bash calls run in (default workspace-write, no network; the settings' sandbox)",
    )
    args = parser.parse_args(argv)
    from sagent.mcp.server import DEFAULT_BUDGET_USD, SagentServer, serve_stdio
    from sagent.tools import builtin_tools
    from sagent.tools.net import Fetcher

    budget = args.max_budget_usd if args.max_budget_usd is not None else DEFAULT_BUDGET_USD
    if not 0 < budget < float("inf"):
        parser.error("--max-budget-usd must be a positive number")
    if args.http is not None and not 1 <= args.http <= 65535:
        parser.error(f"--http takes a port from 1 to 65535, not {args.http}")
    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        parser.error(f"--cwd {args.cwd}: not a directory")
    problem = _user_model_prices()
    if problem:
        parser.error(problem)
    policy = _serve_policy(args, cwd)
    sandbox = _serve_sandbox(args) if policy is not None else None
    if policy is None or sandbox is None:
        return 2
    tools = builtin_tools(fetcher=Fetcher.from_env())
    server = SagentServer(tools, cwd, budget, permissions=policy, sandbox=sandbox)
    if args.http is None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_stdio(server))
        return 0
    return _serve_http(server, args.http)


def _serve_sandbox(args: argparse.Namespace) -> Any:
    """The OS sandbox of `sagent mcp serve`: the settings files' `sandbox` and `--sandbox` (None after saying
    why it cannot be used, or that a required sandbox cannot start)."""
    from sagent.cli.sandbox_settings import SandboxSettingsError, check_at_start, sandbox_policy

    args.sandbox_settings = args.settings_files.loaded.values.get("sandbox")
    try:
        policy = sandbox_policy(args)
    except SandboxSettingsError as error:
        sys.stderr.write(f"sagent mcp: {error}\n")
        return None
    problem = check_at_start(policy, ["Bash"])
    if problem is not None:
        sys.stderr.write(f"sagent mcp: {problem}\n")
        return None
    return policy


def _serve_policy(args: argparse.Namespace, cwd: Path) -> Any:
    """The permission policy of `sagent mcp serve`: the settings files' and the flags' (None after saying
    why it cannot be used)."""
    from sagent.cli.permission_settings import PermissionsError, from_args

    loaded = load(cwd)
    for warning in loaded.warnings:
        sys.stderr.write(f"sagent: warning: {warning}\n")
    args.settings_files = Sources(loaded, frozenset(), dict(os.environ))
    try:
        return from_args(args, cwd)
    except PermissionsError as error:
        sys.stderr.write(f"sagent mcp: {error}\n")
        return None


def _serve_http(server: Any, port: int) -> int:
    from sagent.mcp.auth import TOKEN_VARIABLE, server_token
    from sagent.mcp.server import serve_http

    try:
        token, written = server_token(port)
    except ValueError as error:
        sys.stderr.write(f"sagent mcp: {error}\n")
        return 2
    except OSError as error:
        sys.stderr.write(f"sagent mcp: cannot write the bearer token privately: {error}\n")
        return 1
    where = f"the token is in {written} (readable by you alone)" if written else f"the token is ${TOKEN_VARIABLE}"

    def ready() -> None:  # once the port is bound
        sys.stderr.write(
            f"sagent mcp serve: http://127.0.0.1:{port}/mcp; send `Authorization: Bearer TOKEN`: {where}\n"
        )
        sys.stderr.flush()

    def stop(number: int, frame: object) -> None:  # uvicorn raises the signal again once it has shut down
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        asyncio.run(serve_http(server, port, token, ready=ready))
    except (KeyboardInterrupt, SystemExit):
        return 0
    except OSError as error:  # the port is taken, or not ours to bind
        sys.stderr.write(f"sagent: error: cannot serve on 127.0.0.1:{port}: {error.strerror or error}\n")
        return 1
    finally:
        if written is not None:
            with contextlib.suppress(OSError):
                written.unlink()
    return 0


def _user_model_prices() -> str | None:
    """Price models as the user's own settings file says (`modelPrices`), for every task served; the problem
    with the file or its prices, or None. (A project's files are not read: a served task's budget is the
    server's, and a project must not lower it.)"""
    from sagent.providers.catalog import set_model_prices

    path = user_settings_file()
    try:
        prices = (read_file(path) or {}).get("modelPrices")
        if prices is not None:
            set_model_prices(prices)
    except (SettingsError, ValueError, AttributeError) as error:
        return f'{path}: key "modelPrices": {error}'
    return None
