"""Which MCP servers a run connects to: a project's `.mcp.json` and the settings files' `mcpServers`.

Both use Claude Code's shape, so one file serves both tools:

    {"mcpServers": {
        "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                   "env": {"DEBUG": "${DEBUG:-0}"}},
        "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                   "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"}}}

`${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`, `url` and `headers`. An entry of
the wrong shape is an error naming the file and the key; an unknown key is a warning. This module reads and
writes the files; it imports no SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse", "sdk"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse")
"""The transports a configuration file may name; `sdk` (a Claude Agent SDK application's in-process
server, reached over its control protocol) comes only from the SDK's `--mcp-config`."""
PROJECT_FILE = ".mcp.json"
MAX_BYTES = 1024 * 1024  # a larger .mcp.json is not a configuration file
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_STDIO_KEYS = frozenset({"type", "command", "args", "env"})
_REMOTE_KEYS = frozenset({"type", "url", "headers"})


class McpConfigError(Exception):
    """An MCP server entry that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One MCP server as configured, variables expanded."""

    name: str
    """The server's name: its tools are `mcp__<name>__<tool>`."""
    transport: Transport
    """`stdio` (a subprocess), `http` (streamable HTTP) or `sse` (the legacy HTTP + SSE transport)."""
    command: str = ""
    """The program to start (stdio)."""
    args: tuple[str, ...] = ()
    """Its arguments (stdio)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to its environment (stdio)."""
    url: str = ""
    """The endpoint (http, sse)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent with each request (http, sse), such as an Authorization."""
    source: str = ""
    """The file this entry came from."""
    connect: Callable[[], AbstractAsyncContextManager[tuple[Any, Any]]] | None = field(
        default=None, compare=False, repr=False
    )
    """For a server reached by code rather than configuration (`sdk`): makes the (read, write) streams of
    an MCP `ClientSession` to it, as the SDK's transports do."""

    def describe(self) -> str:
        """One line: how the server is reached."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        if self.transport == "sdk":
            return "in the Claude Agent SDK application's process (control protocol)"
        return f"{self.url} ({self.transport})"


def valid_name(name: str) -> bool:
    """True for a server name sagent accepts: 1 to 48 letters, digits, `_` or `-`."""
    return bool(_NAME.match(name))


def expand(text: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with `${VAR}` and `${VAR:-default}` replaced; McpConfigError when VAR is unset and has no
    default (a token missing from the environment must not become an empty header silently)."""
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise McpConfigError(f"{where}: ${{{name}}} is not set (give it a default with ${{{name}:-value}})")

    return _VARIABLE.sub(value, text)


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float, str)):
        return json.dumps(value)[:40]
    return "a list" if isinstance(value, list) else "an object"


def parse_server(
    name: str, entry: Any, source: str, warnings: list[str] | None = None, expand_vars: bool = True
) -> ServerConfig:
    """One entry of `mcpServers`, checked and expanded (`expand_vars` False keeps `${VAR}` as written:
    an untrusted folder's entry, shown and never started, must not print the user's variables);
    McpConfigError naming `source` and the key."""
    key = f"mcpServers.{name}"
    if not _NAME.match(name):
        raise McpConfigError(f'{source}: key "{key}": a server name is 1 to 48 letters, digits, "_" or "-"')
    if not isinstance(entry, dict):
        raise McpConfigError(f'{source}: key "{key}": must be an object, not {_kind(entry)}')
    kind = entry.get("type", "stdio" if "command" in entry else None)
    if kind == "streamable-http":
        kind = "http"
    if kind not in TRANSPORTS:
        expected = 'a "command" (stdio) or a "type" of "http" or "sse" with a "url"'
        raise McpConfigError(f'{source}: key "{key}": needs {expected}, got type {_kind(kind)}')
    known = _STDIO_KEYS if kind == "stdio" else _REMOTE_KEYS
    for extra in sorted(set(entry) - known):
        if warnings is not None:
            warnings.append(f'{source}: unknown key "{key}.{extra}" is ignored')

    def text(member: str, value: Any) -> str:
        if not isinstance(value, str) or "\0" in value:
            raise McpConfigError(f'{source}: key "{key}.{member}": must be a string, not {_kind(value)}')
        return expand(value, f'{source}: key "{key}.{member}"') if expand_vars else value

    def table(member: str) -> dict[str, str]:
        value = entry.get(member, {})
        if not isinstance(value, dict):
            raise McpConfigError(f'{source}: key "{key}.{member}": must be an object, not {_kind(value)}')
        return {str(k): text(f"{member}.{k}", v) for k, v in value.items()}

    if kind == "stdio":
        command = text("command", entry.get("command"))
        if not command.strip():
            raise McpConfigError(f'{source}: key "{key}.command": must not be empty')
        args = entry.get("args", [])
        if not isinstance(args, list):
            raise McpConfigError(f'{source}: key "{key}.args": must be a list of strings, not {_kind(args)}')
        expanded = tuple(text(f"args[{i}]", a) for i, a in enumerate(args))
        return ServerConfig(name, "stdio", command=command, args=expanded, env=table("env"), source=source)
    url = text("url", entry.get("url"))
    if not re.match(r"^https?://[^/\s]+", url):
        raise McpConfigError(f'{source}: key "{key}.url": must be an http:// or https:// address, not {url!r}')
    return ServerConfig(name, kind, url=url, headers=table("headers"), source=source)


def parse_servers(
    servers: Any,
    source: str,
    warnings: list[str] | None = None,
    origins: Mapping[str, str] | None = None,
    expand_vars: bool = True,
) -> list[ServerConfig]:
    """The entries of an `mcpServers` object; `origins` names the file of each entry when they were merged
    from several (the settings files)."""
    if not isinstance(servers, dict):
        raise McpConfigError(f'{source}: key "mcpServers": must be an object, not {_kind(servers)}')
    return [parse_server(n, e, (origins or {}).get(n, source), warnings, expand_vars) for n, e in servers.items()]


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it does not exist; McpConfigError when it is not one."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise McpConfigError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(raw) > MAX_BYTES:
        raise McpConfigError(f"{path}: larger than {MAX_BYTES // 1024} KiB")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise McpConfigError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise McpConfigError(f"{path}: must hold a JSON object, not {_kind(data)}")
    return data


def project_servers(root: Path, warnings: list[str] | None = None, expand_vars: bool = True) -> list[ServerConfig]:
    """The servers of `root/.mcp.json` (none when there is no such file)."""
    path = root / PROJECT_FILE
    data = read_json(path)
    if data is None:
        return []
    return parse_servers(data.get("mcpServers", {}), str(path), warnings, expand_vars=expand_vars)


def all_servers(
    root: Path,
    settings_servers: Mapping[str, Any],
    origins: Mapping[str, str],
    warnings: list[str] | None = None,
    project: bool = True,
) -> list[ServerConfig]:
    """The project's `.mcp.json` servers (when `project`: its folder is trusted), then the settings
    files' (a settings entry replaces a project entry of the same name: settings are the user's own
    choice)."""
    found = {s.name: s for s in project_servers(root, warnings)} if project else {}
    for server in parse_servers(dict(settings_servers), "settings", warnings, origins):
        found[server.name] = server
    return list(found.values())


def write_entry(path: Path, name: str, entry: dict[str, Any] | None) -> bool:
    """Set (or with `entry` None, remove) `mcpServers.name` in the JSON file at `path`, keeping its other
    keys; True when the file changed. The file is written whole to a temporary name, then renamed."""
    data = read_json(path) or {}
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f'{path}: key "mcpServers": must be an object, not {_kind(servers)}')
    if entry is None:
        if name not in servers:
            return False
        del servers[name]
    else:
        servers[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return True
