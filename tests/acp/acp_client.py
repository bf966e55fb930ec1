"""An editor for the tests, on the ACP Python SDK's client side: it starts `sagent acp` as a subprocess,
records every `session/update`, answers permission questions as scripted, and (when it offers them) lends
files kept in memory, as an editor's unsaved buffers, and terminals that run the commands themselves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.fakes.anthropic_server import FakeAnthropic


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **more}


def anthropic_env(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return env_for(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", ANTHROPIC_BASE_URL=fake.url)


@dataclass
class Editor:
    """The client: what it was told, and how it answers."""

    answers: list[str] = field(default_factory=list)  # option ids to pick, in order; "cancel" cancels
    buffers: dict[str, str] | None = None  # path -> text: offers fs when set
    terminal: bool = False
    updates: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    terminals: dict[str, dict[str, Any]] = field(default_factory=dict)
    on_update: Callable[[dict[str, Any]], None] | None = None
    init: Any = None  # what `initialize` answered
    conn: Any = None  # the connection to the agent, once made

    def capabilities(self) -> ClientCapabilities:
        fs = FileSystemCapabilities(read_text_file=self.buffers is not None, write_text_file=self.buffers is not None)
        return ClientCapabilities(fs=fs, terminal=self.terminal)

    # ---------------------------------------------------------------- the client's methods

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        record = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.updates.append(record)
        if self.on_update is not None:
            self.on_update(record)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.questions.append(
            {
                "tool_call": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [o.model_dump(mode="json", by_alias=True) for o in options],
            }
        )
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "cancel the turn":  # the user stops the turn while the question is open
            await self.conn.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        assert self.buffers is not None
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        assert self.buffers is not None
        self.buffers[path] = content
        self.writes.append((path, content))
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: Any = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{len(self.terminals) + 1}"
        log = Path(tempfile.mkdtemp(prefix="acp-terminal-")) / "output"
        with open(log, "wb") as out:  # a file, not a pipe: nothing is left open when the test's loop ends
            proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdout=out, stderr=out)
        self.terminals[terminal_id] = {
            "command": command,
            "args": args,
            "cwd": cwd,
            "proc": proc,
            "log": log,
            "released": False,
        }
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        term = self.terminals[terminal_id]
        await term["proc"].wait()
        return WaitForTerminalExitResponse(exit_code=term["proc"].returncode)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        term = self.terminals[terminal_id]
        return TerminalOutputResponse(output=term["log"].read_text(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        term = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            term["proc"].kill()
        await term["proc"].wait()
        term["killed"] = True
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self.terminals[terminal_id]["released"] = True
        return ReleaseTerminalResponse()

    # ---------------------------------------------------------------------- what it saw

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of_kind(kind))

    def call_updates(self, call_id: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u.get("toolCallId") == call_id]

    def statuses(self, call_id: str) -> list[str]:
        return [u["status"] for u in self.call_updates(call_id) if "status" in u]


def sagent_acp_command(*flags: str) -> list[str]:
    return [sys.executable, "-m", "sagent.cli.main", "acp", *flags]


@contextlib.asynccontextmanager
async def connected(editor: Editor, env: dict[str, str], *flags: str) -> AsyncIterator[Any]:
    """A connection to a fresh `sagent acp` process, initialized with the editor's capabilities."""
    command = sagent_acp_command(*flags)
    async with spawn_agent_process(lambda agent: editor, command[0], *command[1:], env=env) as (conn, process):
        # Bounded: a command that never speaks the protocol fails the test instead of hanging it.
        init = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities()), 60
        )
        editor.init, editor.conn = init, conn
        yield conn
    await process.wait()


def prompt_blocks(text: str) -> list[Any]:
    return [text_block(text)]
