"""The `sagent` command's flags: the parser, its help, and the checks of values that argparse cannot make.

Only the standard library is imported at module level (the settings files, the provider specs and the
compaction policy load where they are needed), so `--version` and `--help` stay fast.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from sagent import __version__
from sagent.agent.settings import DEFAULT_MAX_AGENTS, DEFAULT_MAX_DEPTH
from sagent.cli.advisor_settings import add_advisor_flags

EXIT_USAGE = 2

DESCRIPTION = """\
sagent: a coding agent for the terminal.

  sagent                                   the interactive REPL (on a terminal)
  sagent --resume                          pick a session of this directory to reopen in the REPL
  sagent -p "fix the failing test"          run a task and print the answer
  echo "explain main.py" | sagent          the task on standard input
  sagent -p "..." --output-format stream-json   JSON records as events happen
  sagent --fleet F [--label L]             the REPL with its agent in fleet F, reachable as L

commands (each with its own --help; run flags such as --model may come before or after config, serve,
acp and slack):
{commands}
With no provider named and no API key set, sagent runs offline on the embedded local model.
"""

EPILOG = """\
exit codes: 0 success, 1 error (provider, network, tool setup), 2 bad usage or input (a missing or refused
key, no model to run on, a data directory sagent cannot write), 3 stopped at --max-tool-rounds,
4 stopped at --max-budget-usd, 129 terminal closed (SIGHUP), 130 interrupted (Ctrl+C, SIGTERM), 141 the
output's reader left (`sagent models | head`).

{providers}

settings files: $XDG_CONFIG_HOME/sagent/settings.json (default ~/.config/sagent/settings.json), then
.sagent/settings.json and .sagent/settings.local.json at the project root; flags win over them all.
A project's files (and its .mcp.json and .sagent/commands) apply only once you trust its folder:
`sagent trust` (see `sagent trust --help`); until then only their deny and ask rules do.

environment: XDG_DATA_HOME (sessions live in $XDG_DATA_HOME/sagent/sessions, default
~/.local/share/sagent/sessions); XDG_CACHE_HOME (sagent keeps compiled start-up code in
$XDG_CACHE_HOME/sagent, default ~/.cache/sagent; safe to delete); LLAMA_CPP_SERVER (a
llama-server binary for the local model), LLAMA_CPP_MODEL (its .gguf), SAGENT_LOCAL_TOOLS (auto, grammar,
native or text tool calls for it).

web and papers: WebSearch uses DuckDuckGo, or Brave Search when BRAVE_API_KEY is set, or a SearXNG
instance when SEARXNG_URL is set (SAGENT_SEARCH=duckduckgo|brave|searxng chooses). The paper tools use
Semantic Scholar (SEMANTIC_SCHOLAR_API_KEY, optional) and OpenAlex (OPENALEX_API_KEY, OPENALEX_EMAIL,
optional), and keep PDFs in $XDG_CACHE_HOME/sagent/papers (default ~/.cache/sagent/papers);
SAGENT_SEMANTIC_SCHOLAR_URL, SAGENT_OPENALEX_URL and SAGENT_ARXIV_URL point them at a mirror.
SAGENT_ALLOW_HOSTS is --allow-host for every run.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line, without the usage block before them."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"sagent: error: {message} (see sagent --help)\n")

    def format_help(self) -> str:
        # The provider lists come from the provider specs, read only when help is shown: `sagent --version`
        # and a task's start-up do not pay for importing them.
        import textwrap

        from sagent.providers.specs import inference_help, provider_help

        for action in self._actions:
            if "--provider" in action.option_strings:
                action.help = provider_help()
        if self.description == DESCRIPTION:
            from sagent.cli.subcommands import help_lines

            self.description = DESCRIPTION.format(commands=help_lines())
        self.epilog = EPILOG.format(providers=textwrap.fill(inference_help(), width=105))
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="sagent",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"sagent {__version__}")
    p.add_argument("-p", "--prompt", metavar="TASK", help="the task; standard input is appended when piped")
    out = p.add_argument_group("input and output")
    out.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="text: the answer; json: one result object; stream-json: a JSON record per event (default text)",
    )
    out.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: read user messages as JSON lines on stdin, answering each as it arrives",
    )
    out.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with stream-json output, also write text and tool-argument deltas as stream_event records",
    )
    model = p.add_argument_group("model")
    model.add_argument(
        "--provider",
        metavar="NAME",
        help="(from the provider specs, when help is shown)",
    )
    model.add_argument("--model", help="a model id (e.g. claude-sonnet-4-6, gpt-5.4) or a .gguf path")
    model.add_argument("--base-url", help="the provider's API base URL (required for openai-compat; or a proxy)")
    model.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    model.add_argument(
        "--auth",
        choices=("credentials", "api-key"),
        help="for AnthropicCLI, OpenAISubscription and GoogleCLI: the CLI's own sign-in (credentials, the "
        "default) or an API key billed through it (api-key: --api-key-env, else the provider's key variables)",
    )
    model.add_argument(
        "--max-tokens", "--max-response-tokens", type=int, metavar="N", help="the most output tokens per response"
    )
    model.add_argument(
        "--thinking-budget", type=int, metavar="N", help="enable extended thinking with this many tokens"
    )
    model.add_argument(
        "--effort",
        choices=("none", "minimal", "low", "medium", "high", "xhigh", "max"),
        help="reasoning effort for models that take one (OpenAI, Anthropic from Opus 4.5, Gemini's thinking "
        "level); none sends no effort, leaving the model's default; xhigh and max go to the models that have "
        "them, and are a model's highest level elsewhere",
    )
    agent = p.add_argument_group("agent")
    agent.add_argument("--system", metavar="TEXT", help="replace the default system prompt")
    agent.add_argument("--append-system", metavar="TEXT", help="append to the system prompt")
    agent.add_argument(
        "--no-memory",
        action="store_true",
        help="do not read AGENTS.md / CLAUDE.md (from the repository root down to the working directory, "
        "and ~/.config/sagent/AGENTS.md) into the system prompt",
    )
    agent.add_argument(
        "--tools", metavar="NAMES", help="comma-separated tool names, or 'none' (default: all built-in tools)"
    )
    agent.add_argument(
        "--offer-tools",
        metavar="NAMES",
        help="comma-separated built-in tools to offer in every request, not on demand (default: the sub-agent, "
        "task-list, web, paper, memory, job and agent-control tools are loaded by ToolSearch when needed)",
    )
    agent.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST",
        help="let WebFetch and the paper tools reach this host (or HOST:PORT) even at a loopback or private "
        "address, which they refuse by default; comma-separated or repeated (also SAGENT_ALLOW_HOSTS)",
    )
    agent.add_argument(
        "--advisor",
        metavar="MODEL",
        help="a stronger model the agent consults when it is stuck (a model id, or provider:model; any "
        "provider, local too); it only advises, the agent still does the work (see docs/advisor.md)",
    )
    add_advisor_flags(agent)
    agent.add_argument(
        "--max-tool-rounds", "--max-tool-call-rounds", type=int, metavar="N", help="stop after N rounds of tool calls"
    )
    agent.add_argument(
        "--max-budget-usd",
        type=positive_number("dollars"),
        metavar="USD",
        help="stop before spending more than this: a request whose estimated cost would cross it is not sent",
    )
    agent.add_argument(
        "--max-subscription-tokens",
        type=int,
        metavar="N",
        help="stop once subscription models (a model CLI on your own plan, which --max-budget-usd cannot price) "
        "have used N tokens, sub-agents included",
    )
    agent.add_argument("--cwd", metavar="DIR", help="the working directory for tools and sessions")
    agent.add_argument(
        "--compact-at",
        action="append",
        metavar="FRACTION|off",
        help="compact the context when it fills this fraction of the model's window (default 0.8), or never "
        "automatically with 'off'; MODEL=FRACTION sets it for one model id. May be repeated",
    )
    agent.add_argument(
        "--history",
        type=int,
        metavar="N",
        dest="history_turns",
        help="send only the last N turns to the model; the earlier ones stay in the session log, where the "
        "Recall tool searches them (default: the whole history, compacted as it fills)",
    )
    agent.add_argument(
        "--background-after",
        type=positive_number("seconds"),
        metavar="SECONDS",
        help="move a tool call that runs longer than this to the background, where it goes on while the "
        "agent works; its result arrives later as a message (default: never)",
    )
    _permission_flags(p)
    fleet = p.add_argument_group("sub-agents (AgentSpawn, AgentSend)")
    fleet.add_argument(
        "--max-depth",
        type=int,
        default=DEFAULT_MAX_DEPTH,
        metavar="N",
        help=f"how many levels of sub-agents may exist (default {DEFAULT_MAX_DEPTH})",
    )
    fleet.add_argument(
        "--max-agents",
        type=int,
        default=DEFAULT_MAX_AGENTS,
        metavar="N",
        help=f"how many agents may run at once, the main one included (default {DEFAULT_MAX_AGENTS})",
    )
    fleet.add_argument(
        "--handoff-capsules",
        type=int,
        default=0,
        metavar="N",
        help="a sub-agent's task, and each message to another agent, carries the last N handoffs this agent "
        "sent and received ahead of it, and its capsule records the tokens saved against carrying them all "
        "(4 is the usual N; default 0: the text alone)",
    )
    fleet.add_argument(
        "--allow-providers",
        metavar="NAMES",
        help="comma-separated providers sub-agents may use (default: any); --max-budget-usd caps the "
        "whole tree of agents together",
    )
    fleet.add_argument(
        "--fleet",
        metavar="NAME",
        help="join the fleet NAME on a NATS server, in the REPL or for a -p run: the agent is reachable by "
        "--label and messages the fleet's served agents with AgentSend (credentials: sagent fleet --help)",
    )
    fleet.add_argument(
        "--nats", metavar="URL", help="the fleet's NATS server (default $SAGENT_NATS_URL, else nats://127.0.0.1:4222)"
    )
    fleet.add_argument(
        "--label",
        metavar="LABEL",
        help="the agent's label in the --fleet (default: cli-PID, which leaves at the end; a named one stays)",
    )
    sessions = p.add_argument_group("sessions")
    sessions.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue the newest session here"
    )
    sessions.add_argument("--session", metavar="ID|PATH", help="continue a given session")
    sessions.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="open the REPL on a session: the one given, or one picked from this directory's list",
    )
    sessions.add_argument(
        "--before-compaction",
        action="store_true",
        help="with --continue, --session or --resume: go on from the session as it was before its last "
        "compaction, as a new session (the original is kept as it is)",
    )
    sessions.add_argument(
        "--fork-damaged",
        action="store_true",
        help="with --continue, --session or --resume: when the session log is damaged (it fails its check), go "
        "on from its last good record as a new session (the damaged file is kept as it is)",
    )
    sessions.add_argument(
        "--ephemeral", action="store_true", help="write no session log, memory, input history or start-up cache"
    )
    sessions.add_argument(
        "--resume-mode",
        choices=("auto", "resume", "replay"),
        default="replay",
        help="replay (the default) sends the whole conversation with every request; resume sends only what is "
        "new where the provider's server keeps the conversation (OpenAI's Responses API, which then stores it "
        "for 30 days, and Google's Interactions API; the model CLIs keep their own), and says so where none "
        "does; auto resumes where it can",
    )
    sessions.add_argument(
        "--name",
        metavar="TEXT",
        help="a name for the new session: `sagent sessions` and the pickers show it, and --session and --resume "
        "take it in place of the id",
    )
    sessions.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        type=str.lower,
        help="write sagent's and its libraries' log lines at this level and above to stderr "
        "(default: $SAGENT_LOG_LEVEL, else none)",
    )
    from sagent.cli.sdk_flags import add_sdk_flags

    add_sdk_flags(p)
    return p


def parser_for(prog: str, description: str, hidden: tuple[str, ...]) -> argparse.ArgumentParser:
    """`sagent`'s parser for another command that runs the same agent (`sagent acp`, `sagent-slack`): its
    own name and description, and the flags of `hidden` (those it does not take) left out of its --help."""
    parser = build_parser()
    parser.prog = prog
    parser.description = description
    for action in parser._actions:
        if set(action.option_strings) & set(hidden):
            action.help = argparse.SUPPRESS
    return parser


def _permission_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("permissions (see docs/security.md)")
    group.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"),
        help="default: ask before Bash, edits, web fetches and anything outside the project; acceptEdits: "
        "edits inside the project run; plan: read-only until a plan is approved; bypassPermissions: ask "
        "nothing (deny rules still hold); dontAsk: refuse what would ask; auto: default. Headless runs have "
        'nobody to ask: what would ask runs, unless the settings say permissions.headlessDefault "deny"',
    )
    group.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        nargs="+",
        metavar="RULE",
        help='rules for calls that run without asking, e.g. "Bash(git diff:*)" Read "Edit(src/**)" '
        '"WebFetch(domain:docs.python.org)" mcp__github__*; comma- or space-separated, repeatable',
    )
    group.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        nargs="+",
        metavar="RULE",
        help="rules for calls that never run, in any mode (same forms as --allowedTools)",
    )
    group.add_argument(
        "--add-dir",
        action="append",
        metavar="DIR",
        help="another folder that counts as the project (reading it does not ask); repeatable",
    )
    group.add_argument(
        "--sandbox",
        choices=("read-only", "workspace-write", "danger-full-access"),
        help="the OS sandbox Bash commands run in (default workspace-write: they write only in the project, "
        "/tmp and $TMPDIR, with no network; read-only: they write nothing; danger-full-access: no sandbox). "
        "A command in the sandbox runs without asking; the settings' sandbox object says more (docs/settings.md)",
    )


def add_task_argument(parser: argparse.ArgumentParser) -> None:
    """`sagent "fix the test"`: the REPL's first message, as a positional argument (only the plain `sagent`
    command takes one; `serve`, `config` and the Slack bridge keep refusing a stray word)."""
    parser.add_argument(
        "task",
        nargs="*",
        metavar="TASK",
        help="on a terminal, open the REPL with TASK as its first message; without one, the same as -p TASK",
    )


def parse_with_settings(
    parser: argparse.ArgumentParser, argv: list[str], notice: bool = True
) -> argparse.Namespace | None:
    """The arguments, with the settings files' values as defaults (see docs/settings.md); None after
    saying why a settings file cannot be used. With `notice`, the one line saying which files of a folder
    not trusted were skipped goes to stderr (a caller that asks about them passes False)."""
    from sagent.cli.settings_files import SettingsError, parse

    try:
        args = parse(parser, argv)
    except SettingsError as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return None
    for warning in args.settings_files.loaded.warnings:
        sys.stderr.write(f"sagent: warning: {warning}\n")
    skipped = args.settings_files.loaded.skipped_notice()
    if notice and skipped:
        sys.stderr.write(f"sagent: {skipped}\n")
    if getattr(args, "model_prices", None):  # the `modelPrices` setting prices models for this run
        from sagent.providers.catalog import set_model_prices

        try:
            set_model_prices(args.model_prices)
        except ValueError as error:
            origin = args.settings_files.loaded.origins.get("modelPrices", "settings")
            sys.stderr.write(f'sagent: error: {origin}: key "modelPrices": {error}\n')
            return None
    return args


def checked(args: argparse.Namespace) -> str | None:
    """`_check`'s problem, told as the settings file and key when a file gave the value at fault."""
    from sagent.cli.settings_files import blame

    return blame(_check(args), args)


def _check(args: argparse.Namespace) -> str | None:
    """A message for arguments that cannot work together, or None."""
    if args.cwd and not Path(args.cwd).is_dir():
        return f"--cwd {args.cwd}: not a directory"
    if sum(bool(x) for x in (args.continue_, args.session, args.resume is not None)) > 1:
        return "--continue, --session and --resume cannot be used together"
    if args.name is not None and (args.continue_ or args.session or args.resume is not None):
        return "--name names a new session; a session that is continued keeps its name"
    if args.name is not None and not args.name.strip():
        return "--name needs some text"
    if args.ephemeral and (args.continue_ or args.session or args.resume is not None):
        return "--ephemeral cannot continue a session"
    if args.before_compaction and not (args.continue_ or args.session or args.resume is not None):
        return "--before-compaction needs --continue, --session or --resume"
    if args.fork_damaged and not (args.continue_ or args.session or args.resume is not None):
        return "--fork-damaged needs --continue, --session or --resume"
    if args.compact_at:
        from sagent.cli.agent_setup import compaction_policy

        try:
            compaction_policy(args.compact_at)
        except ValueError as error:
            return f"--compact-at: {error}"
    if args.input_format == "stream-json" and sys.stdin.isatty():
        return "--input-format stream-json reads JSON lines from standard input, which is a terminal"
    if (args.nats or args.label) and not args.fleet:
        return "--nats and --label place the agent in a fleet: give --fleet NAME too"
    if args.include_partial_messages and args.output_format != "stream-json":
        return "--include-partial-messages needs --output-format stream-json"
    if args.history_turns is not None and args.history_turns < 1:
        return "--history must be at least 1 (turns)"
    for name in ("max_tool_rounds", "max_tokens", "thinking_budget", "max_subscription_tokens"):
        value = getattr(args, name)
        if value is not None and value < 1:
            return f"--{name.replace('_', '-')} must be at least 1"
    if args.max_depth < 0:
        return "--max-depth must be 0 or more"
    if args.max_agents < 1:
        return "--max-agents must be at least 1"
    if getattr(args, "handoff_capsules", 0) < 0:
        return "--handoff-capsules must be 0 or more"
    if args.allow_providers is not None:
        from sagent.providers.specs import find_spec

        unknown = [n for n in _names(args.allow_providers) if find_spec(n) is None]
        if unknown:
            return f"--allow-providers: unknown provider(s) {', '.join(unknown)}; see `sagent providers`"
    if args.api_key_env and not os.environ.get(args.api_key_env):
        return f"--api-key-env {args.api_key_env}: that variable is not set"
    from sagent.cli.auth_flag import resolve_auth

    return resolve_auth(args)


def positive_number(unit: str) -> Callable[[str], float]:
    """An argparse `type` that takes a finite number above 0 of `unit`: nan and inf, which compare false
    with everything and would turn a limit off, are refused with the rest."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of {unit} more than 0")
        return value

    return parse


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]
