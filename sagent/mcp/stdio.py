"""The stdio transport to an MCP server: its subprocess, and its messages read in bounded memory.

The SDK's own transport joins each piece of stdout to everything before it until a line ends, so one huge
message costs time quadratic in its size (a 100 MB result never finished) and memory for all of it. Here a
message is read piece by piece: up to `MAX_MESSAGE` bytes it is kept and parsed; a larger one goes to a
private file as it arrives (its secrets redacted), and the request it answers gets a short answer instead
that says where the whole of it is, with its head and tail. A tool call's answer is then cut and spilled
as every tool's output is.

The server runs in a session of its own with a tag in its environment (as a Bash call does,
`sagent.tools.processes`): closing the transport ends it and whatever it started, within a few seconds,
even if it ignores SIGTERM or a child of it holds the pipe.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any

from sagent.redaction import StreamRedactor

MAX_MESSAGE = 16 * 1024 * 1024
"""Bytes of one message read into memory; a larger one is saved to a file (see the module's text)."""
STOP_GRACE = 0.5  # seconds a server has to exit once its stdin is closed, then SIGTERM, then SIGKILL
SHOWN = 4000  # characters of a saved message's head, and of its tail, in the answer that stands for it
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


class _Saved:
    """One oversized message, written to a file as it arrives (redacted, 0600), with its head and tail."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._file: IO[str] = os.fdopen(fd, "w", encoding="utf-8", errors="replace")
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._redactor = StreamRedactor()
        self.size = 0
        self.head_bytes = b""
        self.tail_bytes = b""
        self.head = ""
        self.tail = ""

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if len(self.head_bytes) < 512:
            self.head_bytes += data[: 512 - len(self.head_bytes)]
        self.tail_bytes = (self.tail_bytes + data[-512:])[-512:]
        self._text(self._redactor.feed(self._decoder.decode(data)))

    def _text(self, text: str) -> None:
        if len(self.head) < SHOWN:
            self.head += text[: SHOWN - len(self.head)]
        self.tail = (self.tail + text)[-SHOWN:]
        self._file.write(text)

    def close(self) -> None:
        self._text(self._redactor.feed(self._decoder.decode(b"", final=True)))
        self._text(self._redactor.flush())
        self._file.close()

    def request_id(self, pending: dict[Any, str]) -> Any:
        """The id of the request this answers: named at its start or its end, else the only one waiting."""
        for found in (_ID.search(self.head_bytes), _last(_ID.finditer(self.tail_bytes))):
            if found is not None:
                with contextlib.suppress(ValueError):
                    value = json.loads(found.group(1))
                    if value in pending:
                        return value
        return next(iter(pending)) if len(pending) == 1 else None


def _last(matches: Any) -> Any:
    found = None
    for found in matches:  # noqa: B007
        pass
    return found


def stand_in(saved: _Saved, request_id: Any, method: str, server: str) -> dict[str, Any]:
    """The JSON-RPC answer given for a message too large to read: for a tool call, a result the model can
    act on (where the whole answer is, its head and tail); for anything else, an error saying so."""
    where = (
        f"the answer of MCP server {server} was {saved.size:,} bytes, more than the {MAX_MESSAGE:,} sagent "
        f"reads at once; the whole of it (the server's JSON, secrets redacted) is in {saved.path}: Read it "
        "by offset and limit, or Grep it"
    )
    if method != "tools/call":
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": where}}
    text = f"[{where}]\n{saved.head}\n[…]\n{saved.tail}"
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


@contextlib.asynccontextmanager
async def stdio_transport(
    name: str,
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    errlog: IO[str],
    spill_dir: Callable[[], Path],
    on_end: Callable[[], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of a `ClientSession` to the server `command args`, as the SDK's
    `stdio_client` gives them; the server is ended when the block is left. `on_end` is called when the
    server ends its output by itself (it exited, it crashed), before the block is left."""
    import anyio
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    from sagent.tools.processes import TAG_PREFIX, end_processes, new_token, register, unregister

    token = new_token()
    process = await anyio.open_process(
        [command, *args],
        env={**get_default_environment(), **env, f"{TAG_PREFIX}{token}": "1"},
        stderr=errlog,
        cwd=cwd,
        start_new_session=True,
    )
    register(token, process.pid)
    to_session, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)
    pending: dict[Any, str] = {}  # id -> method of the requests sent and not yet answered
    stopping = False

    async def deliver(message: Any) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(message)

    async def parsed(line: bytes) -> None:
        try:
            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as error:
            await deliver(error)
            return
        if getattr(message, "method", None) is None:  # an answer (a request of the server's has a method)
            pending.pop(getattr(message, "id", None), None)
        await deliver(SessionMessage(message))

    async def read() -> None:
        assert process.stdout is not None
        kept: list[bytes] = []
        size = 0
        saved: _Saved | None = None
        async with to_session:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                while True:
                    pieces = (await process.stdout.receive(1 << 18)).split(b"\n")
                    for index, piece in enumerate(pieces):
                        if saved is None and size + len(piece) > MAX_MESSAGE:
                            saved = _Saved(spill_dir() / f"mcp-{name}-{uuid.uuid4().hex[:12]}.json")
                            for part in kept:
                                saved.write(part)
                            kept, size = [], 0
                        if saved is not None:
                            saved.write(piece)
                        elif piece:
                            kept.append(piece)
                            size += len(piece)
                        if index == len(pieces) - 1:
                            break  # the line goes on in the next chunk
                        if saved is not None:
                            saved.close()
                            await answer_for(saved)
                            saved = None
                        elif kept:
                            line, kept, size = b"".join(kept), [], 0
                            if line.strip():
                                await parsed(line)
        if saved is not None:
            saved.close()
        if not stopping and on_end is not None:
            on_end()  # the server closed its stdout by itself: it exited, or will not answer again

    async def answer_for(saved: _Saved) -> None:
        request_id = saved.request_id(pending)
        if request_id is not None:
            answer = stand_in(saved, request_id, pending.pop(request_id), name)
            await deliver(SessionMessage(jsonrpc_message_adapter.validate_python(answer)))

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for session_message in from_session:
                    message = session_message.message
                    if getattr(message, "method", None) is not None and getattr(message, "id", None) is not None:
                        pending[message.id] = message.method
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8", errors="replace"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the server cannot be written to: the session sees the end

    async def exited(seconds: float) -> None:
        # Not process.wait(): it waits for the pipes to close too, which a child of the server may hold.
        with anyio.move_on_after(seconds):
            while process.returncode is None:
                await anyio.sleep(0.01)

    async def stop() -> None:
        """Close the server's stdin, give it STOP_GRACE seconds to exit, then end it and all it started."""
        nonlocal stopping
        stopping = True
        with contextlib.suppress(Exception):
            if process.stdin is not None:
                await process.stdin.aclose()
        await exited(STOP_GRACE)
        await anyio.to_thread.run_sync(lambda: end_processes(token, process.pid, grace=0.3, owned=process.pid))
        await exited(STOP_GRACE)
        unregister(token)
        for stream in (process.stdout, read_stream, write_stream, to_session, from_session):
            with contextlib.suppress(Exception):
                if stream is not None:
                    await stream.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await stop()
            tasks.cancel_scope.cancel()


def private_spill_dir() -> Path:
    """A private temporary folder for saved messages, when the run has no session folder."""
    return Path(tempfile.mkdtemp(prefix="sagent-mcp-"))
