"""The Agent Client Protocol's agent side for sagent, on the official SDK (`acp`): what the editor asks
(`initialize`, `session/new`, `session/load`, `session/prompt`, `session/cancel`, `session/set_mode`,
`session/set_config_option`) and how each becomes work for a sagent agent.

Standard output carries the protocol only: it is taken for the connection before anything runs, and
whatever else writes to it (a warning, a library's print, a child process) goes to standard error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, cast

from sagent.acp.commands import available_commands, expanded
from sagent.acp.prompt import stop_reason, user_message
from sagent.acp.session import AcpSession, SessionSetupError, open_session
from sagent.events import Result

if TYPE_CHECKING:
    from acp.interfaces import Agent as AcpAgent
    from acp.interfaces import Client
    from acp.schema import (
        AuthenticateResponse,
        ClientCapabilities,
        Implementation,
        InitializeResponse,
        ListSessionsResponse,
        LoadSessionResponse,
        NewSessionResponse,
        PromptResponse,
        SetSessionConfigOptionResponse,
        SetSessionModeResponse,
    )

    from sagent.mcp.config import ServerConfig
    from sagent.types import ToolCall

LIST_PAGE = 50  # sessions in one answer to session/list
STDIO_LIMIT = 64 * 2**20  # bytes of one JSON-RPC line from the editor (a prompt with images attached)


class SagentAgent:
    """The agent the editor talks to: any number of sessions, each with its own sagent agent."""

    def __init__(self, argv: list[str], parse: Callable[[list[str]], argparse.Namespace | None]) -> None:
        self.argv = argv
        self.parse = parse
        self.client: Client | None = None
        self.capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.ephemeral = False
        self._tasks: set[asyncio.Future[None]] = set()  # notifications sent after an answer

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # ---------------------------------------------------------------------------- initialize

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from acp import PROTOCOL_VERSION
        from acp.schema import (
            AgentCapabilities,
            Implementation,
            InitializeResponse,
            McpCapabilities,
            PromptCapabilities,
            SessionAdditionalDirectoriesCapabilities,
            SessionCapabilities,
            SessionListCapabilities,
        )

        from sagent import __version__

        self.capabilities = client_capabilities
        if client_info is not None:
            _log(f"client: {client_info.name} {client_info.version or ''}".rstrip())
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the one version this agent speaks, whatever was asked
            agent_capabilities=AgentCapabilities(
                load_session=not self.ephemeral,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=None if self.ephemeral else SessionListCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="sagent", title="sagent", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        from acp import RequestError

        raise RequestError.invalid_params(
            {"message": "sagent needs no sign-in: it reads its keys from the environment"}
        )

    # ------------------------------------------------------------------------------ sessions

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        from acp.schema import NewSessionResponse

        session = await self._open(cwd, mcp_servers, None, additional_directories)
        return NewSessionResponse(
            session_id=session.id, modes=session.mode_state(), config_options=session.config_options()
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        from acp import RequestError
        from acp.schema import LoadSessionResponse

        from sagent.agent.session import find_session

        session = self.sessions.get(session_id)
        if session is None:
            folder = _folder(cwd)
            try:
                path = find_session(session_id, folder)
            except FileNotFoundError as error:
                raise RequestError.invalid_params({"message": str(error)}) from None
            session = await self._open(cwd, mcp_servers, path, additional_directories)
            self.sessions[session_id] = session  # the editor goes on with the id it gave (a prefix, a path)
        await session.updates.replay(session.agent, list(session.agent.history))
        return LoadSessionResponse(modes=session.mode_state(), config_options=session.config_options())

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The sagent sessions of the folder `cwd` (the agent's own without one), newest first, a page at a
        time (`cursor` is where the page starts)."""
        from datetime import UTC, datetime

        from acp import RequestError
        from acp.schema import ListSessionsResponse, SessionInfo

        from sagent.agent.session import list_sessions

        folder = _folder(cwd) if cwd else Path.cwd()
        try:
            start = int(cursor or 0)
        except ValueError:
            raise RequestError.invalid_params({"message": f"cursor {cursor!r} is not one this agent gave"}) from None
        found = list_sessions(folder)
        page = found[start : start + LIST_PAGE]
        sessions = [
            SessionInfo(
                session_id=s.id,
                cwd=str(folder),
                title=s.label[:120] or None,
                updated_at=datetime.fromtimestamp(s.modified, UTC).isoformat(),
            )
            for s in page
        ]
        more = start + LIST_PAGE < len(found)
        return ListSessionsResponse(sessions=sessions, next_cursor=str(start + LIST_PAGE) if more else None)

    async def _open(
        self, cwd: str, mcp_servers: list[Any] | None, path: Path | None, more: list[str] | None = None
    ) -> AcpSession:
        """A session in `cwd`; `more` are the editor's additional directories, which count as the project
        (as `--add-dir` makes them)."""
        from acp import RequestError

        folder = _folder(cwd)
        extra = [str(_folder(d, "additional directory")) for d in more or []]
        argv = [*self.argv, *(word for d in extra for word in ("--add-dir", d))]
        servers = [_server_config(s) for s in mcp_servers or []]
        assert self.client is not None
        try:
            session = open_session(argv, self.parse, folder, servers, path, self.client, self.capabilities)
        except SessionSetupError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        self.sessions[session.id] = session
        task = asyncio.ensure_future(_offer_commands(session))  # once the editor has the session's id
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        _log(f"session {session.id} in {folder} on {session.agent.model.provider}/{session.agent.model.name}")
        return session

    def _session(self, session_id: str) -> AcpSession:
        from acp import RequestError

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} is open"})
        return session

    # -------------------------------------------------------------------------------- prompts

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        from acp import RequestError
        from acp.schema import PromptResponse

        session = self._session(session_id)
        if session.busy:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        try:
            message, undo = expanded(session.agent, user_message(prompt, session.agent.context.cwd))
        except ValueError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        session.busy, session.cancelled = True, False
        calls: dict[str, ToolCall] = {}
        result: Result | None = None
        try:
            async for event in session.agent.run(message):
                await session.updates.on_event(session.agent, event, calls)
                await session.tell_mode()
                if isinstance(event, Result):
                    result = event
        finally:
            session.busy = False
            if undo is not None:
                undo()  # the command's tools and model were for its turn only
        reason, said = stop_reason(result, session)
        if reason is None:
            raise RequestError.internal_error({"message": said})
        if said:
            await _say(session, said)
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or not session.busy:
            return
        session.cancelled = True
        session.agent.interrupt()  # the model stream and the tools stop; their processes end

    # ------------------------------------------------------------------------ modes and options

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        from acp import RequestError
        from acp.schema import SetSessionModeResponse

        session = self._session(session_id)
        try:
            session.set_mode(mode_id)
        except ValueError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        from acp import RequestError
        from acp.schema import SetSessionConfigOptionResponse

        session = self._session(session_id)
        try:
            if config_id == "mode":
                session.set_mode(str(value))
            elif config_id == "model":
                session.set_model(str(value))
            elif config_id == "effort":
                session.set_effort(str(value))
            else:
                raise ValueError(f"no option {config_id!r}; the options are mode, effort and model")
        except ValueError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        return SetSessionConfigOptionResponse(config_options=session.config_options())

    async def aclose(self) -> None:
        for session in list(self.sessions.values()):
            try:
                await session.aclose()
            except Exception as error:  # one session failing to close must not keep the others open
                _log(f"closing session {session.id}: {error}")
        self.sessions.clear()


async def _offer_commands(session: AcpSession) -> None:
    """Tell the editor the session's slash commands (sagent's custom commands), after the answer that
    gave it the session's id."""
    from acp.schema import AvailableCommandsUpdate

    await asyncio.sleep(0)
    commands = available_commands(session.agent.context.cwd)
    if commands:
        update = AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        await session.updates.send(update)


async def _say(session: AcpSession, text: str) -> None:
    from acp.schema import AgentMessageChunk, TextContentBlock

    block = TextContentBlock(type="text", text=text)
    await session.updates.send(AgentMessageChunk(session_update="agent_message_chunk", content=block))


def _folder(cwd: str, what: str = "cwd") -> Path:
    from acp import RequestError

    folder = Path(cwd)
    if not folder.is_absolute() or not folder.is_dir():
        raise RequestError.invalid_params({"message": f"{what} {cwd!r} is not an absolute path to a folder"})
    return folder.resolve()


def _server_config(server: Any) -> ServerConfig:
    """An MCP server the editor passed, as sagent's MCP machinery takes it."""
    from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

    from sagent.mcp.config import ServerConfig

    if isinstance(server, McpServerStdio):
        env = {v.name: v.value for v in server.env}
        return ServerConfig(
            server.name, "stdio", command=server.command, args=tuple(server.args), env=env, source="the editor"
        )
    if isinstance(server, HttpMcpServer | SseMcpServer):
        headers = {h.name: h.value for h in server.headers}
        kind: Literal["http", "sse"] = "http" if isinstance(server, HttpMcpServer) else "sse"
        return ServerConfig(server.name, kind, url=server.url, headers=headers, source="the editor")
    from acp import RequestError

    raise RequestError.invalid_params(
        {"message": f"MCP server {getattr(server, 'name', '?')!r}: a transport sagent does not speak"}
    )


def _log(line: str) -> None:
    sys.stderr.write(f"sagent acp: {line}\n")
    sys.stderr.flush()


def claim_stdout() -> IO[bytes]:
    """Standard output for the protocol alone: the returned file writes to it, and file descriptor 1 (what
    `print`, a library or a child process would write to) goes to standard error from now on."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol, "wb", buffering=0)


async def serve(argv: list[str], parse: Callable[[list[str]], argparse.Namespace | None], ephemeral: bool) -> int:
    """Speak the protocol on standard input and output until the editor closes its end; the exit code."""
    from acp import run_agent

    out = claim_stdout()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    agent = SagentAgent(argv, parse)
    agent.ephemeral = ephemeral
    _log("ready (Agent Client Protocol on standard input and output)")
    try:
        # Cast: the protocol's optional methods it leaves out are answered "method not found" by the SDK.
        await run_agent(cast("AcpAgent", agent), writer, reader)
    finally:
        await agent.aclose()
    return 0
