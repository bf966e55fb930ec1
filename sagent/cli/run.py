"""Turn parsed arguments into a model, a session and an agent, and run the task headless."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.prompt import coding_system_prompt
from sagent.agent.session import SessionLog, find_session, list_sessions, peek_state
from sagent.cli.headless import EXIT_ERROR, EXIT_USAGE, Output, read_stream_json, run_headless
from sagent.providers.base import ProviderError
from sagent.providers.registry import Choice, build_model, choose
from sagent.tools import builtin_tools, tools_by_name
from sagent.tools.base import Tool
from sagent.types import UserMessage


class UsageError(Exception):
    """Arguments that name something that does not exist (a tool, a session)."""


def run_task(args: argparse.Namespace, piped: bool) -> int:
    cwd = Path(args.cwd or ".").resolve()
    try:
        prompt = _prompt(args, piped)
        if prompt is None and args.input_format == "text":
            raise UsageError("the task is empty")
        tools = _tools(args.tools)
        session_path = _session_to_continue(args, cwd)
        choice = _choice(args, session_path)
        model = build_model(choice, base_url=args.base_url, api_key_env=args.api_key_env)
    except (UsageError, ProviderError) as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return EXIT_USAGE
    if choice.notice:
        sys.stderr.write(choice.notice + "\n")
    system = args.system if args.system is not None else coding_system_prompt(cwd)
    if args.append_system:
        system = f"{system}\n\n{args.append_system}"
    settings = dict(
        system=system,
        tools=tools,
        max_tool_rounds=args.max_tool_rounds,
        max_budget_usd=args.max_budget_usd,
        max_tokens=args.max_tokens,
        thinking_budget=args.thinking_budget,
        effort=args.effort,
        cwd=cwd,
    )
    if session_path is not None:
        agent = Agent.resume(session_path, model, **settings)
    else:
        if args.ephemeral:
            log = SessionLog.ephemeral()
        else:
            log = SessionLog.create(cwd, {"provider": model.provider, "model": model.name})
        agent = Agent(model, session=log, **settings)
    output = Output(args.output_format, args.include_partial_messages, sys.stdout, sys.stderr)
    incoming = read_stream_json(sys.stdin) if args.input_format == "stream-json" else None
    try:
        return asyncio.run(_run(agent, prompt, incoming, output))
    except OSError as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return EXIT_ERROR


async def _run(
    agent: Agent, prompt: UserMessage | None, incoming: AsyncIterator[UserMessage] | None, output: Output
) -> int:
    try:
        return await run_headless(agent, prompt, incoming, output)
    finally:
        await agent.aclose()


def _choice(args: argparse.Namespace, session_path: Path | None) -> Choice:
    """The provider and model: as named, else the ones a continued session was last using, else the default."""
    if session_path is not None and args.provider is None and args.model is None:
        state = peek_state(session_path)
        if state.provider and state.model:
            return Choice(state.provider, state.model)
    return choose(args.provider, args.model)


def _prompt(args: argparse.Namespace, piped: bool) -> UserMessage | None:
    """The task: `-p` text, then piped standard input (unless stdin carries stream-json messages)."""
    parts = [args.prompt] if args.prompt else []
    if piped and args.input_format == "text":
        data = sys.stdin.read()
        if data.strip():
            parts.append(data)
    text = "\n\n".join(p.strip("\n") for p in parts)
    return UserMessage.of(text) if text.strip() else None


def _tools(spec: str | None) -> list[Tool]:
    if spec is None:
        return builtin_tools()
    if spec.strip().lower() == "none":
        return []
    try:
        return tools_by_name([n.strip() for n in spec.split(",") if n.strip()])
    except ValueError as error:
        raise UsageError(str(error)) from None


def _session_to_continue(args: argparse.Namespace, cwd: Path) -> Path | None:
    if args.session:
        try:
            return find_session(args.session, cwd)
        except FileNotFoundError as error:
            raise UsageError(str(error)) from None
    if args.continue_:
        sessions = list_sessions(cwd)
        if not sessions:
            raise UsageError(f"no session to continue in {cwd}")
        return sessions[0].path
    return None
