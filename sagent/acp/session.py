"""One editor session: a sagent agent built as `sagent -p` builds its own (the same flags and settings
files, read for the session's folder), with the editor's MCP servers added to the configured ones, the
editor as its approver, and the editor's files and terminals lent to its tools when it offers them."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.acp.approver import EditorApprover
from sagent.acp.editor import ClientEditor
from sagent.acp.updates import SessionUpdates, read_disk
from sagent.permissions.modes import CYCLE, DESCRIPTIONS, MODES, Mode
from sagent.permissions.policy import mode_of, set_mode

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import (
        ClientCapabilities,
        SessionConfigOptionBoolean,
        SessionConfigOptionSelect,
        SessionModeState,
    )

    from sagent.agent.agent import Agent
    from sagent.mcp.config import ServerConfig

EFFORTS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""The reasoning efforts the session offers, as the REPL's /effort takes them."""

MODE_NAMES: dict[str, str] = {
    "default": "Default",
    "acceptEdits": "Accept edits",
    "plan": "Plan",
    "bypassPermissions": "Bypass permissions",
}


class SessionSetupError(Exception):
    """The session cannot be opened: a bad setting, a missing key, a session that cannot be continued."""


@dataclass
class AcpSession:
    """An editor's session: its agent and how it talks to the editor."""

    agent: Agent
    args: argparse.Namespace
    updates: SessionUpdates
    bypass_offered: bool
    busy: bool = False
    cancelled: bool = False
    mode_told: str = ""

    @property
    def id(self) -> str:
        return self.agent.session_id

    # ---------------------------------------------------------------------------------- modes

    def mode(self) -> str:
        return mode_of(self.agent) or "default"

    def modes(self) -> list[Mode]:
        """The modes the editor may choose: bypassPermissions only for a session started in it (as the
        REPL's Shift+Tab offers it)."""
        return [m for m in MODES if m in CYCLE or (m == "bypassPermissions" and self.bypass_offered)]

    def mode_state(self) -> SessionModeState:
        from acp.schema import SessionMode, SessionModeState

        available = [SessionMode(id=m, name=MODE_NAMES[m], description=DESCRIPTIONS[m]) for m in self.modes()]
        return SessionModeState(current_mode_id=self.mode(), available_modes=available)

    def set_mode(self, value: str) -> None:
        """Put the session in the mode `value` names; ValueError when it is not one it offers."""
        chosen = next((m for m in self.modes() if m == value), None)
        if chosen is None:
            raise ValueError(f"{value!r} is not a mode of this session; the modes are: {', '.join(self.modes())}")
        if self.agent.settings.permissions is None:
            raise ValueError("this session has no permission policy to put in a mode")
        set_mode(self.agent, chosen, "the editor")
        self.mode_told = chosen

    async def tell_mode(self) -> None:
        """Tell the editor the session's mode when it changed on sagent's side (an approved plan)."""
        from acp.schema import ConfigOptionUpdate, CurrentModeUpdate

        now = self.mode()
        if now == self.mode_told:
            return
        self.mode_told = now
        await self.updates.send(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=now))
        options = self.config_options()
        await self.updates.send(ConfigOptionUpdate(session_update="config_option_update", config_options=options))

    # -------------------------------------------------------------------------------- options

    def config_options(self) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """The session's choices: the permission mode and the model."""
        from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

        modes = [
            SessionConfigSelectOption(value=m, name=MODE_NAMES[m], description=DESCRIPTIONS[m]) for m in self.modes()
        ]
        model = self.agent.model
        models = [
            SessionConfigSelectOption(value=name, name=name, description=f"{model.provider}")
            for name in _models_of(model.provider, model.name)
        ]
        return [
            SessionConfigOptionSelect(
                id="mode",
                name="Permission mode",
                description="what runs without asking",
                category="mode",
                current_value=self.mode(),
                options=modes,
                type="select",
            ),
            SessionConfigOptionSelect(
                id="effort",
                name="Reasoning effort",
                description="how hard the model thinks before it answers (off: the provider's default)",
                category="thought_level",
                current_value=self.agent.effort or "off",
                options=[SessionConfigSelectOption(value=e, name=e) for e in EFFORTS],
                type="select",
            ),
            SessionConfigOptionSelect(
                id="model",
                name="Model",
                description=f"the {model.provider} model the session uses",
                category="model",
                current_value=model.name,
                options=models,
                type="select",
            ),
        ]

    def set_effort(self, value: str) -> None:
        """The reasoning effort of the next requests (`off`: none is sent); ValueError for another word."""
        if value not in EFFORTS:
            raise ValueError(f"{value!r} is not an effort; the efforts are: {', '.join(EFFORTS)}")
        self.agent.configure(effort=None if value == "off" else value)

    def set_model(self, value: str) -> None:
        """Switch the session to the model `value` names (`model`, or `provider:model` for another
        provider); the conversation goes with it. ValueError when it cannot be had."""
        from sagent.agent.fleet import FleetError
        from sagent.providers.base import ProviderError
        from sagent.providers.specs import provider_names

        provider, _, name = value.partition(":")
        if provider.lower() not in {p.lower() for p in provider_names()}:
            provider, name = "", value  # a model id with a colon of its own (llama3:8b)
        try:
            new = self.agent.fleet.models(provider or self.agent.model.provider, name)
            self.agent.switch_model(new)
        except (ProviderError, FleetError) as error:
            raise ValueError(f"cannot switch to {value}: {getattr(error, 'message', error)}") from None

    async def aclose(self) -> None:
        await self.agent.aclose()
        mcp = getattr(self.args, "mcp", None)
        if mcp is not None:
            await mcp.servers.aclose()


def _models_of(provider: str, current: str) -> list[str]:
    from sagent.providers.catalog import CATALOG

    names = [m.id for m in CATALOG if m.provider == provider]
    return [current, *(n for n in names if n != current)]


def open_session(
    server_argv: list[str],
    parse: Any,
    cwd: Path,
    client_servers: list[ServerConfig],
    session_path: Path | None,
    client: Client,
    capabilities: ClientCapabilities | None,
) -> AcpSession:
    """A session in `cwd` (continuing the log at `session_path` when given), built as `sagent -p` builds
    its agent: `parse` reads the command line with the settings files of `cwd`. SessionSetupError when it
    cannot be."""
    from sagent.agent.session import SessionError
    from sagent.cli.agent_setup import UsageError
    from sagent.cli.run import make_agent, model_and_tools
    from sagent.providers.base import ProviderError

    args = parse([*server_argv, "--cwd", str(cwd)])
    if args is None:
        raise SessionSetupError(f"the settings files of {cwd} cannot be used (the agent's log says why)")
    try:
        model, tools = model_and_tools(args, session_path)
        args.mcp = _mcp(args, cwd, client_servers)
        agent = make_agent(args, model, tools, cwd, session_path)
    except (UsageError, ProviderError, SessionError) as error:
        raise SessionSetupError(str(error)) from None
    updates = SessionUpdates(client, agent.session_id, read_disk_async)
    editor = ClientEditor(client, agent.session_id, capabilities, updates.terminal_opened)
    if editor.reads_files:
        updates.read = editor_reader(editor)
    policy = agent.settings.permissions
    session = AcpSession(agent, args, updates, bypass_offered=policy is not None and policy.mode == "bypassPermissions")
    session.mode_told = session.mode()
    approver = EditorApprover(client, updates, session.tell_mode)
    lends = editor.reads_files or editor.writes_files or editor.runs_commands
    agent.settings = replace(agent.settings, approver=approver, editor=editor if lends else None)
    return session


def _mcp(args: argparse.Namespace, cwd: Path, client_servers: list[ServerConfig]) -> Any:
    """The MCP servers of the session: the settings files' and the editor's (the editor's win a name both
    use). The first request waits for them, as in `sagent -p`."""
    if args.tools is not None and args.tools.strip().lower() == "none":
        return None
    from sagent.cli.agent_setup import UsageError
    from sagent.cli.mcp_cmd import run_servers
    from sagent.mcp.config import McpConfigError
    from sagent.mcp.setup import mcp_run

    def report(line: str) -> None:
        sys.stderr.write(f"sagent acp: warning: {line}\n")

    try:
        configured = {s.name: s for s in run_servers(args, cwd)}
    except McpConfigError as error:
        raise UsageError(str(error)) from None
    configured.update((s.name, s) for s in client_servers)
    return mcp_run(list(configured.values()), cwd, report, wait_first=True)


async def read_disk_async(path: Path) -> str | None:
    return await asyncio.to_thread(read_disk, path)


def editor_reader(editor: ClientEditor) -> Any:
    async def read(path: Path) -> str | None:
        text = await editor.read_text(path)
        return text if text is not None else await read_disk_async(path)

    return read
