"""`sagent acp`: the command an editor starts to talk to sagent over the Agent Client Protocol."""

from __future__ import annotations

import argparse
import sys

from sagent.cli.flags import EXIT_USAGE, checked, parse_with_settings, parser_for

DESCRIPTION = """\
sagent acp: sagent as an Agent Client Protocol (ACP) agent, for editors that start agents and talk to them
over standard input and output: Zed, JetBrains IDEs, Neovim (CodeCompanion, avante.nvim), Emacs
(agent-shell). Standard output carries only the protocol's JSON-RPC messages; logs go to standard error.

Each session the editor opens runs in its folder, with that folder's settings files and MCP servers, plus
the MCP servers the editor passes (stdio, http, sse). Earlier sagent sessions load by id (their history is
replayed to the editor, then they continue). Whenever the permission policy would ask, the editor asks
the user: allow once, always allow (for this session), reject, always reject. When the editor lends them,
Read, Write and Edit work on its buffers (unsaved edits included) and Bash, where sagent's sandbox does not
confine it, runs in its terminals. The permission mode (default, acceptEdits, plan) and the model are the
session's modes and options. Cancelling a turn stops the model and ends the tools' processes.

The flags are those of `sagent -p`: provider, model, budget, permission mode, tools, settings files;
those for one task in a terminal are refused. See docs/acp.md for each editor's configuration.
"""

NOT_HERE = (
    "--prompt",
    "--output-format",
    "--input-format",
    "--include-partial-messages",
    "--session",
    "--resume",
    "--continue",
    "--before-compaction",
    "--fork-damaged",
    "--fleet",
    "--nats",
    "--label",
)
"""Flags of a one-task run in a terminal: the editor gives the tasks and picks the sessions."""


def build_acp_parser() -> argparse.ArgumentParser:
    """`sagent`'s parser as `sagent acp` takes it: the one-task flags hidden (and refused)."""
    return parser_for("sagent acp", DESCRIPTION, NOT_HERE)


def parse_session_args(argv: list[str]) -> argparse.Namespace | None:
    """The command line with the settings files (of the folder `--cwd` names), normalized as `sagent -p`
    normalizes it; None after saying on stderr why a settings file cannot be used."""
    args = parse_with_settings(build_acp_parser(), argv)
    if args is not None and args.effort == "none":
        args.effort = None  # as /effort off in the REPL: no effort is sent
    return args


def acp_command(argv: list[str]) -> int:
    """`sagent acp [FLAGS]`: 0 when the editor closed the connection, 2 for bad flags."""
    args = parse_session_args(argv)
    if args is None:
        return EXIT_USAGE
    problem = _check(args) or checked(args)
    if problem:
        sys.stderr.write(f"sagent acp: error: {problem}\n")
        return EXIT_USAGE
    import asyncio

    from sagent.acp.server import serve

    try:
        return asyncio.run(serve(argv, parse_session_args, ephemeral=bool(args.ephemeral)))
    except KeyboardInterrupt:
        return 130


def _check(args: argparse.Namespace) -> str | None:
    defaults = {"output_format": "text", "input_format": "text"}
    for flag in NOT_HERE:
        name = "continue_" if flag == "--continue" else flag.lstrip("-").replace("-", "_")
        value = getattr(args, name, None)
        if value not in (None, False, defaults.get(name)):
            return f"{flag} is for one task in a terminal; with `sagent acp` the editor gives the tasks and sessions"
    return None
