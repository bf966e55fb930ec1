"""The REPL's slash commands: one table, each command a small function that returns the lines to show."""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.fleet import FleetError
from sagent.agent.session import SessionError, SessionInfo, age_text, peek_state
from sagent.agent.session_list import ListedSession, listed_sessions
from sagent.lib.words import quantity
from sagent.providers.catalog import CATALOG, runs_locally
from sagent.providers.cli_backends.common import SUBSCRIPTION_MARK

if TYPE_CHECKING:
    from sagent.custom_commands import CustomCommand, Expansion
    from sagent.repl.host import ReplHost

EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max", "off")
DEFAULT_THINKING_BUDGET = 8_000


Handler = Callable[["ReplHost", str], list[str]]
"""A command's body: the REPL and the text after the command's name; returns the lines to show."""


@dataclass(frozen=True)
class Command:
    summary: str
    usage: str
    handler: Handler


COMMANDS: dict[str, Command] = {}


def command(name: str, summary: str, usage: str = "") -> Callable[[Handler], Handler]:
    """Register the decorated function as `/name` (listed by /help and completed after `/`). The function
    is returned unchanged, so other commands can call it by its name."""

    def register(handler: Handler) -> Handler:
        COMMANDS[name] = Command(summary, usage or f"/{name}", handler)
        return handler

    return register


def custom_commands(repl: ReplHost) -> tuple[dict[str, CustomCommand], dict[str, str]]:
    """The Markdown commands in reach (read again each time, so a file saved a moment ago counts), and the
    broken ones by name with what is wrong."""
    from sagent.skill_commands import load_prompt_commands

    return load_prompt_commands(repl.agent.context.cwd)  # and the skills, as /NAME


def expand_custom(repl: ReplHost, text: str) -> Expansion | None:
    """`/name args` as a custom command's prompt; None for a built-in, broken or unknown command (which
    `run_command` then handles: a built-in runs, the others say what is wrong)."""
    from sagent.custom_commands import expand_input

    if not text.startswith("/") or text[1:].partition(" ")[0].partition("\n")[0] in COMMANDS:
        return None
    found, _ = custom_commands(repl)
    return expand_input(text, found, COMMANDS)


async def run_command(repl: ReplHost, text: str) -> None:
    name, _, arg = text.strip()[1:].partition(" ")
    found = COMMANDS.get(name)
    if found is None and name.startswith("mcp__"):  # an MCP server's prompt
        repl.background(mcp_prompt(repl, name, arg.strip()))
        return
    if found is None:
        custom, broken = custom_commands(repl)
        if name in broken:
            repl.commit([repl.renderer.c("yellow", f"/{name} cannot be used: {broken[name]}")])
            return
        close = difflib.get_close_matches(name, [*COMMANDS, *custom], n=1)
        hint = f" — did you mean /{close[0]}?" if close else " — /help lists the commands"
        repl.commit([repl.renderer.c("yellow", f"unknown command /{name}{hint}")])
        return
    try:
        lines = found.handler(repl, arg.strip())
    except CommandError as error:
        lines = [repl.renderer.c("yellow", f"/{name}: {error}")]
    except Exception as error:  # a failing command must not take the REPL down
        lines = [repl.renderer.c("red", f"/{name} failed: {type(error).__name__}: {error}")]
    repl.commit(lines)
    repl.refresh()


class CommandError(Exception):
    """A command used the wrong way; the message says how to use it."""


def argument_choices(repl: ReplHost, name: str) -> list[str]:
    if name == "model":
        return [m.id for m in CATALOG] + ["--force"]
    if name == "provider":
        from sagent.providers.specs import provider_names

        return list(provider_names())
    if name == "effort":
        return list(EFFORTS)
    if name == "thinking":
        return ["on", "off", "show", "collapse"]
    if name == "config":
        from sagent.cli.settings_files import KEYS

        return [f"{verb} {key}" for verb in ("get", "set", "unset") for key in KEYS]
    if name == "resume":
        return [row.short_id for row in listed_sessions(repl.agent.context.cwd)[:20]]
    if name in ("send", "stop"):
        return [a.label for a in repl.agent.snapshot(measure=False).walk()[1:] if a.alive]
    if name in ("fg", "jobs"):
        running = repl.agent.snapshot(measure=False).running_jobs()
        return [job.id for job in running] + (["cancel"] if name == "jobs" else [])
    return []


# ------------------------------------------------------------------------------------------ commands


KEYS = (
    ("Enter", "send; while working, read at once (long calls go to the background)"),
    ("Tab", "while working, hold the message until the agent is idle"),
    ("Up (empty input)", "take the last queued message back to edit"),
    ("Alt+Enter", "new line"),
    ("Ctrl+X Ctrl+E", "edit the input in $EDITOR"),
    ("Esc", "stop: interrupt, keep what was done, put queued messages back in the input"),
    ("Ctrl+B", "move the running tool calls to the background"),
    ("Ctrl+O", "show hidden tool output in full (again: collapse)"),
    ("Ctrl+T", "hide or show the task list above the prompt"),
    ("Shift+Tab", "the next permission mode: default → acceptEdits → plan"),
    ("Ctrl+C", "clear the input; else stop the work; twice within a few seconds quits"),
    ("Ctrl+D", "quit (on an empty input)"),
)
"""The keys /help lists, with what each does."""

IN_A_MESSAGE = (
    ("@path", "attach a file, image or folder (Tab completes; a pasted path works too)"),
    ("!command", "run a shell command; its output goes with your next message"),
    ("# note", "add a line to the project memory (AGENTS.md); nothing is sent"),
)
"""What /help lists as written inside a message."""

HELP_COLUMN = 30
"""The widest first column /help aligns to; a longer entry puts its description on the next line."""


def columns(rows: list[tuple[str, str]], describe: Callable[[str], str] = str) -> list[str]:
    """`rows` as two aligned columns: the first as wide as its widest entry (at most HELP_COLUMN), an
    entry wider than that on a line of its own with its description under it, aligned with the others.
    `describe` styles the second column."""
    width = max((len(first) for first, _ in rows if len(first) <= HELP_COLUMN), default=0)
    lines = []
    for first, second in rows:
        if len(first) > width:
            lines += [f"  {first}", f"  {'':<{width}}  {describe(second)}"]
        else:
            lines.append(f"  {first:<{width}}  {describe(second)}")
    return lines


@command("help", "the commands and keys")
def _help(repl: ReplHost, arg: str) -> list[str]:
    c = repl.renderer.c
    lines = [c("bold", "commands")]
    lines += columns([(cmd.usage, cmd.summary) for cmd in COMMANDS.values()], lambda text: c("dim", text))
    custom, broken = custom_commands(repl)
    if custom or broken:
        lines.append(
            c("bold", "custom commands") + c("dim", " (Markdown in .sagent/commands/ and the user's; skills: /skills)")
        )
    rows = []
    for name, found in custom.items():
        hidden = name in COMMANDS
        note = c("yellow", f"hidden: the built-in /{name} wins") if hidden else c("dim", found.summary())
        rows.append((found.usage(), note))
    rows += [(f"/{name}", c("yellow", problem)) for name, problem in broken.items()]
    lines += columns(rows)
    return [*lines, c("bold", "keys"), *columns(list(KEYS)), c("bold", "in a message"), *columns(list(IN_A_MESSAGE))]


@command("model", "pick a model from a list, or switch to one", "/model [NAME | PROVIDER:NAME | --force NAME]")
def _model(repl: ReplHost, arg: str) -> list[str]:
    from sagent.repl.model_picker import model_command

    try:
        return model_command(repl, arg)
    except ValueError as error:  # a name refused, or the wrong form
        raise CommandError(str(error)) from None


@command("provider", "switch provider, on its default model", "/provider [name]")
def _provider(repl: ReplHost, arg: str) -> list[str]:
    if not arg:
        from sagent.providers.specs import provider_names

        return [f"provider: {repl.agent.model.provider}  (choose from: {', '.join(provider_names())})"]
    return [_switch(repl, arg, None)]


def _switch(repl: ReplHost, provider: str | None, model: str | None) -> str:
    if repl.switch is None:
        raise CommandError("switching is not available here")
    return repl.switch(repl.agent, provider, model)


@command("effort", "reasoning effort for the next calls", "/effort [minimal|low|medium|high|xhigh|max|off]")
def _effort(repl: ReplHost, arg: str) -> list[str]:
    if not arg:
        return [f"effort: {repl.agent.effort or 'default'}"]
    match arg:  # a literal pattern narrows `arg` to the Effort it names
        case "minimal" | "low" | "medium" | "high" | "xhigh" | "max":
            repl.agent.configure(effort=arg)
        case "off":
            repl.agent.configure(effort=None)
        case _:
            raise CommandError(f"choose one of {', '.join(EFFORTS)}")
    return [f"effort: {arg}"]


@command("thinking", "extended thinking on/off/budget, or how it is shown", "/thinking [on|off|N|show|collapse]")
def _thinking(repl: ReplHost, arg: str) -> list[str]:
    agent = repl.agent
    if not arg:
        budget = f"{agent.thinking_budget:,} tokens" if agent.thinking_budget else "off"
        return [f"thinking: {budget}; shown as: {repl.settings.thinking}"]
    match arg:  # a literal pattern narrows `arg` to the ThinkingDisplay it names
        case "show" | "collapse":
            repl.settings.thinking = arg
            return [f"thinking is now shown as: {arg}"]
    if arg == "on":
        agent.configure(thinking_budget=DEFAULT_THINKING_BUDGET)
    elif arg == "off":
        agent.configure(thinking_budget=None)
    elif arg.isdigit() and int(arg) >= 1024:
        agent.configure(thinking_budget=int(arg))
    else:
        raise CommandError("use on, off, a budget of at least 1024 tokens, show or collapse")
    return [f"thinking: {f'{agent.thinking_budget:,} tokens' if agent.thinking_budget else 'off'}"]


@command("cost", "spend so far, per model and per agent")
def _cost(repl: ReplHost, arg: str) -> list[str]:
    now = repl.agent.snapshot(measure=False)
    if not now.models:
        return ["no spend yet"]
    lines = [f"{'model':<28} {'calls':>5} {'input':>9} {'cached':>9} {'output':>8} {'USD':>10}"]
    for use in now.models:
        u = use.usage
        unpriced = "subscription" if use.model.endswith(SUBSCRIPTION_MARK) else "unpriced"
        usd = f"{use.usd:.4f}" if use.priced else unpriced
        usd = "local" if runs_locally(use.model) else usd  # run on this machine: nothing to pay
        lines.append(
            f"{use.model:<28} {use.responses:>5} {u.input_tokens:>9,} {u.cache_read_tokens:>9,} "
            f"{u.output_tokens:>8,} {usd:>10}"
        )
    agents = now.walk()
    if len(agents) > 1:
        lines.append("")
        lines.append(f"{'agent':<28} {'model':<28} {'own USD':>10} {'with sub-agents':>16}")
        for row in agents:
            name = "  " * row.depth + row.label
            lines.append(f"{name:<28} {row.model:<28} {row.own_usd:>10.4f} {row.total_usd:>16.4f}")
    total = f"total ${now.total_usd:.4f}"
    if now.budget_usd is not None:
        total += f" of a ${now.budget_usd:.2f} budget"
    if now.unpriced_models:
        total += f" (plus unpriced use of {', '.join(now.unpriced_models)})"
    return [*lines, total]


@command("advisor", "the advisor (--advisor): its model, triggers and consultations so far")
def _advisor(repl: ReplHost, arg: str) -> list[str]:
    advisor = repl.agent.settings.advisor
    if advisor is None:
        return ['no advisor: start sagent with --advisor MODEL (or "advisor" in a settings file)']
    p = advisor.policy
    lines = [
        f"advisor {advisor.label()}: {len(advisor.hook.consultations)} of {p.max_consultations} consultations, "
        f"cooldown {quantity(p.cooldown, 'turn')}",
        f"  triggers: tool {'on' if p.tool else 'off'}, marker {' '.join(p.markers()) or 'off'}, failures "
        f"{p.failures or 'off'}, confidence {p.confidence or 'off'}, stagnation "
        f"{f'{p.stagnation} at {p.similarity}' if p.stagnation else 'off'}, review {'on' if p.review else 'off'}",
        f"  answers {'structured where the provider can' if p.structured else 'in free text'}",
    ]
    for c in advisor.hook.consultations:
        lines.append(f"  {c.line()}")
    return lines


@command("context", "what the context holds, by part, and when it will be compacted")
def _context(repl: ReplHost, arg: str) -> list[str]:
    agent = repl.agent
    return [
        *agent.context_size().lines(),
        f"  {quantity(len(agent.history), 'message')} in the history",
        f"  {agent.compaction_line()}",
    ]


@command("memory", "the AGENTS.md / CLAUDE.md files read into the system prompt")
def _memory(repl: ReplHost, arg: str) -> list[str]:
    from sagent.agent.memory import MEMORY_NAMES, memory_files, user_memory_file

    found = [f for f in memory_files(repl.agent.context.cwd) if str(f.path) in repl.agent.base_system]
    if not found:
        names = " or ".join(MEMORY_NAMES)
        return [f"no memory files: put {names} in the repository, or instructions in {user_memory_file()}"]
    return [f"  {f.path}  ({quantity(len(f.text), 'character')}{', cut' if f.cut else ''})" for f in found]


@command("clear", "start a new session on the same model")
def _clear(repl: ReplHost, arg: str) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    repl.replace_agent(repl.new_agent(None))
    repl.state.last_input_tokens = 0
    return [repl.renderer.c("dim", f"─ new session {repl.agent.session_id}")]


@command("compact", "summarise the history to free context", "/compact [focus]")
def _compact(repl: ReplHost, arg: str) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first, or wait")
    repl.background(compact(repl, arg or None))
    return [repl.renderer.c("dim", "compacting…")]


async def compact(repl: ReplHost, focus: str | None) -> None:
    from sagent.providers.base import ProviderError

    before = len(repl.agent.history)
    try:
        done = await repl.agent.compact(focus)
    except ProviderError as error:
        repl.commit([repl.renderer.c("red", f"/compact failed: {error.message}")])
        return
    if done is None:
        repl.commit(["nothing to compact yet"])
        return
    repl.state.last_input_tokens = done.tokens_after
    sizes = f"context {done.tokens_before:,} → {done.tokens_after:,} tokens"
    replaced = f"{done.replaced} of {quantity(before, 'message')}"
    head = f"─ compacted {replaced} into a summary ({sizes}, ${done.cost.total:.4f}):"
    lines = [repl.renderer.c("dim", head)]
    repl.commit([*lines, repl.renderer.markdown(done.summary.text)])
    repl.refresh()


@command("mcp", "MCP servers: status, tools, prompts, errors")
def _mcp(repl: ReplHost, arg: str) -> list[str]:
    from sagent.mcp.setup import servers_of, status_lines

    servers = servers_of(repl.agent)
    if servers is not None:
        servers.start()
    return status_lines(servers, repl.agent)


async def mcp_prompt(repl: ReplHost, name: str, arg: str) -> None:
    """`/mcp__server__prompt ARGS`: the server's prompt, filled in, sent as the user's message."""
    from sagent.mcp.setup import prompt_text, servers_of
    from sagent.tools.base import ToolError

    servers = servers_of(repl.agent)
    if servers is None:
        repl.commit([repl.renderer.c("yellow", f"unknown command /{name}: no MCP servers are configured")])
        return
    servers.start()
    await servers.settle(10)
    try:
        text = await prompt_text(servers, name, arg)
    except ToolError as error:
        repl.commit([repl.renderer.c("yellow", str(error))])
        return
    repl.submit(text)


@command("tools", "the tools the agent can use")
def _tools(repl: ReplHost, arg: str) -> list[str]:
    lines = []
    for name, tool in repl.agent.tools.items():
        summary = (tool.description or "").strip().splitlines()[0] if tool.description else ""
        lines.append(f"  {name:<10} {repl.renderer.c('dim', summary[:90])}")
    return lines or ["no tools"]


@command("sessions", "this directory's sessions")
def _sessions(repl: ReplHost, arg: str) -> list[str]:
    return session_list(repl.agent.context.cwd, repl.agent.session.path)


def session_list(cwd: Path, open_now: Path | None) -> list[str]:
    """The lines /sessions shows: this directory's sessions, numbered, forks under the session they came
    from, the one open now marked (it is listed too, so the numbers match `sagent sessions`)."""
    rows = listed_sessions(cwd)
    if not rows:
        return ["no sessions here yet"]
    lines = [
        session_row(n, r) + ("  (open now)" if r.info.path == open_now else "") for n, r in enumerate(rows[:20], 1)
    ]
    return [*lines, "/resume N or /resume ID opens one; /resume alone searches them"]


@command("agents", "the sub-agents: label, model, status, spend; and the agent files")
def _agents(repl: ReplHost, arg: str) -> list[str]:
    rows = []
    for row in repl.agent.snapshot(measure=False).walk()[1:]:
        kind = "persistent" if row.persistent else "one-shot"
        rows.append(
            f"{'  ' * row.depth}{row.label:<16} {row.provider}/{row.model:<28} {row.status:<8} "
            f"{kind:<10} ${row.total_usd:.4f}"
        )
    from sagent.repl.fleet_view import remote_rows

    here = (
        [*rows, "/send LABEL MESSAGE talks to one; /stop LABEL stops it"]
        if rows
        else ["no sub-agents; the agent starts them with AgentSpawn"]
    )
    from sagent.repl.agent_files_view import agent_file_rows

    # with --fleet, the fleet's agents in other processes too; then the sub-agents defined in files
    return [*here, *remote_rows(repl.state.fleet), *agent_file_rows(repl)]


@command("send", "message a sub-agent", "/send LABEL MESSAGE")
def _send(repl: ReplHost, arg: str) -> list[str]:
    label, _, text = arg.partition(" ")
    if not label or not text.strip():
        raise CommandError("usage: /send LABEL MESSAGE (/agents lists the labels)")
    try:
        receipt = repl.agent.send_as_user(label, text.strip())
    except FleetError as error:
        raise CommandError(str(error)) from None
    return [repl.renderer.c("dim", f"→ {receipt.describe()}")]


@command("stop", "stop a sub-agent", "/stop LABEL")
def _stop(repl: ReplHost, arg: str) -> list[str]:
    if not arg or arg == repl.agent.label:
        raise CommandError("usage: /stop LABEL, for a sub-agent (Esc interrupts the main one)")
    try:
        repl.agent.stop_as_user(arg)
    except FleetError as error:
        raise CommandError(str(error)) from None
    return [repl.renderer.c("dim", f"stopping {arg}")]


@command("jobs", "tool calls running in the background", "/jobs [cancel ID]")
def _jobs(repl: ReplHost, arg: str) -> list[str]:
    action, _, job_id = arg.partition(" ")
    if action == "cancel":
        try:
            ended = repl.agent.cancel_job(job_id)
        except KeyError as error:
            raise CommandError(str(error.args[0])) from None
        return [f"cancelled {', '.join(ended)}" if ended else f"{job_id} is not running"]
    if action:
        raise CommandError("usage: /jobs, or /jobs cancel ID")
    listed = [f"  {job.line}" for job in repl.agent.snapshot(measure=False).jobs]
    return [*listed, "Ctrl+B moves running calls here; /fg ID waits for one"] if listed else ["no background jobs"]


@command("bg", "move the running tool calls (or one sub-agent's, a tool's) to the background", "/bg [LABEL]")
def _bg(repl: ReplHost, arg: str) -> list[str]:
    if not repl.busy:
        raise CommandError("no tool call is running")
    if arg.strip():
        from sagent.repl.detach import check_running

        try:
            return [repl.renderer.c("dim", check_running(repl, arg.strip()))]
        except ValueError as error:
            raise CommandError(str(error)) from None
    repl.agent.background()
    return [repl.renderer.c("dim", "moving the running tool calls to the background")]


@command("fg", "keep the agent working until a background job is done", "/fg ID")
def _fg(repl: ReplHost, arg: str) -> list[str]:
    try:
        job = repl.agent.foreground(arg)
    except KeyError as error:
        raise CommandError(str(error.args[0])) from None
    if job.state != "running":
        return [f"{job.id} is already {job.status}"]
    where = "the current task waits for it" if repl.busy else "the agent takes its result as soon as it is done"
    return [repl.renderer.c("dim", f"{job.id} in the foreground: {where}")]


@command("quit", "leave sagent")
def _quit(repl: ReplHost, arg: str) -> list[str]:
    repl.quit()
    return []


command("exit", "leave sagent (as /quit)")(_quit)


# -------------------------------------------------------------------------------------------- helpers


def session_cost(info: SessionInfo) -> float | None:
    """What the session spent; None when its log is damaged (or unreadable)."""
    try:
        return sum(cost.total for _, cost, _ in peek_state(info.path).usage_by_model.values())
    except (SessionError, OSError):
        return None


def session_row(number: int, row: ListedSession) -> str:
    """One numbered row of a session list: its id (as short as it stays distinct), age, spend and title;
    a fork indented under the session it came from."""
    info = row.info
    age = age_text(time.time() - info.modified)
    cost = session_cost(info)
    spent = "damaged" if cost is None else f"${cost:.4f}"
    fork = "  " * (row.depth - 1) + "└ " if row.depth else ""
    title = (fork + (info.label or "(no prompt)"))[:60]
    return f"{number:>3}. {row.short_id:<20}  {age:>8}  {spent:>8}  {title}"
