"""Build the Slack service from parsed arguments (the model, tools and settings as `sagent` builds them)
and run it until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.agent.hooks import Allow, Deny
from sagent.agent.pricing import require_price
from sagent.agent.session import SessionError, SessionLog, data_dir
from sagent.cli.agent_setup import UsageError, agent_settings, models_for
from sagent.cli.run import tools_from_flags
from sagent.providers.base import Model, ProviderError
from sagent.providers.registry import build_model, choose
from sagent.slack.api import SlackApi, SlackSetupError, socket_client
from sagent.slack.manifest import AgentRecord, SlackSession
from sagent.slack.personas import slack_role
from sagent.slack.service import ServiceConfig, SlackService
from sagent.tools.base import Tool

if TYPE_CHECKING:
    from sagent.agent.settings import AgentSettings
    from sagent.types import ToolCall

EXIT_ERROR = 1
EXIT_USAGE = 2


def run_service(args: argparse.Namespace) -> int:
    """The service for `args` (checked by the parser): 0 when interrupted, 2 with a one-line error when
    it cannot start (a refused token, no session to continue, a model that cannot be built)."""
    cwd = Path(args.cwd or ".").resolve()
    session_dir = Path(args.session_dir) if args.session_dir else data_dir() / "slack"
    try:
        session = _session(args, session_dir)
        tools = tools_from_flags(args)
        model = build_model(choose(args.provider, args.model), base_url=args.base_url, api_key_env=args.api_key_env)
        require_price(model, args.max_budget_usd is not None)  # refused at start, not at the first message
        api = SlackApi(args.bot_token, args.slack_api_url or "https://slack.com/api/")
        me = api.identity()
    except (UsageError, ProviderError, SessionError, SlackSetupError, OSError) as error:
        sys.stderr.write(f"sagent-slack: error: {getattr(error, 'message', None) or error}\n")
        return EXIT_USAGE
    base = agent_settings(args, tools, cwd, system="", model=model)
    fleet = Fleet.for_settings(base, models=models_for(args, model))
    config = ServiceConfig(
        persona_dir=Path(args.persona_dir) if args.persona_dir else None,
        log_prefix=args.log_prefix,
        router_log_channel=args.router_log_channel or None,
    )
    makers = AgentMaker(args, tools, cwd, model, fleet, session)
    service = SlackService(api, me, session, config, makers.new, makers.resume)
    try:
        return asyncio.run(_serve(service, args.app_token, model))
    except SlackSetupError as error:
        sys.stderr.write(f"sagent-slack: error: {error}\n")
        return EXIT_USAGE


def _session(args: argparse.Namespace, session_dir: Path) -> SlackSession:
    if args.continue_:
        found = SlackSession.newest(session_dir)
        if found is None:
            raise UsageError(f"no Slack session to continue in {session_dir}; start one without --continue")
        return found
    try:
        return SlackSession.new(session_dir)
    except OSError as error:
        raise UsageError(
            f"cannot keep Slack sessions in {session_dir} ({error.strerror or error}); give a writable --session-dir"
        ) from None


class AgentMaker:
    """Builds the service's agents with the command line's settings, in one fleet, logging into the
    session directory."""

    def __init__(
        self,
        args: argparse.Namespace,
        tools: list[Tool],
        cwd: Path,
        model: Model,
        fleet: Fleet,
        session: SlackSession,
    ) -> None:
        self.args, self.tools, self.cwd, self.model, self.fleet, self.session = args, tools, cwd, model, fleet, session

    def settings(self, name: str, system: str) -> AgentSettings:
        base = agent_settings(self.args, self.tools, self.cwd, system=system, model=self.model)
        return replace(base, label=name, role=slack_role(name), approver=no_one_to_ask)

    def new(self, name: str, system: str) -> Agent:
        header = {"provider": self.model.provider, "model": self.model.name, "label": name}
        log = SessionLog.create(self.cwd, header, directory=self.session.agents_dir)
        return Agent(self.model, self.settings(name, system), session=log, fleet=self.fleet)

    def resume(self, record: AgentRecord, path: Path) -> Agent:
        return Agent.resume(path, self.model, self.settings(record.name, record.system), fleet=self.fleet)


async def no_one_to_ask(agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
    """The Slack agents' approver: a tool call a permission rule or hook wants asked about is refused,
    since no one at a terminal can answer (without an approver it would run unasked)."""
    why = f" ({reason})" if reason else ""
    return Deny(
        f"{call.name} needs approval{why}, and sagent-slack has no one to ask; "
        "it runs only when the permission rules allow it outright"
    )


async def _serve(service: SlackService, app_token: str, model: Model) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    await service.start()
    client = await asyncio.to_thread(socket_client, app_token, service.api, service.feed)
    names = ", ".join(service.slots) or "none"
    sys.stderr.write(f"sagent-slack: connected; session {service.session.directory}; agents: {names}\n")
    serving = asyncio.create_task(service.serve())
    try:
        await stop.wait()
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await asyncio.to_thread(client.close)
        await service.aclose()
        await model.aclose()
    return 0
