"""An SDK client built once, on the first request or earlier in a background thread.

Building a client is more than an object: the SDK's HTTP stack imports its transport, and the TLS context
loads the system's trust store (tens of milliseconds, spent outside Python's interpreter lock). A run warms
its model as soon as the model is built, so that work overlaps the rest of the start-up (the tools, the
session, the event loop) instead of delaying the first request.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from sagent.lib import deferred_import, sdk_threads

_C = TypeVar("_C")


class SdkClient(Generic[_C]):
    """One model's SDK client: `get()` builds it the first time (or waits for a warm-up under way) and
    then returns the same one; `warm()` starts building it in a daemon thread."""

    def __init__(self, build: Callable[[], _C]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._client: _C | None = None

    def get(self) -> _C:
        """The client, built now if nobody built it yet; the builder's error (a missing key) is raised here.

        A caller asks for it to make a request: from then on, the parts of the SDK that the start-up left
        for later (`sagent.lib.deferred_import`) are loaded in the background."""
        client = self._get()
        deferred_import.finish_in_background()
        return client

    async def aget(self) -> _C:
        """`get()` for a coroutine: while another thread builds the client (a warm-up waiting for the SDK's
        import), the event loop goes on meanwhile (Ctrl-C, the REPL's screen, the other agents' work)."""
        if self._client is None:
            loop = asyncio.get_running_loop()
            built = loop.create_future()

            def build() -> None:
                with contextlib.suppress(Exception):  # `get()` meets the builder's error again and raises it
                    self._get()
                with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                    loop.call_soon_threadsafe(_resolve, built)

            sdk_threads.start(build, "sagent-warm")
            await built
        return self.get()

    def _get(self) -> _C:
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    def warm(self, then: Callable[[_C], object] | None = None, modules: Iterable[str] = ()) -> None:
        """Build the client in the background, then call `then` on it (to touch what the SDK loads on first
        use) and import `modules` (what its first request would import). A failure is left for `get()`
        to meet again and report."""

        def work() -> None:
            with contextlib.suppress(Exception):
                client = self._get()
                if then is not None:
                    then(client)
            for name in modules:
                with contextlib.suppress(Exception):
                    importlib.import_module(name)

        sdk_threads.start(work, "sagent-warm")

    def take(self) -> _C | None:
        """The client built so far, forgotten here (the next `get()` builds a new one), for closing it. While
        another thread is building one (waiting for the SDK's import), None at once rather than waiting on
        the event loop: that client has no connection to close, and a later `get()` returns it."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            client, self._client = self._client, None
            return client
        finally:
            self._lock.release()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
