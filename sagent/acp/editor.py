"""The editor's file system and terminals, lent to sagent's tools (`sagent.tools.editor.Editor`) when the
client offers them in `initialize`: `fs/read_text_file` and `fs/write_text_file` for Read, Write and Edit
(the editor's buffers, unsaved edits included), `terminal/*` for Bash."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.tools.editor import TerminalRun

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities

OUTPUT_LIMIT = 4 * 2**20
"""Bytes of a command's output the editor keeps (its beginning is dropped past this); Bash cuts it further
for the model, as it cuts its own commands' output."""


class ClientEditor:
    """One session's editor, as far as the client said it lends its files and terminals."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        capabilities: ClientCapabilities | None,
        on_terminal: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        fs = capabilities.fs if capabilities is not None else None
        self.client = client
        self.session_id = session_id
        self.reads_files = bool(fs is not None and fs.read_text_file)
        self.writes_files = bool(fs is not None and fs.write_text_file)
        self.runs_commands = bool(capabilities is not None and capabilities.terminal)
        self.on_terminal = on_terminal

    async def read_text(self, path: Path) -> str | None:
        from acp import RequestError

        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError:
            return None  # the editor has no such file: the disk answers (and says when it is missing)
        return response.content

    async def write_text(self, path: Path, content: str) -> None:
        from acp import RequestError

        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=content)
        except RequestError as error:
            raise OSError(str(error)) from None

    async def run_command(self, command: str, cwd: Path, env: dict[str, str], timeout: float) -> TerminalRun:
        from acp import RequestError
        from acp.schema import EnvVariable

        session = self.session_id
        try:
            created = await self.client.create_terminal(
                session_id=session,
                command="bash",
                args=["-c", command],
                cwd=str(cwd),
                env=[EnvVariable(name=k, value=v) for k, v in env.items()],
                output_byte_limit=OUTPUT_LIMIT,
            )
        except RequestError as error:
            raise OSError(str(error)) from None
        terminal = created.terminal_id
        try:
            if self.on_terminal is not None:
                await self.on_terminal(terminal)
            timed_out = False
            try:
                exited = await asyncio.wait_for(
                    self.client.wait_for_terminal_exit(session_id=session, terminal_id=terminal), timeout
                )
                code, signal = exited.exit_code, exited.signal
            except TimeoutError:
                timed_out, code, signal = True, None, None
                await self.client.kill_terminal(session_id=session, terminal_id=terminal)
            output = await self.client.terminal_output(session_id=session, terminal_id=terminal)
            return TerminalRun(output.output, code, signal, timed_out, output.truncated)
        except asyncio.CancelledError:
            # The turn was cancelled: the command ends with it.
            with contextlib.suppress(Exception):
                await asyncio.shield(self.client.kill_terminal(session_id=session, terminal_id=terminal))
            raise
        except RequestError as error:
            raise OSError(str(error)) from None
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.client.release_terminal(session_id=session, terminal_id=terminal))
