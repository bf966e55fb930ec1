"""One background connection per MCP server, and the set of them a run uses.

Each connection lives in a task of its own (the SDK's transports and sessions are context managers that
must be entered and left in one task); tool calls from the agent's tasks go through its session. Nothing
here blocks the caller: `McpServers.start()` returns at once, a server that fails or hangs at start-up
ends as `failed` with its reason (after `connect_timeout`), and a server that dies during a call gives
that call an error and is started again on the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Literal

from sagent.mcp.config import ServerConfig
from sagent.tools.base import ToolError, off_loop

State = Literal["pending", "connecting", "connected", "failed", "stopped"]
CONNECT_TIMEOUT = 30.0  # seconds a server may take to start and list its tools (MCP_TIMEOUT, in ms)
CALL_TIMEOUT = 600.0  # seconds one tool call may take (MCP_TOOL_TIMEOUT, in ms)
MAX_RESTARTS = 3  # a server that keeps dying is left failed after this many new starts
MAX_PAGES = 50  # of a paginated listing: a server whose cursor never ends cannot hang the run


def _timeout_from_env(name: str, default: float) -> float:
    """A timeout in seconds from a variable in milliseconds (Claude Code's MCP_TIMEOUT, MCP_TOOL_TIMEOUT)."""
    try:
        value = float(os.environ.get(name, "")) / 1000
    except ValueError:
        return default
    return value if value > 0 else default


def _reason(error: BaseException) -> str:
    """The first real error inside an exception group (what anyio's task groups raise), in one line."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, TimeoutError):
        return "timed out"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def _load_sdk() -> None:
    """Import the SDK's client off the event loop: it takes a few hundred ms, which must not delay the
    first model request of a run that configured MCP servers."""
    import importlib
    import logging

    # The SDK logs what it skips (a stray line on a server's stdout, a failed session close) through
    # `logging`, whose fallback writes to stderr: over the REPL's screen. The failures that matter reach
    # the server's state and /mcp instead.
    sdk_log = logging.getLogger("mcp")
    sdk_log.addHandler(logging.NullHandler())
    sdk_log.propagate = False

    def load() -> None:
        for name in ("mcp.client.session", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse"):
            importlib.import_module(name)

    await off_loop(load)


class McpConnection:
    """One MCP server: its state, what it offers (tools, prompts, resources) and the calls to it."""

    def __init__(
        self,
        config: ServerConfig,
        cwd: Path,
        on_change: Callable[[McpConnection], None] | None = None,
        connect_timeout: float | None = None,
        call_timeout: float | None = None,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.state: State = "pending"
        self.error = ""
        """Why the server failed, or what happened to it last (a crash during a call)."""
        self.tools: list[Any] = []
        """The server's tools as the SDK lists them (`mcp.types.Tool`)."""
        self.prompts: list[Any] = []
        self.has_resources = False
        self.version = 0
        """Counts the changes of the tool list (each start, each tools/list_changed)."""
        self.starts = 0
        self.connect_timeout = connect_timeout or _timeout_from_env("MCP_TIMEOUT", CONNECT_TIMEOUT)
        self.call_timeout = call_timeout or _timeout_from_env("MCP_TOOL_TIMEOUT", CALL_TIMEOUT)
        self._on_change = on_change
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._stderr: Any = None
        self._background: set[asyncio.Task[None]] = set()  # listings again after a change, under way
        self._spill_dir: Callable[[], Path] | None = None

    def spill_dir(self) -> Path:
        """Where an answer too large to read into memory is saved: the session's folder for outputs, once
        a tool call said which (`use_spill_dir`), else a private temporary folder."""
        if self._spill_dir is None:
            from sagent.mcp.stdio import private_spill_dir

            folder = private_spill_dir()
            self._spill_dir = lambda: folder
        return self._spill_dir()

    def use_spill_dir(self, folder: Callable[[], Path]) -> None:
        """Save oversized answers where `folder()` says (called only when one comes)."""
        self._spill_dir = folder

    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        """Start connecting in the background (in the running event loop); a no-op while it runs."""
        if self._task is not None and not self._task.done():
            return
        self.starts += 1
        self.state = "connecting"
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._serve(), name=f"mcp-{self.name}")

    async def wait(self, timeout: float) -> State:
        """The state once the server is connected or failed, or after `timeout` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), timeout)
        return self.state

    async def _serve(self) -> None:
        import anyio

        try:
            await _load_sdk()
            from mcp import ClientSession

            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(streams[0], streams[1], message_handler=self._on_message)
                )
                with anyio.fail_after(self.connect_timeout):
                    result = await session.initialize()
                    self.has_resources = result.capabilities.resources is not None
                    await self._list(session, tools=True, prompts=result.capabilities.prompts is not None)
                self._session = session
                self.state, self.error = "connected", ""
                self._changed()
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            reason = _reason(error)
            if reason == "timed out":
                reason = f"no answer within {self.connect_timeout:g} s of starting (MCP_TIMEOUT)"
            self.state = "failed"
            self.error = self._with_stderr(reason)
            self._changed()
        finally:
            self._session = None
            if self.state == "connected":
                self.state = "stopped"
            self._ready.set()

    def _transport(self) -> Any:
        if self.config.connect is not None:
            return self.config.connect()
        if self.config.transport == "stdio":
            from sagent.mcp.stdio import stdio_transport

            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            return stdio_transport(
                self.name,
                self.config.command,
                list(self.config.args),
                dict(self.config.env),
                self.cwd,
                self._stderr,
                self.spill_dir,
                self._ended,
            )
        if self.config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(self.config.url, headers=dict(self.config.headers), timeout=self.connect_timeout)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=dict(self.config.headers))
        return streamable_http_client(self.config.url, http_client=client)

    def _ended(self) -> None:
        """The server's output ended by itself (it exited between calls, or during one): the connection is
        let go, so the next call starts the server again instead of failing on a dead session first."""
        if self.state == "connected":
            self.error = self._with_stderr("the server exited")
        self._stop.set()

    def _with_stderr(self, reason: str) -> str:
        """`reason`, with the last line the server wrote to stderr (why a subprocess died, usually)."""
        if self._stderr is None:
            return reason
        try:
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return reason
        return f"{reason} (stderr: {lines[-1][:200]})" if lines else reason

    async def _list(self, session: Any, tools: bool, prompts: bool) -> None:
        from mcp.types import PaginatedRequestParams

        async def pages(method: Any, field: str) -> list[Any]:
            found: list[Any] = []
            cursor = None
            for _ in range(MAX_PAGES):
                page = await method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                found.extend(getattr(page, field))
                cursor = page.next_cursor
                if not cursor:
                    break
            return found

        if tools:
            self.tools = await pages(session.list_tools, "tools")
            self.version += 1
        if prompts:
            self.prompts = await pages(session.list_prompts, "prompts")

    async def _on_message(self, message: Any) -> None:
        """Notifications from the server: a changed tool or prompt list is listed again, off this handler
        (a request from inside it would wait on the very loop that delivers its answer)."""
        method = getattr(message, "method", "")
        if method in ("notifications/tools/list_changed", "notifications/prompts/list_changed"):
            task = asyncio.get_running_loop().create_task(self._relist(method.endswith("tools/list_changed")))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _relist(self, tools: bool) -> None:
        session = self._session
        if session is None:
            return
        try:
            await self._list(session, tools=tools, prompts=not tools)
        except Exception as error:
            self.error = f"listing again after a change failed: {_reason(error)}"
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    async def session(self) -> Any:
        """The live session: started (again, after a crash) and awaited as needed; ToolError when the
        server cannot be reached."""
        if self.state in ("pending", "stopped", "failed") and self.starts <= MAX_RESTARTS:
            if self._task is not None and not self._task.done():  # the lost connection is still closing
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._task), 5)
            self.start()
        if self.state == "connecting":
            await self.wait(self.connect_timeout + 1)
        if self._session is None or self.state != "connected":
            raise ToolError(f"MCP server {self.name} is not available: {self.error or self.state}")
        return self._session

    async def request(self, what: str, send: Callable[[Any], Any]) -> Any:
        """`send(session)` awaited within the call timeout. A connection lost meanwhile marks the server
        for a new start on the next call; every failure is a ToolError naming the server and `what`."""
        import anyio
        from mcp import MCPError

        session = await self.session()
        try:
            with anyio.fail_after(self.call_timeout):
                return await send(session)
        except TimeoutError:
            raise ToolError(
                f"MCP server {self.name}: {what} gave no answer in {self.call_timeout:g} s (MCP_TOOL_TIMEOUT)"
            ) from None
        except MCPError as error:
            if self._lost(error):
                raise ToolError(f"MCP server {self.name} stopped during {what}: {self.error}") from None
            raise ToolError(f"MCP server {self.name}: {what} failed: {error}") from None
        except Exception as error:
            self._lost(error)
            raise ToolError(f"MCP server {self.name}: {what} failed: {_reason(error)}") from None

    def _lost(self, error: BaseException | None = None) -> bool:
        """True (and the server marked failed, to be started again on the next call) when the connection
        is gone: the SDK said so (CONNECTION_CLOSED), or the connection's task has ended."""
        from mcp_types import CONNECTION_CLOSED

        closed = getattr(error, "code", None) == CONNECTION_CLOSED or (self._task is not None and self._task.done())
        if closed:
            self.state = "failed"
            self.error = self._with_stderr("the connection closed")
            self._stop.set()
            self._changed()
        return closed

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The server's `CallToolResult` for one call."""
        return await self.request(f"tool {tool}", lambda s: s.call_tool(tool, arguments))

    async def aclose(self) -> None:
        """Stop the connection (and its subprocess) and wait for it."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if self.state == "connecting":  # a handshake under way (or hung) is not waited for
                task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self.state = "stopped" if self.state == "connected" else self.state
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()


class McpServers:
    """The servers of one run: started together in the background, reported when one fails."""

    def __init__(
        self,
        configs: Sequence[ServerConfig],
        cwd: Path,
        report: Callable[[str], None] | None = None,
        connect_timeout: float | None = None,
        call_timeout: float | None = None,
    ) -> None:
        self.connections: dict[str, McpConnection] = {
            c.name: McpConnection(c, cwd, self._changed, connect_timeout, call_timeout) for c in configs
        }
        self.report = report
        """Told one line per server that fails (headless: stderr); the REPL shows /mcp instead."""
        self._connect_timeout, self._call_timeout = connect_timeout, call_timeout
        self.started = False
        self._reported: set[tuple[str, str]] = set()

    def add(self, config: ServerConfig, cwd: Path) -> McpConnection:
        """One more server (its name not taken yet), started at once when the others were."""
        connection = McpConnection(config, cwd, self._changed, self._connect_timeout, self._call_timeout)
        self.connections[config.name] = connection
        if self.started:
            connection.start()
        return connection

    def start(self) -> None:
        """Start every server in the background (once; needs a running event loop)."""
        if self.started:
            return
        self.started = True
        for connection in self.connections.values():
            connection.start()

    async def settle(self, timeout: float) -> None:
        """Wait until no server is still connecting or listing its tools again after a change, or `timeout`
        seconds."""
        waiting: list[Coroutine[Any, Any, object]] = [
            c.wait(timeout) for c in self.connections.values() if c.state == "connecting"
        ]
        relisting = [t for c in self.connections.values() for t in c._background]
        if relisting:
            waiting.append(asyncio.wait(relisting, timeout=timeout))
        if waiting:
            await asyncio.gather(*waiting)

    def _changed(self, connection: McpConnection) -> None:
        if connection.state == "failed" and self.report is not None:
            key = (connection.name, connection.error)
            if key not in self._reported:
                self._reported.add(key)
                self.report(f"MCP server {connection.name} failed: {connection.error}")

    async def aclose(self) -> None:
        """Stop every server."""
        await asyncio.gather(*(c.aclose() for c in self.connections.values()), return_exceptions=True)
