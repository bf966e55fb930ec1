"""The MCP bridge: an MCP server on 127.0.0.1 that offers one agent's tools to a model CLI, and hands each
call back to the agent's own loop instead of running it.

A CLI-backed model (`AnthropicCLI`) lets the CLI run its own turn loop with its built-in tools switched off
and this bridge as its only MCP server. When the CLI calls a tool, the model's stream ends that response
with the `ToolCall` (`pending` tells it which calls the CLI made); sagent's loop runs the call with its
permissions, hooks, jobs and session log, and the next request carries the `ToolResult`, which `deliver`
passes to the waiting MCP call. So a tool never runs inside the bridge.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sagent.mcp.content import mcp_content
from sagent.providers.base import ProviderConnectionError
from sagent.types import TextPart, ToolCall, ToolResult, ToolSpec

SERVER_NAME = "sagent"
"""The bridge's name in the CLI's MCP configuration: its tools reach the model as `mcp__sagent__<tool>`."""


@dataclass
class BridgeCall:
    """One tool call the CLI made through the bridge, waiting for sagent's result."""

    name: str
    arguments: dict[str, Any]
    result: asyncio.Future[ToolResult]
    call_id: str | None = None
    """The id of the model's tool_use block this call answers, once matched."""


def same_arguments(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two tool calls' arguments are the same (as JSON, keys in any order)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@dataclass
class Bridge:
    """The tools offered and the calls in flight; `serve()` runs the MCP endpoint for them."""

    tools: tuple[ToolSpec, ...] = ()
    calls: list[BridgeCall] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0
    provider: str = ""  # the provider whose CLI calls through this bridge, for its errors
    _server: Any = None
    _task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The MCP endpoint the CLI connects to."""
        return f"http://127.0.0.1:{self.port}/mcp"

    def mcp_config(self) -> str:
        """The `--mcp-config` JSON naming this bridge as the CLI's one MCP server."""
        return json.dumps({"mcpServers": {SERVER_NAME: {"type": "http", "url": self.url}}})

    async def handle(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """An MCP tools/call: recorded for the model's stream, answered when sagent delivers the result."""
        call = BridgeCall(name, arguments, asyncio.get_running_loop().create_future())
        self.calls.append(call)
        self.arrived.set()
        try:
            return await call.result
        finally:
            with contextlib.suppress(ValueError):
                self.calls.remove(call)

    def claim(self, call_id: str, name: str, arguments: dict[str, Any]) -> BridgeCall | None:
        """The unmatched call the CLI made for tool_use `call_id` (same tool, same arguments), now matched."""
        for call in self.calls:
            if call.call_id is None and call.name == name and same_arguments(call.arguments, arguments):
                call.call_id = call_id
                return call
        return None

    def deliver(self, result: ToolResult) -> bool:
        """Answer the waiting call matched to `result.call_id`; False when no call waits for it."""
        for call in self.calls:
            if call.call_id == result.call_id and not call.result.done():
                call.result.set_result(result)
                return True
        return False

    async def deliver_when_called(
        self, call: ToolCall, result: ToolResult, alive: Callable[[], bool], cli: str, timeout: float
    ) -> None:
        """Wait until the CLI's MCP call for `call` has reached the bridge, then answer it with `result`.
        A connection error when the `cli` (named for people) exits first, or makes no such call within
        `timeout` seconds of waiting."""
        waited = 0.0
        while self.claim(call.id, call.name, call.arguments) is None and not any(
            c.call_id == call.id for c in self.calls
        ):
            if not alive():
                raise ProviderConnectionError(f"the {cli} exited while a tool ran", provider=self.provider)
            if waited >= timeout:
                raise ProviderConnectionError(
                    f"the {cli} did not call {call.name} through the bridge within {timeout:g}s",
                    provider=self.provider,
                )
            waited += 1.0
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), 1.0)
        self.deliver(result)

    def cancel_all(self, reason: str) -> None:
        """Answer every waiting call with an error (the turn was abandoned)."""
        for call in list(self.calls):
            if not call.result.done():
                call.result.set_result(ToolResult(call.call_id or "", call.name, (TextPart(reason),), True))

    async def serve(self) -> None:
        """Start the MCP endpoint on a free 127.0.0.1 port (returns once it listens)."""
        from sagent.providers import prefetch

        await asyncio.to_thread(prefetch.finished, "mcp")  # the SDK may be importing in the background
        import uvicorn

        listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(("127.0.0.1", 0))
        self.port = listening.getsockname()[1]
        app = _lowlevel(self).streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="critical", lifespan="on")
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[listening]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
            await asyncio.sleep(0.01)

    async def aclose(self) -> None:
        """Answer what still waits and stop the endpoint."""
        self.cancel_all("the agent stopped before this tool ran")
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 5)
        self._server = self._task = None


def _lowlevel(bridge: Bridge) -> Any:
    """The SDK's low-level server answering tools/list from `bridge.tools` and tools/call through it."""
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, ListToolsResult
    from mcp.types import Tool as McpTool

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        tools = [McpTool(name=t.name, description=t.description, input_schema=t.input_schema) for t in bridge.tools]
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        result = await bridge.handle(params.name, dict(params.arguments or {}))
        return CallToolResult(content=mcp_content(result), is_error=result.is_error)

    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)
