"""Lines of standard input for an event loop, read as they arrive by a daemon thread.

A read blocked on a terminal or a pipe that stays open cannot be cancelled: in the event loop's own thread
pool it would hold the process at exit (after a Ctrl+C, an interrupt, a reader of the output that left)
until the writer closed its end. A daemon thread never holds the exit.
"""

from __future__ import annotations

import asyncio
import threading
from typing import IO


class StdinLines:
    """`await lines.readline()`: the next line of `stream` (bytes, its newline kept), b"" at its end."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        thread = threading.Thread(target=self._read, args=(stream,), name="sagent-stdin", daemon=True)
        thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            try:
                line = stream.readline()
            except (OSError, ValueError):  # closed under us: the end of input
                line = b""
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
            except RuntimeError:  # the loop has closed: nobody reads any more
                return
            if not line:
                return

    async def readline(self) -> bytes:
        line = await self._queue.get()
        if not line:
            self._queue.put_nowait(line)  # the end stays the end for a later call
        return line
