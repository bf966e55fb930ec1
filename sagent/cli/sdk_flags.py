"""The flags the Claude Agent SDKs give the CLI they start, so a program built on either SDK (Python
`claude-agent-sdk`, TypeScript `@anthropic-ai/claude-agent-sdk`) runs with sagent as that CLI, unchanged.

`add_sdk_flags` adds them to the parser (their own help group); `apply_sdk_flags` turns them into sagent's
own settings once the arguments are parsed: `--system-prompt` is `--system`, `--max-turns` is
`--max-tool-rounds`, `--resume ID` in a stream-json run is `--session ID`, and so on. A flag that has no
mechanism in sagent yet is accepted and said once on stderr, so the program goes on and its user knows.
Safety flags are never passed over: a permission mode or prompt tool sagent cannot honour is refused.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SDK_GROUP = "Claude Agent SDK (the flags an SDK program starts its CLI with; see docs/library.md)"

# Flags accepted for the SDKs whose meaning sagent has no mechanism for: each said once on stderr when given.
WITHOUT_MECHANISM = {
    "task_budget": "--task-budget (the API's task token budget) has no effect in sagent; use --max-budget-usd",
    "fallback_model": "--fallback-model is not used: sagent retries the same model",
    "betas": "--betas (Anthropic beta headers) is not sent by sagent",
    "include_hook_events": "--include-hook-events: sagent writes hook_notice records instead of hook events",
    "resume_session_at": "--resume-session-at is not supported: the whole session is resumed",
    "resume_drops_turn": "--resume-drops-turn is not supported: the whole session is resumed",
    "session_mirror": "--session-mirror is not supported: sagent keeps its own session log",
    "thinking_display": "--thinking-display is not supported: thinking is shown as the provider returns it",
    "json_schema": "--json-schema (structured output) is not supported: the result is the model's text",
    "agent": "--agent is not supported: the main agent is sagent's own",
    "channels": "--channels is not supported",
    "managed_settings": "--managed-settings is not read by sagent",
    "project_config_root": "--project-config-root is not used: the project is found from the working directory",
    "permission_prompts": "--permission-prompts is not supported",
}

# Flags that change nothing in sagent and need no word: sagent already behaves as they ask.
QUIET = ("verbose", "debug", "debug_file", "debug_to_stderr", "await_initialize", "initialize_fields")

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


def add_sdk_flags(p: argparse.ArgumentParser) -> None:
    """The SDKs' flags, in their own help group."""
    g = p.add_argument_group(SDK_GROUP)
    g.add_argument("--verbose", action="store_true", help="accepted: stream-json records are always complete")
    g.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="replace the system prompt, as --system; empty: sagent's own prompt (the SDK's default)",
    )
    g.add_argument("--system-prompt-file", metavar="FILE", help="replace the system prompt with this file's text")
    g.add_argument("--append-system-prompt", metavar="TEXT", help="append to the system prompt, as --append-system")
    g.add_argument("--max-turns", type=int, metavar="N", help="stop after N rounds of tool calls, as --max-tool-rounds")
    g.add_argument("--task-budget", type=int, metavar="TOKENS", help="accepted; no effect in sagent")
    g.add_argument("--fallback-model", metavar="MODEL", help="accepted; sagent retries the same model")
    g.add_argument("--betas", metavar="NAMES", help="accepted; not sent by sagent")
    g.add_argument(
        "--permission-prompt-tool",
        metavar="stdio",
        help="stdio: ask the SDK's program (a can_use_tool control request) whenever the policy would ask",
    )
    g.add_argument("--permission-prompts", metavar="VALUE", help="accepted; not supported")
    g.add_argument(
        "--allow-dangerously-skip-permissions",
        action="store_true",
        help="let the SDK's program switch to bypassPermissions later (set_permission_mode)",
    )
    g.add_argument("--session-id", metavar="ID", help="the id of the new session (letters, digits, - and _)")
    g.add_argument(
        "--settings",
        metavar="FILE|JSON",
        help="a settings file (or a JSON object) applied over the settings files, below the flags",
    )
    g.add_argument(
        "--setting-sources",
        metavar="SOURCES",
        help="which settings files to read: a comma-separated list of user, project and local (empty: none)",
    )
    g.add_argument(
        "--mcp-config",
        action="append",
        metavar="FILE|JSON",
        help='MCP servers ({"mcpServers": {...}}) from a file or JSON text, beside the configured ones; '
        'entries of "type": "sdk" run in the SDK\'s program; repeatable',
    )
    g.add_argument(
        "--strict-mcp-config", action="store_true", help="use only the --mcp-config servers, none configured"
    )
    g.add_argument("--include-hook-events", action="store_true", help="accepted; sagent writes hook_notice records")
    g.add_argument(
        "--fork-session",
        action="store_true",
        help="with --resume, --session or --continue: go on in a new session, leaving the original as it is",
    )
    g.add_argument("--resume-session-at", metavar="MESSAGE", help="accepted; the whole session is resumed")
    g.add_argument("--resume-drops-turn", metavar="VALUE", help="accepted; the whole session is resumed")
    g.add_argument("--session-mirror", action="store_true", help="accepted; not supported")
    g.add_argument("--no-session-persistence", action="store_true", help="write no session log, as --ephemeral")
    g.add_argument("--plugin-dir", action="append", metavar="DIR", help="use the plugin folder DIR in this run")
    g.add_argument("--plugin-dir-no-mcp", action="append", metavar="DIR", help="as --plugin-dir, without its servers")
    g.add_argument(
        "--thinking",
        choices=("adaptive", "enabled", "disabled"),
        help="disabled: no extended thinking; adaptive or enabled: the model's default or --max-thinking-tokens",
    )
    g.add_argument(
        "--max-thinking-tokens", type=int, metavar="N", help="extended thinking with N tokens, as --thinking-budget"
    )
    g.add_argument("--thinking-display", metavar="MODE", help="accepted; not supported")
    g.add_argument("--json-schema", metavar="SCHEMA", help="accepted; structured output is not supported")
    g.add_argument("--agent", metavar="NAME", help="accepted; not supported")
    g.add_argument(
        "--agents",
        metavar="JSON",
        help='sub-agents AgentSpawn starts by name, as JSON ({"NAME": {"description": ..., "prompt": ..., '
        '"tools": [...], "model": ...}}), beside the agent files and winning over one of the same name',
    )
    g.add_argument("--channels", action="append", metavar="NAME", help="accepted; not supported")
    g.add_argument("--debug", nargs="?", const="", metavar="FILTER", help="accepted; no effect")
    g.add_argument("--debug-file", metavar="FILE", help="accepted; no effect")
    g.add_argument("--debug-to-stderr", action="store_true", help="accepted; no effect")
    g.add_argument("--project-config-root", metavar="DIR", help="accepted; not used")
    g.add_argument(
        "--await-initialize", action="store_true", help="accepted: sagent answers the SDK's initialize anyway"
    )
    g.add_argument("--initialize-fields", metavar="NAMES", help="accepted; no effect")
    g.add_argument("--managed-settings", metavar="JSON", help="accepted; not read")
    g.add_argument("--managed-settings-in-initialize", action="store_true", help="accepted; not read")


def apply_sdk_flags(args: argparse.Namespace, stderr: Any = None) -> str | None:
    """Turn the SDKs' flags into sagent's own settings on `args`; a problem to report as bad usage, or
    None. Flags without a mechanism are said once on `stderr`."""
    stderr = stderr or sys.stderr
    problem = _prompts(args) or _sessions(args) or _permissions(args) or _mcp(args) or _agents(args) or _plugins(args)
    if problem:
        return problem
    if args.max_turns is not None:
        if args.max_turns < 1:
            return "--max-turns must be at least 1"
        if args.max_tool_rounds is None:
            args.max_tool_rounds = args.max_turns
    _thinking(args)
    if args.tools is not None and args.tools.strip() == "":
        args.tools = "none"  # the SDK's `tools=[]`: no built-in tools
    elif args.tools is not None and args.tools.strip().lower() == "default":
        args.tools = None  # the SDK's preset: every built-in tool
    elif args.tools is not None and sdk_run(args):
        args.tools = _sagent_tools(args.tools, stderr)
    if sdk_run(args) and args.model and args.provider in (None, "anthropic"):
        from sagent.providers.catalog import ALIASES, long_context_base

        base = long_context_base(args.model)  # `sonnet[1m]`: the alias on its 1M-token context
        if base is not None and base.lower() in ALIASES:
            args.model = ALIASES[base.lower()] + "+1m"
        args.model = ALIASES.get(args.model.lower(), args.model)  # Claude Code's `sonnet`, `opus`, `haiku`
    for name, line in WITHOUT_MECHANISM.items():
        if getattr(args, name, None):
            stderr.write(f"sagent: note: {line}\n")
    return None


CLAUDE_CODE_TOOLS = {"LS": "List", "MultiEdit": "Edit", "Task": "AgentSpawn", "Agent": "AgentSpawn"}
"""Claude Code's names for tools sagent has under another name."""


def _sagent_tools(names: str, stderr: Any) -> str:
    """An SDK program's `tools` list in sagent's names; a Claude Code tool sagent lacks
    (NotebookEdit) is left out and said once, rather than failing the run."""
    from sagent.tools import BUILTIN, BY_CATALOG

    known = {cls.name for cls in (*BUILTIN, *BY_CATALOG)}  # Skill among them
    kept: list[str] = []
    missing: list[str] = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        name = CLAUDE_CODE_TOOLS.get(name, name)
        if name not in known:
            missing.append(name)
        elif name not in kept:
            kept.append(name)
    if missing:
        stderr.write(f"sagent: note: --tools: sagent has no tool {', '.join(missing)}; left out\n")
    return ",".join(kept) or "none"


def _agents(args: argparse.Namespace) -> str | None:
    """--agents JSON read now, so text that is not a JSON object is bad usage before anything starts."""
    text = getattr(args, "agents", None)
    if text is None:
        return None
    try:
        given = json.loads(text)
    except ValueError as error:
        return f"--agents: not JSON ({error})"
    if not isinstance(given, dict):
        return '--agents: give a JSON object, {"NAME": {"description": ..., "prompt": ...}}'
    args.agents = given
    return None


def _prompts(args: argparse.Namespace) -> str | None:
    if args.system_prompt_file:
        try:
            args.system = Path(args.system_prompt_file).read_text(encoding="utf-8-sig")
        except OSError as error:
            return f"--system-prompt-file {args.system_prompt_file}: {error.strerror or error}"
        except UnicodeDecodeError:
            return f"--system-prompt-file {args.system_prompt_file}: not UTF-8 text"
    elif args.system_prompt:  # empty: the SDK gave none, and sagent's own prompt applies
        args.system = args.system_prompt
    if args.append_system_prompt:
        given = args.append_system
        args.append_system = f"{given}\n\n{args.append_system_prompt}" if given else args.append_system_prompt
    return None


def _sessions(args: argparse.Namespace) -> str | None:
    if args.no_session_persistence:
        args.ephemeral = True
    if args.session_id is not None and not _SESSION_ID.fullmatch(args.session_id):
        return f"--session-id {args.session_id!r}: use letters, digits, - and _ (at most 100)"
    if args.input_format == "stream-json" and args.resume:
        # The SDK resumes a session with --resume ID in a run that reads stream-json: a headless run, where
        # sagent's own flag for it is --session (a bare --resume still opens the REPL's picker).
        if args.session:
            return "--resume and --session cannot be used together"
        args.session, args.resume = args.resume, None
    if args.fork_session and not (args.continue_ or args.session or args.resume is not None):
        return "--fork-session needs --resume, --session or --continue"
    if args.session_id is not None and (args.continue_ or args.session) and not args.fork_session:
        return "--session-id names a new session: with --resume or --continue, give --fork-session too"
    return None


def _permissions(args: argparse.Namespace) -> str | None:
    args.refuse_unasked = False
    if args.permission_mode == "dontAsk":  # what would ask is refused, and nobody is asked
        args.permission_mode, args.refuse_unasked = "default", True
    elif args.permission_mode == "auto":  # no classifier in sagent: the default mode, which asks
        args.permission_mode = "default"
        sys.stderr.write("sagent: note: --permission-mode auto is the default mode in sagent: what would ask asks\n")
    tool = args.permission_prompt_tool
    if tool == "stdio" and not sdk_run(args):
        return (
            "--permission-prompt-tool stdio asks the program on stdin: it needs --input-format stream-json "
            "and --output-format stream-json"
        )
    if tool is not None and tool != "stdio":
        return (
            f"--permission-prompt-tool {tool}: sagent asks through the SDK's control protocol only "
            "(--permission-prompt-tool stdio); an MCP tool cannot answer its permission questions"
        )
    return None


def _plugins(args: argparse.Namespace) -> str | None:
    """`--plugin-dir DIR` and `--plugin-dir-no-mcp DIR`: plugin folders used in this run (docs/plugins.md)."""
    for flag, folders, servers in (
        ("--plugin-dir", args.plugin_dir, True),
        ("--plugin-dir-no-mcp", args.plugin_dir_no_mcp, False),
    ):
        if folders:
            from sagent.resources.plugins import PluginError, use_for_run

            try:
                use_for_run(folders, servers=servers)
            except PluginError as error:
                return f"{flag}: {error}"
    return None


def _mcp(args: argparse.Namespace) -> str | None:
    """`--mcp-config` values read into `args.sdk_mcp_servers` (the SDK's in-process servers) and
    `args.mcp_servers` (the others, over the settings files' own)."""
    args.sdk_mcp_servers = {}
    if not args.mcp_config:
        if args.strict_mcp_config:
            args.mcp_servers = {}
        return None
    servers: dict[str, Any] = {}
    for value in args.mcp_config:
        for text in _config_texts(value):
            problem = _read_mcp_config(text, servers)
            if problem:
                return problem
    sdk = {name: entry for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"}
    others = {name: entry for name, entry in servers.items() if name not in sdk}
    args.sdk_mcp_servers = sdk
    args.mcp_servers = others if args.strict_mcp_config else {**(args.mcp_servers or {}), **others}
    return None


def _config_texts(value: str | list[str]) -> list[str]:
    return value if isinstance(value, list) else [value]


def _read_mcp_config(text: str, servers: dict[str, Any]) -> str | None:
    where = "--mcp-config"
    if not text.lstrip().startswith("{"):
        where = f"--mcp-config {text}"
        try:
            text = Path(text).read_text(encoding="utf-8-sig")
        except OSError as error:
            return f"{where}: {error.strerror or error}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return f"{where}: not JSON ({error.msg})"
    entries = data.get("mcpServers", data) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return f'{where}: expected an object with "mcpServers"'
    servers.update(entries)
    return None


def _thinking(args: argparse.Namespace) -> None:
    if args.thinking == "disabled":
        args.thinking_budget = None
    elif args.max_thinking_tokens is not None and args.thinking_budget is None:
        args.thinking_budget = args.max_thinking_tokens if args.max_thinking_tokens > 0 else None


def sdk_run(args: argparse.Namespace) -> bool:
    """Whether a program on the SDK started this run: it reads and writes stream-json, and speaks the
    control protocol on them."""
    return bool(args.input_format == "stream-json" and args.output_format == "stream-json")
