"""Turn parsed arguments into a model, a session and an agent, and run the task headless."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
from collections.abc import AsyncIterator, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.agent.agent import Agent
from sagent.agent.fleet import Bus, Fleet, FleetError
from sagent.agent.pricing import require_price
from sagent.agent.session import (
    SessionError,
    SessionLog,
    SessionWriteError,
    data_dir,
    find_session,
    peek_state,
    sessions_dir,
)
from sagent.agent.tokens import CHARS_PER_TOKEN
from sagent.cli import session_choice
from sagent.cli.agent_setup import UsageError, agent_settings, models_for, skill_problems
from sagent.cli.decoding import InputNotice
from sagent.cli.headless import EXIT_ERROR, EXIT_USAGE, Output, read_stream_json, run_headless
from sagent.cli.session_choice import session_to_continue
from sagent.evidence.gitref import start_point
from sagent.lib import startup
from sagent.providers.base import Model, ProviderError
from sagent.providers.catalog import lookup
from sagent.providers.registry import DEFAULT_MODELS, LOCAL, Choice, build_model, choose, key_hint, resumes
from sagent.sandbox.bwrap import probe_soon
from sagent.tools import builtin_tools, tools_by_name
from sagent.tools.base import Tool
from sagent.tools.net import Fetcher

if TYPE_CHECKING:
    from sagent.cli.fleet_client import FleetSeat
from sagent.types import UserMessage


def run_task(args: argparse.Namespace, piped: bool) -> int:
    from sagent.cli import stdin_copy

    stdin_copy.remove_stale()  # what a run killed outright left behind
    try:
        return _run_task(args, piped)
    finally:
        stdin_copy.remove()  # the copy of a large piped input lasts as long as the run


def _run_task(args: argparse.Namespace, piped: bool) -> int:
    cwd = Path(args.cwd or ".").resolve()
    probe_soon()  # whether the OS sandbox can start here, found while the rest starts
    from sagent.cli.control.wiring import open_channel

    args.control = open_channel(args, sys.stdout, sys.stderr)
    try:
        prompt = _prompt(args, piped)
        if prompt is None and args.input_format == "text":
            raise UsageError("the task is empty")
        tools = tools_from_flags(args)
        _attach_mcp(args, cwd, headless=True)
        session_path = session_to_continue(args, cwd)
        choice = _choice(args, session_path)
        model = _built(args, choice)
        tools = _tools_for(choice, tools, args)
    except (UsageError, ProviderError, SessionError) as error:
        return _setup_failure(error)
    _say_choice(args, choice, model)
    for line in skill_problems(tools, cwd):  # each skill that cannot be offered, said once
        sys.stderr.write(f"sagent: note: {line}\n")

    def build(bus: Bus | None = None, label: str | None = None) -> Agent:
        agent = make_agent(args, model, tools, cwd, session_path, label=label, bus=bus)
        if args.output_format == "stream-json":
            from sagent.cli.subagent_records import SubAgentRecords

            records = SubAgentRecords(sys.stdout, partial=args.include_partial_messages)
            agent.configure(hooks=(*agent.settings.hooks, records))
        return agent

    output = Output(args.output_format, args.include_partial_messages, sys.stdout, sys.stderr)
    output.key_hint = key_hint(model.provider, args.api_key_env)
    control = args.control  # the Claude Agent SDK's control protocol, on stream-json in and out
    if control is not None:
        output.claude_code = lambda: control.initialized
    incoming = read_stream_json(sys.stdin.buffer, sys.stderr, control) if args.input_format == "stream-json" else None
    try:
        if args.fleet:  # the agent joins a fleet on a NATS server: it is built inside the run's event loop
            from sagent.cli.fleet_client import run_in_fleet

            work = run_in_fleet(
                args,
                lambda seat: build(seat.bus, seat.label),
                lambda agent: _run(agent, prompt, incoming, output, args),
            )
            startup.done("main")
            return asyncio.run(_closing_mcp(args, _setup_failures(work)))
        try:
            agent = build()
        except (UsageError, ProviderError, SessionError) as error:
            return _setup_failure(error)
        startup.done("main")  # the start-up's objects are built: the collector may run again (sagent.lib.startup)
        return asyncio.run(_closing_mcp(args, _run(agent, prompt, incoming, output, args)))
    except BrokenPipeError:
        raise  # the output's reader left: `main` ends quietly (sagent.cli.closed_pipe)
    except OSError as error:
        if _in_data_dir(error):
            sys.stderr.write(f"sagent: error: {data_dir_problem(error)}\n")
            return EXIT_USAGE
        sys.stderr.write(f"sagent: error: {error}\n")
        return EXIT_ERROR


def run_interactive(args: argparse.Namespace) -> int:
    """The REPL on a terminal: the same model, tools, sessions and agent as a headless run. With --fleet its
    agent joins the fleet on a NATS server under its label, and keeps it across /clear, /resume and /fork."""
    cwd = Path(args.cwd or ".").resolve()
    probe_soon()
    try:
        tools = tools_from_flags(args)
        _attach_mcp(args, cwd, headless=False)
        session_path = session_to_continue(args, cwd)
        if session_path is None and args.resume is not None:
            session_path = session_choice.forked_as_asked(args, _pick_session(args.resume, cwd))
            if session_path is None:
                return 0
        choice = _choice(args, session_path)
        model = _built(args, choice)
        tools = _tools_for(choice, tools, args)
    except (UsageError, ProviderError, SessionError) as error:
        return _setup_failure(error)
    _say_choice(args, choice, model)
    from sagent.repl.app import Repl, terminal_settings

    args.input_preempts = True  # what the user types while a long call runs is read at once
    seat: FleetSeat | None = None  # the agent's place in a fleet across processes (--fleet)
    repl: Repl

    def first_agent() -> Agent:
        return make_agent(args, model, tools, cwd, session_path, **_placed(seat))

    def new_agent(path: Path | None) -> Agent:
        def build() -> Agent:
            old = repl.agent
            kept = [*old.tools.values(), *(t for t in tools if t.name == "Skill" and t.name not in old.tools)]
            return make_agent(args, old.model, kept, cwd, path, settings_from=old, **_placed(seat))

        return seat.rebuild(repl.agent, build) if seat is not None else build()

    def switch(current: Agent, provider: str | None, model_name: str | None) -> str:
        try:
            new = current.fleet.models(provider, model_name)
        except (ProviderError, FleetError) as error:
            return f"cannot switch: {getattr(error, 'message', error)}"
        try:
            current.switch_model(new)
        except ProviderError as error:  # a model without a price under a budget
            return f"cannot switch: {error}"
        return f"switched to {new.provider}/{new.name}; the conversation goes with it"

    def open_repl(agent: Agent) -> Coroutine[Any, Any, int]:
        nonlocal repl
        repl = Repl(
            agent,
            new_agent=new_agent,
            settings=terminal_settings(shutil.get_terminal_size((100, 30)).columns),
            history_file=None if args.ephemeral else _input_history(),
            switch=switch,
            first_prompt=" ".join(getattr(args, "task", None) or []).strip() or None,  # `sagent "fix the test"`
            api_key_env=args.api_key_env,
        )
        from sagent.repl.launch import launch_of

        repl.state.launch = launch_of(args)  # /status and /config show the files and flags it started with
        if seat is not None:  # the banner, the status line and /agents show the fleet
            from sagent.repl.fleet_view import FleetPlace

            place = seat
            repl.state.fleet = FleetPlace(place.bus.fleet, place.label, lambda: place.others(repl.agent))
        return repl.run()

    if args.fleet:  # joined before the screen opens: a bad name, a taken label or a dead server is one line
        from sagent.cli.fleet_client import run_in_fleet

        def joined(place: FleetSeat) -> Agent:
            nonlocal seat
            seat = place
            return first_agent()

        work = _setup_failures(run_in_fleet(args, joined, open_repl))
    else:
        try:
            work = open_repl(first_agent())
        except (UsageError, ProviderError, SessionError) as error:
            return _setup_failure(error)
    startup.done("main")  # the start-up's objects are built: the collector may run again (sagent.lib.startup)
    try:
        return asyncio.run(_closing_mcp(args, work))
    except (EOFError, KeyboardInterrupt):
        return 0


def _placed(seat: FleetSeat | None) -> dict[str, Any]:
    """`make_agent`'s label and bus for an agent in the fleet `seat` is a place in (none without one)."""
    return {} if seat is None else {"label": seat.label, "bus": seat.bus}


def make_agent(
    args: argparse.Namespace,
    model: Model,
    tools: list[Tool],
    cwd: Path,
    session_path: Path | None,
    settings_from: Agent | None = None,
    *,
    label: str | None = None,
    bus: Bus | None = None,
) -> Agent:
    """An agent with the command line's settings (or a running agent's, after /effort and the like),
    opening `session_path` when given and starting a new session log otherwise. `label` and `bus` place it
    in a fleet across processes (`sagent serve`)."""
    settings = agent_settings(args, tools, cwd, settings_from, model=model)
    if label is not None:
        settings = replace(settings, label=label)
    require_price(model, settings.max_budget_usd is not None)  # before a session log is made for it
    if settings.advisor is not None:
        require_price(settings.advisor.model, settings.max_budget_usd is not None)
    fleet = Fleet.for_settings(settings, models=models_for(args, model), bus=bus)
    if session_path is not None:
        return Agent.resume(session_path, model, settings, fleet=fleet)
    if args.ephemeral:
        log = SessionLog.ephemeral()
    else:
        # Where the run starts (the repository's commit), so it can be replayed from there.
        header = {"provider": model.provider, "model": model.name, **start_point(cwd)}
        if getattr(args, "name", None):
            header["title"] = args.name
        if args.base_url:
            header["base_url"] = args.base_url  # the endpoint, so --continue finds it again; never the key
        log = _new_session_log(cwd, header, getattr(args, "session_id", None), getattr(args, "new_session_at", None))
    return Agent(model, settings, session=log, fleet=fleet)


def _attach_mcp(args: argparse.Namespace, cwd: Path, headless: bool) -> None:
    """Set `args.mcp` to the configured MCP servers' part of the run (see sagent.mcp.setup), or None. In the
    REPL they connect in the background once the agent starts; a headless run waits for them before its
    first request (each at most its MCP_TIMEOUT) and reports a slow one, and one that fails, on stderr."""
    args.mcp = None
    from sagent.resources.plugins import find_enabled

    for line in find_enabled(cwd)[1]:  # a plugin enabled but not installed, or not usable
        sys.stderr.write(f"sagent: warning: {line}\n")
    if args.tools is not None and args.tools.strip().lower() == "none" and not getattr(args, "mcp_config", None):
        return  # no tools; servers named with --mcp-config still give theirs
    from sagent.cli.mcp_cmd import run_servers
    from sagent.mcp.config import McpConfigError
    from sagent.mcp.setup import mcp_run

    def report(line: str) -> None:
        sys.stderr.write(f"sagent: warning: {line}\n")

    try:
        servers = run_servers(args, cwd) + _sdk_servers(args)
        args.mcp = mcp_run(servers, cwd, report if headless else None, wait_first=headless)
    except McpConfigError as error:
        raise UsageError(str(error)) from None


def _sdk_servers(args: argparse.Namespace) -> list[Any]:
    """The in-process MCP servers of the SDK's program (`"type": "sdk"` in --mcp-config), reached through
    the control channel."""
    servers = getattr(args, "sdk_mcp_servers", None)
    if not servers:
        return []
    channel = getattr(args, "control", None)
    if channel is None:
        raise UsageError(
            '--mcp-config: servers of "type": "sdk" run in the SDK\'s program; use --input-format stream-json'
        )
    from sagent.cli.control.sdk_mcp import sdk_server_configs

    try:
        return sdk_server_configs(servers, channel)
    except ValueError as error:
        raise UsageError(f"--mcp-config: {error}") from None


async def _closing_mcp(args: argparse.Namespace, work: Coroutine[Any, Any, int]) -> int:
    """`work`, then the MCP servers stopped (their subprocesses ended) in the same event loop."""
    try:
        return await work
    finally:
        if getattr(args, "mcp", None) is not None:
            await args.mcp.servers.aclose()


def _new_session_log(
    cwd: Path, header: dict[str, Any], session_id: str | None = None, at: Path | None = None
) -> SessionLog:
    """A new session log (named `session_id`, by --session-id; or the file `at`, by --session with a path
    not there yet); a UsageError that says what to do when the data directory cannot hold it."""
    try:
        if at is not None:
            return SessionLog.create(cwd, header, directory=at.parent, session_id=at.stem)
        return SessionLog.create(cwd, header, session_id=session_id)
    except FileExistsError as error:
        raise UsageError(f"--session-id: {error}") from None
    except OSError as error:
        raise UsageError(data_dir_problem(error)) from None


def data_dir_problem(error: OSError) -> str:
    """One line for a session log or history file sagent cannot write: what failed, and the fix."""
    where = error.filename or data_dir()
    reason = error.strerror or str(error)
    return (
        f"cannot write sessions under {data_dir()} ({reason}: {where}); run with --ephemeral, "
        "or set XDG_DATA_HOME to a writable directory"
    )


def _in_data_dir(error: OSError) -> bool:
    if not isinstance(error.filename, str):
        return False
    return Path(error.filename).is_relative_to(data_dir())


def _input_history() -> Path | None:
    """Where typed input is remembered across sessions (beside the session logs)."""
    from sagent.lib.private import private_dir

    folder = sessions_dir(Path.cwd()).parent.parent
    try:
        private_dir(folder)
        path = folder / "input-history"
        with open(path, "ab"):  # writable now, so the REPL cannot fail on its first line of input
            pass
        return path
    except OSError as error:
        reason = error.strerror or str(error)
        sys.stderr.write(
            f"sagent: typed input is not remembered across sessions ({reason}: {error.filename or folder}); "
            "set XDG_DATA_HOME to a writable directory to keep it\n"
        )
        return None


def _pick_session(ref: str, cwd: Path) -> Path | None:
    """`--resume ID` opens that session; a bare `--resume` lists this directory's sessions to pick from."""
    if ref:
        try:
            return find_session(ref, cwd)
        except FileNotFoundError as error:
            raise UsageError(str(error)) from None
    from sagent.cli.session_picker import pick_session_path

    return pick_session_path(cwd)


async def _setup_failures(work: Coroutine[Any, Any, int]) -> int:
    """`work`, with an agent that cannot be built told as at the start of any run."""
    try:
        return await work
    except (UsageError, ProviderError, SessionError) as error:
        return _setup_failure(error)


async def _run(
    agent: Agent,
    prompt: UserMessage | None,
    incoming: AsyncIterator[UserMessage] | None,
    output: Output,
    args: argparse.Namespace | None = None,
) -> int:
    if args is not None and args.control is not None:
        from sagent.cli.control.wiring import attach

        attach(args.control, agent, args)  # the SDK's requests are answered about this agent
    try:
        return await run_headless(agent, prompt, incoming, output)
    finally:
        await agent.aclose()
        if output.refused_credentials:
            _discard_unanswered(agent.session.path)


# Records a session holds when its model never answered: the start, the user's prompt, the failure.
_UNANSWERED = {"session_started", "message_added", "error", "result"}


def _discard_unanswered(path: Path | None) -> None:
    """Remove a session log that holds nothing but its header, its start, the prompt and the failure (the
    provider refused the key at once), so a bad key leaves no empty session to list or continue."""
    if path is None:
        return
    try:
        lines = path.read_bytes().splitlines()
        for line in lines:
            record = json.loads(line)
            if record.get("kind") in ("header", "manifest"):  # a manifest is the request, not an answer
                continue
            if (record.get("event") or {}).get("type") not in _UNANSWERED:
                return
        path.unlink()
        with contextlib.suppress(OSError):
            path.with_suffix("").rmdir()  # its side-file folder, when there is one and it is empty
    except (OSError, ValueError):
        return  # keep a log that cannot be read whole: it is not sagent's to judge


def model_and_tools(args: argparse.Namespace, session_path: Path | None) -> tuple[Model, list[Tool]]:
    """The model and tools the flags name (a continued session's model when they name none); UsageError,
    ProviderError or SessionError when they cannot be had."""
    tools = tools_from_flags(args)
    model = build_model(
        _choice(args, session_path), base_url=args.base_url, api_key_env=args.api_key_env, resume_mode=args.resume_mode
    )
    return model, tools


def setup_failure(error: Exception) -> int:
    """Report a failed set-up in one line; the exit code."""
    return _setup_failure(error)


def _built(args: argparse.Namespace, choice: Choice) -> Model:
    return build_model(choice, base_url=args.base_url, api_key_env=args.api_key_env, resume_mode=args.resume_mode)


def _say_choice(args: argparse.Namespace, choice: Choice, model: Model) -> None:
    """The lines on stderr about the model chosen: no key (the local model), a resume it cannot do."""
    if choice.notice:
        sys.stderr.write(choice.notice + "\n")
    if args.resume_mode == "resume" and not resumes(model.provider):
        sys.stderr.write(
            f"sagent: note: --resume-mode resume: {model.provider} keeps no conversation on its server; every "
            "request carries the whole conversation (replay)\n"
        )


def _choice(args: argparse.Namespace, session_path: Path | None) -> Choice:
    """The provider and model: as named, else the ones a continued session was last using, else the default.
    A continued session started with --base-url keeps that endpoint (never a key) while it stays on the
    provider it started on, unless another one is given."""
    if session_path is None:
        return choose(args.provider, args.model)
    state = peek_state(session_path)
    header = state.header or {}
    endpoint, started_on = header.get("base_url"), header.get("provider")
    if args.base_url is None and isinstance(endpoint, str) and state.provider == started_on:
        named = choose(args.provider, args.model).provider if args.provider or args.model else started_on
        if named == started_on:
            args.base_url = endpoint
    if args.provider is None and args.model is None and state.provider and state.model:
        return Choice(state.provider, state.model)
    return choose(args.provider, args.model)


def _prompt(args: argparse.Namespace, piped: bool) -> UserMessage | None:
    """The task: `-p` text, then piped standard input (unless stdin carries stream-json messages)."""
    parts = [args.prompt] if args.prompt else []
    if piped and args.input_format == "text":
        data = read_stdin_text()
        data = fit_stdin(data, _stdin_room(args))
        if data.strip():
            parts.append(data)
    text = "\n\n".join(p.strip("\n") for p in parts)
    return UserMessage.of(text) if text.strip() else None


STDIN_SHARE = 0.5  # of the model's context window that piped input may fill; the rest is for the work
UNKNOWN_WINDOW = 128_000  # tokens assumed for a model the catalog does not know


def _stdin_room(args: argparse.Namespace) -> tuple[int, str]:
    """How many characters of piped input the run's model can take, and the model's name."""
    try:
        choice = choose(args.provider, args.model)
    except ProviderError:
        choice = None  # reported when the model is built
    name = (choice.model if choice else None) or DEFAULT_MODELS.get(choice.provider if choice else "", "")
    if choice is not None and choice.provider == "local" and not choice.model:
        name = "smollm2"  # the embedded model
    info = lookup(name) if name else None
    window = info.context_window if info is not None else UNKNOWN_WINDOW
    return int(window * STDIN_SHARE) * CHARS_PER_TOKEN, name or "the model"


def fit_stdin(data: str, room: tuple[int, str]) -> str:
    """Piped input cut to its head and tail when it is larger than the model can take, with a note in the
    text saying what was cut and where the whole input is (a private temporary file), so the request
    stays within the window and nothing is lost. The file is redacted and lasts as long as the run."""
    limit, model = room
    if len(data) <= limit:
        return data
    from sagent.cli import stdin_copy
    from sagent.redaction import redact

    data = redact(data)  # before the cut, which could leave a part of a secret no later redaction finds
    path = stdin_copy.save(data)  # private, and removed when the run ends
    head = limit * 2 // 3
    tail = limit - head
    cut = len(data) - head - tail
    note = (
        f"\n\n[sagent: standard input was {len(data):,} characters, more than {model}'s context window can "
        f"take; {cut:,} characters were cut here, between the first {head:,} and the last {tail:,}. "
        f"The whole input is in {path}]\n\n"
    )
    sys.stderr.write(
        f"sagent: standard input ({len(data):,} characters) is more than {model}'s context window can take: "
        f"sending its first {head:,} and last {tail:,} characters; the whole input is in {path}\n"
    )
    return data[:head] + note + data[len(data) - tail :]


def read_stdin_text() -> str:
    """Standard input as text, read as bytes and decoded tolerantly: bytes that are not UTF-8 (Latin-1,
    binary) become U+FFFD, and the user is told once how many were replaced."""
    return InputNotice(sys.stderr, "standard input").decode(sys.stdin.buffer.read())


LOCAL_MODEL_TOOLS = ("List", "Read", "Glob", "Grep")
"""The tools the local model gets unless --tools names others: a CPU reads every tool's schema in every
request, and a small model chooses better among a few."""


def _tools_for(choice: Choice, tools: list[Tool], args: argparse.Namespace) -> list[Tool]:
    """`tools`, or the reading tools of LOCAL_MODEL_TOOLS for the local model when --tools named none."""
    if choice.provider != LOCAL or args.tools is not None:
        return tools
    return [t for t in tools if t.name in LOCAL_MODEL_TOOLS]


def tools_from_flags(args: argparse.Namespace) -> list[Tool]:
    """The tools `--tools` names (every built-in when it names none), with the web tools allowed the
    `--allow-host` hosts."""
    spec = args.tools
    fetcher = Fetcher.from_env()
    fetcher.allow(*(h.strip() for value in args.allow_host or () for h in value.split(",") if h.strip()))
    if spec is None:  # and Skill, which the agent's settings fill with the skills in reach (or leave out)
        return [*builtin_tools(fetcher=fetcher), *tools_by_name(["Skill"])]
    if spec.strip().lower() == "none":
        return []
    try:
        return tools_by_name([n.strip() for n in spec.split(",") if n.strip()], fetcher=fetcher)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _setup_failure(error: Exception) -> int:
    """A run that cannot be set up (a bad name, a missing key, a session that is damaged, in use or
    unwritable): one line, and no new session. Exit 2, or 1 when the session log could not be written."""
    sys.stderr.write(f"sagent: error: {error}\n")
    return EXIT_ERROR if isinstance(error, SessionWriteError) else EXIT_USAGE
