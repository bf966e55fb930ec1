"""The `sagent` subcommands in one table: what `main` dispatches, what `sagent --help` lists, and what the
tests walk to check that each one's `--help` works. A subcommand not in this table does not exist.

Only the standard library is imported here; each subcommand's module loads when it runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["SUBCOMMANDS", "Subcommand", "asks_help", "find", "help_lines", "leading_flags_problem", "run"]


class Subcommand(NamedTuple):
    """One subcommand: its name, its line in `sagent --help`, and the function that runs it. (A NamedTuple:
    importing `dataclasses` would cost every start more than this table's own work.)"""

    name: str
    usage: str  # what follows `sagent NAME` in the help's list
    summary: str  # one line
    target: str  # "module:function", called with the arguments after the name
    verbs: tuple[str, ...] = ()  # its own subcommands, each with a --help of its own
    run_flags: bool = False  # takes sagent's run flags (--model, --cwd ...), so they may come before it too
    also: tuple[tuple[str, str], ...] = ()  # more lines for the help's list: (usage after `sagent`, summary)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("models", "[PROVIDER]", "the model catalog with prices", "sagent.cli.commands:list_models"),
    Subcommand("providers", "", "providers, their key variables and endpoints", "sagent.cli.commands:list_providers"),
    Subcommand(
        "sessions",
        "[DIR]",
        "this directory's sessions",
        "sagent.cli.commands:list_session_files",
        verbs=("verify", "search", "export", "import"),
        also=(
            ("sessions verify ID|PATH|DIR", "check a session log or bundle (exit 0 whole, 1 damaged)"),
            ("sessions search TEXT", "search this project's past sessions"),
            ("sessions export ID DIR", "copy a session's tree into a checkable bundle folder"),
            ("sessions import DIR", "take a bundle back into this directory's sessions"),
        ),
    ),
    Subcommand(
        "config",
        "[--json] [FLAGS]",
        "the effective settings and where each came from",
        "sagent.cli.config_cmd:config_command",
        verbs=("set", "unset"),
        run_flags=True,
        also=(("config set KEY VALUE", "write one key of a settings file (--scope user|project|local)"),),
    ),
    Subcommand(
        "doctor",
        "[--json] [--cwd DIR]",
        "check the install, keys, CLIs and sandbox; say how to fix each",
        "sagent.cli.doctor:doctor_command",
    ),
    Subcommand(
        "trust",
        "[--list | --revoke] [DIR]",
        "let a project's settings files, MCP servers and commands apply",
        "sagent.cli.trust_cmd:trust_command",
    ),
    Subcommand(
        "skills",
        "[--json] [--cwd DIR]",
        "the skills a run here offers, and those it cannot",
        "sagent.cli.skills_cmd:skills_command",
    ),
    Subcommand(
        "mcp",
        "list|get|add|remove|serve",
        "configure MCP servers, or serve sagent's tools over MCP",
        "sagent.cli.mcp_cmd:mcp_command",
        verbs=("list", "get", "add", "remove", "serve"),
    ),
    Subcommand(
        "plugin",
        "install|list|remove|enable|disable|validate",
        "plugins in Claude Code's layout: commands, agents, skills, hooks, MCP servers",
        "sagent.cli.plugin_cmd:plugin_command",
        verbs=("install", "list", "remove", "enable", "disable", "validate"),
    ),
    Subcommand(
        "compare",
        "A B [--json] [--html FILE]",
        "two sessions side by side (text, --json or an HTML page)",
        "sagent.cli.evidence_cmd:compare_command",
    ),
    Subcommand(
        "trace",
        "SESSION [--html FILE]",
        "a session's tree of agents as a timeline",
        "sagent.cli.evidence_cmd:trace_command",
    ),
    Subcommand(
        "replay",
        "SESSION --model M",
        "run a session's prompts again on another model, in a scratch copy",
        "sagent.cli.evidence_cmd:replay_command",
    ),
    Subcommand(
        "acp",
        "[FLAGS]",
        "an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains, Neovim, Emacs)",
        "sagent.acp.command:acp_command",
        run_flags=True,
    ),
    Subcommand("slack", "[FLAGS]", "persistent agents in Slack", "sagent.slack.cli:main", run_flags=True),
    Subcommand(
        "serve",
        "--label L [--fleet F]",
        "host agent L of a fleet on a NATS server, for good",
        "sagent.cli.fleet_cmd:serve_command",
        run_flags=True,
    ),
    Subcommand(
        "fleet",
        "ls|send|attach|stop",
        "the fleet's agents, from any terminal",
        "sagent.cli.fleet_cmd:fleet_command",
        verbs=("ls", "send", "attach", "stop"),
    ),
)


def asks_help(argv: list[str]) -> bool:
    """Whether a subcommand's arguments ask for its help (-h or --help anywhere among them)."""
    return any(arg in ("-h", "--help") for arg in argv)


def find(name: str) -> Subcommand | None:
    """The subcommand called `name`, or None."""
    return next((sub for sub in SUBCOMMANDS if sub.name == name), None)


def run(sub: Subcommand, argv: list[str]) -> int:
    """Run `sub` with the arguments after its name; its exit code."""
    module, _, function = sub.target.partition(":")
    command: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return command(argv)


def help_lines() -> str:
    """The subcommands as `sagent --help` lists them, one line each."""
    rows = [(f"sagent {sub.name} {sub.usage}".rstrip(), sub.summary) for sub in SUBCOMMANDS]
    rows = [row for sub, first in zip(SUBCOMMANDS, rows, strict=True) for row in (first, *_also(sub))]
    width = max(len(head) for head, _ in rows) + 2
    return "".join(f"  {head:<{width}}{summary}\n" for head, summary in rows)


def _also(sub: Subcommand) -> list[tuple[str, str]]:
    return [(f"sagent {usage}", summary) for usage, summary in sub.also]


def leading_flags_problem(flags: list[str], sub: Subcommand, rest: list[str]) -> str | None:
    """Why `flags`, given before `sub`'s name (and `rest` after it), cannot apply to it (None when they
    can: it takes the run flags, and they are passed on after its name; none of its verbs does)."""
    verb = rest[0] if rest and rest[0] in sub.verbs else None
    if sub.run_flags and verb is None:
        return None
    name = f"{sub.name} {verb}" if verb else sub.name
    return (
        f"{' '.join(flags)}: `sagent {name}` takes none of sagent's run flags before it; "
        f"see `sagent {name} --help` (or give a task with -p TASK)"
    )
