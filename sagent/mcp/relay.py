"""An MCP transport that hands each JSON-RPC message to a function and delivers its reply: for a server
that lives where only a message channel reaches it (a Claude Agent SDK application's in-process server,
reached over the SDK's control protocol).

    async def exchange(message: dict) -> dict | None: ...   # one message out, the server's reply back
    async with relay_transport("calc", exchange) as (read, write):
        async with ClientSession(read, write) as session: ...

A request's reply is delivered to the session when it comes; requests go out at once, so a slow tool call
does not hold up the next. A notification (`notifications/initialized`, a cancellation) is sent before the
message after it and its reply dropped: the server sees the messages in the order the session wrote them.
A request whose exchange fails (the channel closed, an error answer) gets a JSON-RPC error naming why, so
the call fails instead of waiting.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

Exchange = Callable[[dict[str, Any]], Awaitable[Any]]
"""Sends one JSON-RPC message (plain JSON) to the server; for a request, the server's reply."""
INTERNAL_ERROR = -32603


@contextlib.asynccontextmanager
async def relay_transport(name: str, exchange: Exchange) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of a `ClientSession` whose messages go through `exchange`; the exchanges
    still under way are cancelled when the block is left. `name` is the server's, for error messages."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    to_session, read_stream = anyio.create_memory_object_stream[Any](32)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)

    async def deliver(reply: Any) -> None:
        message: SessionMessage | Exception
        try:
            message = SessionMessage(jsonrpc_message_adapter.validate_python(reply, by_name=False))
        except ValueError as error:
            message = error  # the session reads an exception on its stream as a malformed message
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(message)

    def failed(request_id: Any, why: str) -> dict[str, Any]:
        error = {"code": INTERNAL_ERROR, "message": f"MCP server {name}: {why}"}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}

    async def ask(payload: dict[str, Any]) -> None:
        request_id = payload["id"]
        try:
            reply = await exchange(payload)
        except Exception as error:
            reply = failed(request_id, str(error).strip() or type(error).__name__)
        if not isinstance(reply, dict) or reply.get("id") != request_id:
            reply = failed(request_id, "answered with no JSON-RPC reply to this request")
        await deliver(reply)

    async def write(tasks: Any) -> None:
        async with from_session:
            async for session_message in from_session:
                payload = session_message.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
                if "method" in payload and "id" in payload:
                    tasks.start_soon(ask, payload)
                else:  # a notification, or a reply to the server: in order, nothing comes back
                    with contextlib.suppress(Exception):
                        await exchange(payload)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(write, tasks)
        try:
            yield read_stream, write_stream
        finally:
            tasks.cancel_scope.cancel()
            for stream in (read_stream, write_stream, to_session, from_session):
                with contextlib.suppress(Exception):
                    await stream.aclose()
