"""`sagent-slack` (also `sagent slack`): the command that runs the Slack service.

The flags are `sagent`'s own (provider, model, tools, compaction, budgets, sub-agents, settings files)
plus the Slack ones; the flags that only make sense for one task in a terminal are hidden and refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from sagent.cli.flags import EXIT_USAGE, checked, parse_with_settings, parser_for

DESCRIPTION = """\
sagent-slack: persistent sagent agents in a Slack workspace, over Socket Mode.

Mention the bot or DM it: `help`, `list`, `create <persona> [as <name>]`, `stop <name>`. A persona is
<persona>.md in --persona-dir (else default.md there, else "You are <persona>."). Each agent answers in
threads under its name and writes its tool calls and costs to #<log-prefix><name>-log.

The Slack app (see docs/slack.md): Socket Mode on, an app-level token with connections:write
(--app-token, $SLACK_APP_TOKEN), and a bot token (--bot-token, $SLACK_BOT_TOKEN) with the scopes
app_mentions:read, channels:history, channels:join, channels:manage, channels:read, chat:write,
chat:write.customize, groups:history, im:history, reactions:read; bot events app_mention,
message.channels, message.groups, message.im, reaction_added.

Safety: every Slack message the bot can read is a prompt from whoever wrote it, and the agents act with
the tools and permission rules given here: give them only what anyone in those channels may do.
"""

# Flags of a one-task run in a terminal, which the service does not take.
NOT_HERE = (
    "--prompt",
    "--output-format",
    "--input-format",
    "--include-partial-messages",
    "--session",
    "--resume",
    "--before-compaction",
    "--fork-damaged",
    "--ephemeral",
    "--system",
)


def build_slack_parser() -> argparse.ArgumentParser:
    """`sagent`'s parser with the Slack flags added and the one-task flags hidden."""
    parser = parser_for("sagent-slack", DESCRIPTION, NOT_HERE)
    for action in parser._actions:
        if "--continue" in action.option_strings:
            action.help = "restore the agents of the newest Slack session under --session-dir, with their histories"
    slack = parser.add_argument_group("slack")
    slack.add_argument("--app-token", metavar="TOKEN", help="the app-level token, xapp-… (default $SLACK_APP_TOKEN)")
    slack.add_argument("--bot-token", metavar="TOKEN", help="the bot token, xoxb-… (default $SLACK_BOT_TOKEN)")
    slack.add_argument("--persona-dir", metavar="DIR", help="where <persona>.md files are (default: none)")
    slack.add_argument(
        "--log-prefix",
        default="sagent-",
        metavar="TEXT",
        help="log channels are #<prefix><agent>-log (default sagent-)",
    )
    slack.add_argument(
        "--router-log-channel",
        default="router-log",
        metavar="NAME",
        help="where the router's decisions are posted (default router-log; empty: nowhere)",
    )
    slack.add_argument(
        "--session-dir", metavar="DIR", help="where Slack sessions are kept (default $XDG_DATA_HOME/sagent/slack)"
    )
    slack.add_argument("--slack-api-url", metavar="URL", help="the Slack Web API base URL (a proxy or a test server)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the service until interrupted; the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_with_settings(build_slack_parser(), argv)
    if args is None:
        return EXIT_USAGE
    problem = _check(args) or checked(args)
    if problem:
        sys.stderr.write(f"sagent-slack: error: {problem}\n")
        return EXIT_USAGE
    if args.effort == "none":
        args.effort = None
    from sagent.slack.run import run_service

    return run_service(args)


def _check(args: argparse.Namespace) -> str | None:
    used = [f for f in NOT_HERE if getattr(args, f.lstrip("-").replace("-", "_"), None) not in (None, False, "text")]
    if used == ["--system"]:
        return "--system: here each agent's system prompt is its persona (--persona-dir); --append-system adds to all"
    if used:
        return f"{used[0]} is for one task in a terminal; sagent-slack takes its work from Slack"
    args.app_token = args.app_token or os.environ.get("SLACK_APP_TOKEN", "")
    args.bot_token = args.bot_token or os.environ.get("SLACK_BOT_TOKEN", "")
    if not args.app_token:
        return "no app-level token: give --app-token or set SLACK_APP_TOKEN (an xapp- token with connections:write)"
    if not args.bot_token:
        return "no bot token: give --bot-token or set SLACK_BOT_TOKEN (an xoxb- token; see --help for its scopes)"
    if args.persona_dir and not Path(args.persona_dir).is_dir():
        return f"--persona-dir {args.persona_dir}: not a directory"
    return None


def entry() -> NoReturn:
    """The `sagent-slack` script."""
    sys.exit(main())
