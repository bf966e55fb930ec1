"""`CliBackedModel`: what every model that drives an official CLI shares (AnthropicCLI, OpenAISubscription,
GoogleCLI): the CLI process and the MCP bridge it calls sagent's tools through, answering a tool call once
the CLI's own call has reached the bridge, and a stream that starts the CLI anew on any failure.

A subclass says how to start or continue the CLI for a request (`_continue_or_start`), how to read one
response from it (`_read_response`) and how to end it (`_reset`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator
from typing import ClassVar

from sagent.events import ModelEvent, ResponseComplete
from sagent.providers.base import Model, ProviderError
from sagent.providers.cli_backends.bridge import Bridge
from sagent.providers.cli_backends.common import CliProcess
from sagent.types import ModelRequest, ToolCall, ToolResult


class CliBackedModel(Model):
    """A `Model` whose answers come from an official CLI run as a subprocess."""

    CLI_NAME: ClassVar[str] = "CLI"
    """The CLI as people call it, for errors ("the Codex CLI exited while a tool ran")."""

    api_key: str | None
    bridge: Bridge | None
    cli: CliProcess | None
    idle_timeout: float
    _interrupted: bool

    @abstractmethod
    async def _continue_or_start(self, request: ModelRequest) -> None:
        """Give `request` to the running CLI (new messages, tool results), or start one on it."""

    @abstractmethod
    def _read_response(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The events of the CLI's next response, ending with its `ResponseComplete`."""

    @abstractmethod
    async def _reset(self) -> None:
        """End the CLI (its whole process group); the next request starts anew."""

    @property
    def subscription(self) -> bool:
        """True unless an API key pays for the CLI's requests (SAGENT_CLAUDE_API_KEY and the like)."""
        return not self.api_key

    async def _deliver(self, call: ToolCall, result: ToolResult) -> None:
        """Wait until the CLI's MCP call for `call` reaches the bridge, then answer it."""
        assert self.bridge is not None and self.cli is not None
        cli = self.cli
        await self.bridge.deliver_when_called(call, result, lambda: cli.alive, self.CLI_NAME, self.idle_timeout)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        complete = False
        try:
            await self._continue_or_start(request)
            async for event in self._read_response(request):
                complete = complete or isinstance(event, ResponseComplete)
                yield event
        except ProviderError:
            await self._reset()  # the next attempt starts the CLI anew, on the whole conversation
            raise
        finally:
            self._interrupted = self._interrupted or not complete
