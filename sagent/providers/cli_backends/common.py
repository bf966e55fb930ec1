"""Plumbing shared by the CLI-backed models: the CLI's process (started in its own process group, so it
ends with its children), its JSON-lines output, and the neutral history replayed as text when a CLI
session starts on a conversation that began elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from typing import Any

from sagent.providers.base import ProviderConnectionError
from sagent.types import (
    AssistantMessage,
    Message,
    PeerMessage,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

SUBSCRIPTION_MARK = " (subscription)"
"""Ends the model name a CLI-backed model reports in its messages, so `/cost` and `modelUsage` show its use
as subscription use: no catalog price matches it, so it is never billed per token."""


def subscription_tokens(usage: Usage) -> int:
    """The tokens a response used that count against a subscription budget: every token reported, read
    from the cache or not (a plan's limits count them all)."""
    return usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens


LINE_LIMIT = 64 * 1024 * 1024
"""The longest output line read from a CLI (a tool result echoed back can be large)."""


class CliProcess:
    """One running CLI: JSON lines in on stdin, JSON lines out on stdout, stderr kept for error messages."""

    def __init__(self, process: asyncio.subprocess.Process, provider: str) -> None:
        self.process = process
        self.provider = provider
        self.stderr_tail = ""
        self._stderr_task = asyncio.create_task(self._drain_stderr())

    @classmethod
    async def start(cls, argv: list[str], env: dict[str, str], cwd: str | None, provider: str) -> CliProcess:
        """Start `argv` with pipes on all three streams, in a new session (its own process group)."""
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        return cls(process, provider)

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk.decode(errors="replace"))[-4000:]

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.returncode is None

    async def send(self, payload: dict[str, Any]) -> None:
        """Write one JSON line to the CLI's stdin; a closed pipe is a connection error."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(payload) + "\n").encode())
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise ProviderConnectionError(f"the CLI stopped reading: {error}", provider=self.provider) from None

    async def send_text(self, text: str) -> None:
        """Write `text` to the CLI's stdin and close it (a CLI that reads its whole prompt from stdin)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(text.encode())
            await self.process.stdin.drain()
            self.process.stdin.close()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise ProviderConnectionError(f"the CLI stopped reading: {error}", provider=self.provider) from None

    async def read(self, timeout: float) -> dict[str, Any] | None:
        """The next JSON object the CLI prints; None at the end of its output. A line that is not a JSON
        object is skipped (a CLI may print notices); silence longer than `timeout` is a connection error."""
        assert self.process.stdout is not None
        while True:
            try:
                line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
            except TimeoutError:
                raise ProviderConnectionError(
                    f"the CLI printed nothing for {timeout:g}s", provider=self.provider
                ) from None
            except ValueError:  # a line over LINE_LIMIT
                raise ProviderConnectionError("the CLI printed an over-long line", provider=self.provider) from None
            if not line:
                return None
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    return value

    async def stop(self) -> None:
        """End the CLI and every process it started: SIGTERM to its group, SIGKILL after a grace period."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 3)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)  # children it left behind
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._stderr_task


def _render(message: Message) -> str:
    if isinstance(message, UserMessage):
        return f"[user]\n{message.text}"
    if isinstance(message, PeerMessage):
        return f"[message from agent {message.sender}]\n{message.text}"
    if isinstance(message, ToolResult):
        flag = " (error)" if message.is_error else ""
        return f"[result of tool call {message.call_id}{flag}]\n{message.text}"
    lines = [f"[assistant ({message.provider}/{message.model})]"]
    for part in message.content:
        if isinstance(part, TextPart):
            lines.append(part.text)
        elif isinstance(part, ToolCall):
            lines.append(f"(called tool {part.name} as {part.id} with {json.dumps(part.arguments)})")
    return "\n".join(lines)


def replay_prompt(messages: tuple[Message, ...]) -> str:
    """The prompt that starts a CLI session on `messages`: the earlier conversation as a transcript, then
    the last user message itself (or, when the conversation ends with tool results, a request to go on)."""
    if len(messages) == 1 and isinstance(messages[0], UserMessage):
        return messages[0].text
    last = messages[-1] if messages and isinstance(messages[-1], UserMessage) else None
    earlier = messages[:-1] if last is not None else messages
    transcript = "\n\n".join(_render(m) for m in earlier)
    ask = last.text if last is not None else "Continue from where the conversation above left off."
    return (
        "This conversation began before this session; here it is so far, as a transcript:\n\n"
        f"<transcript>\n{transcript}\n</transcript>\n\n{ask}"
    )


def last_assistant(messages: tuple[Message, ...]) -> AssistantMessage | None:
    """The last assistant message of `messages`, if any."""
    return next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
